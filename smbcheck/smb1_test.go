package smbcheck

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// The NTLMv2 example of [MS-NLMP] 4.2.4: user "User", domain "Domain",
// password "Password", server challenge 0123456789abcdef, client challenge
// aa×8, time 0, target info NbDomainName "Domain", NbComputerName "Server".
func TestNTLMv2Vector(t *testing.T) {
	key := ntowfv2("User", "Domain", "Password")
	if got := hex.EncodeToString(key); got != "0c868a403bfd7a93a3001ef22ef02e3f" {
		t.Fatalf("NTOWFv2 %s", got)
	}
	var ti []byte
	for _, av := range []struct {
		id uint16
		v  string
	}{{2, "Domain"}, {1, "Server"}} {
		ti = binary.LittleEndian.AppendUint16(ti, av.id)
		ti = binary.LittleEndian.AppendUint16(ti, uint16(len(toUTF16(av.v))))
		ti = append(ti, toUTF16(av.v)...)
	}
	ti = append(ti, 0, 0, 0, 0)
	ch := ntlmServerChallenge{TargetInfo: ti, Timestamp: make([]byte, 8)}
	copy(ch.Challenge[:], []byte{1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef})
	cc := [8]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}
	msg, sk := ntlmAuthenticateMessage(ch, ntlmCredentials{User: "User", Domain: "Domain", Password: "Password", Workstation: "mfp01"}, cc, time.Unix(0, 0))
	// SessionBaseKey of the same example.
	if got := hex.EncodeToString(sk); got != "8de40ccadbc14a82f15cb0ad0de95ca3" {
		t.Errorf("SessionBaseKey %s", got)
	}
	nt, err := ntlmField(msg, 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(nt[:16]); got != "68cd0ab851e51c96aabc927bebef6a1c" {
		t.Errorf("NTProofStr %s", got)
	}
	lm := hmacMD5(key, ch.Challenge[:], cc[:])
	if got := hex.EncodeToString(lm); got != "86c35097ac9cec102554764a57cccc19" {
		t.Errorf("LMv2 %s", got)
	}
	for off, want := range map[int]string{28: "Domain", 36: "User", 44: "MFP01"} {
		b, err := ntlmField(msg, off)
		if err != nil || decodeUTF16(b) != want {
			t.Errorf("field at %d: %q (%v), want %q", off, decodeUTF16(b), err, want)
		}
	}
	anon, _ := ntlmAuthenticateMessage(ch, ntlmCredentials{Workstation: "MFP01"}, cc, time.Unix(0, 0))
	if f := binary.LittleEndian.Uint32(anon[60:]); f&ntlmNegotiateAnonymous == 0 {
		t.Errorf("anonymous AUTHENTICATE without the anonymous flag: %#x", f)
	}
	if nt, _ := ntlmField(anon, 20); len(nt) != 0 {
		t.Errorf("anonymous NT response of %d bytes", len(nt))
	}
}

// smb1Answer builds an SMB1 server message.
func smb1Answer(cmd byte, status ntstatus.Status, words, data []byte) []byte {
	b := smb1Header(cmd)
	b[9] |= 0x80 // reply
	binary.LittleEndian.PutUint32(b[5:], uint32(status))
	b = append(b, byte(len(words)/2))
	b = append(b, words...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

func smb1Seeds() [][]byte {
	neg := make([]byte, 34)
	binary.LittleEndian.PutUint32(neg[7:], 16644)
	binary.LittleEndian.PutUint32(neg[19:], smb1CapExtendedSecurity)
	blob := spnegoResp(windowsChallenge())
	ss := []byte{0xff, 0, 0, 0, 0, 0}
	ss = binary.LittleEndian.AppendUint16(ss, uint16(len(blob)))
	create := make([]byte, 68)
	create[5] = 7
	read := make([]byte, 24)
	binary.LittleEndian.PutUint16(read[10:], 4)
	binary.LittleEndian.PutUint16(read[12:], 59)
	return [][]byte{
		smb1Answer(smb1CmdNegotiate, 0, neg, make([]byte, 16)),
		smb1Answer(smb1CmdSessionSetup, ntstatus.MoreProcessingRequired, ss, blob),
		smb1Answer(smb1CmdNTCreate, 0, create, nil),
		smb1Answer(smb1CmdReadAndX, 0, read, []byte{0, 1, 2, 3, 4}),
		smb1Answer(smb1CmdWriteAndX, 0, []byte{0xff, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, nil),
		smb1Answer(smb1CmdTreeConnect, ntstatus.BadNetworkName, nil, nil),
	}
}

// FuzzSMB1Replay answers every request of the SMB1 replay with the same
// hostile message (addressed to that request): no operation may panic,
// read out of bounds or loop.
func FuzzSMB1Replay(f *testing.F) {
	for _, s := range smb1Seeds() {
		f.Add(s)
	}
	f.Add([]byte("\xffSMB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseSMB1NegotiateResponse(b)
		parseNTLMServerChallenge(b)
		cli, srv := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer srv.Close()
			for range 16 {
				req, err := readFrame(srv)
				if err != nil {
					return
				}
				resp := append([]byte{}, b...)
				if len(resp) >= 32 && len(req) >= 32 {
					resp[4] = req[4]
					copy(resp[30:32], req[30:32])
				}
				if writeFrame(srv, resp) != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c := &smb1Conn{conn: cli, tid: 0xffff, timeout: time.Second, maxBuf: 4096}
		c.negotiate(ctx)
		c.neg.ExtendedSec = true
		c.sessionSetup(ctx, ntlmCredentials{User: "u", Password: "p", Workstation: "w"}, nil)
		c.sessionSetup(ctx, ntlmCredentials{User: "u", Password: "p", Workstation: "w", NTLMv1: true}, nil)
		c.treeConnect(ctx, "h", "s")
		fs := smb1FS{c: c, ctx: ctx}
		fs.Stat(`a\b`)
		if f, err := fs.OpenFile("x", 0x42, 0); err == nil {
			f.Write(make([]byte, 5000))
			f.ReadAt(make([]byte, 100), 0)
			f.freeBytes()
			if sf, ok := f.(*smb1File); ok {
				sf.Seek(0, io.SeekStart)
				sf.Read(make([]byte, 300))
				sf.Sync()
			}
			f.Close()
		}
		smb1Tree{c}.rename(ctx, "x", "y")
		c.listDir(ctx, "d")
		var list []os.FileInfo
		appendDirEntries(&list, b)
		fs.Remove("x")
		c.logoff()
		<-done
	})
}

func TestSMB1Seeds(t *testing.T) {
	s := smb1Seeds()
	n, err := parseSMB1NegotiateResponse(s[0])
	if err != nil || !n.ExtendedSec || n.MaxBuffer != 16644 || n.DialectIndex != 0 {
		t.Fatalf("negotiate %+v %v", n, err)
	}
	w, d, err := smb1Parse(s[1], smb1CmdSessionSetup)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := sessionSetupBlob(w, d)
	if err != nil || !bytes.Contains(blob, []byte("NTLMSSP")) {
		t.Fatalf("blob %v", err)
	}
	if _, err := parseNTLMServerChallenge(blob); err != nil {
		t.Fatal(err)
	}
	w, _, _ = smb1Parse(s[3], smb1CmdReadAndX)
	if got, err := readAndXData(s[3], w); err != nil || len(got) != 4 {
		t.Fatalf("read data %v %v", got, err)
	}
}

// The NTLMv1 examples of [MS-NLMP] 4.2.2 (no extended session security)
// and 4.2.3 (NTLM2 session response): password "Password", server
// challenge 0123456789abcdef, client challenge aa×8.
func TestNTLMv1Vectors(t *testing.T) {
	ch := ntlmServerChallenge{}
	copy(ch.Challenge[:], []byte{1, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef})
	cc := [8]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa}
	_, nt, _ := ntlmv1Responses(ch, "Password", cc)
	if got := hex.EncodeToString(nt); got != "67c43011f30298a2ad35ece64f16331c44bdbed927841f94" {
		t.Errorf("NTLMv1 response %s", got)
	}
	ch.Flags = ntlmExtendedSession
	lm, nt, _ := ntlmv1Responses(ch, "Password", cc)
	if got := hex.EncodeToString(nt); got != "7537f803ae367128ca458204bde7caf81e97ed2683267232" {
		t.Errorf("NTLM2 session response %s", got)
	}
	if got := hex.EncodeToString(lm); got != "aaaaaaaaaaaaaaaa00000000000000000000000000000000" {
		t.Errorf("LM response %s", got)
	}
}
