// Package ntstatus names the NT status codes [MS-ERREF] that a scan
// destination check meets. It is our own table: the SMB library's is internal
// and incomplete for diagnosis. What a status means for a check (its cause)
// is smbcheck's business; this package only names and compares codes.
package ntstatus

import (
	"fmt"
	"os"
)

// Status is an NT status code as a server sent it.
type Status uint32

// The codes a check meets.
const (
	Success                Status = 0x00000000
	MoreProcessingRequired Status = 0xC0000016
	Pending                Status = 0x00000103
	NoSuchUser             Status = 0xC0000064
	WrongPassword          Status = 0xC000006A
	LogonFailure           Status = 0xC000006D
	AccountRestriction     Status = 0xC000006E
	InvalidLogonHours      Status = 0xC000006F
	InvalidWorkstation     Status = 0xC0000070
	PasswordExpired        Status = 0xC0000071
	AccountDisabled        Status = 0xC0000072
	AccessDenied           Status = 0xC0000022
	ObjectNameInvalid      Status = 0xC0000033
	ObjectNameNotFound     Status = 0xC0000034
	ObjectNameCollision    Status = 0xC0000035
	ObjectPathNotFound     Status = 0xC000003A
	DiskFull               Status = 0xC000007F
	InsufficientResources  Status = 0xC000009A
	NotSupported           Status = 0xC00000BB
	NetworkNameDeleted     Status = 0xC00000C9
	NetworkAccessDenied    Status = 0xC00000CA
	BadNetworkName         Status = 0xC00000CC
	RequestNotAccepted     Status = 0xC00000D0
	CannotDelete           Status = 0xC0000121
	AccountExpired         Status = 0xC0000193
	InsuffServerResources  Status = 0xC0000205
	PasswordMustChange     Status = 0xC0000224
	AccountLockedOut       Status = 0xC0000234
	NotFound               Status = 0xC0000225
	IOTimeout              Status = 0xC00000B5
	UserSessionDeleted     Status = 0xC0000203
	QuotaExceeded          Status = 0xC0000044
	LogonTypeNotGranted    Status = 0xC000015B
	PathNotCovered         Status = 0xC0000257
	TrustedRelationship    Status = 0xC000018D
	NoLogonServers         Status = 0xC000005E
	SmartcardLogonRequired Status = 0xC00002FA
	InvalidParameter       Status = 0xC000000D
	NotSameDevice          Status = 0xC00000D4
	FileIsADirectory       Status = 0xC00000BA
	NotADirectory          Status = 0xC0000103
	SharingViolation       Status = 0xC0000043
	InvalidNetworkResponse Status = 0xC00000C3
	ConnectionRefused      Status = 0xC0000236
	IOReparseTagNotHandled Status = 0xC0000279
	BadImpersonationLevel  Status = 0xC00000A5
	NetworkSessionExpired  Status = 0xC000035C
	DeletePending          Status = 0xC0000056
	NTLMBlocked            Status = 0xC0000418
)

var names = map[Status]string{
	Success:                "STATUS_SUCCESS",
	MoreProcessingRequired: "STATUS_MORE_PROCESSING_REQUIRED",
	Pending:                "STATUS_PENDING",
	NoSuchUser:             "STATUS_NO_SUCH_USER",
	WrongPassword:          "STATUS_WRONG_PASSWORD",
	LogonFailure:           "STATUS_LOGON_FAILURE",
	AccountRestriction:     "STATUS_ACCOUNT_RESTRICTION",
	InvalidLogonHours:      "STATUS_INVALID_LOGON_HOURS",
	InvalidWorkstation:     "STATUS_INVALID_WORKSTATION",
	PasswordExpired:        "STATUS_PASSWORD_EXPIRED",
	AccountDisabled:        "STATUS_ACCOUNT_DISABLED",
	AccessDenied:           "STATUS_ACCESS_DENIED",
	ObjectNameInvalid:      "STATUS_OBJECT_NAME_INVALID",
	ObjectNameNotFound:     "STATUS_OBJECT_NAME_NOT_FOUND",
	ObjectNameCollision:    "STATUS_OBJECT_NAME_COLLISION",
	ObjectPathNotFound:     "STATUS_OBJECT_PATH_NOT_FOUND",
	DiskFull:               "STATUS_DISK_FULL",
	InsufficientResources:  "STATUS_INSUFFICIENT_RESOURCES",
	NotSupported:           "STATUS_NOT_SUPPORTED",
	NetworkNameDeleted:     "STATUS_NETWORK_NAME_DELETED",
	NetworkAccessDenied:    "STATUS_NETWORK_ACCESS_DENIED",
	BadNetworkName:         "STATUS_BAD_NETWORK_NAME",
	RequestNotAccepted:     "STATUS_REQUEST_NOT_ACCEPTED",
	CannotDelete:           "STATUS_CANNOT_DELETE",
	AccountExpired:         "STATUS_ACCOUNT_EXPIRED",
	InsuffServerResources:  "STATUS_INSUFF_SERVER_RESOURCES",
	PasswordMustChange:     "STATUS_PASSWORD_MUST_CHANGE",
	AccountLockedOut:       "STATUS_ACCOUNT_LOCKED_OUT",
	NotFound:               "STATUS_NOT_FOUND",
	IOTimeout:              "STATUS_IO_TIMEOUT",
	UserSessionDeleted:     "STATUS_USER_SESSION_DELETED",
	QuotaExceeded:          "STATUS_QUOTA_EXCEEDED",
	LogonTypeNotGranted:    "STATUS_LOGON_TYPE_NOT_GRANTED",
	PathNotCovered:         "STATUS_PATH_NOT_COVERED",
	TrustedRelationship:    "STATUS_TRUSTED_RELATIONSHIP_FAILURE",
	NoLogonServers:         "STATUS_NO_LOGON_SERVERS",
	SmartcardLogonRequired: "STATUS_SMARTCARD_LOGON_REQUIRED",
	InvalidParameter:       "STATUS_INVALID_PARAMETER",
	NotSameDevice:          "STATUS_NOT_SAME_DEVICE",
	FileIsADirectory:       "STATUS_FILE_IS_A_DIRECTORY",
	NotADirectory:          "STATUS_NOT_A_DIRECTORY",
	SharingViolation:       "STATUS_SHARING_VIOLATION",
	InvalidNetworkResponse: "STATUS_INVALID_NETWORK_RESPONSE",
	ConnectionRefused:      "STATUS_CONNECTION_REFUSED",
	IOReparseTagNotHandled: "STATUS_IO_REPARSE_TAG_NOT_HANDLED",
	BadImpersonationLevel:  "STATUS_BAD_IMPERSONATION_LEVEL",
	NetworkSessionExpired:  "STATUS_NETWORK_SESSION_EXPIRED",
	DeletePending:          "STATUS_DELETE_PENDING",
	NTLMBlocked:            "STATUS_NTLM_BLOCKED",
}

// Name is the status's symbolic name, or its hex value.
func (s Status) Name() string {
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("NTSTATUS_0x%08X", uint32(s))
}

// String gives "0xC000006D STATUS_LOGON_FAILURE".
func (s Status) String() string { return fmt.Sprintf("0x%08X %s", uint32(s), s.Name()) }

// Error lets a status travel as an error.
func (s Status) Error() string { return s.String() }

// IsLogonFailure reports whether a session setup status is a plain
// credential rejection, after which other user name forms are worth a try.
// Samba answers STATUS_NOT_FOUND for a UPN with a wrong password.
func (s Status) IsLogonFailure() bool {
	return s == LogonFailure || s == NoSuchUser || s == WrongPassword || s == NotFound
}

// Is lets errors.Is see a status the way it sees the SMB library's errors:
// os.ErrNotExist, os.ErrPermission, os.ErrExist.
func (s Status) Is(target error) bool {
	switch target {
	case os.ErrNotExist:
		return s == ObjectNameNotFound || s == ObjectPathNotFound
	case os.ErrPermission:
		return s == AccessDenied
	case os.ErrExist:
		return s == ObjectNameCollision
	}
	return false
}
