package receiver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// recover finishes what a crash interrupted: rows left delivering by a dead
// process go back to held; a row committed whose file did not leave the
// inbox gets its move; purged rows lose a held copy left behind.
func (g *ingester) recover(ctx context.Context, log *slog.Logger) error {
	rows, err := g.cat.Scans(ctx, ScanQuery{States: []State{Held, Failed, Delivering, Purged, Refused}})
	if err != nil {
		return fmt.Errorf("receiver: recover: %w", err)
	}
	own := "" // no claim of ours exists yet
	for _, sc := range rows {
		if sc.HeldPath != "" && below("held", sc.HeldPath) != nil {
			log.Error("scan's held path is not below held/: refused", "id", sc.ID, "held_path", sc.HeldPath)
			continue
		}
		switch sc.State {
		case Purged:
			if p, err := at(g.dataDir, sc.HeldPath, false); err == nil {
				p.dir.Remove(p.name)
				p.close()
			}
			continue
		case Delivering:
			if claimAlive(sc.Claim, own) {
				continue
			}
			from := sc.State
			sc.State, sc.Claim, sc.NextAttempt = Held, "", time.Time{}
			if _, err := g.cat.UpdateScan(ctx, sc, from); err != nil {
				return fmt.Errorf("receiver: recover: %w", err)
			}
		}
		if sc.HeldPath == "" || heldExists(g.dataDir, sc.HeldPath) {
			continue
		}
		moved, open, err := g.finishMove(sc.InboxPath, sc.HeldPath, sc)
		if err != nil {
			return fmt.Errorf("receiver: recover scan %d: %w", sc.ID, err)
		}
		if moved {
			log.Info("recovered: moved a catalogued scan out of the inbox", "id", sc.ID, "file", sc.File)
			continue
		}
		if open {
			// written on since its row: the row has a part of it; the
			// watcher takes it whole once closed
			if _, err := g.cat.DeleteScan(ctx, sc.ID, sc.State); err != nil {
				return fmt.Errorf("receiver: recover scan %d: %w", sc.ID, err)
			}
			log.Info("recovered: a catalogued scan is being written again; its row is dropped and it is taken once closed", "id", sc.ID, "file", sc.File)
			continue
		}
		from := sc.State
		if sc.State == Refused {
			log.Error("refused scan has no held copy", "id", sc.ID, "file", sc.File)
			continue
		}
		sc.State, sc.Error = Failed, "held copy missing (removed from "+filepath.Join(g.dataDir, filepath.Dir(sc.HeldPath))+" by hand?)"
		sc.NextAttempt = time.Now().Add(100 * 365 * 24 * time.Hour)
		g.cat.UpdateScan(ctx, sc, from)
		log.Error("catalogued scan has no held copy", "id", sc.ID, "file", sc.File)
	}
	return nil
}

// finishMove moves the inbox file inboxRel, whose row sc was committed
// before a crash cut its move off, to heldRel: when it is sc's bytes and
// nobody holds it open for writing (a read lease, kept through the hash
// and the move, as ingest does). open: someone does (or the kernel cannot
// say) — it is not taken.
func (g *ingester) finishMove(inboxRel, heldRel string, sc Scan) (moved, open bool, err error) {
	if below("inbox", inboxRel) != nil {
		return false, false, nil
	}
	if err := below("held", heldRel); err != nil {
		return false, false, err
	}
	src, err := at(g.dataDir, inboxRel, false)
	if err != nil {
		return false, false, nil
	}
	defer src.close()
	f, _, err := src.dir.OpenRegular(src.name, os.O_RDONLY, 0)
	if err != nil {
		return false, false, nil
	}
	defer f.Close()
	snap, err := fstatSnap(f)
	if err != nil || snap.size != sc.Size {
		return false, false, nil
	}
	if err := readLease(f); err != nil {
		return false, true, nil
	}
	defer dropLease(f)
	sum, _, err := hashFile(f, g.buf)
	if err != nil || sum != sc.SHA256 {
		return false, false, nil
	}
	if !leaseHeld(f) {
		return false, true, nil
	}
	if err := f.Sync(); err != nil {
		return false, false, err
	}
	dst, err := at(g.dataDir, heldRel, true)
	if err != nil {
		return false, false, err
	}
	defer dst.close()
	if err := move(src, dst); err != nil {
		return false, false, err
	}
	if now, _, err := dst.lstat(); err != nil || now.ino != snap.ino {
		// another file took the name meanwhile: back it goes
		return false, true, putBack(dst, src)
	}
	return true, false, nil
}
