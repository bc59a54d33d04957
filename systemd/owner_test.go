package systemd

import (
	"io/fs"
	"syscall"
)

func owner(st fs.FileInfo) (uid, gid int) {
	s := st.Sys().(*syscall.Stat_t)
	return int(s.Uid), int(s.Gid)
}
