package sockets

import (
	"net"
	"os"
	"testing"
)

func TestHexAddr(t *testing.T) {
	for in, out := range map[string]string{
		"0100007F":                         "127.0.0.1",
		"00000000":                         "0.0.0.0",
		"00000000000000000000000000000000": "::",
		"00000000000000000000000001000000": "::1",
		"0000000000000000FFFF000002004D0A": "10.77.0.2",
	} {
		if got := HexAddr(in); got != out {
			t.Errorf("HexAddr(%s) = %s, want %s", in, got, out)
		}
	}
}

// This process's own listener is found with its pid.
func TestListeningOwners(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	socks, err := Listening("/proc")
	if err != nil {
		t.Fatal(err)
	}
	owners := Owners("/proc")
	for _, s := range socks {
		if s.Proto == "tcp" && s.Port == port && s.Addr == "127.0.0.1" {
			for _, p := range owners[s.Inode] {
				if p.PID == os.Getpid() {
					return
				}
			}
			t.Fatalf("socket %+v: owners %v, want pid %d", s, owners[s.Inode], os.Getpid())
		}
	}
	t.Fatalf("port %d not listed", port)
}
