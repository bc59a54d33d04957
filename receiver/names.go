package receiver

import (
	"fmt"
	"strings"
	"sync"

	"github.com/scanwarden/scanwarden"
)

// nameLocks has a mutex per destination folder (folderKey), made on first
// use and dropped when no delivery holds or waits for it.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]*nameLock
}

type nameLock struct {
	sync.Mutex
	users int // holding or waiting; under nameLocks.mu
}

// lock takes key's mutex and returns its unlock.
func (ls *nameLocks) lock(key string) (unlock func()) {
	ls.mu.Lock()
	if ls.m == nil {
		ls.m = map[string]*nameLock{}
	}
	l := ls.m[key]
	if l == nil {
		l = &nameLock{}
		ls.m[key] = l
	}
	l.users++
	ls.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		ls.mu.Lock()
		if l.users--; l.users == 0 {
			delete(ls.m, key)
		}
		ls.mu.Unlock()
	}
}

// destFolder is a destination's real folder, logged on, with the key of
// its names lock (folderKey).
type destFolder struct {
	Folder
	key string
}

// folderKey names a destination's real folder for its names lock: host,
// port, share and path, case-folded as Windows and Samba compare them.
// (Two destinations naming one server differently — a name and an address
// — get two keys; their names then rest on the rename that does not
// replace.)
func folderKey(t scanwarden.Target) string {
	p := strings.Trim(strings.ReplaceAll(t.Path, `\`, "/"), "/")
	return strings.ToLower(fmt.Sprintf("%s|%d|%s|%s", t.Host, t.Info().Port, t.Share, p))
}
