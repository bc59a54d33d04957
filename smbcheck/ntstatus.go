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
)

type ntInfo struct {
	name  string
	cause Cause // the cause wherever it appears; "" when it depends on the step
}

var ntTable = map[NTStatus]ntInfo{
	StatusSuccess:                {"STATUS_SUCCESS", CauseOK},
	StatusMoreProcessingRequired: {"STATUS_MORE_PROCESSING_REQUIRED", ""},
	StatusNoSuchUser:             {"STATUS_NO_SUCH_USER", CauseBadCredentials},
	StatusWrongPassword:          {"STATUS_WRONG_PASSWORD", CauseBadCredentials},
	StatusLogonFailure:           {"STATUS_LOGON_FAILURE", CauseBadCredentials},
	StatusAccountRestriction:     {"STATUS_ACCOUNT_RESTRICTION", CauseBadCredentials},
	StatusInvalidLogonHours:      {"STATUS_INVALID_LOGON_HOURS", CauseLogonHours},
	StatusInvalidWorkstation:     {"STATUS_INVALID_WORKSTATION", CauseWorkstationRestricted},
	StatusPasswordExpired:        {"STATUS_PASSWORD_EXPIRED", CausePasswordExpired},
	StatusAccountDisabled:        {"STATUS_ACCOUNT_DISABLED", CauseAccountDisabled},
	StatusAccessDenied:           {"STATUS_ACCESS_DENIED", ""},
	StatusObjectNameInvalid:      {"STATUS_OBJECT_NAME_INVALID", CausePathNotFound},
	StatusObjectNameNotFound:     {"STATUS_OBJECT_NAME_NOT_FOUND", CausePathNotFound},
	StatusObjectNameCollision:    {"STATUS_OBJECT_NAME_COLLISION", ""},
	StatusObjectPathNotFound:     {"STATUS_OBJECT_PATH_NOT_FOUND", CausePathNotFound},
	StatusDiskFull:               {"STATUS_DISK_FULL", CauseDiskFull},
	StatusInsufficientResources:  {"STATUS_INSUFFICIENT_RESOURCES", ""},
	StatusNotSupported:           {"STATUS_NOT_SUPPORTED", ""},
	StatusNetworkNameDeleted:     {"STATUS_NETWORK_NAME_DELETED", CauseUnknown},
	StatusNetworkAccessDenied:    {"STATUS_NETWORK_ACCESS_DENIED", CauseShareAccessDenied},
	StatusBadNetworkName:         {"STATUS_BAD_NETWORK_NAME", CauseShareNotFound},
	StatusRequestNotAccepted:     {"STATUS_REQUEST_NOT_ACCEPTED", CauseConnectionLimit},
	StatusCannotDelete:           {"STATUS_CANNOT_DELETE", CauseNoDeletePermission},
	StatusAccountExpired:         {"STATUS_ACCOUNT_EXPIRED", CauseAccountExpired},
	StatusInsuffServerResources:  {"STATUS_INSUFF_SERVER_RESOURCES", CauseServerResources},
	StatusPasswordMustChange:     {"STATUS_PASSWORD_MUST_CHANGE", CausePasswordMustChange},
	StatusAccountLockedOut:       {"STATUS_ACCOUNT_LOCKED_OUT", CauseAccountLocked},
	StatusNotFound:               {"STATUS_NOT_FOUND", ""},
	StatusIOTimeout:              {"STATUS_IO_TIMEOUT", CauseTimeout},
	StatusUserSessionDeleted:     {"STATUS_USER_SESSION_DELETED", CauseUnknown},
	StatusQuotaExceeded:          {"STATUS_QUOTA_EXCEEDED", CauseDiskFull},
	StatusLogonTypeNotGranted:    {"STATUS_LOGON_TYPE_NOT_GRANTED", CauseShareAccessDenied},
	StatusTrustedRelationship:    {"STATUS_TRUSTED_RELATIONSHIP_FAILURE", CauseUnknown},
	StatusNoLogonServers:         {"STATUS_NO_LOGON_SERVERS", CauseServerResources},
	StatusSmartcardLogonRequired: {"STATUS_SMARTCARD_LOGON_REQUIRED", CauseBadCredentials},
	StatusInvalidParameter:       {"STATUS_INVALID_PARAMETER", ""},
	StatusNotSameDevice:          {"STATUS_NOT_SAME_DEVICE", ""},
	StatusFileIsADirectory:       {"STATUS_FILE_IS_A_DIRECTORY", ""},
	StatusNotADirectory:          {"STATUS_NOT_A_DIRECTORY", CausePathNotFound},
	StatusSharingViolation:       {"STATUS_SHARING_VIOLATION", ""},
	StatusInvalidNetworkResponse: {"STATUS_INVALID_NETWORK_RESPONSE", CauseUnknown},
	StatusConnectionRefused:      {"STATUS_CONNECTION_REFUSED", CauseHostUnreachable},
	StatusIOReparseTagNotHandled: {"STATUS_IO_REPARSE_TAG_NOT_HANDLED", ""},
	StatusBadImpersonationLevel:  {"STATUS_BAD_IMPERSONATION_LEVEL", ""},
	StatusNetworkSessionExpired:  {"STATUS_NETWORK_SESSION_EXPIRED", CauseUnknown},
	StatusDeletePending:          {"STATUS_DELETE_PENDING", ""},
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
