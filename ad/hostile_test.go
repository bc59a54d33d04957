package ad

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// A hostile LDAP server answers the bind with a message that announces
// 1 GiB and then trickles bytes: the bind fails at once, naming the limit,
// and memory does not follow the announcement (2.6 GB RSS before the cap).
// FAKE peer: no real DC sends such a message.
func TestHugeLDAPMessageRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Read(make([]byte, 4096)) // the bind request
		// SEQUENCE of 1 GiB (long form, 4 length octets), then 1 MiB of it.
		c.Write([]byte{0x30, 0x84, 0x40, 0x00, 0x00, 0x00})
		c.Write(make([]byte, 1<<20))
		time.Sleep(3 * time.Second)
	}()
	cfg := fakeConfig("ldap://" + ln.Addr().String())
	cfg.AllowPlain = true
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = d.User(context.Background(), "alice", "")
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a 1 GiB LDAP message was accepted")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s to refuse", took)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("allocated %d MiB for the announced message", grew>>20)
	}
	t.Logf("refused in %s: %v", time.Since(start).Round(time.Millisecond), err)
}

// fakeDNS answers every SRV question with targets (a fake: the lab's DNS
// must keep pointing at the real DC for everyone's tests).
func fakeDNS(t *testing.T, targets ...string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if q.Type == dnsmessage.TypeSRV {
				for i, tg := range targets {
					b.SRVResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
						dnsmessage.SRVResource{Priority: uint16(i), Weight: 0, Port: 389, Target: dnsmessage.MustNewName(tg + ".")})
				}
			}
			msg, err := b.Finish()
			if err == nil {
				pc.WriteTo(msg, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// DNS is not trusted with the choice of DC: SRV targets outside the AD
// domain (another domain, a look-alike suffix) are dropped; only DCs
// inside it are tried.
func TestSRVTargetsOutsideDomainDropped(t *testing.T) {
	cfg := Config{Domain: "kyolab.test", BindUser: "svc@kyolab.test", Password: fakeConfig("").Password,
		Resolver: fakeDNS(t, "evil.attacker.test", "kyolab.test.attacker.test", "dc1.kyolab.test", "notkyolab.test")}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := d.endpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || eps[0].host != "dc1.kyolab.test" {
		t.Errorf("endpoints %+v, want only dc1.kyolab.test", eps)
	}

	cfg.Resolver = fakeDNS(t, "evil.attacker.test")
	d, _ = New(cfg)
	if _, err := d.endpoints(context.Background()); err == nil || !strings.Contains(err.Error(), "outside the domain (evil.attacker.test)") {
		t.Errorf("only outside DCs: err = %v", err)
	}
}

func TestInDomain(t *testing.T) {
	for host, want := range map[string]bool{
		"dc1.kyolab.test": true, "DC1.KyoLab.Test.": true, "kyolab.test": true,
		"kyolab.test.evil": false, "xkyolab.test": false, "evil.test": false, "": false,
	} {
		if got := inDomain(host, "kyolab.test"); got != want {
			t.Errorf("inDomain(%q) = %v", host, got)
		}
	}
}
