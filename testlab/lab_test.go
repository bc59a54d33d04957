package testlab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// These tests check the lab itself from inside swlab-cli, with Go's own TLS,
// resolver and dialer — the stacks scanwarden uses.

func labCAPool(t *testing.T, l *Lab) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(l.CA)
	if err != nil {
		t.Fatalf("read lab CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("lab CA %s: no certificate", l.CA)
	}
	return pool
}

func checkLeaf(t *testing.T, cs tls.ConnectionState) {
	t.Helper()
	leaf := cs.PeerCertificates[0]
	if leaf.SerialNumber.Sign() <= 0 {
		t.Errorf("DC certificate serial %v is not positive", leaf.SerialNumber)
	}
}

func TestDCCertificateLDAPS(t *testing.T) {
	l := Require(t)
	pool := labCAPool(t, l)
	for _, tc := range []struct{ name, host string }{
		{"by name", l.DCHost},
		{"by IP", l.DCIP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: tc.host}}
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(tc.host, "636"))
			if err != nil {
				t.Fatalf("ldaps %s: %v", tc.host, err)
			}
			defer c.Close()
			checkLeaf(t, c.(*tls.Conn).ConnectionState())
		})
	}
}

// startTLSRequest is the LDAP ExtendedRequest for StartTLS, message id 1.
var startTLSRequest = append([]byte{0x30, 0x1d, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16},
	"1.3.6.1.4.1.1466.20037"...)

// readTLV reads one BER element and returns its tag and contents.
func readTLV(r *bufio.Reader) (byte, []byte, error) {
	tag, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	length := int(n)
	if n&0x80 != 0 {
		length = 0
		for i := 0; i < int(n&0x7f); i++ {
			b, err := r.ReadByte()
			if err != nil {
				return 0, nil, err
			}
			length = length<<8 | int(b)
		}
	}
	body := make([]byte, length)
	_, err = io.ReadFull(r, body)
	return tag, body, err
}

// startTLSResult sends StartTLS on c and returns the LDAP result code.
func startTLSResult(c net.Conn) (int, error) {
	if _, err := c.Write(startTLSRequest); err != nil {
		return 0, fmt.Errorf("write StartTLS: %w", err)
	}
	tag, msg, err := readTLV(bufio.NewReader(c))
	if err != nil || tag != 0x30 {
		return 0, fmt.Errorf("read LDAPMessage (tag %#x): %v", tag, err)
	}
	r := bufio.NewReader(bytes.NewReader(msg))
	if _, _, err := readTLV(r); err != nil { // messageID
		return 0, fmt.Errorf("messageID: %w", err)
	}
	tag, resp, err := readTLV(r)
	if err != nil || tag != 0x78 {
		return 0, fmt.Errorf("ExtendedResponse (tag %#x): %v", tag, err)
	}
	tag, code, err := readTLV(bufio.NewReader(bytes.NewReader(resp)))
	if err != nil || tag != 0x0a || len(code) != 1 {
		return 0, fmt.Errorf("resultCode (tag %#x): %v", tag, err)
	}
	return int(code[0]), nil
}

func TestDCCertificateStartTLS(t *testing.T) {
	l := Require(t)
	pool := labCAPool(t, l)
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(l.DCHost, "389"))
	if err != nil {
		t.Fatalf("dial ldap: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	code, err := startTLSResult(c)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("StartTLS result code %d, want 0", code)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: l.DCHost})
	if err := tc.HandshakeContext(ctx); err != nil {
		t.Fatalf("StartTLS handshake: %v", err)
	}
	checkLeaf(t, tc.ConnectionState())
}

func TestDNS(t *testing.T) {
	l := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct{ name, want string }{
		{"dc1", l.DCIP}, {"smb1srv", l.SMB1IP}, {"smb2srv", l.SMB2IP}, {"signsrv", l.SignIP},
		{"ghost", l.GhostIP}, {"tarpit", l.TarpitIP},
		{"snmpsim", l.Getenv("SWLAB_SNMPSIM_IP")}, {"snmpd3", l.Getenv("SWLAB_SNMPD_IP")},
		{"smb1srv." + l.DNSDomain, l.SMB1IP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addrs, err := net.DefaultResolver.LookupHost(ctx, tc.name)
			if err != nil {
				t.Fatalf("lookup %s: %v", tc.name, err)
			}
			if len(addrs) != 1 || addrs[0] != tc.want {
				t.Fatalf("lookup %s = %v, want [%s]", tc.name, addrs, tc.want)
			}
		})
	}
	t.Run("nosuchhost", func(t *testing.T) {
		_, err := net.DefaultResolver.LookupHost(ctx, "nosuchhost")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Fatalf("lookup nosuchhost: %v, want a not-found DNS error", err)
		}
	})
}

func TestGhostRefuses(t *testing.T) {
	l := Require(t)
	for _, port := range []string{"445", "139"} {
		var d net.Dialer
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(l.GhostIP, port))
		cancel()
		if err == nil {
			c.Close()
			t.Fatalf("ghost %s:%s accepted a connection", l.GhostIP, port)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("ghost %s:%s: %v, want connection refused", l.GhostIP, port, err)
		}
	}
}

func TestTarpitNeverAnswers(t *testing.T) {
	l := Require(t)
	for _, port := range []string{"445", "139"} {
		var d net.Dialer
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(l.TarpitIP, port))
		cancel()
		if err != nil {
			t.Fatalf("tarpit %s:%s: %v", l.TarpitIP, port, err)
		}
		c.Write([]byte("\x00\x00\x00\x04\xfeSMB"))
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Read(make([]byte, 1))
		c.Close()
		var ne net.Error
		if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("tarpit %s:%s answered (%d bytes, %v), want a read timeout", l.TarpitIP, port, n, err)
		}
	}
}
