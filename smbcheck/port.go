package smbcheck

import (
	"github.com/scanwarden/scanwarden/smbconn"
)

// smbPorts are the ports an SMB server answers on, most usual first.
var smbPorts = []int{445, 139}

// portAnswer is what one SMB port said to the negotiate probe.
type portAnswer struct {
	port int
	info *smbconn.ServerInfo // nil: no SMB there
	err  error
}

// smbElsewhere is the first answer from an SMB port, if any.
func smbElsewhere(answers []portAnswer) bool {
	for _, a := range answers {
		if a.info != nil {
			return true
		}
	}
	return false
}
