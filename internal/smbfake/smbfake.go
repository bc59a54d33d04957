// Package smbfake builds FAKE server messages by hand — SMB2 answers of a
// Windows 11 PC, its NTLM CHALLENGE inside SPNEGO — for the unit tests and
// fuzz seeds of smbcheck and its wire packages: the fake Windows peer (a
// status no lab peer produces), the sniffer's and the SMB1 client's seeds.
// Everything a real peer can answer is tested against the lab instead.
// Only tests import it.
package smbfake

import (
	"encoding/binary"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// header is an SMB2 response header.
func header(cmd uint16, msgID uint64, status ntstatus.Status) []byte {
	h := make([]byte, 64)
	copy(h, "\xfeSMB")
	binary.LittleEndian.PutUint16(h[4:], 64)
	binary.LittleEndian.PutUint32(h[8:], uint32(status))
	binary.LittleEndian.PutUint16(h[12:], cmd)
	binary.LittleEndian.PutUint16(h[14:], 32) // credits granted
	binary.LittleEndian.PutUint32(h[16:], 1)  // response flag
	binary.LittleEndian.PutUint64(h[24:], msgID)
	if cmd == 1 {
		binary.LittleEndian.PutUint64(h[40:], 0x1234) // session id
	}
	return h
}

// NegotiateResponse is an SMB2 NEGOTIATE answer choosing dialect, signing
// enabled and not required.
func NegotiateResponse(msgID uint64, dialect uint16) []byte {
	b := header(0, msgID, ntstatus.Success)
	body := make([]byte, 64)
	binary.LittleEndian.PutUint16(body[0:], 65)
	binary.LittleEndian.PutUint16(body[2:], 0x01) // signing enabled, not required
	binary.LittleEndian.PutUint16(body[4:], dialect)
	copy(body[8:24], "fake-windows-guid")
	binary.LittleEndian.PutUint32(body[24:], 0) // capabilities
	binary.LittleEndian.PutUint32(body[28:], 1<<16)
	binary.LittleEndian.PutUint32(body[32:], 1<<16)
	binary.LittleEndian.PutUint32(body[36:], 1<<16)
	binary.LittleEndian.PutUint16(body[56:], 128) // security buffer offset
	binary.LittleEndian.PutUint16(body[58:], 0)
	return append(b, body...)
}

// SessionSetupResponse is an SMB2 SESSION_SETUP answer with status and the
// security blob.
func SessionSetupResponse(msgID uint64, status ntstatus.Status, blob []byte) []byte {
	b := header(1, msgID, status)
	body := make([]byte, 8)
	binary.LittleEndian.PutUint16(body[0:], 9)
	binary.LittleEndian.PutUint16(body[4:], 64+8)
	binary.LittleEndian.PutUint16(body[6:], uint16(len(blob)))
	return append(append(b, body...), blob...)
}

// ErrorResponse is an SMB2 error answer to cmd with status.
func ErrorResponse(msgID uint64, cmd uint16, status ntstatus.Status) []byte {
	b := header(cmd, msgID, status)
	body := make([]byte, 9)
	binary.LittleEndian.PutUint16(body[0:], 9)
	return append(b, body...)
}

// SPNEGOResp is a server's SPNEGO NegTokenResp carrying token.
func SPNEGOResp(token []byte) []byte {
	oidNTLMSSP := []byte{0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a}
	derTLV := func(tag byte, content []byte) []byte { // short and one-byte long lengths suffice here
		if len(content) < 0x80 {
			return append([]byte{tag, byte(len(content))}, content...)
		}
		return append([]byte{tag, 0x81, byte(len(content))}, content...)
	}
	negState := derTLV(0xa0, []byte{0x0a, 0x01, 0x01}) // accept-incomplete
	mech := derTLV(0xa1, oidNTLMSSP)
	tok := derTLV(0xa2, derTLV(0x04, token))
	return derTLV(0xa1, derTLV(0x30, append(append(negState, mech...), tok...)))
}

// WindowsChallenge is an NTLM CHALLENGE as a Windows 11 23H2 workgroup PC
// named SCANPC sends it.
func WindowsChallenge() []byte {
	var ti []byte
	av := func(id uint16, v []byte) {
		ti = binary.LittleEndian.AppendUint16(ti, id)
		ti = binary.LittleEndian.AppendUint16(ti, uint16(len(v)))
		ti = append(ti, v...)
	}
	av(2, ntlm.EncodeUTF16("OFFICE"))
	av(1, ntlm.EncodeUTF16("SCANPC"))
	av(4, ntlm.EncodeUTF16("office.example"))
	av(3, ntlm.EncodeUTF16("scanpc.office.example"))
	av(5, ntlm.EncodeUTF16("office.example"))
	ts := make([]byte, 8)
	binary.LittleEndian.PutUint64(ts, uint64(time.Now().UnixNano()/100+116444736000000000))
	av(7, ts)
	av(0, nil)
	target := ntlm.EncodeUTF16("OFFICE")
	m := []byte("NTLMSSP\x00")
	m = binary.LittleEndian.AppendUint32(m, 2)
	m = binary.LittleEndian.AppendUint16(m, uint16(len(target)))
	m = binary.LittleEndian.AppendUint16(m, uint16(len(target)))
	m = binary.LittleEndian.AppendUint32(m, 56)
	m = binary.LittleEndian.AppendUint32(m, 0xA2888205|0x00010000 /* the probe's NEGOTIATE flags without key exchange; target type domain */)
	m = append(m, 1, 2, 3, 4, 5, 6, 7, 8) // server challenge
	m = append(m, make([]byte, 8)...)
	m = binary.LittleEndian.AppendUint16(m, uint16(len(ti)))
	m = binary.LittleEndian.AppendUint16(m, uint16(len(ti)))
	m = binary.LittleEndian.AppendUint32(m, uint32(56+len(target)))
	m = append(m, 10, 0)
	m = binary.LittleEndian.AppendUint16(m, 22631)
	m = append(m, 0, 0, 0, 15)
	m = append(m, target...)
	return append(m, ti...)
}
