package ad

import (
	"context"
	"time"
)

// DC is what Probe learned of the domain controller that answered.
type DC struct {
	Addr      string    // host:port that answered
	Host      string    // its dnsHostName
	Domain    string    // the domain's DNS name
	Transport string    // "ldaps", "starttls" or "plain"
	Time      time.Time // its clock (RootDSE currentTime, whole seconds)
}

// Probe connects and binds as the configured account and reads the
// RootDSE: the DC can be reached, trusts are in place, the account works,
// and the DC's clock (Kerberos and logon hours depend on it) is known.
func (d *Directory) Probe(ctx context.Context) (*DC, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	s, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	root, err := s.base("read RootDSE", "", "defaultNamingContext", "dnsHostName", "currentTime")
	if err != nil {
		return nil, err
	}
	dc := &DC{Addr: s.ep.addr(), Transport: s.transport}
	if root != nil {
		dc.Host = root.GetAttributeValue("dnsHostName")
		dc.Domain = dnsFromDN(root.GetAttributeValue("defaultNamingContext"))
		if t, err := generalizedTime(root.GetAttributeValue("currentTime")); err == nil {
			dc.Time = t
		}
	}
	return dc, nil
}
