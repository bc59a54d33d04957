package snmp

import "golang.org/x/sys/unix"

// setReadBuffer asks for a receive buffer of n bytes: beyond the system's
// rmem_max when the process may (CAP_NET_ADMIN), else up to it.
func setReadBuffer(fd, n int) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n) != nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
	}
}
