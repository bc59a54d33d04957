package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/incident"
)

// Unverified events (sender not proven to be the device) are listed on the
// events page and by the API, marked as such; everything in them is what an
// unknown sender wrote and is rendered as text.
func TestUnverifiedEventsShownAsText(t *testing.T) {
	const attack = `<script>alert("owned")</script>`
	s := newSite(t, func(c *Config) {
		ev := c.Events.(*fakeEvents)
		at := ev.list[0].LastSeen
		ev.list = append(ev.list, incident.EventView{ID: 2, Device: "10.9.9.9" + attack, FirstSeen: at, LastSeen: at, Count: 3, Code: "1102" + attack,
			Text: "Send error " + attack, Destination: `\\evil\` + attack, Source: "mail", Unverified: true})
	})
	c := s.login()
	for _, tc := range []struct {
		path           string
		verified, unv  bool
		wantBadgeCount int
	}{
		{"/events", true, true, 1},
		{"/events?unverified=1", false, true, 1},
		{"/events?unverified=0", true, false, 0},
	} {
		resp, body := s.get(c, tc.path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", tc.path, resp.Status)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img") {
			t.Errorf("%s: an unverified sender's string is rendered as markup", tc.path)
		}
		if got := strings.Contains(body, "Send error 1102 &lt;img"); got != tc.verified {
			t.Errorf("%s: verified event shown %v, want %v", tc.path, got, tc.verified)
		}
		if got := strings.Contains(body, "Send error &lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;"); got != tc.unv {
			t.Errorf("%s: unverified event shown as text %v, want %v", tc.path, got, tc.unv)
		}
		if n := strings.Count(body, "unverified — sender not proven to be the device"); n != tc.wantBadgeCount {
			t.Errorf("%s: %d unverified badges, want %d", tc.path, n, tc.wantBadgeCount)
		}
		if tc.unv && strings.Contains(body, `href="/devices/10.9.9.9`) {
			t.Errorf("%s: an unverified sender is linked as a device", tc.path)
		}
	}

	type list struct {
		Events []map[string]any `json:"events"`
	}
	for _, tc := range []struct {
		path string
		ids  []float64
	}{
		{"/api/v1/events", []float64{1, 2}},
		{"/api/v1/events?unverified=1", []float64{2}},
		{"/api/v1/events?unverified=0", []float64{1}},
	} {
		resp, body := s.get(c, tc.path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", tc.path, resp.Status)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("%s: raw markup in JSON (want it escaped)", tc.path)
		}
		var got list
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(got.Events) != len(tc.ids) {
			t.Fatalf("%s: %d events, want %d: %s", tc.path, len(got.Events), len(tc.ids), body)
		}
		for i, e := range got.Events {
			if e["id"] != tc.ids[i] {
				t.Errorf("%s: event %d id %v, want %v", tc.path, i, e["id"], tc.ids[i])
			}
			if want := e["id"] == float64(2); e["unverified"] != want {
				t.Errorf("%s: event %v unverified %v", tc.path, e["id"], e["unverified"])
			}
			if e["id"] == float64(2) && e["text"] != `Send error `+attack {
				t.Errorf("%s: text %q, want the sender's string as data", tc.path, e["text"])
			}
		}
	}
	if resp, _ := s.get(c, "/api/v1/events?unverified=maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad unverified value: %s", resp.Status)
	}
}

// An event that named no destination shows, on the events page, the
// device's page and in the API, which destinations were checked and what
// they found; destination names are text.
func TestSweptEventShown(t *testing.T) {
	const attack = `<script>alert(1)</script>`
	s := newSite(t, func(c *Config) {
		ev := c.Events.(*fakeEvents)
		at := ev.list[0].LastSeen
		ev.list = []incident.EventView{{ID: 7, Device: "evil", FirstSeen: at, LastSeen: at, Count: 1, Code: "1103", Text: "Cannot send. Error 1103",
			Source: "console", Swept: &incident.SweepView{
				Finding: "Of 2 destinations of the device, only walt" + attack + " fails (bad-credentials): the failure was most likely there.",
				Checked: []incident.SweepResult{{Destination: "reception", At: at, Cause: "ok", Fresh: true},
					{Destination: "walt" + attack, At: at, Cause: "bad-credentials", Summary: "password refused", Fresh: false}}}}}
	})
	c := s.login()
	for _, path := range []string{"/events", "/devices/evil"} {
		resp, body := s.get(c, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		for _, want := range []string{"It named no destination; checked:", "<code>reception</code>: <b>ok</b>",
			"<b>bad-credentials</b> — password refused", "within event_gap", "only walt&lt;script&gt;"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: a destination name is rendered as markup", path)
		}
	}
	_, body := s.get(c, "/api/v1/events")
	var got struct {
		Events []incident.EventView `json:"events"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Events) != 1 || got.Events[0].Swept == nil ||
		len(got.Events[0].Swept.Checked) != 2 || got.Events[0].Swept.Checked[1].Cause != "bad-credentials" {
		t.Errorf("api: %v %s", err, body)
	}
}
