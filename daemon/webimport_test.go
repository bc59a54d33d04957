package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scanwarden/scanwarden/store"
)

// The import preview shows each folder as the admin types it on the panel.
func TestWebImportFolderAsTyped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	book, err := os.ReadFile("../registry/testdata/addressbook.xml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := webImporter{m: &Main{env: env{st: st}}}.Import(ctx, "mfp01", book, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"KYOLAB\\alice": `\\fs01.kyolab.test\scans\alice`, "bob": `\\fs01\scans\bob\in box port 139`}
	for _, e := range res.Entries {
		if w, ok := want[e.User]; ok {
			if e.Target != w {
				t.Errorf("%s: %q, want %q", e.User, e.Target, w)
			}
			delete(want, e.User)
		}
	}
	if len(want) != 0 {
		t.Errorf("not in the preview: %v (%+v)", want, res.Entries)
	}
}
