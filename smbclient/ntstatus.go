package smbclient

import (
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// What an NT status means for a check or a delivery. The codes and their
// names are internal/ntstatus; their causes, which depend on the operation,
// are here.

// ntInfo is one row of the table: a status's cause, and the operations
// where it means something else. Adding a cause for a status is one row here (plus
// the cause's fix in the root package's cause.go, and its name in
// internal/ntstatus); no switch elsewhere.
type ntInfo struct {
	cause scanwarden.Cause            // the cause wherever it appears ("": unknown)
	at    map[string]scanwarden.Cause // per-operation overrides (an Error's Op)
}

// Per-operation overrides shared by several rows.
var (
	// ACCESS_DENIED refuses the share at tree connect, the password at
	// session setup, deleting at remove, writing elsewhere.
	deniedAt = map[string]scanwarden.Cause{opTree: scanwarden.CauseShareAccessDenied, opLogon: scanwarden.CauseBadCredentials,
		opRemove: scanwarden.CauseNoDeletePermission}
	// Samba's "max connections" answers INSUFFICIENT_RESOURCES at tree
	// connect; during logon it is the server's session limit.
	connLimitAt = map[string]scanwarden.Cause{opTree: scanwarden.CauseConnectionLimit, opLogon: scanwarden.CauseConnectionLimit}
	// Samba answers NOT_FOUND for a UPN with a wrong password.
	logonAt = map[string]scanwarden.Cause{opLogon: scanwarden.CauseBadCredentials}
)

// The operations whose statuses mean something of their own.
const (
	opConnect = "connect"
	opLogon   = "logon"
	opTree    = "tree connect"
	opRemove  = "remove"
)

var ntTable = map[ntstatus.Status]ntInfo{
	ntstatus.Success:                {scanwarden.CauseOK, nil},
	ntstatus.MoreProcessingRequired: {"", nil},
	ntstatus.NoSuchUser:             {scanwarden.CauseBadCredentials, nil},
	ntstatus.WrongPassword:          {scanwarden.CauseBadCredentials, nil},
	ntstatus.LogonFailure:           {scanwarden.CauseBadCredentials, nil},
	ntstatus.AccountRestriction:     {scanwarden.CauseAccountRestricted, nil},
	ntstatus.InvalidLogonHours:      {scanwarden.CauseLogonHours, nil},
	ntstatus.InvalidWorkstation:     {scanwarden.CauseWorkstationRestricted, nil},
	ntstatus.PasswordExpired:        {scanwarden.CausePasswordExpired, nil},
	ntstatus.AccountDisabled:        {scanwarden.CauseAccountDisabled, nil},
	ntstatus.AccessDenied:           {scanwarden.CauseNoWritePermission, deniedAt},
	ntstatus.ObjectNameInvalid:      {scanwarden.CausePathNotFound, nil},
	ntstatus.ObjectNameNotFound:     {scanwarden.CausePathNotFound, nil},
	ntstatus.ObjectNameCollision:    {"", nil},
	ntstatus.ObjectPathNotFound:     {scanwarden.CausePathNotFound, nil},
	ntstatus.DiskFull:               {scanwarden.CauseDiskFull, nil},
	ntstatus.InsufficientResources:  {scanwarden.CauseServerResources, connLimitAt},
	ntstatus.NotSupported:           {"", nil},
	ntstatus.NetworkNameDeleted:     {scanwarden.CauseUnknown, nil},
	ntstatus.NetworkAccessDenied:    {scanwarden.CauseShareAccessDenied, nil},
	ntstatus.BadNetworkName:         {scanwarden.CauseShareNotFound, nil},
	ntstatus.RequestNotAccepted:     {scanwarden.CauseConnectionLimit, nil},
	ntstatus.CannotDelete:           {scanwarden.CauseNoWritePermission, deniedAt},
	ntstatus.AccountExpired:         {scanwarden.CauseAccountExpired, nil},
	ntstatus.InsuffServerResources:  {scanwarden.CauseServerResources, nil},
	ntstatus.PasswordMustChange:     {scanwarden.CausePasswordMustChange, nil},
	ntstatus.AccountLockedOut:       {scanwarden.CauseAccountLocked, nil},
	ntstatus.NotFound:               {scanwarden.CausePathNotFound, logonAt},
	ntstatus.IOTimeout:              {scanwarden.CauseTimeout, nil},
	ntstatus.UserSessionDeleted:     {scanwarden.CauseUnknown, nil},
	ntstatus.QuotaExceeded:          {scanwarden.CauseDiskFull, nil},
	ntstatus.LogonTypeNotGranted:    {scanwarden.CauseLogonTypeNotGranted, nil},
	ntstatus.PathNotCovered:         {scanwarden.CauseDFSLink, nil},
	ntstatus.TrustedRelationship:    {scanwarden.CauseUnknown, nil},
	ntstatus.NoLogonServers:         {scanwarden.CauseServerResources, nil},
	ntstatus.SmartcardLogonRequired: {scanwarden.CauseSmartcardRequired, nil},
	ntstatus.InvalidParameter:       {"", nil},
	ntstatus.NotSameDevice:          {"", nil},
	ntstatus.FileIsADirectory:       {"", nil},
	ntstatus.NotADirectory:          {scanwarden.CausePathNotFound, nil},
	ntstatus.SharingViolation:       {"", nil},
	ntstatus.InvalidNetworkResponse: {scanwarden.CauseUnknown, nil},
	ntstatus.ConnectionRefused:      {scanwarden.CauseHostUnreachable, nil},
	ntstatus.IOReparseTagNotHandled: {"", nil},
	ntstatus.BadImpersonationLevel:  {"", nil},
	ntstatus.NetworkSessionExpired:  {scanwarden.CauseUnknown, nil},
	ntstatus.DeletePending:          {"", nil},
	ntstatus.NTLMBlocked:            {scanwarden.CauseNTLMBlocked, nil},
}

// JudgesNoPassword reports whether a logon refused with st judged no
// password — the server refused NTLM itself, or the account's kind of
// logon after its password was right — so it spends none of the failed-
// logon budget.
func JudgesNoPassword(st ntstatus.Status) bool {
	return st == ntstatus.NTLMBlocked || st == ntstatus.AccountRestriction || st == ntstatus.LogonTypeNotGranted || st == ntstatus.SmartcardLogonRequired
}
