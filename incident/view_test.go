package incident

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
)

// TestViewTimeline: a device line is led by its code, the incident was
// last updated at its newest entry, and an open incident's closed_at is
// null.
func TestViewTimeline(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	i := Incident{ID: 4, Destination: "reception", State: StateOpen, OpenedAt: at}
	v := i.View([]Entry{
		{At: at.Add(2 * time.Minute), Kind: EntryDeviceEvent, Code: "1102", Text: "send failed"},
		{At: at.Add(time.Minute), Kind: EntryCheck, Code: "ignored", Text: "bad password", Cause: scanwarden.CauseBadCredentials},
	})
	if v.Timeline[0].Text != "1102 send failed" || v.Timeline[1].Text != "bad password" || !v.UpdatedAt.Equal(at.Add(2*time.Minute)) {
		t.Fatalf("view %+v", v)
	}
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"closed_at":null`) {
		t.Errorf("open incident %s", b)
	}
	i.ClosedAt = at.Add(time.Hour)
	if c := i.View(nil); c.ClosedAt == nil || !c.ClosedAt.Equal(i.ClosedAt) || c.Timeline == nil || !c.UpdatedAt.Equal(at) {
		t.Errorf("closed %+v", c)
	}
}
