package smbconn

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLogonTransport: on TCP 139 every way of speaking SMB over a
// connection (the logons over SMB2/3 and SMB1, the negotiate probe, the
// one-dialect question) opens the NetBIOS session before its first SMB
// message — the session request (0x81) comes first, and a refusal ends it
// naming it — and on 445 none sends one (the first byte is a session
// message's, 0x00). The peer is a listener of this test's: Samba (the
// lab's smb1srv and DC) takes SMB on 139 without a session request too, so
// no lab peer tells the two apart.
func TestLogonTransport(t *testing.T) {
	logons := map[string]func(ctx context.Context, conn net.Conn, port int) error{
		"Logon": func(ctx context.Context, conn net.Conn, port int) error {
			_, _, err := Logon(ctx, conn, port, "fs1", Credentials{User: "u", Typed: "u"}, Device{}, nil)
			return err
		},
		"LogonSMB1": func(ctx context.Context, conn net.Conn, port int) error {
			_, _, err := LogonSMB1(ctx, conn, port, "fs1", Credentials{User: "u", Typed: "u"}, false, nil)
			return err
		},
		"Probe": func(ctx context.Context, conn net.Conn, port int) error {
			_, err := Probe(ctx, conn, port, "fs1", false)
			return err
		},
		"AcceptsDialect": func(ctx context.Context, conn net.Conn, port int) error {
			ok, err := AcceptsDialect(ctx, conn, port, "fs1", DialectSMB21)
			if err == nil && !ok {
				err = errors.New("refused") // the listener hung up
			}
			return err
		},
	}
	for name, logon := range logons {
		for _, tc := range []struct {
			port  int
			first byte
		}{{139, 0x81}, {445, 0x00}} {
			t.Run(name+"/"+strconv.Itoa(tc.port), func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				first := make(chan byte, 1)
				go func() {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					defer c.Close()
					var b [1]byte
					if _, err := io.ReadFull(c, b[:]); err != nil {
						return
					}
					first <- b[0]
					if b[0] == 0x81 {
						c.Write([]byte{0x83, 0, 0, 1, 0x82}) // negative session response: called name not present
					}
				}()
				conn, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err = logon(ctx, conn, tc.port)
				select {
				case b := <-first:
					if b != tc.first {
						t.Errorf("first byte sent 0x%02x, want 0x%02x", b, tc.first)
					}
				case <-ctx.Done():
					t.Fatal("nothing sent")
				}
				if err == nil {
					t.Fatal("no error from a listener that answers no SMB")
				}
				if refused := strings.Contains(err.Error(), "NetBIOS session refused for called name FS1"); refused != (tc.port == 139) {
					t.Errorf("error %v", err)
				}
			})
		}
	}
}
