package smbcheck

import (
	"context"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// A destination through a DFS link: the check asks the server for the
// link's targets (NetrDfsGetInfo over \pipe\netdfs, as the MFP's user),
// checks each as the MFP would and names the one to store. smb2srv's DFS
// root dfs has the links scans (→ smb2srv.kyolab.test\scans), two
// (→ nosuchshare, then scans) and sealed (→ sealed, which requires SMB3
// encryption); dfsdeny (port 4445) refuses IPC$, dfsnopipe (port 5445)
// has no \pipe\netdfs.
func TestLabDFSLink(t *testing.T) {
	lab := testlab.Require(t)
	target := func(share string, path ...string) string {
		return scanwarden.UNC("smb2srv.kyolab.test", share, strings.Join(path, `\`))
	}
	evidence := func(t *testing.T, r Report, key string, want []string) *Step {
		t.Helper()
		s := stepIs(t, r, StepPath, StatusFail)
		if got := s.Evidence[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v%s", key, got, want, stepsString(r))
		}
		return s
	}
	smb21 := Device{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF}
	cases := []labCase{
		{name: "one-target", dest: "//" + lab.SMB2IP + "/dfs/scans", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := evidence(t, r, "dfs_targets", []string{target("scans")})
			evidence(t, r, "dfs_target_results", []string{"ok"})
			if s.Evidence["dfs_store"] != target("scans") || s.Evidence["dfs_link"] != `dfs\scans` || s.Evidence["dfs_entry"] != `\\`+lab.SMB2IP+`\dfs\scans` {
				t.Errorf("evidence %v", s.Evidence)
			}
			if !strings.HasPrefix(r.Verdict.Fix, `Store `+target("scans")+` as the destination on the MFP (Host Name smb2srv.kyolab.test, Path scans)`) ||
				!strings.Contains(r.Verdict.Fix, "it works") || r.Verdict.KyoceraCode != "1103" || len(r.Verdict.Also) != 0 {
				t.Errorf("verdict %+v", r.Verdict)
			}
		}},
		// Below the link: the rest of the path goes with the target, where
		// the folder does not exist — the target's own cause is named.
		{name: "below-the-link", dest: "//" + lab.SMB2IP + "/dfs/scans/no-such-folder", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := evidence(t, r, "dfs_targets", []string{target("scans", "no-such-folder")})
			evidence(t, r, "dfs_target_results", []string{string(scanwarden.CausePathNotFound)})
			if s.Evidence["dfs_store"] != nil || !strings.Contains(r.Verdict.Fix, "first make it work") ||
				!strings.Contains(r.Verdict.Fix, "no-such-folder") || !reflect.DeepEqual(r.Verdict.Also, []scanwarden.Cause{scanwarden.CausePathNotFound}) {
				t.Errorf("evidence %v, verdict %+v", s.Evidence, r.Verdict)
			}
		}},
		{name: "two-targets", dest: "//" + lab.SMB2IP + "/dfs/two", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := evidence(t, r, "dfs_targets", []string{target("nosuchshare"), target("scans")})
			evidence(t, r, "dfs_target_results", []string{string(scanwarden.CauseShareNotFound), "ok"})
			if s.Evidence["dfs_store"] != target("scans") || !strings.Contains(s.Detail, "2 targets, in the server's order") ||
				!strings.HasPrefix(r.Verdict.Fix, "Store "+target("scans")) || !strings.Contains(r.Verdict.Fix, target("nosuchshare")+" fails (share-not-found") {
				t.Errorf("detail %q, evidence %v, verdict %+v", s.Detail, s.Evidence, r.Verdict)
			}
		}},
		// The target is checked with the MFP's client: an SMB 2.1 MFP
		// that cannot encrypt is refused by the link's target, scanwarden's
		// own client is not.
		{name: "target-own-client", dest: "//" + lab.SMB2IP + "/dfs/sealed", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			evidence(t, r, "dfs_target_results", []string{"ok"})
		}},
		{name: "target-smb2.1-device", dest: "//" + lab.SMB2IP + "/dfs/sealed", user: "scanuser", opts: Options{Device: smb21}, want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			evidence(t, r, "dfs_target_results", []string{string(scanwarden.CauseEncryptionRequired)})
			if !strings.Contains(r.Verdict.Fix, "encrypt") || !reflect.DeepEqual(r.Verdict.Also, []scanwarden.Cause{scanwarden.CauseEncryptionRequired}) {
				t.Errorf("verdict %+v", r.Verdict)
			}
		}},
		// The referral cannot be read: the fix says where Windows shows
		// the target and why scanwarden does not know it.
		{name: "ipc-refused", dest: "//" + lab.SMB2IP + ":4445/dfs/scans", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepPath, StatusFail)
			const why = "the tree connect to IPC$ answered STATUS_ACCESS_DENIED"
			if s.Evidence["dfs_referral"] != "not read: "+why || s.Evidence["dfs_targets"] != nil ||
				!strings.Contains(r.Verdict.Fix, "Properties → DFS") || !strings.Contains(r.Verdict.Fix, why) {
				t.Errorf("evidence %v, verdict %+v", s.Evidence, r.Verdict)
			}
		}},
		{name: "no-netdfs-pipe", dest: "//" + lab.SMB2IP + ":5445/dfs/scans", user: "scanuser", want: scanwarden.CauseDFSLink, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepPath, StatusFail)
			if why, _ := s.Evidence["dfs_referral"].(string); !strings.Contains(why, `opening \pipe\netdfs answered STATUS_OBJECT_NAME_NOT_FOUND`) ||
				!strings.Contains(r.Verdict.Fix, "Properties → DFS") {
				t.Errorf("evidence %v, verdict %+v", s.Evidence, r.Verdict)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}

// TestLabDFSReferralCost: what asking for the referral adds to a check
// that meets a DFS link, in requests on the destination's connection and
// in time (logged: go test -v -run TestLabDFSReferralCost); the targets'
// own checks come on top, on their own connections.
func TestLabDFSReferralCost(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "dfs", Path: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	cost := func(referred bool) (requests int64, took time.Duration, r Report) {
		fc.reset()
		start := time.Now()
		o := Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second}
		if referred {
			o.nested = "the target of a DFS link"
		}
		r = Run(context.Background(), tg, o)
		took = time.Since(start)
		if r.Verdict.Cause != scanwarden.CauseDFSLink {
			t.Fatalf("verdict %s%s", r.Verdict.Cause, stepsString(r))
		}
		_, requests = fc.settled(t)
		return requests, took, r
	}
	cost(false) // Samba starts its RPC helpers on the first pipe: not counted
	r0, d0, _ := cost(true)
	r1, d1, rep := cost(false)
	ms := rep.Step(StepPath).Evidence["dfs_referral_ms"]
	t.Logf("without the referral: %d requests, %v; with it: %d requests (+%d), %v (referral %v ms, the rest the target's check)", r0, d0.Round(time.Millisecond), r1, r1-r0, d1.Round(time.Millisecond), ms)
	if r1-r0 > 8 {
		t.Errorf("the referral costs %d requests, want at most 8 (IPC$, open, bind, call, close, disconnect)", r1-r0)
	}
}

// TestLabDFSTargetSharesLowestDialect: a DFS link whose target is on the
// destination's own server. The target's check states the lowest dialect
// the destination's check learned rather than asking it again (another
// negotiate-only connection while its own logon is on). The server is
// reached through a relay on a loopback address, port 445, that counts the
// connections; the target's name resolves there too.
func TestLabDFSTargetSharesLowestDialect(t *testing.T) {
	lab := testlab.Require(t)
	const relay = "127.77.0.22"
	fc := startFrameCounterOn(t, net.JoinHostPort(relay, "445"), net.JoinHostPort(lab.SMB2IP, "445"))
	tg := scanwarden.Target{Host: relay, Share: "dfs", Path: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	o := Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Resolver: relayResolver{"smb2srv.kyolab.test": relay}}
	r := Run(context.Background(), tg, o)
	conns, _ := fc.settled(t)
	if r.Verdict.Cause != scanwarden.CauseDFSLink {
		t.Fatalf("verdict %s%s", r.Verdict.Cause, stepsString(r))
	}
	if got := r.Step(StepPath).Evidence["dfs_target_results"]; !reflect.DeepEqual(got, []string{"ok"}) {
		t.Fatalf("dfs_target_results %v%s", got, stepsString(r))
	}
	if n := r.Step(StepNegotiate); n.Evidence["lowest_dialect"] != "2.0.2" || n.Evidence["lowest_dialect_asked"] != 1 {
		t.Errorf("the destination's negotiate: %v", n.Evidence)
	}
	// The destination's connection, its question (2.0.2 is taken: one
	// connection) and the target's connection.
	t.Logf("a DFS link to a folder on its own server: %d connections", conns)
	if conns != 3 {
		t.Errorf("%d connections, want 3: the target's check asked the lowest dialect again", conns)
	}
}

// relayResolver resolves the names it holds to the address given (a
// relay's), and no others.
type relayResolver map[string]string

func (r relayResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if a, ok := r[host]; ok {
		return []string{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
