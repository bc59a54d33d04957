package scanwarden

import "fmt"

// Cause names why a scan destination fails. The ids are a public contract
// (JSON, CLI, the SNMP code book, later the web): never rename one.
type Cause string

// The cause vocabulary.
const (
	CauseOK                    Cause = "ok"
	CauseNameUnresolved        Cause = "name-unresolved"
	CauseHostUnreachable       Cause = "host-unreachable"
	CauseNotSMBPort            Cause = "not-smb-port"
	CauseSMB1OnlyServer        Cause = "smb1-only-server"
	CauseSMB1Refused           Cause = "smb1-refused"
	CauseSigningRequired       Cause = "signing-required"
	CauseBadCredentials        Cause = "bad-credentials"
	CauseWrongUserFormat       Cause = "wrong-user-format"
	CauseAccountDisabled       Cause = "account-disabled"
	CauseAccountLocked         Cause = "account-locked"
	CausePasswordExpired       Cause = "password-expired"
	CausePasswordMustChange    Cause = "password-must-change"
	CauseAccountExpired        Cause = "account-expired"
	CauseWorkstationRestricted Cause = "workstation-restricted"
	CauseLogonHours            Cause = "logon-hours"
	CauseShareNotFound         Cause = "share-not-found"
	CauseShareAccessDenied     Cause = "share-access-denied"
	CausePathNotFound          Cause = "path-not-found"
	CauseNoWritePermission     Cause = "no-write-permission"
	CauseNoDeletePermission    Cause = "no-delete-permission"
	CauseConnectionLimit       Cause = "connection-limit"
	CauseServerResources       Cause = "server-resources"
	CauseDiskFull              Cause = "disk-full"
	CauseTimeout               Cause = "timeout"
	CauseUnknown               Cause = "unknown"
	// CauseUnknownUser is AD's answer when no account has the typed name; it
	// joins the vocabulary when a directory is configured.
	CauseUnknownUser Cause = "unknown-user"
	// CauseGuestRefused: a destination with an empty login (anonymous or
	// guest logon) that the server or the share refuses.
	CauseGuestRefused Cause = "guest-refused"
	// CauseNTLMBlocked: the server refuses NTLM logons (STATUS_NTLM_BLOCKED,
	// "Restrict NTLM: Incoming NTLM traffic = Deny all"); not a password
	// failure.
	CauseNTLMBlocked Cause = "ntlm-blocked"
	// CauseClockSkew: the KDC's clock and the client's differ by more than
	// Kerberos allows (5 minutes).
	CauseClockSkew Cause = "clock-skew"
	// CauseKDCUnreachable: no Kerberos KDC of the realm answers.
	CauseKDCUnreachable Cause = "kdc-unreachable"
	// CauseKerberosNeedsName: the destination's host is an address, for
	// which no Kerberos service ticket exists (cifs/10.0.0.5).
	CauseKerberosNeedsName Cause = "kerberos-needs-name"
	// CausePasswordUnreadable: the stored destination has no password
	// because its address book's could not be read; nothing is replayed.
	CausePasswordUnreadable Cause = "password-unreadable"
	// CauseEncryptionRequired: the share (or server) demands SMB3
	// encryption, which the MFP's client cannot do.
	CauseEncryptionRequired Cause = "encryption-required"
	// CauseDialectFloor: the server's lowest SMB dialect is above the
	// MFP's highest.
	CauseDialectFloor Cause = "dialect-floor"
	// CauseFileTypeRefused: the folder refuses files of the type the MFP
	// scans to (a file screen, an antivirus rule, Samba's veto files)
	// while it accepts others.
	CauseFileTypeRefused Cause = "file-type-refused"
	// CauseAccountRestricted: STATUS_ACCOUNT_RESTRICTION — the account may
	// not log on this way (Protected Users: no NTLM; a blank password on
	// the network); not a bad password.
	CauseAccountRestricted Cause = "account-restricted"
	// CauseLogonTypeNotGranted: STATUS_LOGON_TYPE_NOT_GRANTED — "Deny
	// access to this computer from the network" (or no "Access this
	// computer from the network") covers the account on the server.
	CauseLogonTypeNotGranted Cause = "logon-type-not-granted"
	// CauseDFSLink: the path goes through a DFS link
	// (STATUS_PATH_NOT_COVERED); MFPs do not follow DFS referrals. The
	// path step names the link's targets (MS-DFSNM NetrDfsGetInfo) and
	// checks each as the MFP would.
	CauseDFSLink Cause = "dfs-link"
	// CauseSmartcardRequired: the account must log on with a smart card
	// (userAccountControl SMARTCARD_REQUIRED,
	// STATUS_SMARTCARD_LOGON_REQUIRED): no password logon, the MFP's, works.
	CauseSmartcardRequired Cause = "smartcard-required"
	// CauseNTLMv1Refused: the MFP logs on with NTLMv1 over SMB2/3, and the
	// server (or the domain controller behind it) accepts only NTLMv2.
	CauseNTLMv1Refused Cause = "ntlmv1-refused"
	// CauseBridgeFailing: the destination is bridged (the MFP scans to the
	// fallback share, scanwarden delivers) and the bridge itself does not
	// deliver: the share is not serving, or a scan waits past the limit.
	CauseBridgeFailing Cause = "bridge-failing"
	// CauseDialectCeiling: the server's highest SMB dialect is below the
	// MFP's lowest (an old server, an MFP set to SMB 3 only).
	CauseDialectCeiling Cause = "dialect-ceiling"
	// CauseNameNotInDNS: DNS does not know the host name, but a host
	// answers for it over NetBIOS name service or LLMNR — what Windows PCs
	// fall back to, and the MFP does not.
	CauseNameNotInDNS Cause = "name-not-in-dns"
)

// CauseInfo is the fixed knowledge about one cause: the send error a Kyocera
// panel most likely shows for it, a summary and the generic fix. A Verdict
// refines summary and fix with what the check saw.
type CauseInfo struct {
	Cause Cause
	// KyoceraCode is the panel's send error most likely shown ("" when the
	// device shows none, e.g. for ok). Kyocera publishes no machine-readable
	// list; snmp/codebook.json holds what is known, with sources and
	// certainty, and a test keeps the two in step.
	KyoceraCode string
	Summary     string
	Fix         string
}

var causes = []CauseInfo{
	{CauseOK, "", "The destination accepts the scan: logon, share, folder and write all work.", "Nothing to fix."},
	{CauseNameUnresolved, "1101", "The host name stored on the MFP does not resolve.",
		"Enter the server's IP address or its full DNS name in the destination's Host Name (Command Center RX → Address Book → Host Name), or fix the DNS record / the MFP's DNS server and domain."},
	{CauseNameNotInDNS, "1101", "The host name is not in DNS; Windows PCs find it over NetBIOS or LLMNR, which the MFP does not use.",
		"The MFP looks the Host Name up in DNS only: add an A record for the host in DNS (the domain controller's DNS), or store the server's full DNS name or its IP address as the destination's Host Name on the MFP (Command Center RX → Address Book → Host Name)."},
	{CauseHostUnreachable, "2101", "Nothing answers on the SMB port of the stored host.",
		"Check that the server is on, that file sharing is enabled, and that its firewall allows TCP 445 (or 139) from the MFP; check the Port Number stored for the destination."},
	{CauseNotSMBPort, "2101", "Something answers on the stored port, but it is not an SMB server.",
		"Set the destination's Port Number on the MFP to 445 (or 139), the ports a Windows or Samba file server answers on, and check that the Host Name is the file server."},
	{CauseSMB1OnlyServer, "1102", "The server speaks only SMB1, which current MFP firmware does not use by default.",
		"Enable SMB2/SMB3 on the server (server min protocol / Windows SMB 2 feature); only as a stop-gap enable the SMB1 client on the MFP."},
	{CauseSMB1Refused, "1102", "The MFP uses SMB1 (and NTLMv1), which the server refuses.",
		"Update the MFP firmware and switch its SMB client to SMB2/SMB3 (Command Center RX → Network Settings → Protocol → SMB); do not re-enable SMB1 on the server."},
	{CauseSigningRequired, "1102", "The server requires SMB signing, which the MFP does not do.",
		"Update the MFP firmware to a version that signs SMB traffic, or (less safe) relax 'server signing'/'RequireSecuritySignature' on the server."},
	{CauseBadCredentials, "1102", "The server refuses the user name and password (logon failure).",
		"Re-enter the password in the destination's Login Password on the MFP (Command Center RX → Address Book); check the account's password in the directory."},
	{CauseWrongUserFormat, "1102", "The password is right but the user name form is not the one the server accepts.",
		"Change the destination's Login User Name on the MFP to the form that worked."},
	{CauseAccountDisabled, "1102", "The scan account is disabled.", "Enable the account in Active Directory Users and Computers (or samba-tool user enable)."},
	{CauseAccountLocked, "1102", "The scan account is locked out after too many bad passwords.",
		"Unlock the account or wait for the lockout to expire; then check again at once: if the password stored on the MFP is wrong, its retries lock the account again."},
	{CausePasswordExpired, "1102", "The scan account's password has expired.",
		"Set a new password for the account, enter it on the MFP, and consider a non-expiring password policy for scan accounts."},
	{CausePasswordMustChange, "1102", "The scan account must change its password at next logon, which an MFP cannot do.",
		"Clear 'User must change password at next logon' (or set a new password) and enter it on the MFP."},
	{CauseAccountExpired, "1102", "The scan account has expired.", "Extend or clear the account's expiry date in Active Directory."},
	{CauseWorkstationRestricted, "1102", "The account may log on only from listed workstations, and the MFP's name is not one of them.",
		"Add the MFP's NetBIOS name to the account's 'Log On To' list, or remove the restriction."},
	{CauseLogonHours, "1102", "The account is not allowed to log on at this time (logon hours).", "Widen the account's logon hours to cover scanning times."},
	{CauseShareNotFound, "1103", "The share name stored on the MFP does not exist on the server.",
		"Correct the share name in the destination's Path (the first part after the host), or create the share."},
	{CauseShareAccessDenied, "1102", "The server refuses the account access to the share.",
		"Give the account (or a group it is in) access in the share's permissions (valid users / Share Permissions)."},
	{CausePathNotFound, "1103", "The folder path stored on the MFP does not exist in the share.",
		"Correct the folder part of the destination's Path, or create the missing folder."},
	{CauseNoWritePermission, "1103", "The account cannot create files in the folder.",
		"Grant the account 'Modify' (create files / write data) on the folder's NTFS security."},
	{CauseNoDeletePermission, "", "Scans can be stored, but the account cannot delete files it created.",
		"Grant the account delete rights on the folder if the MFP or users must replace files; remove the leftover canary file."},
	{CauseConnectionLimit, "1102", "The server refuses new connections: its connection limit is reached.",
		"On a Windows 10/11 PC, 20 inbound sessions is the maximum: close idle sessions (lower AutoDisconnect) or move the folder to a server; on Samba raise 'max connections'."},
	{CauseServerResources, "3101", "The server is short of resources and refuses the request.", "Check the server's memory, handles and event log; restart the Server service if needed."},
	{CauseDiskFull, "2231", "The folder's disk is full.", "Free space on the server's volume (or raise the user's quota)."},
	{CauseTimeout, "2102", "The server accepts the connection but does not answer in time.",
		"Check the server's load and network path (MTU, firewall that drops rather than refuses), then retry."},
	{CauseUnknown, "", "The check failed for a reason scanwarden does not recognise; see the evidence.", "Read the raw evidence of the failed step."},
	{CauseUnknownUser, "1102", "No account with this user name exists in the directory: the name on the panel is mistyped.",
		"Correct the destination's Login User Name on the MFP."},
	{CauseGuestRefused, "1102", "The destination has no login (anonymous/guest), and the server or the share refuses guests.",
		"Better: give the MFP an account on the server with Modify on the folder and store it in the destination's Login User Name and Login Password. Or allow guest access on that share and server, knowing that anyone on the network can then use it."},
	{CauseNTLMBlocked, "1102", "The server refuses NTLM logons (Restrict NTLM), which the MFP uses.",
		"Turn on Kerberos for SMB sending on the MFP if its firmware offers it (it then needs the server's DNS name as Host Name and the domain's KDC), or add this server to the domain's NTLM exceptions (Group Policy: Network security: Restrict NTLM: Add server exceptions in this domain, or the server's own Restrict NTLM policy)."},
	{CauseClockSkew, "1102", "The clocks of the MFP and the domain's KDC differ by more than Kerberos allows (5 minutes).",
		"Set the MFP's clock right and give it the domain controller as its NTP server (Command Center RX → Device Settings → Date/Time → NTP Server)."},
	{CauseKDCUnreachable, "1102", "No Kerberos KDC (domain controller) of the account's realm answers.",
		"Give the MFP a DNS server that knows the domain (its _kerberos SRV records) and check that TCP/UDP 88 to a domain controller is open."},
	{CauseKerberosNeedsName, "1102", "The destination's host is an IP address: Kerberos needs the server's DNS name to get a ticket for it.",
		"Enter the server's full DNS name as the destination's Host Name on the MFP (Command Center RX → Address Book → Host Name)."},
	{CausePasswordUnreadable, "", "The destination's password could not be read from the imported address book, so its logon was not replayed.",
		"Enter the destination's password (scanwarden destination add NAME //HOST/SHARE/PATH --user USER --password-file FILE --device DEVICE, or re-import an export made by the device); it is checked again at once."},
	{CauseEncryptionRequired, "1102", "The share requires SMB3 encryption, which the MFP's SMB client cannot do.",
		"On the server, stop requiring encryption for this share (Windows: Set-SmbShare -EncryptData $false, or RejectUnencryptedAccess off; Samba: smb encrypt = desired), or update the MFP's firmware to one whose SMB client encrypts (SMB 3); or let the MFP scan to scanwarden's fallback share, whose forwarder encrypts."},
	{CauseDialectFloor, "1102", "The server's lowest SMB dialect is above the highest the MFP speaks, so they cannot agree on one.",
		"Enable the MFP's newer SMB protocol (Command Center RX → Network Settings → Protocol → SMB Client: SMB 3 / SMB 2) or update its firmware; or allow that older dialect on the server (Samba: server min protocol; Windows keeps SMB 2.x on); or let the MFP scan to scanwarden's fallback share."},
	{CauseFileTypeRefused, "1103", "The folder refuses files of the type the MFP scans to, while it accepts other files.",
		"Allow the scan file type in the server's file screen or antivirus rule (Windows FSRM file screens; Samba: veto files), or change the MFP's scan file type (Send → File Format)."},
	{CauseAccountRestricted, "1102", "The server refuses this kind of logon for the account (STATUS_ACCOUNT_RESTRICTION: a Protected Users member cannot use NTLM; a blank password cannot log on over the network); the password itself is not the problem.",
		"Use an account for the MFP that is not in the Protected Users group (and has a password), or log on with Kerberos if the MFP can."},
	{CauseDFSLink, "1103", "The destination path goes through a DFS link, and the MFP does not follow DFS referrals: the folder the link points to must be stored instead.",
		"Store the folder the DFS link points to (its real server, share and path) as the destination on the MFP. The check asks the server for the link's targets, checks each as the MFP would and names the one that works; when the server does not tell, Windows Explorer shows them under the link's Properties → DFS."},
	{CauseSmartcardRequired, "1102", "The account must log on with a smart card, so the password the MFP stores cannot log it on.",
		"Use an account for the MFP that logs on with a password, or clear \"Smart card is required for interactive logon\" on this one (Active Directory Users and Computers → Account → Account options; Set-ADUser -SmartcardLogonRequired $false) and give it a password."},
	{CauseLogonTypeNotGranted, "1102", "The server does not grant the account a network logon (STATUS_LOGON_TYPE_NOT_GRANTED).",
		"Remove the account (or its group) from the server's \"Deny access to this computer from the network\" policy, and make sure \"Access this computer from the network\" includes it (Group Policy → Computer Configuration → Windows Settings → Security Settings → Local Policies → User Rights Assignment); share permissions are not the problem."},
	{CauseNTLMv1Refused, "1102", "The MFP logs on with NTLMv1, which the server refuses (it accepts only NTLMv2); the password itself is right.",
		"Switch the MFP's SMB client to NTLMv2 (Command Center RX → Network Settings → Protocol → SMB Client; older firmware needs an update for it). Only as a stop-gap allow NTLMv1 on the server (Samba: ntlm auth = ntlmv1-permitted, on the domain controllers too for a domain account; Windows: LmCompatibilityLevel 4 or lower), which weakens every account's password protection."},
	{CauseBridgeFailing, "", "The destination is bridged (the MFP scans to scanwarden's fallback share, scanwarden delivers), and the bridge does not deliver.",
		"See the bridge's health on the destination's page (scanwarden status): get the fallback share serving (scanwarden receiver status), or see why the waiting scans are not delivered (scanwarden receiver list); scanwarden receiver deliver tries at once."},
	{CauseDialectCeiling, "1102", "The server's highest SMB dialect is below the lowest the MFP speaks: the server is older than anything the MFP offers.",
		"Enable SMB 3 on the server (Samba: raise server max protocol; an old Windows or NAS needs an update), or let the MFP use the older dialect if its firmware offers it (Command Center RX → Network Settings → Protocol → SMB Client); or let the MFP scan to scanwarden's fallback share."},
}

// Causes returns the vocabulary, in a stable order.
func Causes() []CauseInfo { return append([]CauseInfo(nil), causes...) }

// Info returns the fixed knowledge about c.
func (c Cause) Info() CauseInfo {
	for _, ci := range causes {
		if ci.Cause == c {
			return ci
		}
	}
	return CauseInfo{Cause: c, Summary: fmt.Sprintf("unrecognised cause %q", string(c))}
}

// Valid reports whether c belongs to the vocabulary.
func (c Cause) Valid() bool {
	for _, ci := range causes {
		if ci.Cause == c {
			return true
		}
	}
	return false
}
