package secdesc_test

// Evaluate against the lab: alice's SIDs from the DC (package ad), the
// folders' security descriptors over SMB as alice. An external test package,
// because ad imports secdesc.
//
//	testlab/lab exec go test ./internal/secdesc/ -run EvaluateSDLab -v

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/internal/secdesc"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestEvaluateSDLab(t *testing.T) {
	lab := testlab.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	dir, err := ad.New(ad.Config{URL: "ldaps://" + lab.DCIP, BindUser: "ldapreader@" + lab.DNSDomain,
		Password: scanwarden.NewSecret(lab.Password), CAFile: lab.CA})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := dir.Account(ctx, "alice", "SCANWARDEN")
	if err != nil {
		t.Fatal(err)
	}
	if len(acct.SIDs) < 2 {
		t.Fatalf("alice's SIDs: %v", acct.SIDs)
	}
	alice := acct.SIDs[0] // her own SID; tokenGroups follow

	addr := net.JoinHostPort(lab.DCIP, "445")
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "alice", Password: lab.Password, Domain: lab.Domain, Workstation: "SCANWARDEN"}}
	s, err := d.DialConn(ctx, conn, addr)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	defer s.Logoff()
	share, err := s.Mount("scans")
	if err != nil {
		t.Fatal(err)
	}
	defer share.Umount()

	tests := []struct {
		path                  string
		add, write, canDelete bool
		decisive              string // substring of Decisive[add_file]
	}{
		{".", true, true, true, "ALLOW"},
		{"nodelete", true, true, false, "-513 0x001201bf"}, // Domain Users: Modify without DELETE
		{"finance", false, false, false, "implicit deny"},
		{"denied", false, false, false, "DENY " + alice},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			raw, err := share.SecurityInfoRaw(tc.path, smb2.OwnerSecurityInformation|smb2.GroupSecurityInformation|smb2.DACLSecurityInformation)
			if err != nil {
				t.Fatal(err)
			}
			acc, err := secdesc.Evaluate(raw, acct.SIDs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: add=%v write=%v delete=%v delete_child=%v\n  decisive: %q\n  dacl: %q\n  new file: %q",
				tc.path, acc.AddFile, acc.WriteData, acc.Delete, acc.DeleteChild, acc.Decisive, acc.Evidence["dacl"], acc.Evidence["new_file_dacl"])
			if acc.AddFile != tc.add || acc.WriteData != tc.write || acc.CanDelete() != tc.canDelete {
				t.Errorf("add %v write %v can delete %v; want %v %v %v", acc.AddFile, acc.WriteData, acc.CanDelete(), tc.add, tc.write, tc.canDelete)
			}
			if !strings.Contains(acc.Decisive[secdesc.RightAddFile], tc.decisive) {
				t.Errorf("add_file decided by %q, want %q", acc.Decisive[secdesc.RightAddFile], tc.decisive)
			}
		})
	}
}
