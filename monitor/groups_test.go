package monitor

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
)

type fakeGroupNotifier struct {
	mu   sync.Mutex
	sent []incident.GroupNotice
}

func (n *fakeGroupNotifier) NotifyGroup(_ context.Context, g incident.GroupNotice, _ incident.Incident) {
	n.mu.Lock()
	n.sent = append(n.sent, g)
	n.mu.Unlock()
}

func (n *fakeGroupNotifier) all() []incident.GroupNotice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]incident.GroupNotice(nil), n.sent...)
}

// TestOneCauseOneNotice: three destinations on a server whose name does
// not resolve fail in one round: one group notice naming all three (held
// until the round's checks ran), none of their own; each recovers — the
// first two leave silently, the last closes the group with one notice. A
// destination failing for its own cause is told of on its own.
func TestOneCauseOneNotice(t *testing.T) {
	var fixed atomic.Int32 // destinations a, b, c recover in order
	gn := &fakeGroupNotifier{}
	cfg := Config{CloseAfter: time.Nanosecond, GroupSettle: 5 * time.Second, GroupNotifier: gn}
	dests := []Destination{dest("a", "fs9", "MFP01"), dest("b", "fs9", "MFP01"), dest("c", "fs9", "MFP01"), dest("own", "fs2", "MFP01")}
	fn := func(_ context.Context, t scanwarden.Target) smbcheck.Verdict {
		switch {
		case t.Path == "own":
			return smbcheck.Verdict{Cause: scanwarden.CauseNoWritePermission, KyoceraCode: "2101"}
		case int(fixed.Load()) > strings.Index("abc", t.Path):
			return smbcheck.Verdict{Cause: scanwarden.CauseOK}
		}
		return smbcheck.Verdict{Cause: scanwarden.CauseNameUnresolved, KyoceraCode: "2101"}
	}
	r := newRigGroups(t, cfg, fn, dests...)
	waitFor(t, "the group's notice", func() bool { return len(gn.all()) == 1 })
	waitFor(t, "own's notice", func() bool { return len(r.not.all()) == 1 })
	n := gn.all()[0]
	if n.Change != incident.Opened || n.Group.Subject != "fs9" || n.Group.Phrase != "does not resolve" ||
		strings.Join(n.Group.Members, ",") != "a,b,c" {
		t.Fatalf("notice %+v", n)
	}
	if s := r.not.all(); s[0].inc.Destination != "own" || s[0].ch != incident.Opened {
		t.Fatalf("own notices %+v", s)
	}
	for i, name := range []string{"a", "b", "c"} {
		fixed.Store(int32(i + 1))
		if res, err := r.m.CheckNow(context.Background(), name, nil); err != nil || res.Incident == nil || res.Incident.Open() {
			t.Fatalf("%s: %+v %v", name, res.Incident, err)
		}
		waitFor(t, "the notifications", func() bool { return r.m.Stats().Notifying == 0 })
		want := 1
		if name == "c" {
			want = 2
		}
		if got := gn.all(); len(got) != want {
			t.Fatalf("after %s recovered: group notices %+v", name, got)
		}
	}
	if last := gn.all()[1]; last.Change != incident.Closed || last.Group.State != incident.StateClosed {
		t.Errorf("closing notice %+v", last)
	}
	if s := r.not.all(); len(s) != 1 {
		t.Errorf("per-destination notices %+v", s)
	}
}

// newRigGroups is newRig with the rig's store as the incident groups.
func newRigGroups(t *testing.T, cfg Config, fn func(context.Context, scanwarden.Target) smbcheck.Verdict, dests ...Destination) *rig {
	t.Helper()
	g := &lateGroups{ready: make(chan struct{})}
	cfg.Groups = g
	g.r = newRig(t, cfg, fn, dests...)
	close(g.ready)
	return g.r
}

// lateGroups reaches the rig's store once newRig has opened it (the
// first round of checks may start before it returns).
type lateGroups struct {
	ready chan struct{}
	r     *rig
}

func (g *lateGroups) UpdateIncidentGroups(ctx context.Context, fn func([]incident.Group) ([]incident.Group, []incident.GroupNotice)) ([]incident.GroupNotice, error) {
	<-g.ready
	return g.r.incs.UpdateIncidentGroups(ctx, fn)
}

func (g *lateGroups) IncidentGroup(ctx context.Context, id int64) (incident.Group, bool, error) {
	<-g.ready
	return g.r.incs.IncidentGroup(ctx, id)
}
