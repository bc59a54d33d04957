package smbclient

import "context"

// Kerberos is where a Kerberos logon looks for the realm of a user name
// without a UPN suffix when the server names no DNS domain (Realm), and for
// KDCs when DNS has no _kerberos SRV record of the realm (KDCs, host or
// host:port): [ad]'s domain and host, the same for a check (smbcheck's
// Options.Realm and Options.KDCs) and a delivery (DialOptions.Kerberos) —
// ad.Directory.Kerberos.
type Kerberos struct {
	Realm string
	KDCs  []string
}

// Resolver resolves host names; *net.Resolver is one.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}
