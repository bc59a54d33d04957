package receiver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
)

// pausingCatalogue holds the first AddScan of file until the test lets it
// go: the instant between a scan's hash and its move out of the inbox,
// which a client's rename otherwise hits by chance (a fake for timing
// only; the rows go to the real store, the rename to the real smbd).
type pausingCatalogue struct {
	receiver.Catalogue
	file      string
	once      sync.Once
	in, going chan struct{}
}

func (c *pausingCatalogue) AddScan(ctx context.Context, s receiver.Scan) (int64, error) {
	if s.File == c.file {
		c.once.Do(func() {
			close(c.in)
			<-c.going
		})
	}
	return c.Catalogue.AddScan(ctx, s)
}

// TestAttackRenameOverScanBeingTaken: while the watcher takes a.pdf (hashed,
// its row being written), the MFP renames another file, b.pdf, over that
// name — or first renames a.pdf away to c.pdf. The move out of the inbox
// went by name: it took b.pdf into the held area under a.pdf's row (a.pdf's
// hash, b.pdf's bytes: never deliverable), b.pdf was never catalogued, and
// a.pdf's bytes were gone (or taken a second time as c.pdf). Now every held
// file is the one its row hashed, and each scan is kept once.
func TestAttackRenameOverScanBeingTaken(t *testing.T) {
	for _, away := range []bool{false, true} {
		name := "b.pdf over a.pdf"
		if away {
			name = "a.pdf to c.pdf, then b.pdf to a.pdf"
		}
		t.Run(name, func(t *testing.T) { renameOverScanBeingTaken(t, away) })
	}
}

func renameOverScanBeingTaken(t *testing.T, away bool) {
	a, b := pdf("first scan, being taken"), pdf("second scan, renamed over the first's name")
	cat := &pausingCatalogue{file: "a.pdf", in: make(chan struct{}), going: make(chan struct{})}
	e := newEnv(t, opts{wrap: func(c receiver.Catalogue) receiver.Catalogue { cat.Catalogue = c; return cat }})
	ctx := context.Background()
	if err := e.put("reception/a.pdf", a, false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cat.in:
	case <-time.After(20 * time.Second):
		close(cat.going)
		t.Fatal("a.pdf was not taken")
	}
	err := e.put("reception/b.pdf", b, false)
	if err == nil {
		sh := mfpShare(t, e.cfg)
		if away {
			err = sh.Rename(`reception\a.pdf`, `reception\c.pdf`)
		}
		if err == nil {
			err = sh.Rename(`reception\b.pdf`, `reception\a.pdf`)
		}
	}
	close(cat.going)
	if err != nil {
		t.Fatal(err)
	}
	// wait for the second scan, and when the first was renamed away, for
	// it under its new name: then every row there will be is there
	var rows []receiver.Scan
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows, err = e.st.Scans().Scans(ctx, receiver.ScanQuery{})
		if err != nil {
			t.Fatal(err)
		}
		done := slices.ContainsFunc(rows, func(r receiver.Scan) bool { return r.SHA256 == sum(b) }) &&
			(!away || slices.ContainsFunc(rows, func(r receiver.Scan) bool { return r.File == "c.pdf" }))
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := map[string]int{}
	for _, r := range rows {
		body, err := os.ReadFile(filepath.Join(e.dir, r.HeldPath))
		if err != nil {
			t.Errorf("row %d (%s, %s): held file: %v", r.ID, r.File, r.State, err)
			continue
		}
		if sum(body) != r.SHA256 {
			t.Errorf("row %d (%s) hashed %.12s… holds other bytes (%.12s…): %q", r.ID, r.File, r.SHA256, sum(body), body)
		}
		got[sum(body)]++
	}
	if got[sum(a)] != 1 || got[sum(b)] != 1 || len(rows) != 2 {
		t.Errorf("kept: first scan %d×, second scan %d× (rows %+v)", got[sum(a)], got[sum(b)], rows)
	}
}
