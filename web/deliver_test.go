package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/receiver"
)

// TestDeliverOneScan: the held-scans page's per-scan button asks for that
// scan id only, even with another scan held for the same destination, and
// the audit log records it with the id.
func TestDeliverOneScan(t *testing.T) {
	s := newSite(t)
	s.recv.mu.Lock()
	s.recv.scans = append(s.recv.scans, receiver.ScanView{ID: 4, Destination: "reception", Name: "second.pdf", Size: 5, State: string(receiver.Held), ReceivedAt: s.clock.t})
	s.recv.mu.Unlock()
	c := s.login()
	_, body := s.get(c, "/receiver")
	for _, want := range []string{"/receiver/scans/1/deliver", "/receiver/scans/4/deliver", "May connect: <code>10.1.2.7/32</code>, <code>10.1.3.0/24</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("receiver page lacks %q", want)
		}
	}
	resp, _ := s.post(c, "/receiver/scans/4/deliver", nil, nil)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
		t.Errorf("deliver: %s", resp.Status)
	}
	s.recv.mu.Lock()
	got := slices.Clone(s.recv.delivered)
	s.recv.mu.Unlock()
	if !slices.Equal(got, []int64{4}) {
		t.Errorf("delivered %v, want exactly [4]", got)
	}
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	found := false
	for _, e := range s.auth.audit {
		if e.Action == "scan.deliver" {
			found = true
			if e.Target != "4" {
				t.Errorf("audit scan.deliver target %q, want 4", e.Target)
			}
		}
	}
	if !found {
		t.Error("no scan.deliver in the audit log")
	}
}
