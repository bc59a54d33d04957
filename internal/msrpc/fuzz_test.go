package msrpc

import (
	"testing"
	"time"
)

// The decoders take whatever a server sends: none may panic or read out of
// bounds, whatever the bytes.

func FuzzParseRecords(f *testing.F) {
	f.Add(record(41, time.Unix(1764990000, 0), 4625, TypeAuditFailure, "Microsoft-Windows-Security-Auditing", "S-1-0-0", "scanuser"))
	f.Add(record(1, time.Unix(1, 0), 6005, TypeInformation, "EventLog"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, _ := ParseRecords(b)
		for _, r := range rs {
			if len(r.Strings) > 256 {
				t.Fatalf("%d strings", len(r.Strings))
			}
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add(response(2, 3, []byte{1, 2, 3, 4}), uint32(2))
	f.Add(bindAck(1, 0), uint32(1))
	f.Fuzz(func(t *testing.T, b []byte, id uint32) {
		ParseResponse(b, id)
		ParseBindAck(b, id)
	})
}

func FuzzParseStubs(f *testing.F) {
	f.Add(make([]byte, 24))
	f.Add(make([]byte, 48))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseOpenEventLog(b)
		ParseCount(b)
		if r, err := ParseReadEventLog(b); err == nil && len(r.Data) > len(b) {
			t.Fatalf("%d bytes of data from a stub of %d", len(r.Data), len(b))
		}
		ParseShareGetInfo(b)
		ParseSessionEnum(b)
	})
}

// Conn.Call reads fragments from the pipe: any bytes a server sends back
// end in a stub or an error.
func FuzzCall(f *testing.F) {
	f.Add(response(2, 3, []byte{1, 2, 3, 4}))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &Conn{rw: &pipeFake{answers: [][]byte{b}, chunk: 1000}, callID: 1}
		c.Call(4, nil)
	})
}

// NetrDfsGetInfo's response, seeded with the real ones the lab's Samba
// sent (testdata/netdfs): no panic, no target or string beyond what the
// bytes can hold.
func FuzzParseDFSGetInfo(f *testing.F) {
	for _, name := range []string{"link", "two-targets", "root", "no-such-volume", "no-such-server"} {
		f.Add(netdfsStub(f, name))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := ParseDFSGetInfo(b)
		if err != nil {
			return
		}
		// Each target takes 12 bytes of the stub, each character 2.
		n := len(info.EntryPath) + len(info.Comment)
		for _, tg := range info.Targets {
			n += len(tg.Server) + len(tg.Share)
		}
		if 12*len(info.Targets) > len(b) || n > 3*len(b) {
			t.Fatalf("%d targets, %d bytes of text from a stub of %d", len(info.Targets), n, len(b))
		}
	})
}

// The whole call over a pipe, seeded with the lab's real responses in
// their response PDUs, cut into fragments.
func FuzzCallDFS(f *testing.F) {
	for _, name := range []string{"link", "two-targets"} {
		stub := netdfsStub(f, name)
		f.Add(response(2, 3, stub))
		half := len(stub) / 2
		f.Add(append(response(2, 1, stub[:half]), response(2, 2, stub[half:])...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &Conn{rw: &pipeFake{answers: [][]byte{b}, chunk: 1000}, callID: 1}
		DFSGetInfo(c, `\\SMB2SRV\dfs\scans`)
	})
}
