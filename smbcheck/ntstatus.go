package smbcheck

import (
	"fmt"
	"os"
)

// NTStatus is an NT status code [MS-ERREF] as a server sent it. It is our
// own table: the SMB library's is internal and incomplete for diagnosis.
type NTStatus uint32

// NT status codes that a scan destination check meets.
const (
	StatusSuccess                NTStatus = 0x00000000
	StatusMoreProcessingRequired NTStatus = 0xC0000016
	StatusNoSuchUser             NTStatus = 0xC0000064
	StatusWrongPassword          NTStatus = 0xC000006A
	StatusLogonFailure           NTStatus = 0xC000006D
	StatusAccountRestriction     NTStatus = 0xC000006E
	StatusInvalidLogonHours      NTStatus = 0xC000006F
	StatusInvalidWorkstation     NTStatus = 0xC0000070
	StatusPasswordExpired        NTStatus = 0xC0000071
	StatusAccountDisabled        NTStatus = 0xC0000072
	StatusAccessDenied           NTStatus = 0xC0000022
	StatusObjectNameInvalid      NTStatus = 0xC0000033
	StatusObjectNameNotFound     NTStatus = 0xC0000034
	StatusObjectNameCollision    NTStatus = 0xC0000035
	StatusObjectPathNotFound     NTStatus = 0xC000003A
	StatusDiskFull               NTStatus = 0xC000007F
	StatusInsufficientResources  NTStatus = 0xC000009A
	StatusNotSupported           NTStatus = 0xC00000BB
	StatusNetworkNameDeleted     NTStatus = 0xC00000C9
	StatusNetworkAccessDenied    NTStatus = 0xC00000CA
	StatusBadNetworkName         NTStatus = 0xC00000CC
	StatusRequestNotAccepted     NTStatus = 0xC00000D0
	StatusCannotDelete           NTStatus = 0xC0000121
	StatusAccountExpired         NTStatus = 0xC0000193
	StatusInsuffServerResources  NTStatus = 0xC0000205
	StatusPasswordMustChange     NTStatus = 0xC0000224
	StatusAccountLockedOut       NTStatus = 0xC0000234
	StatusNotFound               NTStatus = 0xC0000225
	StatusIOTimeout              NTStatus = 0xC00000B5
	StatusUserSessionDeleted     NTStatus = 0xC0000203
	StatusQuotaExceeded          NTStatus = 0xC0000044
	StatusLogonTypeNotGranted    NTStatus = 0xC000015B
	StatusTrustedRelationship    NTStatus = 0xC000018D
	StatusNoLogonServers         NTStatus = 0xC000005E
	StatusSmartcardLogonRequired NTStatus = 0xC00002FA
	StatusInvalidParameter       NTStatus = 0xC000000D
	StatusNotSameDevice          NTStatus = 0xC00000D4
	StatusFileIsADirectory       NTStatus = 0xC00000BA
	StatusNotADirectory          NTStatus = 0xC0000103
	StatusSharingViolation       NTStatus = 0xC0000043
	StatusInvalidNetworkResponse NTStatus = 0xC00000C3
	StatusConnectionRefused      NTStatus = 0xC0000236
	StatusIOReparseTagNotHandled NTStatus = 0xC0000279
	StatusBadImpersonationLevel  NTStatus = 0xC00000A5
	StatusNetworkSessionExpired  NTStatus = 0xC000035C
	StatusDeletePending          NTStatus = 0xC0000056
	StatusNTLMBlocked            NTStatus = 0xC0000418
)

// ntInfo is one row of the table: a status's name, its cause, and the
// steps where it means something else. Adding a cause for a status is one
// row here (plus the cause's fix in cause.go); no switch elsewhere.
type ntInfo struct {
	name  string
	cause Cause            // the cause wherever it appears ("": unknown)
	at    map[string]Cause // per-step overrides (step id, or "delete")
}

// Per-step overrides shared by several rows.
var (
	// ACCESS_DENIED refuses the share at tree connect, the password at
	// session setup, deleting at delete, writing elsewhere.
	deniedAt = map[string]Cause{StepTree: CauseShareAccessDenied, StepSession: CauseBadCredentials, StepForms: CauseBadCredentials,
		stepDelete: CauseNoDeletePermission}
	// Samba's "max connections" answers INSUFFICIENT_RESOURCES at tree
	// connect; during logon it is the server's session limit.
	connLimitAt = map[string]Cause{StepTree: CauseConnectionLimit, StepSession: CauseConnectionLimit, StepForms: CauseConnectionLimit}
	// Samba answers NOT_FOUND for a UPN with a wrong password.
	logonAt = map[string]Cause{StepSession: CauseBadCredentials, StepForms: CauseBadCredentials}
)

// stepDelete is the canary's delete within the write step, judged apart.
const stepDelete = "delete"

var ntTable = map[NTStatus]ntInfo{
	StatusSuccess:                {"STATUS_SUCCESS", CauseOK, nil},
	StatusMoreProcessingRequired: {"STATUS_MORE_PROCESSING_REQUIRED", "", nil},
	StatusNoSuchUser:             {"STATUS_NO_SUCH_USER", CauseBadCredentials, nil},
	StatusWrongPassword:          {"STATUS_WRONG_PASSWORD", CauseBadCredentials, nil},
	StatusLogonFailure:           {"STATUS_LOGON_FAILURE", CauseBadCredentials, nil},
	StatusAccountRestriction:     {"STATUS_ACCOUNT_RESTRICTION", CauseBadCredentials, nil},
	StatusInvalidLogonHours:      {"STATUS_INVALID_LOGON_HOURS", CauseLogonHours, nil},
	StatusInvalidWorkstation:     {"STATUS_INVALID_WORKSTATION", CauseWorkstationRestricted, nil},
	StatusPasswordExpired:        {"STATUS_PASSWORD_EXPIRED", CausePasswordExpired, nil},
	StatusAccountDisabled:        {"STATUS_ACCOUNT_DISABLED", CauseAccountDisabled, nil},
	StatusAccessDenied:           {"STATUS_ACCESS_DENIED", CauseNoWritePermission, deniedAt},
	StatusObjectNameInvalid:      {"STATUS_OBJECT_NAME_INVALID", CausePathNotFound, nil},
	StatusObjectNameNotFound:     {"STATUS_OBJECT_NAME_NOT_FOUND", CausePathNotFound, nil},
	StatusObjectNameCollision:    {"STATUS_OBJECT_NAME_COLLISION", "", nil},
	StatusObjectPathNotFound:     {"STATUS_OBJECT_PATH_NOT_FOUND", CausePathNotFound, nil},
	StatusDiskFull:               {"STATUS_DISK_FULL", CauseDiskFull, nil},
	StatusInsufficientResources:  {"STATUS_INSUFFICIENT_RESOURCES", CauseServerResources, connLimitAt},
	StatusNotSupported:           {"STATUS_NOT_SUPPORTED", "", nil},
	StatusNetworkNameDeleted:     {"STATUS_NETWORK_NAME_DELETED", CauseUnknown, nil},
	StatusNetworkAccessDenied:    {"STATUS_NETWORK_ACCESS_DENIED", CauseShareAccessDenied, nil},
	StatusBadNetworkName:         {"STATUS_BAD_NETWORK_NAME", CauseShareNotFound, nil},
	StatusRequestNotAccepted:     {"STATUS_REQUEST_NOT_ACCEPTED", CauseConnectionLimit, nil},
	StatusCannotDelete:           {"STATUS_CANNOT_DELETE", CauseNoWritePermission, deniedAt},
	StatusAccountExpired:         {"STATUS_ACCOUNT_EXPIRED", CauseAccountExpired, nil},
	StatusInsuffServerResources:  {"STATUS_INSUFF_SERVER_RESOURCES", CauseServerResources, nil},
	StatusPasswordMustChange:     {"STATUS_PASSWORD_MUST_CHANGE", CausePasswordMustChange, nil},
	StatusAccountLockedOut:       {"STATUS_ACCOUNT_LOCKED_OUT", CauseAccountLocked, nil},
	StatusNotFound:               {"STATUS_NOT_FOUND", CausePathNotFound, logonAt},
	StatusIOTimeout:              {"STATUS_IO_TIMEOUT", CauseTimeout, nil},
	StatusUserSessionDeleted:     {"STATUS_USER_SESSION_DELETED", CauseUnknown, nil},
	StatusQuotaExceeded:          {"STATUS_QUOTA_EXCEEDED", CauseDiskFull, nil},
	StatusLogonTypeNotGranted:    {"STATUS_LOGON_TYPE_NOT_GRANTED", CauseShareAccessDenied, nil},
	StatusTrustedRelationship:    {"STATUS_TRUSTED_RELATIONSHIP_FAILURE", CauseUnknown, nil},
	StatusNoLogonServers:         {"STATUS_NO_LOGON_SERVERS", CauseServerResources, nil},
	StatusSmartcardLogonRequired: {"STATUS_SMARTCARD_LOGON_REQUIRED", CauseBadCredentials, nil},
	StatusInvalidParameter:       {"STATUS_INVALID_PARAMETER", "", nil},
	StatusNotSameDevice:          {"STATUS_NOT_SAME_DEVICE", "", nil},
	StatusFileIsADirectory:       {"STATUS_FILE_IS_A_DIRECTORY", "", nil},
	StatusNotADirectory:          {"STATUS_NOT_A_DIRECTORY", CausePathNotFound, nil},
	StatusSharingViolation:       {"STATUS_SHARING_VIOLATION", "", nil},
	StatusInvalidNetworkResponse: {"STATUS_INVALID_NETWORK_RESPONSE", CauseUnknown, nil},
	StatusConnectionRefused:      {"STATUS_CONNECTION_REFUSED", CauseHostUnreachable, nil},
	StatusIOReparseTagNotHandled: {"STATUS_IO_REPARSE_TAG_NOT_HANDLED", "", nil},
	StatusBadImpersonationLevel:  {"STATUS_BAD_IMPERSONATION_LEVEL", "", nil},
	StatusNetworkSessionExpired:  {"STATUS_NETWORK_SESSION_EXPIRED", CauseUnknown, nil},
	StatusDeletePending:          {"STATUS_DELETE_PENDING", "", nil},
	StatusNTLMBlocked:            {"STATUS_NTLM_BLOCKED", CauseNTLMBlocked, nil},
}

// Name is the status's symbolic name, or its hex value.
func (s NTStatus) Name() string {
	if i, ok := ntTable[s]; ok {
		return i.name
	}
	return fmt.Sprintf("NTSTATUS_0x%08X", uint32(s))
}

// String gives "0xC000006D STATUS_LOGON_FAILURE".
func (s NTStatus) String() string { return fmt.Sprintf("0x%08X %s", uint32(s), s.Name()) }

// Error lets a status travel as an error.
func (s NTStatus) Error() string { return s.String() }

func ntError(code uint32) error { return NTStatus(code) }

// IsLogonFailure reports whether a session setup status is a plain
// credential rejection, after which other user name forms are worth a try.
// Samba answers STATUS_NOT_FOUND for a UPN with a wrong password.
func (s NTStatus) IsLogonFailure() bool {
	return s == StatusLogonFailure || s == StatusNoSuchUser || s == StatusWrongPassword || s == StatusNotFound
}

// Is lets errors.Is see a status the way it sees the SMB library's errors:
// os.ErrNotExist, os.ErrPermission, os.ErrExist.
func (s NTStatus) Is(target error) bool {
	switch target {
	case os.ErrNotExist:
		return s == StatusObjectNameNotFound || s == StatusObjectPathNotFound
	case os.ErrPermission:
		return s == StatusAccessDenied
	case os.ErrExist:
		return s == StatusObjectNameCollision
	}
	return false
}
