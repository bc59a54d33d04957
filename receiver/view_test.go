package receiver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestStatusViewFault: the page names the first known of smbd down, the
// share probe's failure and the last failed delivery.
func TestStatusViewFault(t *testing.T) {
	last := &DeliveryState{Scan: 7, Error: "access denied"}
	for _, tc := range []struct {
		name string
		st   Status
		want string
	}{
		{"smbd down first", Status{SmbdUp: false, Fault: "probe", LastError: last}, "smbd is not running"},
		{"probe next", Status{SmbdUp: true, Fault: "probe", LastError: last}, "probe"},
		{"last delivery", Status{SmbdUp: true, LastError: last}, "last delivery failed (scan 7): access denied"},
		{"none", Status{SmbdUp: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.st.View()
			if v.Fault != tc.want || !v.Enabled || v.Counts == nil {
				t.Fatalf("view %+v, want fault %q", v, tc.want)
			}
		})
	}
}

// TestScanViewKeepsPathsOut: the page's and API's scan carries the MFP's
// file name, never where the file lies in the box or who holds it.
func TestScanViewKeepsPathsOut(t *testing.T) {
	s := Scan{ID: 3, Destination: "reception", File: "a.pdf", HeldPath: "held/3.pdf", InboxPath: "in/a.pdf", Claim: "fw1",
		Writer: "u|10.0.0.9|MFP|SMB1", State: Failed, Attempts: 2, ReceivedAt: time.Unix(0, 0).UTC()}
	b, err := json.Marshal(s.View())
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"held/3.pdf", "in/a.pdf", "fw1", "10.0.0.9", "delivered_at"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("%s in %s", leak, b)
		}
	}
	if !strings.Contains(string(b), `"name":"a.pdf"`) || !strings.Contains(string(b), `"attempts":2`) {
		t.Errorf("view %s", b)
	}
}
