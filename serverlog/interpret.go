package serverlog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/internal/msrpc"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// The System events kept whoever they are about.
var systemEvents = map[int]string{
	2017: "the server was unable to allocate from the system nonpaged pool because it reached the configured limit",
	2019: "the server was unable to allocate from the system nonpaged pool because the pool was empty",
	2020: "the server was unable to allocate from the system paged pool because the pool was empty",
	6005: "the event log service started: the server booted",
	6006: "the event log service stopped: the server shut down",
	6008: "the previous shutdown was unexpected",
	1074: "a restart or shutdown was started",
}

// The Security events kept when they name the scan account or the MFP.
const (
	evLogonFailed = 4625
	evCredentials = 4776
	evLockedOut   = 4740
)

// failureReasons are the message ids Windows writes for 4625's
// FailureReason ("%%2313").
var failureReasons = map[string]string{
	"%%2304": "an error occurred during logon",
	"%%2305": "the account has expired",
	"%%2306": "the NetLogon component is not active",
	"%%2307": "the account is locked out",
	"%%2308": "the user has not been granted the requested logon type on this computer",
	"%%2309": "the password has expired",
	"%%2310": "the account is disabled",
	"%%2311": "account logon time restriction violation",
	"%%2312": "the user is not allowed to log on from this computer",
	"%%2313": "unknown user name or bad password",
}

func typeName(t uint16) string {
	switch t {
	case msrpc.TypeError:
		return "error"
	case msrpc.TypeWarning:
		return "warning"
	case msrpc.TypeInformation:
		return "information"
	case msrpc.TypeAuditSuccess:
		return "audit success"
	case msrpc.TypeAuditFailure:
		return "audit failure"
	}
	return "type " + strconv.Itoa(int(t))
}

// interpret keeps the records that bear on the failure, told in words.
func interpret(log string, r msrpc.Record, q Query) (Event, bool) {
	id := int(r.ID())
	ev := Event{Log: log, Record: r.Number, At: r.Generated, ID: id, Type: typeName(r.Type), Source: clean(r.Source), Computer: clean(r.Computer)}
	str := func(i int) string {
		if i < len(r.Strings) {
			return clean(r.Strings[i])
		}
		return ""
	}
	switch {
	case log == "System":
		what, ok := systemEvents[id]
		if !ok {
			return ev, false
		}
		ev.Text = fmt.Sprintf("%d: %s", id, what)
		return ev, true
	case log != "Security":
		return ev, false
	case id == evLogonFailed:
		ev.Account, ev.Workstation, ev.Address = join(str(6), str(5)), str(13), str(19)
		ev.Status, ev.SubStatus, ev.Reason = statusName(str(7)), statusName(str(9)), reason(str(8))
		if !about(q, str(5), ev.Workstation) {
			return ev, false
		}
		ev.Text = fmt.Sprintf("%d: %s failed to log on", id, ev.Account)
		if ev.Workstation != "" && ev.Workstation != "-" {
			ev.Text += " from " + ev.Workstation
		}
		if ev.Address != "" && ev.Address != "-" {
			ev.Text += " (" + ev.Address + ")"
		}
		if ev.Reason != "" {
			ev.Text += ": " + ev.Reason
		}
		if ev.Status != "" {
			ev.Text += "; status " + ev.Status
		}
		if ev.SubStatus != "" && ev.SubStatus != ev.Status {
			ev.Text += ", sub-status " + ev.SubStatus
		}
	case id == evCredentials:
		ev.Account, ev.Workstation, ev.Status = str(1), str(2), statusName(str(3))
		if !about(q, ev.Account, ev.Workstation) {
			return ev, false
		}
		ev.Text = fmt.Sprintf("%d: the credentials of %s", id, ev.Account)
		if ev.Workstation != "" {
			ev.Text += " from " + ev.Workstation
		}
		ev.Text += " were checked: " + or(ev.Status, "status not given")
	case id == evLockedOut:
		ev.Account, ev.Workstation = str(0), str(1)
		if !about(q, ev.Account, ev.Workstation) {
			return ev, false
		}
		ev.Text = fmt.Sprintf("%d: %s was locked out", id, ev.Account)
		if ev.Workstation != "" {
			ev.Text += " by the logons from " + ev.Workstation
		}
	default:
		return ev, false
	}
	return ev, true
}

// about says whether a Security event names the scan account or the MFP.
func about(q Query, account, workstation string) bool {
	name := account
	if i := strings.LastIndexAny(name, `\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	if q.Account != "" && strings.EqualFold(name, q.Account) {
		return true
	}
	return q.Workstation != "" && strings.EqualFold(strings.TrimPrefix(workstation, `\\`), q.Workstation)
}

// statusName turns "0xc000006a" into "0xC000006A STATUS_WRONG_PASSWORD"
// (what the table knows); other text stays as written.
func statusName(s string) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 32)
	if err != nil || !strings.HasPrefix(strings.ToLower(s), "0x") {
		return s
	}
	if v == 0 {
		return ""
	}
	return ntstatus.Status(v).String()
}

func reason(s string) string {
	if r, ok := failureReasons[strings.TrimSpace(s)]; ok {
		return r
	}
	return s
}

func join(domain, user string) string {
	if domain == "" || domain == "-" {
		return user
	}
	return domain + `\` + user
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// clean keeps a server's words printable: control characters become
// spaces, and a string is cut at 256 characters.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 256 {
		s = string(r[:256])
	}
	return s
}

func sortEvents(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
}
