package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/msrpc"
	"github.com/scanwarden/scanwarden/smbconn"
)

// A DFS link on the destination's path (STATUS_PATH_NOT_COVERED): the MFP
// follows no DFS referral, so the admin must store the folder the link
// points to. The path step asks the server where that is — MS-DFSNM
// NetrDfsGetInfo over \pipe\netdfs, in the check's own session (the MFP's
// user, its client) — and checks each target as the MFP would, so that the
// fix names a folder that works.

// maxDFSTargets bounds the targets checked (each is a whole check).
const maxDFSTargets = 4

// Errors NetrDfsGetInfo answers for a path it does not know under that
// server name (lmerr.h).
const (
	nerrDfsNoSuchVolume = 2662
	nerrDfsNoSuchServer = 2673
)

// dfsTarget is one folder a DFS link refers clients to, as the MFP would
// store it, and what checking it found.
type dfsTarget struct {
	t       scanwarden.Target
	unc     string
	offline bool   // the namespace refers no client to it
	report  Report // the target's own check
}

// failDFSLink ends the path step at the DFS link parts[:i+1] (below the
// share).
func (c pathStep) failDFSLink(ctx context.Context, s *stepState, parts []string, i int) {
	rel := strings.Join(parts[:i+1], `\`)
	link := c.t.Share + `\` + rel
	linkUNC := scanwarden.UNC(c.t.Host, c.t.Share, rel)
	s.Evidence["dfs_link"] = link
	detail := fmt.Sprintf("%s is a DFS link: the server refers clients to another folder for it (%v), and the MFP follows no DFS referral", link, s.Evidence["nt_status"])
	if c.o.nested != "" {
		// The check is itself nested (the target of a link is itself a
		// link): one referral is asked for, not a chain.
		s.Evidence["dfs_referral"] = "not asked: this folder is checked as " + c.o.nested
		c.fail(s, scanwarden.CauseDFSLink, detail, fmt.Sprintf("Store the folder the link %s points to as the destination on the MFP (Windows Explorer: %s → Properties → DFS shows it).", linkUNC, linkUNC))
		return
	}
	info, err := c.askReferral(ctx, s, rel)
	if err != nil {
		why := referralProblem(err)
		s.Evidence["dfs_referral"] = "not read: " + why
		c.fail(s, scanwarden.CauseDFSLink, detail+"; where it points could not be read ("+why+")",
			fmt.Sprintf("Store the folder the link %s points to as the destination on the MFP (its own server, share and path; Windows Explorer: %s → Properties → DFS shows it). scanwarden could not ask the server for it: %s.", linkUNC, linkUNC, why))
		return
	}
	targets := referredTargets(c.t, info, parts[i+1:])
	if len(targets) == 0 {
		s.Evidence["dfs_targets"] = []string{}
		c.fail(s, scanwarden.CauseDFSLink, fmt.Sprintf("%s is a DFS link with no target: the server refers clients nowhere, and the MFP follows no DFS referral anyway", link),
			fmt.Sprintf("Store the real folder for these scans as the destination on the MFP; the DFS link %s has no target.", linkUNC))
		return
	}
	// The destination's session has done its part (no later step runs):
	// logged off now, the targets' checks keep to one extra connection.
	c.sess.Close()
	c.sess, c.share = nil, nil
	for k := range targets {
		if k < maxDFSTargets {
			targets[k].report = c.nested(ctx, targets[k].t, "the target of the DFS link "+linkUNC)
		}
	}
	c.recordTargets(s, targets)
	detail, fix := dfsAdvice(link, linkUNC, targets)
	if pick(targets) < 0 {
		for _, tg := range targets {
			if cs := tg.report.Verdict.Cause; cs != "" && cs != scanwarden.CauseOK {
				c.also = append(c.also, cs)
			}
		}
	}
	c.fail(s, scanwarden.CauseDFSLink, detail, fix)
}

// askReferral reads the link's targets from the server: NetrDfsGetInfo
// at level 3 for \\host\share\rel, then under the server's NetBIOS and DNS
// names when it does not know the link under the name the MFP stores.
func (c pathStep) askReferral(ctx context.Context, s *stepState, rel string) (msrpc.DFSInfo, error) {
	start := time.Now()
	defer func() { s.Evidence["dfs_referral_ms"] = time.Since(start).Milliseconds() }()
	rctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	p, err := c.sess.OpenPipe(rctx, c.t.Host, "netdfs")
	if err != nil {
		return msrpc.DFSInfo{}, err
	}
	defer p.Close()
	conn, err := msrpc.Bind(p, msrpc.DFS)
	if err != nil {
		return msrpc.DFSInfo{}, err
	}
	names := []string{c.t.Host}
	if c.server != nil {
		for _, n := range []string{c.server.NetBIOSComputer, c.server.DNSComputer} {
			if n != "" && !containsFold(names, n) {
				names = append(names, n)
			}
		}
	}
	entry, info, err := getInfoUnder(func(entry string) (msrpc.DFSInfo, error) { return msrpc.DFSGetInfo(conn, entry) }, names, c.t.Share, rel)
	s.Evidence["dfs_entry"] = entry
	return info, err
}

// getInfoUnder asks about \name\shareel under each of names in turn
// while the server answers that it does not know the link under that name
// (a Windows namespace server may not know itself by the address the MFP
// stores; Samba answers under any).
func getInfoUnder(call func(entry string) (msrpc.DFSInfo, error), names []string, share, rel string) (string, msrpc.DFSInfo, error) {
	var entry string
	var info msrpc.DFSInfo
	var err error
	for _, n := range names {
		entry = scanwarden.UNC(n, share, rel)
		info, err = call(entry)
		var we *msrpc.WinError
		if err == nil || !errors.As(err, &we) || we.Code != nerrDfsNoSuchServer && we.Code != nerrDfsNoSuchVolume {
			break
		}
	}
	return entry, info, err
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// referralProblem says why the referral could not be read, naming the
// status the server answered.
func referralProblem(err error) string {
	var we *msrpc.WinError
	var f *msrpc.Fault
	switch {
	case errors.Is(err, smbconn.ErrNoPipeOverSMB1):
		return "the check replays SMB1, over which scanwarden opens no named pipe"
	case errors.As(err, &we):
		switch we.Code {
		case 5:
			return "NetrDfsGetInfo answered ERROR_ACCESS_DENIED: the account may not read the namespace"
		case nerrDfsNoSuchVolume:
			return "NetrDfsGetInfo answered NERR_DfsNoSuchVolume (2662): the server does not know the link by this path"
		case nerrDfsNoSuchServer:
			return "NetrDfsGetInfo answered NERR_DfsNoSuchServer (2673): the server does not host the namespace under this name"
		}
		return fmt.Sprintf("NetrDfsGetInfo answered error %d", we.Code)
	case errors.As(err, &f):
		return "NetrDfsGetInfo: " + f.Error()
	case errors.Is(err, msrpc.ErrBindRefused):
		return `the server refused the DFS management interface on \pipe\netdfs`
	}
	op := "the server"
	if strings.Contains(err.Error(), "IPC$") {
		op = "the tree connect to IPC$"
	} else if strings.Contains(err.Error(), `\pipe\netdfs`) {
		op = `opening \pipe\netdfs`
	}
	if st, ok := smbconn.StatusOf(err); ok {
		return fmt.Sprintf("%s answered %s", op, st)
	}
	if errors.Is(err, os.ErrPermission) {
		return op + " answered STATUS_ACCESS_DENIED"
	}
	if errors.Is(err, os.ErrNotExist) {
		return op + " answered STATUS_OBJECT_NAME_NOT_FOUND (the server offers no DFS management pipe)"
	}
	return err.Error()
}

// referredTargets turns a link's targets into destinations as the MFP
// would store them: the target's server, its share, the folder below it,
// then the rest of the destination's path below the link. A DFS target
// carries no port: it is reached on 445 (139 when the MFP stores 139).
func referredTargets(t scanwarden.Target, info msrpc.DFSInfo, rest []string) []dfsTarget {
	var out []dfsTarget
	for _, d := range info.Targets {
		share, sub, _ := strings.Cut(strings.Trim(d.Share, `\/`), `\`)
		path := strings.Join(append(strings.FieldsFunc(sub, func(r rune) bool { return r == '\\' || r == '/' }), rest...), `\`)
		tt := t
		tt.Host, tt.Share, tt.Path = strings.TrimPrefix(d.Server, `\\`), share, path
		if t.DialPort() != 139 {
			tt.Port = 0
		}
		out = append(out, dfsTarget{t: tt, unc: scanwarden.UNC(tt.Host, tt.Share, tt.Path), offline: d.Offline()})
	}
	return out
}

// recordTargets puts the targets and what their checks found into the
// evidence, in the server's order.
func (c pathStep) recordTargets(s *stepState, targets []dfsTarget) {
	var uncs, results, offline []string
	for _, tg := range targets {
		uncs = append(uncs, tg.unc)
		results = append(results, tg.result())
		if tg.offline {
			offline = append(offline, tg.unc)
		}
	}
	s.Evidence["dfs_targets"] = uncs
	s.Evidence["dfs_target_results"] = results
	if len(offline) > 0 {
		s.Evidence["dfs_targets_offline"] = offline
	}
	if k := pick(targets); k >= 0 {
		s.Evidence["dfs_store"] = targets[k].unc
	}
}

// result is the target's verdict cause, or why it was not checked.
func (tg dfsTarget) result() string {
	if tg.report.Verdict.Cause == "" {
		return "not checked"
	}
	return string(tg.report.Verdict.Cause)
}

// outcome is result in words for the step's detail.
func (tg dfsTarget) outcome() string {
	switch {
	case tg.report.Verdict.Cause == "":
		return "not checked"
	case tg.works():
		return "works for this MFP"
	}
	return "fails for this MFP: " + string(tg.report.Verdict.Cause)
}

func (tg dfsTarget) works() bool { return tg.report.Verdict.Cause == scanwarden.CauseOK }

// pick is the target to store on the MFP: the first in the server's order
// that works and that the namespace has online, else the first that works
// (-1: none does).
func pick(targets []dfsTarget) int {
	first := -1
	for k, tg := range targets {
		if !tg.works() {
			continue
		}
		if !tg.offline {
			return k
		}
		if first < 0 {
			first = k
		}
	}
	return first
}

// dfsAdvice is the path step's detail and the verdict's fix for a link
// whose targets were read and checked.
func dfsAdvice(link, linkUNC string, targets []dfsTarget) (detail, fix string) {
	var list []string
	for _, tg := range targets {
		item := fmt.Sprintf("%s (%s", tg.unc, tg.outcome())
		if tg.offline {
			item += ", offline in the namespace"
		}
		list = append(list, item+")")
	}
	if len(targets) == 1 {
		detail = fmt.Sprintf("%s is a DFS link to %s, and the MFP follows no DFS referral", link, list[0])
	} else {
		detail = fmt.Sprintf("%s is a DFS link with %d targets, in the server's order: %s; the MFP follows no DFS referral", link, len(targets), strings.Join(list, ", "))
	}
	if k := pick(targets); k >= 0 {
		tg := targets[k]
		fix = fmt.Sprintf("Store %s as the destination on the MFP (Host Name %s, Path %s) instead of the DFS link %s: checked as this MFP would, with the same account, it works.",
			tg.unc, tg.t.Host, strings.TrimPrefix(tg.unc, `\\`+tg.t.Host+`\`), linkUNC)
		if len(targets) > 1 {
			fix += fmt.Sprintf(" Of the link's %d targets it is the first that works%s.", len(targets), othersNote(targets, k))
		}
		return detail, fix
	}
	tg := targets[0]
	fix = fmt.Sprintf("Store the folder the DFS link %s points to as the destination on the MFP, but first make it work: checked as this MFP would, %s fails — %s %s",
		linkUNC, tg.unc, tg.report.Verdict.Summary, tg.report.Verdict.Fix)
	if len(targets) > maxDFSTargets {
		fix += fmt.Sprintf(" (The link's targets after the first %d were not checked.)", maxDFSTargets)
	}
	return detail, fix
}

// othersNote names the targets before k that fail, or that were passed
// over because the namespace has them offline.
func othersNote(targets []dfsTarget, k int) string {
	var notes []string
	for j, tg := range targets {
		switch {
		case j == k:
		case tg.works() && tg.offline:
			notes = append(notes, tg.unc+" works but is offline in the namespace")
		case tg.report.Verdict.Cause != "" && !tg.works() && j < k:
			notes = append(notes, fmt.Sprintf("%s fails (%s: %s)", tg.unc, tg.report.Verdict.Cause, strings.TrimSuffix(tg.report.Verdict.Summary, ".")))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}
