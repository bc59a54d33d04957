package smbcheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbconn"
)

// writeStep writes, reads back and deletes a test file as the MFP stores
// a scan; the check goes on after it whatever it found.
type writeStep struct{ *checker }

func (writeStep) ids() []string { return []string{StepWrite} }

func (c writeStep) run(ctx context.Context) bool {
	c.stepWrite(ctx, c.share)
	return true
}

// canaryPrefix starts every test file's name, so an admin recognises one.
const canaryPrefix = "scanwarden-check-"

// stepWrite creates a uniquely named file in the folder, writes it, reads it
// back and deletes it — as the MFP stores a scan. The file is removed even
// when the check is interrupted.
func (c writeStep) stepWrite(ctx context.Context, sh *smbconn.Share) {
	s := c.begin(StepWrite)
	if c.o.NoWrite {
		s.Duration = 0
		c.end(s, StatusSkipped, "not run: the write test is turned off (no-write)")
		return
	}
	name := c.canaryName()
	p := name
	if parts := c.t.Folders(); len(parts) > 0 {
		p = strings.Join(parts, `\`) + `\` + name
	}
	s.Evidence["canary"] = p
	// The canary's handle lives under a context the caller cannot cancel,
	// so that an interrupted check can still close and delete it; the
	// caller's cancellation is honoured between operations instead.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.o.StepTimeout)
	defer cancel()
	// What an earlier check of this folder recorded and never saw gone
	// (it was killed) goes first; this canary's name is recorded before
	// it exists, and forgotten once it is gone or reported.
	c.sweepCanaries(wctx, sh, s)
	forget := c.recordCanary(wctx, name)
	var created, keepRecord bool
	defer func() {
		if !keepRecord {
			forget(context.WithoutCancel(ctx))
		}
	}()
	defer func() {
		if !created {
			return
		}
		// Whatever happened below (an error, a cancelled context), the
		// canary goes: a fresh, short context that ignores cancellation.
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer dcancel()
		if err := sh.Remove(dctx, p); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.r.Canary = c.t.Share + `\` + p
			keepRecord = true // the next check of this folder sweeps it
		}
	}()
	created, keepRecord = c.canaryRoundTrip(ctx, wctx, s, sh, p, name)
}

// canaryRoundTrip creates the canary p, writes, reads back and deletes it;
// the share's operations run under wctx, ctx's cancellation is honoured
// between them. created: it exists and is still to be deleted; keepRecord:
// its name stays in the journal, for the next check of this folder to
// sweep.
func (c writeStep) canaryRoundTrip(ctx, wctx context.Context, s *stepState, sh *smbconn.Share, p, name string) (created, keepRecord bool) {
	f, doomed, err := sh.CreateTest(wctx, p)
	if err != nil {
		if _, answered := smbconn.StatusOf(err); !answered {
			// No answer (a timeout, a dropped connection): the CREATE
			// may have been carried out. The next check sweeps the name.
			keepRecord = true
		}
		if refusedOrAbsent(err) && c.typeRefused(wctx, s, sh, p, name, err) {
			return false, false
		}
		c.writeFailed(s, "create", err, p)
		return false, keepRecord
	}
	created = !doomed // a doomed canary goes with its handle
	s.Evidence["delete_on_close"] = doomed
	if c.o.afterCreate != nil {
		c.o.afterCreate()
	}
	// A doomed canary is deleted with its handle whatever happens; the
	// creator's own handle may always delete, so whether the account may
	// delete a file it did not just create is asked before it closes.
	var probe func() error
	if doomed {
		probe = func() error { return sh.RemoveOpen(wctx, p) }
	}
	ok, probeErr := c.writeCanary(ctx, s, f, p, name, probe, !sh.SMB1())
	if !ok {
		return created, false
	}
	if doomed {
		c.deleteCanary(s, probeErr, p, name, true)
		f.Close()
		return created, false
	}
	if err := f.Close(); err != nil {
		c.writeFailed(s, "write", err, p)
		return created, false
	}
	if c.deleteCanary(s, sh.Remove(wctx, p), p, name, false) {
		created = false // deleted, or a second try would fail the same way
	}
	return created, false
}

// recordCanary records the canary's name in the journal before the canary
// exists and returns what forgets it (nothing to do without a journal).
func (c writeStep) recordCanary(ctx context.Context, name string) (forget func(context.Context)) {
	j := c.o.Canaries
	if j == nil {
		return func(context.Context) {}
	}
	if err := j.Record(ctx, c.canaryFolder(), name); err != nil {
		c.o.Logger.Warn("canary journal", "err", err)
	}
	return func(ctx context.Context) {
		if err := j.Forget(ctx, c.canaryFolder(), name); err != nil {
			c.o.Logger.Warn("canary journal", "err", err)
		}
	}
}

// writeCanary writes the canary's payload through f, then reads it back,
// notes the volume's free space and runs probe (when not nil) — the three
// at once when parallel (an SMB2/3 session takes several requests in
// flight: one round trip instead of three or five). f stays open for the
// caller. It reports false — f then closed — once it has recorded a
// failure, or the caller's cancellation between operations; probeErr is
// what probe returned.
func (c writeStep) writeCanary(ctx context.Context, s *stepState, f smbconn.TestFile, p, name string, probe func() error, parallel bool) (ok bool, probeErr error) {
	interrupted := func() bool {
		if ctx.Err() != nil {
			c.writeFailed(s, "write", fmt.Errorf("check interrupted: %w", ctx.Err()), p)
			return true
		}
		return false
	}
	payload := testFile(c.o.Device.FileType, name)
	if interrupted() {
		f.Close()
		return false, nil
	}
	if _, err := f.Write(payload); err != nil {
		f.Close()
		c.writeFailed(s, "write", err, p)
		return false, nil
	}
	if interrupted() {
		f.Close()
		return false, nil
	}
	var (
		readErr   error
		free      uint64
		total     uint64
		freeKnown bool
	)
	jobs := []func(){
		func() { readErr = readBack(f, payload) },
		// The volume's free space, asked through the canary's own handle.
		func() { free, total, freeKnown = f.FreeBytes() },
	}
	if probe != nil {
		jobs = append(jobs, func() { probeErr = probe() })
	}
	if parallel {
		var wg sync.WaitGroup
		for _, job := range jobs {
			wg.Go(job)
		}
		wg.Wait()
	} else {
		for _, job := range jobs {
			job()
		}
	}
	if freeKnown {
		s.Evidence["free_bytes"] = free
		if total > 0 {
			s.Evidence["total_bytes"] = total
		}
	}
	if readErr != nil {
		f.Close()
		c.writeFailed(s, "read back", readErr, p)
		return false, nil
	}
	return true, probeErr
}

// typeRefused tells, when the device's test file (p, named for its file
// type) could not be created, a folder that refuses that type while it
// takes other files: one .tmp file of the same name is created (to be
// deleted on close) and removed. It ends the write step and reports true
// when that is so.
func (c writeStep) typeRefused(ctx context.Context, s *stepState, sh *smbconn.Share, p, name string, err error) bool {
	ext := c.o.Device.FileType.Ext()
	if c.o.Device.FileType == "" || !strings.HasSuffix(p, ext) {
		return false
	}
	other := strings.TrimSuffix(name, ext) + ".tmp"
	op := strings.TrimSuffix(p, ext) + ".tmp"
	forget := c.recordCanary(ctx, other)
	f, doomed, terr := sh.CreateTest(ctx, op)
	if terr != nil {
		if _, answered := smbconn.StatusOf(terr); answered {
			forget(ctx)
		}
		return false
	}
	f.Close()
	if doomed || sh.Remove(ctx, op) == nil {
		forget(ctx)
	} else {
		c.r.Canary = c.t.Share + `\` + op
	}
	_, ev := classify(StepWrite, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	s.Evidence["operation"] = "create"
	s.Evidence["file_type"] = string(c.o.Device.FileType)
	s.Evidence["other_type_accepted"] = other
	c.fail(s, scanwarden.CauseFileTypeRefused, fmt.Sprintf("%s refuses %s files (%s), the MFP's scan file type, and takes other files (%s)", c.t.PanelPath(), ext, errText(attemptResult{err: err, status: statusOf(err)}), other),
		fmt.Sprintf("Allow %s files in %s (the server's file screen, antivirus rule or Samba's veto files), or change the MFP's scan file type.", ext, c.t.PanelPath()))
	return true
}

// refusedOrAbsent reports whether the server answered a create with a
// refusal or "no such name" (what a file screen or veto files answer) —
// the SMB library keeps only os.ErrPermission or os.ErrNotExist of some.
func refusedOrAbsent(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrNotExist)
}

// statusOf is the NT status err carries (0: none).
func statusOf(err error) ntstatus.Status {
	st, _ := smbconn.StatusOf(err)
	return st
}

// canaryName is a new test file's name: recognisable, dated, unique.
func (c writeStep) canaryName() string {
	var rnd [6]byte
	rand.Read(rnd[:])
	return canaryPrefix + c.o.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(rnd[:]) + c.o.Device.FileType.Ext()
}

// deleteCanary judges err, what deleting the written canary at p — closed,
// or doomed and still open — returned, and ends the write step. It reports
// whether the file needs no further try (deleted, or refused for good and
// reported as left behind).
func (c writeStep) deleteCanary(s *stepState, err error, p, name string, doomed bool) bool {
	if err != nil {
		cause, ev := classify(stepDelete, err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		if cause == scanwarden.CauseNoDeletePermission && doomed {
			c.fail(s, cause, fmt.Sprintf("%s can create and write files in %s but cannot delete them (the test file is gone all the same: it was created to be deleted on close)", c.who(), c.t.PanelPath()),
				fmt.Sprintf("Grant %s 'Delete' on the folder if files must be replaced.", c.grantee()))
			return true
		}
		if cause == scanwarden.CauseNoDeletePermission {
			c.r.Canary = c.t.Share + `\` + p
			c.fail(s, cause, fmt.Sprintf("%s can create and write files in %s but cannot delete them; the test file %s was left behind", c.who(), c.t.PanelPath(), name),
				fmt.Sprintf("Delete %s\\%s by hand; grant %s 'Delete' on the folder if files must be replaced.", c.t.Share, p, c.grantee()))
			return true
		}
		c.fail(s, cause, fmt.Sprintf("deleting the test file failed: %v", err), "")
		return false
	}
	c.canaryDone(s, name, "deleted it")
	return true
}

// canaryDone ends a write step whose canary is gone.
func (c writeStep) canaryDone(s *stepState, name, how string) {
	detail := fmt.Sprintf("created %s, wrote %d bytes, read them back and %s", name, canarySize, how)
	if free, ok := s.Evidence["free_bytes"].(uint64); ok && free < 100<<20 {
		low := fmt.Sprintf("only %d MiB free on the disk of %s", free>>20, c.t.PanelPath())
		c.warnAction(s, detail+"; "+low, low)
		return
	}
	c.ok(s, detail)
}

// canaryFolder keys the canary journal: the destination folder as the
// panel shows it, case-folded.
func (c writeStep) canaryFolder() string {
	return strings.ToLower(`\\` + strings.Trim(c.t.Host, "[]") + `\` + c.t.PanelPath())
}

// isCanaryName accepts only names this package gives its test files: a
// journal is data and must never make a check delete anything else.
func isCanaryName(n string) bool {
	return strings.HasPrefix(n, canaryPrefix) && canaryExt(n) && !strings.ContainsAny(n, `\/:*?"<>|`) && len(n) < 100
}

// canaryExt reports whether n ends in an extension a test file gets: .tmp
// or a scan file type's.
func canaryExt(n string) bool {
	if strings.HasSuffix(n, ".tmp") {
		return true
	}
	for _, t := range smbconn.FileTypes() {
		if strings.HasSuffix(n, t.Ext()) {
			return true
		}
	}
	return false
}

// sweepCanaries removes the test files that earlier checks of this folder
// recorded but never saw gone (a check killed mid-write).
func (c writeStep) sweepCanaries(ctx context.Context, sh *smbconn.Share, s *stepState) {
	j := c.o.Canaries
	if j == nil {
		return
	}
	left, err := j.Left(ctx, c.canaryFolder())
	if err != nil {
		c.o.Logger.Warn("canary journal", "err", err)
		return
	}
	var swept, kept []string
	for _, n := range left {
		if !isCanaryName(n) {
			j.Forget(ctx, c.canaryFolder(), n)
			continue
		}
		p := n
		if parts := c.t.Folders(); len(parts) > 0 {
			p = strings.Join(parts, `\`) + `\` + n
		}
		if err := sh.Remove(ctx, p); err != nil && !errors.Is(err, os.ErrNotExist) {
			kept = append(kept, n)
			continue
		}
		swept = append(swept, n)
		if err := j.Forget(ctx, c.canaryFolder(), n); err != nil {
			c.o.Logger.Warn("canary journal", "err", err)
		}
	}
	if len(swept) > 0 {
		s.Evidence["swept"] = swept
	}
	if len(kept) > 0 {
		s.Evidence["not_swept"] = kept
	}
}

func (c writeStep) writeFailed(s *stepState, op string, err error, p string) {
	cause, ev := classify(StepWrite, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	s.Evidence["operation"] = op
	folder := c.t.PanelPath()
	switch cause {
	case scanwarden.CauseNoWritePermission:
		c.fail(s, cause, fmt.Sprintf("%s may not %s a file in %s", c.who(), op, folder),
			fmt.Sprintf("Grant %s 'Modify' (create files / write data) on %s in the folder's Security tab (NTFS) — share permissions must allow Change too.", c.grantee(), folder))
	case scanwarden.CauseDiskFull:
		c.fail(s, cause, fmt.Sprintf("the disk holding %s is full (%s failed)", folder, op), fmt.Sprintf("Free space on the volume of %s, or raise the quota.", folder))
	default:
		c.fail(s, cause, fmt.Sprintf("%s of the test file failed: %v", op, err), "")
	}
}

// readBack reads the canary through its own handle and compares.
func readBack(f io.ReaderAt, want []byte) error {
	got := make([]byte, len(want)+1)
	n, err := f.ReadAt(got, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if !bytes.Equal(got[:n], want) {
		return fmt.Errorf("read back %d bytes that differ from the %d written", n, len(want))
	}
	return nil
}
