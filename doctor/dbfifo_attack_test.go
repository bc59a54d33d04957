package doctor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/attacker"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
)

// TestAttackDoctorDatabaseFIFO: doctor runs as root and reads the daemon's
// database read-only; the daemon's user put a FIFO where the database was.
// store.OpenReadOnly looked with Stat, then SQLite opened the FIFO and
// waited for a writer for ever (SIGTERM did not end it). Now the database
// is opened below the data dir's fd without waiting and judged by fstat
// before SQLite sees it, and doctor ends within seconds naming the file.
func TestAttackDoctorDatabaseFIFO(t *testing.T) {
	conf, data := box(t, "")
	key := filepath.Join(filepath.Dir(conf), seal.FileName)
	if _, err := seal.Create(key); err != nil {
		t.Fatal(err)
	}
	attacker.Own(t, data)
	db := filepath.Join(data, store.DefaultFile)
	attacker.Fifo(t, db)
	done := make(chan Report, 1)
	go func() { done <- run(t, Options{ConfigFile: conf, ServiceUser: attacker.Name, KeyFile: key}) }()
	select {
	case rep := <-done:
		want(t, rep, "data_dir", Fail, "FIFO", "remove")
	case <-time.After(20 * time.Second):
		t.Errorf("doctor blocked on a FIFO where the daemon's database is")
		attacker.Unblock(db, 5*time.Second)
		<-done
	}
}
