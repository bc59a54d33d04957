package serverlog

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func reader(l *testlab.Lab) Account {
	return Account{User: testlab.EventReader, Password: scanwarden.NewSecret(l.Password)}
}

// A 4625 written into evtsrv's Security log (eventlogadm, as Windows would
// log a bad password of the scan account from the MFP) is read back over
// \pipe\eventlog with the reading account and told with its reason and
// sub-status; events about other accounts are left out; the share's
// connections are counted against its max connections.
func TestLabReadEventLog(t *testing.T) {
	l := testlab.Require(t)
	at := time.Now().Add(-30 * time.Second).Truncate(time.Second)
	ws := fmt.Sprintf("MFP%05d", time.Now().UnixNano()%100000) // this run's own record
	l.WriteEvent(t, "Security", at, 4625, "AUDIT FAILURE", "Microsoft-Windows-Security-Auditing",
		"S-1-0-0", "-", "-", "0x0", "S-1-0-0", "scanuser", "EVTSRV", "0xc000006d", "%%2313", "0xc000006a", "3",
		"NtLmSsp", "NTLM", ws, "-", "-", "0", "0x0", "-", "10.77.0.2", "50123")
	l.WriteEvent(t, "Security", at, 4625, "AUDIT FAILURE", "Microsoft-Windows-Security-Auditing",
		"S-1-0-0", "-", "-", "0x0", "S-1-0-0", "someoneelse", "EVTSRV", "0xc000006d", "%%2313", "0xc0000064", "3",
		"NtLmSsp", "NTLM", "PC17", "-", "-", "0", "0x0", "-", "10.77.0.9", "50124")
	l.WriteEvent(t, "System", at, 2019, "ERROR", "Srv")
	boot := at.Add(-50 * time.Hour)
	l.WriteEvent(t, "System", boot, 6005, "INFO", "EventLog")
	ctx := context.Background()
	st := Read(ctx, reader(l), Query{Host: l.EvtIP, Share: "limited", Events: true, From: at.Add(-time.Minute), Until: at.Add(time.Minute),
		BootsFrom: at.Add(-14 * 24 * time.Hour),
		Account:   "scanuser", Workstation: ws})
	for _, line := range st.Lines() {
		t.Log(line)
	}
	if len(st.Problems) > 0 {
		t.Fatalf("problems: %q", st.Problems)
	}
	if strings.Join(st.Logs, ",") != "Security,System" {
		t.Errorf("logs read %q", st.Logs)
	}
	var got4625, got2019 bool
	for _, e := range st.Events {
		switch e.ID {
		case 4625:
			if e.Workstation != ws {
				continue // an earlier run's
			}
			if e.Account != `EVTSRV\scanuser` || !strings.Contains(e.SubStatus, "0xC000006A") ||
				e.Reason != "unknown user name or bad password" {
				t.Errorf("4625 read as %+v", e)
			}
			if !e.At.Equal(at) {
				t.Errorf("4625 at %s, written at %s", e.At, at)
			}
			got4625 = true
		case 2019:
			got2019 = true
		}
		if strings.Contains(e.Text, "someoneelse") {
			t.Errorf("an event about another account kept: %s", e.Text)
		}
	}
	if !got4625 || !got2019 {
		t.Errorf("4625 read: %v, 2019 read: %v; events %+v", got4625, got2019, st.Events)
	}
	// The start two days before, read further back than the events, is
	// among the boots (for the uptime), not among the events.
	gotBoot := false
	for _, b := range st.Boots {
		gotBoot = gotBoot || b.Equal(boot)
	}
	for _, e := range st.Events {
		if e.At.Equal(boot) {
			t.Errorf("the start of two days ago among the failure's events: %+v", e)
		}
	}
	if !gotBoot {
		t.Errorf("boots %v lack %s", st.Boots, boot)
	}
	if st.Share == nil || st.Share.Max != 2 || st.Share.Current != 0 {
		t.Errorf("share uses %+v, want 0 of 2", st.Share)
	}
}

// Two sessions holding share limited (max connections = 2) are counted:
// 2 of 2.
func TestLabShareUsesAtLimit(t *testing.T) {
	l := testlab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(l.EvtIP, "445"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "scanuser", Password: l.Password}}).DialConn(ctx, conn, l.EvtIP)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Logoff()
		sh, err := s.Mount("limited")
		if err != nil {
			t.Fatalf("holding session %d: %v", i, err)
		}
		defer sh.Umount()
	}
	st := Read(ctx, reader(l), Query{Host: l.EvtIP, Share: "limited"})
	if st.Share == nil || st.Share.Current != 2 || st.Share.Max != 2 {
		t.Fatalf("share uses %+v (problems %q), want 2 of 2", st.Share, st.Problems)
	}
	// Samba lists sessions only to BUILTIN\Administrators (which needs
	// winbind on a standalone server): not counted, and why, in the JSON.
	if st.Sessions != nil || !strings.Contains(st.SessionsNot, "access denied") {
		t.Errorf("server sessions %v, not counted because %q", st.Sessions, st.SessionsNot)
	}
	if got := st.Lines(); len(got) != 1 || got[0] != "share limited: 2 of 2 connections in use" {
		t.Errorf("lines %q", got)
	}
}

// An account without the right to read the log, and a server with no
// event log, are said plainly in the Story's problems.
func TestLabEventLogProblems(t *testing.T) {
	l := testlab.Require(t)
	ctx := context.Background()
	now := time.Now()
	q := Query{Events: true, From: now.Add(-time.Hour), Until: now, Account: "scanuser"}
	noRight := Account{User: "scanuser", Password: scanwarden.NewSecret(l.Password)}
	q.Host = l.EvtIP
	st := Read(ctx, noRight, q)
	t.Logf("no right: %q", st.Lines())
	if len(st.Logs) != 0 || len(st.Problems) != 2 || !strings.Contains(st.Problems[0], "lacks the right to read it") {
		t.Errorf("without the right: logs %q, problems %q", st.Logs, st.Problems)
	}
	q.Host = l.SMB2IP
	st = Read(ctx, noRight, q)
	t.Logf("no event log: %q", st.Lines())
	if len(st.Logs) != 0 || len(st.Problems) != 2 || !strings.Contains(st.Problems[0], "keeps no such log") {
		t.Errorf("without an event log: logs %q, problems %q", st.Logs, st.Problems)
	}
	wrong := Account{User: testlab.EventReader, Password: scanwarden.NewSecret("not-" + l.Password)}
	q.Host = l.EvtIP
	st = Read(ctx, wrong, q)
	t.Logf("wrong password: %q", st.Lines())
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "could not log on") || !strings.Contains(st.Problems[0], "LOGON_FAILURE") {
		t.Errorf("wrong password: problems %q", st.Problems)
	}
}
