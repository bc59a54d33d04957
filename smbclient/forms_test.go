package smbclient

import "testing"

func TestStoredForm(t *testing.T) {
	tests := []struct{ typed, user, domain string }{
		{"alice", "alice", ""},
		{`KYOLAB\alice`, "alice", "KYOLAB"},
		{"alice@kyolab.test", "alice@kyolab.test", ""},
		{`.\scan`, "scan", "."},
		{"KYOLAB/alice", "KYOLAB/alice", ""},
	}
	for _, tc := range tests {
		f := StoredForm(tc.typed)
		if f.User != tc.user || f.Domain != tc.domain || f.Typed != tc.typed {
			t.Errorf("StoredForm(%q) = %+v", tc.typed, f)
		}
	}
}
