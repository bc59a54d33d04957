package ad

import ber "github.com/go-asn1-ber/asn1-ber"

// maxLDAPMessage bounds one LDAP message from a DC (asn1-ber's default is
// 2 GiB, allocated as announced: a hostile server's 1 GiB bind response
// once cost 2.6 GB of memory). A user entry with thousands of groups stays
// well below it.
const maxLDAPMessage = 4 << 20

// asn1-ber reads its bound from a package variable; scanwarden speaks LDAP
// only through this package, so it is set once here for the process.
func init() { ber.MaxPacketLengthBytes = maxLDAPMessage }
