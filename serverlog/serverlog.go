// Package serverlog reads a file server's own story around a failure:
// its Windows event logs over SMB (\pipe\eventlog, MS-EVEN) — Security
// 4625, 4776 and 4740 for the scan account or the MFP's workstation,
// System 2017/2019/2020 (the server's pools) and its starts and stops —
// and how many connections the destination's share holds against its limit
// (\pipe\srvsvc, NetShareGetInfo level 2).
//
// It logs on with a separate read-only account (a member of "Event Log
// Readers" on Windows), never the scan account: its logons spend nothing
// of the scan account's failed-logon budget. What it finds is evidence
// beside the check's verdict, never the verdict: a missing right or a
// server without an event log is said in the Story's Problems, never an
// error of the check.
package serverlog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/msrpc"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// Account is the reading account: User without its domain, Domain the
// NTLM domain field ("" for a UPN or a local account).
type Account struct {
	User     string
	Domain   string
	Password scanwarden.Secret
}

// Name is the account as typed (DOMAIN\user or user).
func (a Account) Name() string {
	if a.Domain != "" {
		return a.Domain + `\` + a.User
	}
	return a.User
}

// Query says what to read on which server.
type Query struct {
	Host string
	Port int // 0: 445
	// Share, when set, has its connections counted.
	Share string
	// Events: read the event logs (a failure to explain); false counts the
	// share's connections only.
	Events bool
	// From and Until bound the events read (the failure's surroundings).
	From, Until time.Time
	// BootsFrom, when before From, reads the System log further back for
	// the server's starts (6005) only: its uptime at the failure.
	BootsFrom time.Time
	// Account and Workstation are the scan account's name (without
	// domain) and the MFP's NetBIOS name: the Security events about either
	// are kept.
	Account     string
	Workstation string
	// Timeout bounds the whole reading (0: 20 s).
	Timeout time.Duration
}

// Limits on what one reading takes.
const (
	readChunk  = 64 << 10
	maxRecords = 5000
)

// Logs read, in order.
var Logs = []string{"Security", "System"}

// ShareUses is the share's connection count against its limit.
type ShareUses struct {
	Share   string `json:"share"`
	Current int    `json:"current"`
	Max     int    `json:"max"` // 0: no limit
}

// Event is one record the server logged that bears on the failure.
type Event struct {
	Log         string    `json:"log"`
	Record      uint32    `json:"record"`
	At          time.Time `json:"at"`
	ID          int       `json:"id"`
	Type        string    `json:"type"`
	Source      string    `json:"source"`
	Computer    string    `json:"computer"`
	Account     string    `json:"account,omitempty"`
	Workstation string    `json:"workstation,omitempty"`
	Address     string    `json:"address,omitempty"`
	Status      string    `json:"status,omitempty"`
	SubStatus   string    `json:"sub_status,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	// Text is the event told in one line.
	Text string `json:"text"`
	// Agrees: the server logged the same status the check met, during the
	// check (package evidence marks it).
	Agrees bool `json:"agrees,omitempty"`
}

// Story is what one reading found.
type Story struct {
	At     time.Time  `json:"at"`
	Reader string     `json:"reader"` // the reading account
	Share  *ShareUses `json:"share,omitempty"`
	// Sessions is how many sessions the server holds besides this
	// reading's own (NetSessionEnum; nil: not counted).
	Sessions *int `json:"sessions,omitempty"`
	// SessionsNot says why the sessions were not counted (NetSessionEnum
	// needs an administrator on Windows and BUILTIN\Administrators on
	// Samba): kept in the report, not repeated on every line.
	SessionsNot string `json:"sessions_not_counted,omitempty"`
	// Logs are the logs read; Events what they hold about the failure,
	// oldest first.
	Logs   []string `json:"logs,omitempty"`
	Events []Event  `json:"events,omitempty"`
	// Boots are the server's starts seen in the System log (6005).
	Boots []time.Time `json:"boots,omitempty"`
	// LogonRefused is the status with which the server refused the
	// reading account's logon ("": it logged on, or no answer).
	LogonRefused string `json:"logon_refused,omitempty"`
	// Problems say plainly what could not be read and why.
	Problems []string `json:"problems,omitempty"`
}

// Read logs on to q.Host with a and reads what q asks. It always returns
// a Story; what could not be read is in its Problems.
func Read(ctx context.Context, a Account, q Query) Story {
	st := Story{At: time.Now().UTC(), Reader: a.Name()}
	if q.Timeout <= 0 {
		q.Timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	addr := net.JoinHostPort(q.Host, strconv.Itoa(scanwarden.DialPort(q.Port)))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("could not reach %s to read its event log: %v", addr, err))
		return st
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	dialer := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: a.User, Password: a.Password.Reveal(), Domain: a.Domain}}
	s, err := dialer.DialConn(ctx, conn, addr)
	if err != nil {
		var re *smb2.ResponseError
		if errors.As(err, &re) {
			st.LogonRefused = explain(err)
		}
		st.Problems = append(st.Problems, fmt.Sprintf("the reading account %s could not log on to %s: %s", a.Name(), q.Host, explain(err)))
		return st
	}
	defer s.Logoff()
	ipc, err := s.WithContext(ctx).Mount("IPC$")
	if err != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("the reading account %s could not open IPC$ on %s: %s", a.Name(), q.Host, explain(err)))
		return st
	}
	defer ipc.Umount()
	ipc = ipc.WithContext(ctx)
	if q.Share != "" {
		var why error
		st.Share, st.Sessions, why, err = serverUses(ipc, q.Host, q.Share)
		if why != nil {
			st.SessionsNot = explain(why)
		}
		if err != nil {
			st.Problems = append(st.Problems, fmt.Sprintf("could not count the connections to share %s: %s", q.Share, explain(err)))
		}
	}
	if q.Events {
		readLogs(ipc, a, q, &st)
	}
	return st
}

// pipe is what msrpc binds on: an open named pipe.
type pipe interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	Close() error
}

func openPipe(ipc *smb2.Share, name string) (pipe, error) {
	f, err := ipc.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// serverUses counts the share's connections against its limit and, where
// the account may ask, the server's sessions besides this one (why: the
// reason they were not counted).
func serverUses(ipc *smb2.Share, host, share string) (uses *ShareUses, sessions *int, why, err error) {
	p, err := openPipe(ipc, "srvsvc")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open \\pipe\\srvsvc: %w", err)
	}
	defer p.Close()
	c, err := msrpc.Bind(p, msrpc.ServerService)
	if err != nil {
		return nil, nil, nil, err
	}
	u, err := msrpc.ShareGetInfo(c, `\\`+host, share)
	if err != nil {
		return nil, nil, nil, err
	}
	uses = &ShareUses{Share: share, Current: int(u.Current)}
	if u.Max != msrpc.Unlimited {
		uses.Max = int(u.Max)
	}
	n, why := msrpc.SessionEnum(c, `\\`+host)
	if why == nil && n >= 1 {
		others := n - 1 // this reading's own
		sessions = &others
	}
	return uses, sessions, why, nil
}

func readLogs(ipc *smb2.Share, a Account, q Query, st *Story) {
	p, err := openPipe(ipc, "eventlog")
	if err != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("%s offers no event log to read (\\pipe\\eventlog: %s)", q.Host, explain(err)))
		return
	}
	defer p.Close()
	c, err := msrpc.Bind(p, msrpc.EventLog)
	if err != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("%s offers no event log to read (%s)", q.Host, explain(err)))
		return
	}
	for _, name := range Logs {
		evs, boots, err := readLog(c, name, q)
		if err != nil {
			st.Problems = append(st.Problems, fmt.Sprintf("%s log of %s not read: %s", name, q.Host, logProblem(err, a)))
			continue
		}
		st.Logs = append(st.Logs, name)
		st.Events = append(st.Events, evs...)
		st.Boots = append(st.Boots, boots...)
	}
	sortEvents(st.Events)
}

// readLog reads one log from its newest record back to q.From (the
// System log back to q.BootsFrom for the starts, at most maxRecords): the
// events in [From, Until] that bear on the failure, the starts in
// [BootsFrom, Until].
func readLog(c *msrpc.Conn, name string, q Query) (evs []Event, boots []time.Time, err error) {
	l, err := msrpc.OpenLog(c, name)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	oldest, count, err := l.Range()
	if err != nil || count == 0 {
		return nil, nil, err
	}
	next := oldest + count - 1
	stop := q.From
	if name == "System" && !q.BootsFrom.IsZero() && q.BootsFrom.Before(stop) {
		stop = q.BootsFrom
	}
	seen := 0
	for seen < maxRecords {
		recs, err := l.Read(next, readChunk)
		if err != nil {
			return evs, boots, err
		}
		if len(recs) == 0 {
			return evs, boots, nil
		}
		for _, r := range recs {
			seen++
			if r.Generated.Before(stop) {
				return evs, boots, nil
			}
			if r.Generated.After(q.Until) {
				continue
			}
			ev, ok := interpret(name, r, q)
			if !ok {
				continue
			}
			if ev.ID == 6005 {
				boots = append(boots, ev.At)
			}
			if !r.Generated.Before(q.From) {
				evs = append(evs, ev)
			}
		}
		last := recs[len(recs)-1].Number
		if last <= oldest || last > next {
			return evs, boots, nil
		}
		next = last - 1
	}
	return evs, boots, nil
}

// logProblem tells why a log could not be read, plainly.
func logProblem(err error, a Account) string {
	var se *msrpc.StatusError
	if errors.As(err, &se) {
		switch ntstatus.Status(se.Status) {
		case 0xC0000039, ntstatus.ObjectNameNotFound: // STATUS_OBJECT_PATH_INVALID: Samba without it in "eventlog list"
			return "the server keeps no such log"
		case ntstatus.AccessDenied:
			return fmt.Sprintf("the reading account %s lacks the right to read it (on Windows: add it to \"Event Log Readers\"; the Security log needs \"Manage auditing and security log\" or a domain controller's Event Log Readers)", a.Name())
		}
		return ntstatus.Status(se.Status).String()
	}
	var f *msrpc.Fault
	if errors.As(err, &f) && f.Status == 5 {
		return fmt.Sprintf("the reading account %s lacks the right to read it", a.Name())
	}
	return err.Error()
}

// explain turns an SMB error into words.
func explain(err error) string {
	var re *smb2.ResponseError
	if errors.As(err, &re) {
		return ntstatus.Status(re.Code).String()
	}
	if errors.Is(err, os.ErrPermission) {
		return "access denied"
	}
	if errors.Is(err, os.ErrNotExist) {
		return "not there"
	}
	if errors.Is(err, msrpc.ErrBindRefused) {
		return "the server refused the event log interface"
	}
	return err.Error()
}

// Lines tells the story for a report, one line each.
func (s *Story) Lines() []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Share != nil {
		if s.Share.Max > 0 {
			out = append(out, fmt.Sprintf("share %s: %d of %d connections in use", s.Share.Share, s.Share.Current, s.Share.Max))
		} else {
			out = append(out, fmt.Sprintf("share %s: %d connections in use (no limit set)", s.Share.Share, s.Share.Current))
		}
	}
	if s.Sessions != nil {
		out = append(out, fmt.Sprintf("%d other sessions open on the server", *s.Sessions))
	}
	for _, e := range s.Events {
		out = append(out, e.At.Format("2006-01-02 15:04:05Z")+" "+e.Log+" "+e.Text)
	}
	if len(s.Logs) > 0 && len(s.Events) == 0 {
		out = append(out, fmt.Sprintf("the %s logs hold nothing about this failure", strings.Join(s.Logs, " and ")))
	}
	out = append(out, s.Problems...)
	return out
}
