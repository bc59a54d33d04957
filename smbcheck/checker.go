package smbcheck

import (
	"net"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// checker carries one check's state.
type checker struct {
	t scanwarden.Target
	o Options
	record

	addrs   []string            // the name step's addresses
	addr    string              // the address the MFP would connect to
	conn    net.Conn            // the tcp step's connection, used for the first logon
	server  *smbconn.ServerInfo // what the server told in negotiate (or the probe)
	account *smbclient.Account  // from the directory
	host    *Host               // the target's computer object, from the directory
	sess    *smbconn.Conn       // the one session
	share   *smbconn.Share      // the tree step's share
	form    smbclient.Form      // the form that logged on
	ledger  smbclient.Ledger    // o.Ledger or a per-check memory ledger
	budget  int                 // failed logons allowed in this window
	// negotiated is set once the negotiate step is recorded.
	negotiated bool
	// smb1 replays the logon and what follows over SMB1: the MFP speaks
	// only SMB1, or the server does.
	smb1 bool
	// ntlmv2 logs an NTLMv1 device on with NTLMv2 (see ntlmv1Refused).
	ntlmv2 bool
	// probing makes the next attempt's gate end the logon once the
	// negotiate and ad steps are taken: nothing is sent that could fail.
	probing bool
	// as makes the next attempt log on as this client instead of the
	// device's (the tree step's second opinions: scanwarden's own client,
	// a client that offers no encryption).
	as *smbconn.Device
}
