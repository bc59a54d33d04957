// Package proc reads what Linux's /proc says about a process.
package proc

import (
	"bytes"
	"fmt"
	"os"
)

// Zombie says whether pid is a zombie (or gone): a process that died but
// was not reaped is no longer doing its work. A /proc that cannot be read
// for pid counts as gone.
func Zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}
