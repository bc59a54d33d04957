// Package testlab lets Go tests find the real peers started by testlab/lab.
// A test calls Require; when the lab is not up, or the test does not run
// inside the lab's client namespace, the test is skipped with a message that
// says how to run it — unless SCANWARDEN_LAB is set (testlab/lab exec,
// scripts/test): then it fails.
package testlab

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Lab describes the running lab, from the variables `testlab/lab exec` exports.
type Lab struct {
	Dir           string    // SCANWARDEN_LAB: the lab's state folder
	DCIP          string    // Samba AD DC
	DCHost        string    // its FQDN, e.g. dc1.kyolab.test
	Realm         string    // KYOLAB.TEST
	Domain        string    // NetBIOS domain, KYOLAB
	DNSDomain     string    // kyolab.test
	Password      string    // password of every lab account
	AdminPassword string    // Administrator's password
	CA            string    // PEM file of the lab CA that signed the DC's certificate
	SMB1IP        string    // SMB1-only standalone smbd
	SMB2IP        string    // SMB2+-only, NTLMv2-only standalone smbd
	SignIP        string    // signing-mandatory standalone smbd
	GuestIP       string    // standalone smbd mapping unknown users to guest
	EvtIP         string    // standalone smbd serving its event logs (MS-EVEN) to evreader; share limited (2 connections)
	GhostIP       string    // nothing listens
	TarpitIP      string    // accepts TCP and never answers
	UpAt          time.Time // SWLAB_UP_AT: when `lab up` finished (erin's lockout ends 30 min later)
	// The second AD DC, whose realm refuses NTLM (ntlm auth = disabled).
	DC2IP      string // its address; its DNS serves its realm's SRV records
	DC2Host    string // dc2.ntlmoff.test
	Realm2     string // NTLMOFF.TEST
	Domain2    string // NTLMOFF
	DNSDomain2 string // ntlmoff.test
	KDCSkewIP  string // dc2's KDC again, on its own address, 10 minutes ahead (faketime)
	// A PC on the segment that no DNS knows: its NetBIOS name (nmbd, also a
	// WINS server) and its LLMNR name (llmnrd), both answering with PCIP.
	PCIP      string
	PCNetBIOS string // NBPC
	PCLLMNR   string // llpc
}

// LockErin makes sure erin is locked out, as `lab up` left her: the DC's
// 30-minute lockout duration unlocks her again, and a test that needs her
// locked (however long ago the lab came up) calls this first. It logs on as
// erin (smbclient, NTLM only); unless that is refused as locked out, three
// bad logons lock her — a few rounds, since a test in another package may
// be doing the same at once. The test fails when the DC does not lock her.
func (l *Lab) LockErin(tb testing.TB) {
	tb.Helper()
	logon := func(pw string) string {
		out, _ := exec.Command("smbclient", "-s", "/dev/null", "--use-kerberos=disabled", "//"+l.DCIP+"/scans",
			"-U", l.Domain+"/erin%"+pw, "-c", "ls").CombinedOutput()
		return string(out)
	}
	const locked = "NT_STATUS_ACCOUNT_LOCKED_OUT"
	out := ""
	for round := 0; round < 3; round++ {
		if out = logon(l.Password); strings.Contains(out, locked) {
			return
		}
		for i := 1; i <= 3; i++ {
			bad := logon(fmt.Sprintf("not-her-password-%d", i))
			if strings.Contains(bad, locked) {
				break
			}
			if !strings.Contains(bad, "NT_STATUS_LOGON_FAILURE") {
				tb.Fatalf("lock erin: bad logon %d: %s", i, bad)
			}
		}
	}
	tb.Fatalf("lock erin: not locked out after three rounds of three bad logons: %s", out)
}

// Getenv returns one lab variable (for peers a package adds to the lab, e.g.
// the SNMP ones), or "" when unset.
func (l *Lab) Getenv(name string) string { return os.Getenv(name) }

// HowToRun is the hint printed when a lab test is skipped.
const HowToRun = "lab not up: as root run `testlab/lab up` then `testlab/lab exec go test ./...` (prefix sudo when not root), or the README's test command"

// Require returns the lab or skips the test. Inside the lab
// (SCANWARDEN_LAB set: `testlab/lab exec`, scripts/test) a lab that cannot
// be reached fails the test instead: a run meant to test against the real
// peers must not pass by skipping them.
func Require(tb testing.TB) *Lab {
	tb.Helper()
	l, why := Load()
	if l == nil {
		Missing(tb, why)
	}
	return l
}

// Missing ends a test that lacks something the lab provides — a peer, a
// lab variable, a tool testlab/deps installs, root, a folder of the lab's
// servers: inside the lab (SCANWARDEN_LAB set) the test fails, since a run
// meant to test against the real peers must not pass by skipping them;
// outside it the test is skipped, saying why.
func Missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("SCANWARDEN_LAB") != "" {
		tb.Fatal("inside the lab (SCANWARDEN_LAB is set), yet: " + why)
	}
	tb.Skip(why)
}

// Load reads the lab from the environment; on failure it returns nil and why.
func Load() (*Lab, string) {
	dir := os.Getenv("SCANWARDEN_LAB")
	if dir == "" {
		return nil, HowToRun
	}
	l := &Lab{
		Dir:           dir,
		DCIP:          os.Getenv("SWLAB_DC_IP"),
		DCHost:        os.Getenv("SWLAB_DC_HOST"),
		Realm:         os.Getenv("SWLAB_REALM"),
		Domain:        os.Getenv("SWLAB_DOMAIN"),
		DNSDomain:     os.Getenv("SWLAB_DNS_DOMAIN"),
		Password:      os.Getenv("SWLAB_PASSWORD"),
		AdminPassword: os.Getenv("SWLAB_ADMIN_PASSWORD"),
		CA:            os.Getenv("SWLAB_CA"),
		SMB1IP:        os.Getenv("SWLAB_SMB1_IP"),
		SMB2IP:        os.Getenv("SWLAB_SMB2_IP"),
		SignIP:        os.Getenv("SWLAB_SIGN_IP"),
		GuestIP:       os.Getenv("SWLAB_GUEST_IP"),
		EvtIP:         os.Getenv("SWLAB_EVT_IP"),
		GhostIP:       os.Getenv("SWLAB_GHOST_IP"),
		TarpitIP:      os.Getenv("SWLAB_TARPIT_IP"),
		DC2IP:         os.Getenv("SWLAB_DC2_IP"),
		DC2Host:       os.Getenv("SWLAB_DC2_HOST"),
		Realm2:        os.Getenv("SWLAB_REALM2"),
		Domain2:       os.Getenv("SWLAB_DOMAIN2"),
		DNSDomain2:    os.Getenv("SWLAB_DNS_DOMAIN2"),
		KDCSkewIP:     os.Getenv("SWLAB_KDC_SKEW_IP"),
		PCIP:          os.Getenv("SWLAB_PC_IP"),
		PCNetBIOS:     os.Getenv("SWLAB_PC_NETBIOS"),
		PCLLMNR:       os.Getenv("SWLAB_PC_LLMNR"),
	}
	if s, err := strconv.ParseInt(os.Getenv("SWLAB_UP_AT"), 10, 64); err == nil {
		l.UpAt = time.Unix(s, 0)
	}
	if l.DCIP == "" {
		return nil, "SCANWARDEN_LAB is set but SWLAB_DC_IP is not: " + HowToRun
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(l.DCIP, "445"), 2*time.Second)
	if err != nil {
		return nil, "lab DC " + l.DCIP + " unreachable (" + err.Error() + "): " + HowToRun
	}
	c.Close()
	return l, ""
}

// AddUser makes an account sam with the lab password on the lab DC, its
// userPrincipalName upn (e.g. one whose prefix is not sam, as a real
// domain's a.smith@ for asmith), removed when the test ends.
func (l *Lab) AddUser(tb testing.TB, sam, upn string) {
	tb.Helper()
	admin := []string{"-H", "ldap://" + l.DCIP, "-U", "Administrator%" + l.AdminPassword}
	run := func(stdin, name string, args ...string) string {
		tb.Helper()
		cmd := exec.Command(name, append(args, admin...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args[:min(2, len(args))], " "), err, out)
		}
		return string(out)
	}
	run("", "samba-tool", "user", "create", sam, l.Password)
	tb.Cleanup(func() { exec.Command("samba-tool", append([]string{"user", "delete", sam}, admin...)...).Run() })
	dn := ""
	for _, line := range strings.Split(run("", "samba-tool", "user", "show", sam, "--attributes=dn"), "\n") {
		if v, ok := strings.CutPrefix(line, "dn: "); ok {
			dn = v
		}
	}
	if dn == "" {
		tb.Fatalf("samba-tool user show %s: no DN", sam)
	}
	run(fmt.Sprintf("dn: %s\nchangetype: modify\nreplace: userPrincipalName\nuserPrincipalName: %s\n", dn, upn), "ldbmodify")
}

// EventReader is evtsrv's account that may read its event logs (an admin
// user there); its password is the lab password.
const EventReader = "evreader"

// WriteEvent appends a record to evtsrv's event log (Security or System)
// with eventlogadm, as the server would have logged it at at: event id,
// type (INFO, ERROR, WARNING, AUDIT SUCCESS, AUDIT FAILURE), source and the
// insertion strings.
func (l *Lab) WriteEvent(tb testing.TB, log string, at time.Time, id int, typ, source string, strs ...string) {
	tb.Helper()
	if l.EvtIP == "" {
		tb.Fatal("evtsrv not in this lab (SWLAB_EVT_IP unset): run testlab/lab up again")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LEN: 0\nRS1: 1699505740\nRCN: 0\nTMG: %d\nTMW: %d\nEID: %d\nETP: %s\nECT: 0\nRS2: 0\nCRN: 0\nUSL: 0\nSRC: %s\nSRN: EVTSRV\n",
		at.Unix(), at.Unix(), id, typ, source)
	for _, s := range strs {
		fmt.Fprintf(&b, "STR: %s\n", s)
	}
	b.WriteString("\n")
	cmd := exec.Command("eventlogadm", "-s", filepath.Join(l.Dir, "evtsrv", "etc", "smb.conf"), "-o", "write", log)
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("eventlogadm -o write %s: %v: %s", log, err, out)
	}
}
