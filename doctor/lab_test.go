package doctor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabAD asks the lab's DC with the read-only account: it answers and
// binds, and the clock check compares this box's clock with the DC's. The
// DC's clock is real; this box's is moved (Options.Now) to make a skew.
func TestLabAD(t *testing.T) {
	lab := testlab.Require(t)
	pw := filepath.Join(t.TempDir(), "ad.pw")
	if err := os.WriteFile(pw, []byte(lab.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	adConf := fmt.Sprintf("[ad]\nurl = %q\nbind_user = %q\npassword_file = %q\nca = %q\n",
		"ldaps://"+lab.DCHost, "ldapreader@"+lab.DNSDomain, pw, lab.CA)
	conf, _ := box(t, adConf)

	rep := run(t, Options{ConfigFile: conf, Timeout: 10 * time.Second})
	want(t, rep, "ad", OK, "answered over ldaps, bound as ldapreader@", "")
	want(t, rep, "ad.clock", OK, "clock within", "")

	for _, c := range []struct {
		shift  time.Duration
		st     Status
		detail string
	}{
		{-3 * time.Minute, Warn, "ahead of this box's: logon-hours"},
		{10 * time.Minute, Fail, "behind this box's: beyond Kerberos' 5 minutes"},
		{30 * time.Second, OK, "behind this box's (Kerberos allows 5 min)"},
	} {
		now := func() time.Time { return time.Now().Add(c.shift) }
		rep := run(t, Options{ConfigFile: conf, Timeout: 10 * time.Second, Now: now})
		want(t, rep, "ad.clock", c.st, c.detail, "")
		if c.st != OK {
			want(t, rep, "ad.clock", c.st, "", "timedatectl set-ntp true")
		}
	}

	// a DC address where nothing listens
	conf, _ = box(t, fmt.Sprintf("[ad]\nurl = %q\nbind_user = %q\npassword_file = %q\nca = %q\n",
		"ldaps://"+lab.GhostIP, "ldapreader@"+lab.DNSDomain, pw, lab.CA))
	rep = run(t, Options{ConfigFile: conf, Timeout: 5 * time.Second})
	want(t, rep, "ad", Fail, "connect", "636")
	want(t, rep, "ad.clock", Skip, "did not answer", "")
}

// TestLabSNMP registers two devices in a real store — one on snmpsim, one
// on the lab address where nothing answers — and the doctor asks each.
func TestLabSNMP(t *testing.T) {
	lab := testlab.Require(t)
	simIP := lab.Getenv("SWLAB_SNMPSIM_IP")
	if simIP == "" {
		testlab.Missing(t, "the lab runs no snmpsim (SWLAB_SNMPSIM_IP unset)")
	}
	port := lab.Getenv("SWLAB_SNMP_PORT")
	if port == "" {
		port = "161"
	}
	conf, data := box(t, "")
	ctx := context.Background()
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close() // open while the doctor reads: it reads through the WAL
	if _, err := st.UnlockKey(ctx, filepath.Join(filepath.Dir(conf), "secret.key")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []registry.Device{
		{Name: "mfp-sim", Address: net.JoinHostPort(simIP, port), SNMP: registry.SNMP{Community: scanwarden.NewSecret("kyocera-idle")}},
		{Name: "mfp-ghost", Address: lab.GhostIP, SNMP: registry.SNMP{Community: scanwarden.NewSecret("public")}},
	} {
		if err := st.Devices().PutDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	rep := run(t, Options{ConfigFile: conf, Timeout: 8 * time.Second})
	want(t, rep, "snmp.mfp-sim", OK, "answered SNMP 2c (ECOSYS", "")
	want(t, rep, "snmp.mfp-ghost", Fail, "did not answer", "enable SNMP")
}
