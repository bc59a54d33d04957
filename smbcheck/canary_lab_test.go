package smbcheck

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// memCanaries is a CanaryJournal in memory.
type memCanaries struct {
	mu sync.Mutex
	m  map[string][]string
}

func (j *memCanaries) Record(_ context.Context, folder, name string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string][]string{}
	}
	j.m[folder] = append(j.m[folder], name)
	return nil
}

func (j *memCanaries) Forget(_ context.Context, folder, name string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.m[folder] = slices.DeleteFunc(j.m[folder], func(n string) bool { return n == name })
	return nil
}

func (j *memCanaries) Left(_ context.Context, folder string) ([]string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.m[folder]), nil
}

// TestLabCanarySweep: a canary that a killed check left (recorded, never
// forgotten: the file is still there) is removed by the next check of the
// same folder; the new canary's name is recorded before the file exists and
// forgotten once it is gone; a name that is not a canary's is never deleted.
func TestLabCanarySweep(t *testing.T) {
	lab := testlab.Require(t)
	labFolder(t, lab, "alice")
	s := labSession(t, lab, lab.DCIP, "alice")
	sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	const left = canaryPrefix + "20200101T000000Z-0123456789ab.tmp"
	const other = "scan-0001.pdf"
	for _, n := range []string{left, other} {
		if err := sh.WriteFile(`alice\`+n, nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	defer sh.Remove(`alice\` + other)
	j := &memCanaries{}
	folder := `\\` + lab.DCHost + `\scans\alice`
	j.Record(context.Background(), folder, left)
	j.Record(context.Background(), folder, other)

	var during []string
	o := Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Canaries: j,
		afterCreate: func() { during, _ = j.Left(context.Background(), folder) }}
	r := Run(context.Background(), labTarget(t, lab, "//"+lab.DCHost+"/scans/alice", "alice", ""), o)
	if !r.OK() {
		t.Fatalf("verdict %s%s", r.Verdict.Cause, stepsString(r))
	}
	if _, err := sh.Stat(`alice\` + left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the leftover canary is still there: %v", err)
	}
	if _, err := sh.Stat(`alice\` + other); err != nil {
		t.Errorf("a file that is not a canary was touched: %v", err)
	}
	if w := r.Step(StepWrite); !slices.Contains(anyStrings(w.Evidence["swept"]), left) {
		t.Errorf("swept evidence %v", w.Evidence)
	}
	name := ""
	if w := r.Step(StepWrite); w != nil {
		name = w.Evidence["canary"].(string)
	}
	if len(during) != 1 || `alice\`+during[0] != name {
		t.Errorf("while the canary existed the journal held %v, want [%s]", during, name)
	}
	if rest, _ := j.Left(context.Background(), folder); len(rest) != 0 {
		t.Errorf("journal after the check: %v", rest)
	}
}

func anyStrings(v any) []string {
	s, _ := v.([]string)
	return s
}
