package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

func openUnlocked(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.UnlockKey(context.Background(), filepath.Join(dir, seal.FileName)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRegistryCRUD(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openUnlocked(t, dir)
	dev := registry.Device{Name: "mfp01", Address: "10.77.0.40:161", SysName: "MFP01",
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("comm-Secret-1")}}
	if err := s.Devices().PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	d := registry.Destination{Name: "alice", Host: "fs01.kyolab.test", Share: "scans", Path: "alice",
		User: `KYOLAB\alice`, Password: scanwarden.NewSecret("dest-Secret-2"), Device: "mfp01"}
	if err := s.Destinations().PutDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "x", Host: "h", Share: "s", Device: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown device: %v", err)
	}
	got, err := s.Destinations().Destination(ctx, "ALICE")
	if err != nil || got.Password.Reveal() != "dest-Secret-2" || got.Device != "mfp01" || got.Source != registry.SourceAdded {
		t.Fatalf("destination %+v %v", got, err)
	}
	gd, err := s.Devices().Device(ctx, "mfp01")
	if err != nil || gd.SNMP.Community.Reveal() != "comm-Secret-1" || gd.SNMP.V3Auth.IsZero() == false {
		t.Fatalf("device %+v %v", gd, err)
	}
	if tg := got.Target(&gd); tg.Workstation != "MFP01" || tg.User != `KYOLAB\alice` || tg.Auth != scanwarden.AuthNTLM {
		t.Fatalf("target %+v", tg)
	}
	// auth: stored as given; a value outside ntlm|kerberos|auto is refused.
	d.Auth = scanwarden.AuthKerberos
	if err := s.Destinations().PutDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Destinations().Destination(ctx, "alice"); err != nil || got.Auth != scanwarden.AuthKerberos || got.Target(nil).Auth != scanwarden.AuthKerberos {
		t.Fatalf("auth kerberos: %+v %v", got, err)
	}
	// The forwarder delivers with the same auth as the check.
	rds, err := s.Destinations().Deliveries().Destinations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var auth scanwarden.Auth = "(not listed)"
	for _, rd := range rds {
		if rd.Name == "alice" {
			auth = rd.Target.Auth
		}
	}
	if auth != scanwarden.AuthKerberos {
		t.Fatalf("the forwarder's target of alice: auth %q, want kerberos", auth)
	}
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "y", Host: "h", Share: "s", Auth: "ntlmv1"}); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("auth ntlmv1 stored: %v", err)
	}
	d.Auth = ""

	// Reports: newest first, bounded.
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range ReportHistory + 5 {
		rep := smbcheck.Report{Started: t0.Add(time.Duration(i) * time.Minute),
			Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK, Summary: fmt.Sprint(i)},
			Steps:   []smbcheck.Step{{ID: "tcp", Status: smbcheck.StatusFail, Duration: 6145 * time.Millisecond}}}
		if err := s.Reports().AddReport(ctx, "alice", rep); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.Reports().Reports(ctx, "alice", 0)
	if err != nil || len(rs) != ReportHistory || rs[0].Summary != fmt.Sprint(ReportHistory+4) || len(rs[0].Report.Steps) != 1 {
		t.Fatalf("reports: %d %v", len(rs), err)
	}
	// A stored report keeps its steps' timings (a TCP step that gave up
	// after 6 s was read back as 0 ms).
	if got := rs[0].Report.Steps[0].Duration; got != 6145*time.Millisecond {
		t.Fatalf("stored step duration %v, want 6.145s", got)
	}
	if last, ok, err := s.Reports().LatestReport(ctx, "alice"); !ok || err != nil || !last.At.Equal(t0.Add((ReportHistory+4)*time.Minute)) {
		t.Fatalf("latest %+v %v %v", last, ok, err)
	}
	if _, err := s.Reports().Reports(ctx, "nobody", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reports of unknown: %v", err)
	}

	var inUse *DeviceInUseError
	if err := s.Devices().RemoveDevice(ctx, "mfp01", false); !errors.As(err, &inUse) {
		t.Fatalf("remove used device: %v", err)
	}
	if err := s.Destinations().RemoveDestination(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.Destinations().RemoveDestination(ctx, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := s.Devices().RemoveDevice(ctx, "mfp01", false); err != nil {
		t.Fatal(err)
	}
}

// TestSecretsNeverInClear writes secrets and greps every file of the data
// dir for them.
func TestSecretsNeverInClear(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openUnlocked(t, dir)
	secrets := []string{"Clear-Pw-1", "Comm-Pw-2", "Auth-Pw-3", "Priv-Pw-4"}
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "m", SNMP: registry.SNMP{Version: "3",
		Community: scanwarden.NewSecret(secrets[1]), V3User: "u", V3Auth: scanwarden.NewSecret(secrets[2]),
		V3Priv: scanwarden.NewSecret(secrets[3])}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "d", Host: "h", Share: "s", User: "u",
		Password: scanwarden.NewSecret(secrets[0]), Device: "m"}); err != nil {
		t.Fatal(err)
	}
	if _, _, n, err := s.RotateKey(ctx); err != nil || n != 4 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	s.Close()
	grepDir(t, dir, secrets)
}

func grepDir(t *testing.T, dir string, secrets []string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range secrets {
			if bytes.Contains(b, []byte(sec)) {
				t.Errorf("%s holds %q in clear", p, sec)
			}
		}
		return nil
	})
}

func TestUnlockKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, seal.FileName)
	s := openUnlocked(t, dir)
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "d", Host: "h", Share: "s", User: "u",
		Password: scanwarden.NewSecret("pw-one")}); err != nil {
		t.Fatal(err)
	}
	firstID := s.Key().ID()
	s.Close()

	reopen := func() (*Store, error) {
		s, err := OpenDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		_, err = s.UnlockKey(ctx, keyPath)
		return s, err
	}
	// Missing key: refused, nothing re-keyed.
	os.Rename(keyPath, keyPath+".bak")
	var ke *KeyError
	if _, err := reopen(); !errors.As(err, &ke) || ke.GotID != "" || ke.WantID != firstID {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := os.Stat(keyPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a key was made over existing ciphertext")
	}
	// Wrong key: refused.
	if _, err := seal.Create(keyPath); err != nil {
		t.Fatal(err)
	}
	if _, err := reopen(); !errors.As(err, &ke) || ke.GotID == "" {
		t.Fatalf("wrong key: %v", err)
	}
	os.Rename(keyPath+".bak", keyPath)
	s2, err := reopen()
	if err != nil {
		t.Fatal(err)
	}
	// Locked store: secrets refused.
	s3, _ := OpenDir(ctx, dir)
	defer s3.Close()
	if _, err := s3.Destinations().Destination(ctx, "d"); !errors.Is(err, ErrLocked) {
		t.Fatalf("locked read: %v", err)
	}

	// Rotation: old key no longer opens; a crash before the rename is finished on unlock.
	old, _ := seal.Load(keyPath)
	oldID, newID, n, err := s2.RotateKey(ctx)
	if err != nil || oldID != firstID || newID == oldID || n != 1 {
		t.Fatalf("rotate %s %s %d %v", oldID, newID, n, err)
	}
	if d, err := s2.Destinations().Destination(ctx, "d"); err != nil || d.Password.Reveal() != "pw-one" {
		t.Fatalf("after rotation: %v", err)
	}
	s2.Close()
	// Simulate the crash: the new key back in KEY.new, the old one in KEY.
	os.Rename(keyPath, keyPath+".new")
	os.Remove(keyPath)
	if err := old.WriteFile(keyPath); err != nil {
		t.Fatal(err)
	}
	s4, err := reopen()
	if err != nil || s4.Key().ID() != newID {
		t.Fatalf("interrupted rotation not finished: %v", err)
	}
	if d, err := s4.Destinations().Destination(ctx, "d"); err != nil || d.Password.Reveal() != "pw-one" {
		t.Fatalf("after finished rotation: %v", err)
	}
	if _, err := os.Stat(keyPath + ".new"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("KEY.new left behind")
	}
}

func TestSNMPFillsRegistryDevice(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "mfp01", Address: "10.77.0.40", Model: "typed"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "other", Address: "10.77.0.41:1161"}); err != nil {
		t.Fatal(err)
	}
	inv := snmp.Inventory{Address: "10.77.0.40:161", Kyocera: true, Serial: "W4X0A20002", SysName: "MFP01", SeenAt: time.Unix(1000, 0)}
	if err := s.Events().SNMP(0).RecordDevice(ctx, inv); err != nil {
		t.Fatal(err)
	}
	d, err := s.Devices().Device(ctx, "mfp01")
	if err != nil || d.SysName != "MFP01" || d.Serial != "W4X0A20002" || d.Model != "typed" || d.WorkstationName() != "MFP01" {
		t.Fatalf("device %+v %v", d, err)
	}
	if o, _ := s.Devices().Device(ctx, "other"); o.SysName != "" {
		t.Fatalf("another device changed: %+v", o)
	}
}

// TestSealedColumnsCoverSchema: every BLOB column of the registry tables is
// a sealed one that rotation re-encrypts.
func TestSealedColumnsCoverSchema(t *testing.T) {
	s := openUnlocked(t, t.TempDir())
	known := map[string]bool{}
	for _, c := range sealedColumns {
		known[c.table+"."+c.column] = true
	}
	for _, table := range []string{"devices", "destinations"} {
		rows, err := s.db.Query("SELECT name, type FROM pragma_table_info(?)", table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, typ string
			rows.Scan(&name, &typ)
			if typ == "BLOB" && !known[table+"."+name] {
				t.Errorf("%s.%s is a BLOB not in sealedColumns", table, name)
			}
			delete(known, table+"."+name)
		}
		rows.Close()
	}
	if len(known) != 0 {
		t.Errorf("sealedColumns names missing columns: %v", known)
	}
}

// TestUnlockKeyRace: processes opening a fresh data dir at once agree on
// one key.
func TestUnlockKeyRace(t *testing.T) {
	dir := t.TempDir()
	ids := make(chan string, 8)
	for range 8 {
		go func() {
			s, err := OpenDir(context.Background(), dir)
			if err != nil {
				ids <- "open: " + err.Error()
				return
			}
			defer s.Close()
			k, err := s.UnlockKey(context.Background(), filepath.Join(dir, seal.FileName))
			if err != nil {
				ids <- "unlock: " + err.Error()
				return
			}
			ids <- k.ID()
		}()
	}
	first := <-ids
	for range 7 {
		if id := <-ids; id != first {
			t.Fatalf("keys differ: %s %s", first, id)
		}
	}
}
