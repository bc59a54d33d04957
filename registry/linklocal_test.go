package registry

import "testing"

func TestLinkLocal(t *testing.T) {
	for host, want := range map[string]bool{
		"169.254.169.254": true, "169.254.0.1": true, "fe80::1": true, "[fe80::1%eth0]": true, "::ffff:169.254.1.1": true,
		"10.0.0.1": false, "192.168.1.1": false, "fs1.corp.example": false, "169.254.example": false, "2001:db8::1": false, "": false,
	} {
		if got := LinkLocal(host); got != want {
			t.Errorf("LinkLocal(%q) = %v, want %v", host, got, want)
		}
	}
}
