package smbcheck

import "github.com/scanwarden/scanwarden/internal/ntstatus"

// What an NT status means for a check. The codes and their names are
// internal/ntstatus; their causes, which depend on the step, are here.

// ntInfo is one row of the table: a status's cause, and the steps where it
// means something else. Adding a cause for a status is one row here (plus
// the cause's fix in cause.go, and its name in internal/ntstatus); no switch
// elsewhere.
type ntInfo struct {
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

var ntTable = map[ntstatus.Status]ntInfo{
	ntstatus.Success:                {CauseOK, nil},
	ntstatus.MoreProcessingRequired: {"", nil},
	ntstatus.NoSuchUser:             {CauseBadCredentials, nil},
	ntstatus.WrongPassword:          {CauseBadCredentials, nil},
	ntstatus.LogonFailure:           {CauseBadCredentials, nil},
	ntstatus.AccountRestriction:     {CauseAccountRestricted, nil},
	ntstatus.InvalidLogonHours:      {CauseLogonHours, nil},
	ntstatus.InvalidWorkstation:     {CauseWorkstationRestricted, nil},
	ntstatus.PasswordExpired:        {CausePasswordExpired, nil},
	ntstatus.AccountDisabled:        {CauseAccountDisabled, nil},
	ntstatus.AccessDenied:           {CauseNoWritePermission, deniedAt},
	ntstatus.ObjectNameInvalid:      {CausePathNotFound, nil},
	ntstatus.ObjectNameNotFound:     {CausePathNotFound, nil},
	ntstatus.ObjectNameCollision:    {"", nil},
	ntstatus.ObjectPathNotFound:     {CausePathNotFound, nil},
	ntstatus.DiskFull:               {CauseDiskFull, nil},
	ntstatus.InsufficientResources:  {CauseServerResources, connLimitAt},
	ntstatus.NotSupported:           {"", nil},
	ntstatus.NetworkNameDeleted:     {CauseUnknown, nil},
	ntstatus.NetworkAccessDenied:    {CauseShareAccessDenied, nil},
	ntstatus.BadNetworkName:         {CauseShareNotFound, nil},
	ntstatus.RequestNotAccepted:     {CauseConnectionLimit, nil},
	ntstatus.CannotDelete:           {CauseNoWritePermission, deniedAt},
	ntstatus.AccountExpired:         {CauseAccountExpired, nil},
	ntstatus.InsuffServerResources:  {CauseServerResources, nil},
	ntstatus.PasswordMustChange:     {CausePasswordMustChange, nil},
	ntstatus.AccountLockedOut:       {CauseAccountLocked, nil},
	ntstatus.NotFound:               {CausePathNotFound, logonAt},
	ntstatus.IOTimeout:              {CauseTimeout, nil},
	ntstatus.UserSessionDeleted:     {CauseUnknown, nil},
	ntstatus.QuotaExceeded:          {CauseDiskFull, nil},
	ntstatus.LogonTypeNotGranted:    {CauseLogonTypeNotGranted, nil},
	ntstatus.PathNotCovered:         {CauseDFSLink, nil},
	ntstatus.TrustedRelationship:    {CauseUnknown, nil},
	ntstatus.NoLogonServers:         {CauseServerResources, nil},
	ntstatus.SmartcardLogonRequired: {CauseSmartcardRequired, nil},
	ntstatus.InvalidParameter:       {"", nil},
	ntstatus.NotSameDevice:          {"", nil},
	ntstatus.FileIsADirectory:       {"", nil},
	ntstatus.NotADirectory:          {CausePathNotFound, nil},
	ntstatus.SharingViolation:       {"", nil},
	ntstatus.InvalidNetworkResponse: {CauseUnknown, nil},
	ntstatus.ConnectionRefused:      {CauseHostUnreachable, nil},
	ntstatus.IOReparseTagNotHandled: {"", nil},
	ntstatus.BadImpersonationLevel:  {"", nil},
	ntstatus.NetworkSessionExpired:  {CauseUnknown, nil},
	ntstatus.DeletePending:          {"", nil},
	ntstatus.NTLMBlocked:            {CauseNTLMBlocked, nil},
}

// judgesNoPassword reports whether a logon refused with st judged no
// password — the server refused NTLM itself, or the account's kind of
// logon after its password was right — so it spends none of the failed-
// logon budget.
func judgesNoPassword(st ntstatus.Status) bool {
	return st == ntstatus.NTLMBlocked || st == ntstatus.AccountRestriction || st == ntstatus.LogonTypeNotGranted || st == ntstatus.SmartcardLogonRequired
}
