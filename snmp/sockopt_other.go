//go:build !linux

package snmp

// setReadBuffer keeps the system's default receive buffer.
func setReadBuffer(fd, n int) {}
