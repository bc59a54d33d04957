package samba

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Audit follows smbd's log, where the share's full_audit module writes
// one line per create, write, close, rename and disconnect with the
// client's user, address, NetBIOS name and protocol (prefix %U|%I|%m|%R),
// under a header that names the smbd process (one per client connection).
// It tells who wrote a file and when that writer's session ended, and what
// each logon showed about the client (Observation). One goroutine uses it.
type Audit struct {
	path string
	f    *os.File
	ino  uint64
	off  int64
	part []byte // an unfinished last line
	pid  int    // pid of the header line just read

	byPid  map[int]*auditSession
	byPath map[string]*auditFile
	buf    []byte
	// at is the time of the header line just read (smbd's local time);
	// onLogon, when set, is told what each logon shows (logon.go).
	at      time.Time
	onLogon func(Observation)
}

type auditSession struct {
	writer string
	paths  map[string]bool
}

type auditFile struct {
	writer string
	pid    int
	ended  bool // the session that last wrote it has disconnected
}

// NewAudit follows smbd's log at path (Server.AuditLog); onLogon, when not
// nil, is told what each logon shows, on the goroutine that calls Poll: it
// must not block.
func NewAudit(path string, onLogon func(Observation)) *Audit {
	return &Audit{path: path, byPid: map[int]*auditSession{}, byPath: map[string]*auditFile{}, buf: make([]byte, 64<<10), onLogon: onLogon}
}

// Poll reads what smbd appended since the last call (fromEnd: skip what
// the log holds when it is first opened); ended lists the files whose
// writer's session ended in it.
func (a *Audit) Poll(fromEnd bool) (ended []string) {
	if a.f == nil || a.rotated() {
		if a.f != nil {
			a.drain(&ended) // what the old file still holds
			a.f.Close()
			a.f = nil
		}
		f, err := os.Open(a.path)
		if err != nil {
			return ended
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
			f.Close()
			return ended
		}
		a.f, a.ino, a.off, a.part = f, st.Ino, 0, nil
		if fromEnd {
			a.off = st.Size
		}
	}
	a.drain(&ended)
	return ended
}

func (a *Audit) rotated() bool {
	var st syscall.Stat_t
	if err := syscall.Stat(a.path, &st); err != nil {
		return false
	}
	return st.Ino != a.ino || st.Size < a.off
}

func (a *Audit) drain(ended *[]string) {
	for {
		n, err := a.f.ReadAt(a.buf, a.off)
		if n > 0 {
			a.off += int64(n)
			data := a.buf[:n]
			for {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					if len(a.part) < 64<<10 {
						a.part = append(a.part, data...)
					}
					break
				}
				line := data[:i]
				if len(a.part) > 0 {
					line = append(a.part, line...)
					a.part = nil
				}
				a.line(string(line), ended)
				data = data[i+1:]
			}
		}
		if err == io.EOF || n < len(a.buf) || err != nil {
			return
		}
	}
}

// line handles one log line: a header "[date, level, pid=N] ..." or an
// audit record "user|ip|machine|proto|op|ok|args...".
func (a *Audit) line(l string, ended *[]string) {
	if strings.HasPrefix(l, "[") {
		if i := strings.Index(l, "pid="); i >= 0 {
			j := i + 4
			for j < len(l) && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			a.pid, _ = strconv.Atoi(l[i+4 : j])
		}
		a.at = headerTime(l)
		return
	}
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "{") {
		if o, ok := parseAuthLine(l, a.when()); ok {
			a.logon(o)
		}
		return
	}
	f := strings.Split(l, "|")
	if len(f) < 6 || f[5] != "ok" {
		return
	}
	writer := strings.Join(f[:4], "|")
	switch op := f[4]; op {
	case "connect":
		if o, ok := connectObservation(f, a.when()); ok {
			a.logon(o)
		}
	case "create_file", "pwrite_send", "ftruncate", "fntimes", "renameat":
		if len(f) < 7 {
			return
		}
		p := f[len(f)-1]
		if op == "create_file" && len(f) >= 9 && f[7] != "file" {
			return // a directory opened
		}
		if op == "create_file" && len(f) >= 9 && f[8] == "open" {
			return // opened to read; it writes nothing
		}
		a.touch(p, writer)
	case "disconnect":
		s := a.byPid[a.pid]
		if s == nil {
			return
		}
		for p := range s.paths {
			if af := a.byPath[p]; af != nil && af.pid == a.pid {
				af.ended = true
				*ended = append(*ended, p)
			}
		}
		delete(a.byPid, a.pid)
	}
}

func (a *Audit) touch(p, writer string) {
	af := a.byPath[p]
	if af == nil {
		if len(a.byPath) > 100000 { // bounded: forget the oldest knowledge wholesale
			a.byPath = map[string]*auditFile{}
		}
		af = &auditFile{}
		a.byPath[p] = af
	}
	af.writer, af.pid, af.ended = writer, a.pid, false
	s := a.byPid[a.pid]
	if s == nil {
		s = &auditSession{writer: writer, paths: map[string]bool{}}
		a.byPid[a.pid] = s
	}
	if len(s.paths) < 10000 {
		s.paths[p] = true
	}
}

func (a *Audit) logon(o Observation) {
	if a.onLogon != nil {
		a.onLogon(o)
	}
}

// Writer is what the log says about the file at p: who last wrote it
// (user|ip|machine|protocol; "" when the log says nothing) and whether
// that writer's session has ended since.
func (a *Audit) Writer(p string) (writer string, ended bool) {
	if af := a.byPath[p]; af != nil {
		return af.writer, af.ended
	}
	return "", false
}

// Forget drops p once it left the inbox.
func (a *Audit) Forget(p string) {
	if af := a.byPath[p]; af != nil {
		if s := a.byPid[af.pid]; s != nil {
			delete(s.paths, p)
		}
		delete(a.byPath, p)
	}
}

// headerTime reads the time of smbd's log header "[2026/12/06
// 05:56:46.022589,  1, pid=15926] …" (smbd's local time); zero when it
// has none.
func headerTime(l string) time.Time {
	end := strings.IndexByte(l, ',')
	if end < 0 || end > 40 {
		return time.Time{}
	}
	t, err := time.ParseInLocation("[2006/01/02 15:04:05.999999", l[:end], time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// when is the time of the record just read: its header's, or now when
// the header had none or one a day away from now.
func (a *Audit) when() time.Time {
	now := time.Now()
	if a.at.IsZero() || a.at.Sub(now).Abs() > 24*time.Hour {
		return now
	}
	return a.at
}
