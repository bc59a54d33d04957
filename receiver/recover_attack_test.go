package receiver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
)

// TestAttackRecoverOpenFile: a row committed for an inbox file whose move
// a crash cut off; at the next start the file is open for writing again
// (smbd outlives the daemon: the MFP writes on). Recovery hashed it, found
// the row's bytes and moved it into the held area while still open: the
// rest of the scan was written there, after its row — a held copy that is
// not the scan catalogued, and the whole scan never catalogued. Now a file
// still open is left to the watcher, which takes it whole once closed.
func TestAttackRecoverOpenFile(t *testing.T) {
	e := newEnv(t, opts{keep: true})
	ctx := context.Background()
	first, rest := pdf("the pages so far"), []byte("\n% and the pages after the restart\n%%EOF\n")
	sh := mfpShare(t, e.cfg)
	f, err := sh.Create(`reception\x.pdf`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(first); err != nil {
		t.Fatal(err)
	}
	e.r.Close() // the daemon dies; smbd and the MFP's handle live on
	// the row a crash left between its commit and the move
	if _, err := e.st.Scans().AddScan(ctx, receiver.Scan{Destination: "Reception desk", Folder: "reception", File: "x.pdf",
		Size: int64(len(first)), SHA256: sum(first), State: receiver.Held, ReceivedAt: time.Now().UTC(),
		InboxPath: filepath.Join("inbox", "reception", "x.pdf"), HeldPath: filepath.Join("held", "crash", "x.pdf")}); err != nil {
		t.Fatal(err)
	}
	e.open(nil) // the daemon starts again: recovery
	if _, err := f.Write(rest); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	whole := append(slices.Clone(first), rest...)
	var rows []receiver.Scan
	deadline := time.Now().Add(20 * time.Second)
	for {
		if rows, err = e.st.Scans().Scans(ctx, receiver.ScanQuery{}); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(rows, func(r receiver.Scan) bool { return r.SHA256 == sum(whole) }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	taken := false
	for _, r := range rows {
		body, err := os.ReadFile(filepath.Join(e.dir, r.HeldPath))
		if err == nil && sum(body) != r.SHA256 {
			t.Errorf("row %d (%s) hashed %d bytes holds %d others: written after it was moved", r.ID, r.File, r.Size, len(body))
		}
		if err == nil && r.SHA256 == sum(whole) && r.State == receiver.Held {
			taken = true
		}
	}
	if !taken {
		t.Errorf("the whole scan was not taken: %+v", rows)
	}
}
