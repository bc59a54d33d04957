package smbcheck

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/msrpc"
	"github.com/scanwarden/scanwarden/smbconn"
)

// A link's targets become destinations as the MFP would store them.
func TestReferredTargets(t *testing.T) {
	info := msrpc.DFSInfo{Targets: []msrpc.DFSTarget{
		{Server: "fs1.corp.example", Share: "scans", State: msrpc.TargetOnline},
		{Server: `\\FS2`, Share: `scans\2026\`, State: msrpc.TargetOffline},
	}}
	for _, c := range []struct {
		port int
		rest []string
		want []string // UNC, port
	}{
		{445, nil, []string{`\\fs1.corp.example\scans 445`, `\\FS2\scans\2026 445`}},
		// The rest of the destination's path below the link follows.
		{0, []string{"team", "in"}, []string{`\\fs1.corp.example\scans\team\in 445`, `\\FS2\scans\2026\team\in 445`}},
		// A referral carries no port: a DFS root on another port refers
		// to targets on 445; an MFP storing 139 keeps it.
		{3445, nil, []string{`\\fs1.corp.example\scans 445`, `\\FS2\scans\2026 445`}},
		{139, nil, []string{`\\fs1.corp.example\scans 139`, `\\FS2\scans\2026 139`}},
	} {
		tg := scanwarden.Target{Host: "ns.corp.example", Port: c.port, Share: "dfs", Path: "link", User: "scan", Workstation: "MFP01"}
		var got []string
		for _, d := range referredTargets(tg, info, c.rest) {
			got = append(got, fmt.Sprintf("%s %d", d.unc, d.t.DialPort()))
			if d.t.User != "scan" || d.t.Workstation != "MFP01" || scanwarden.UNC(d.t.Host, d.t.Share, d.t.Path) != d.unc {
				t.Errorf("target %+v", d.t)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("port %d, rest %v: %v, want %v", c.port, c.rest, got, c.want)
		}
	}
	if ts := referredTargets(scanwarden.Target{}, info, nil); ts[0].offline || !ts[1].offline {
		t.Errorf("offline: %v %v", ts[0].offline, ts[1].offline)
	}
}

// The target to store: the first that works and is online, else the first
// that works.
func TestDFSPick(t *testing.T) {
	tg := func(c scanwarden.Cause, offline bool) dfsTarget {
		return dfsTarget{unc: `\\` + string(c), offline: offline, report: Report{Verdict: Verdict{Cause: c, Summary: "Summary of " + string(c) + "."}}}
	}
	for _, c := range []struct {
		targets []dfsTarget
		want    int
	}{
		{[]dfsTarget{tg(scanwarden.CauseOK, false)}, 0},
		{[]dfsTarget{tg(scanwarden.CauseShareNotFound, false), tg(scanwarden.CauseOK, false)}, 1},
		{[]dfsTarget{tg(scanwarden.CauseOK, true), tg(scanwarden.CauseOK, false)}, 1},
		{[]dfsTarget{tg(scanwarden.CauseOK, true), tg(scanwarden.CauseDiskFull, false)}, 0},
		{[]dfsTarget{tg(scanwarden.CauseDiskFull, false), {unc: `\\unchecked`}}, -1},
	} {
		if got := pick(c.targets); got != c.want {
			t.Errorf("%v: pick %d, want %d", c.targets, got, c.want)
		}
	}
	_, fix := dfsAdvice(`dfs\l`, `\\ns\dfs\l`, []dfsTarget{tg(scanwarden.CauseOK, true), tg(scanwarden.CauseShareNotFound, false), tg(scanwarden.CauseOK, false)})
	if !strings.HasPrefix(fix, `Store \\ok as`) || !strings.Contains(fix, `\\ok works but is offline in the namespace; \\share-not-found fails (share-not-found: Summary of share-not-found)`) {
		t.Errorf("fix %q", fix)
	}
	detail, fix := dfsAdvice(`dfs\l`, `\\ns\dfs\l`, []dfsTarget{tg(scanwarden.CauseDiskFull, false), tg(scanwarden.CauseOK, false), tg(scanwarden.CauseOK, false), tg(scanwarden.CauseOK, false), {unc: `\\fifth`}})
	if !strings.Contains(detail, `\\fifth (not checked)`) || !strings.Contains(detail, `\\disk-full (fails for this MFP: disk-full)`) || !strings.HasPrefix(fix, `Store \\ok`) {
		t.Errorf("detail %q, fix %q", detail, fix)
	}
	_, fix = dfsAdvice(`dfs\l`, `\\ns\dfs\l`, []dfsTarget{tg(scanwarden.CauseDiskFull, false), tg(scanwarden.CauseDiskFull, false), tg(scanwarden.CauseDiskFull, false), tg(scanwarden.CauseDiskFull, false), {unc: `\\fifth`}})
	if !strings.Contains(fix, "first make it work") || !strings.Contains(fix, "after the first 4 were not checked") {
		t.Errorf("fix %q", fix)
	}
}

// The link is asked for under the stored host, then under the server's
// own names while the server does not know it under the one before — a
// Windows namespace server answering NERR_DfsNoSuchServer for the address
// the MFP stores is a named fake (Samba answers under any name).
func TestGetInfoUnder(t *testing.T) {
	var asked []string
	call := func(entry string) (msrpc.DFSInfo, error) {
		asked = append(asked, entry)
		if strings.HasPrefix(entry, `\\FS1\`) {
			return msrpc.DFSInfo{EntryPath: entry}, nil
		}
		return msrpc.DFSInfo{}, &msrpc.WinError{Op: "dfs info", Code: nerrDfsNoSuchServer}
	}
	entry, info, err := getInfoUnder(call, []string{"10.0.0.5", "FS1", "fs1.corp.example"}, "dfs", `team\scans`)
	if err != nil || entry != `\\FS1\dfs\team\scans` || info.EntryPath != entry || len(asked) != 2 {
		t.Errorf("entry %q, %+v, %v; asked %v", entry, info, err, asked)
	}
	// Any other answer ends the search.
	asked = nil
	denied := func(entry string) (msrpc.DFSInfo, error) {
		asked = append(asked, entry)
		return msrpc.DFSInfo{}, &msrpc.WinError{Op: "dfs info", Code: 5}
	}
	if _, _, err := getInfoUnder(denied, []string{"10.0.0.5", "FS1"}, "dfs", "l"); err == nil || len(asked) != 1 {
		t.Errorf("%v; asked %v", err, asked)
	}
}

// Why a referral could not be read names what the server answered. The
// RPC-level refusals come from Windows (named fakes here): Samba answered
// every ordinary user in the lab; the SMB-level ones are TestLabDFSLink's.
func TestReferralProblem(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&msrpc.WinError{Op: "dfs info", Code: 5}, "NetrDfsGetInfo answered ERROR_ACCESS_DENIED"},
		{&msrpc.WinError{Op: "dfs info", Code: nerrDfsNoSuchVolume}, "NERR_DfsNoSuchVolume (2662)"},
		{&msrpc.WinError{Op: "dfs info", Code: 1726}, "NetrDfsGetInfo answered error 1726"},
		{fmt.Errorf("rpc call 4: %w", &msrpc.Fault{Status: 5}), "NetrDfsGetInfo: rpc fault: access denied"},
		{fmt.Errorf("bind: %w", msrpc.ErrBindRefused), `refused the DFS management interface on \pipe\netdfs`},
		{smbconn.ErrNoPipeOverSMB1, "replays SMB1"},
		{errors.New("rpc bind: EOF"), "rpc bind: EOF"},
	} {
		if got := referralProblem(c.err); !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}
