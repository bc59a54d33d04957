package smbcheck

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden"
)

// The bridge is the way round a server whose demands the MFP's client
// cannot meet while scanwarden's can: the MFP scans to the fallback share
// and the forwarder delivers with scanwarden's own client (SMB 3.1.1,
// signing, encryption, Kerberos). Neither SMB1 nor a weaker server is
// needed for it.

// ClientCause reports whether c is a failure of the device's client itself
// — something the server demands that the device d cannot do and
// scanwarden's own client can — so that a check with scanwarden's client
// may pass where the device's failed:
//
//   - encryption-required: the share demands SMB3 encryption; scanwarden
//     encrypts.
//   - dialect-floor: the server's lowest dialect is above the device's
//     highest; scanwarden speaks up to 3.1.1.
//   - signing-required: the server demands signing; scanwarden signs.
//   - smb1-refused: the device speaks SMB1/NTLMv1, which the server
//     refuses; scanwarden speaks SMB2/3 with NTLMv2.
//   - ntlmv1-refused: the device logs on with NTLMv1 (over SMB2/3), which
//     the server refuses; scanwarden's NTLM is v2.
//   - ntlm-blocked and account-restricted, for a device without Kerberos:
//     the server (Restrict NTLM) or the account (Protected Users) refuses
//     NTLM; scanwarden logs on with Kerberos where the destination allows
//     it (auth auto or kerberos).
//
// Not in the list, as a bridge would not help or would need what the
// bridge exists to avoid: smb1-only-server (delivering there needs SMB1),
// file-type-refused (the forwarder delivers the same file type), dfs-link
// (the forwarder follows no referral either: store the link's target),
// and every cause of the account, the share, the folder or the network.
func ClientCause(c scanwarden.Cause, d Device) bool {
	switch c {
	case scanwarden.CauseEncryptionRequired, scanwarden.CauseDialectFloor, scanwarden.CauseSigningRequired, scanwarden.CauseSMB1Refused, scanwarden.CauseNTLMv1Refused:
		return true
	case scanwarden.CauseNTLMBlocked, scanwarden.CauseAccountRestricted:
		return d.NoKerberos
	}
	return false
}

// RunWithOwn is Run as the device o.Device; where that fails on a cause of
// the device's client (ClientCause), it checks once more with scanwarden's
// own client and says in the report's Bridge what that found: an offer of
// the bridge when it passed. The verdict stays the device's. Nothing more
// runs when the device is not known or its check passed.
func RunWithOwn(ctx context.Context, t scanwarden.Target, o Options) Report {
	rep := Run(ctx, t, o)
	if !o.Device.Known() || rep.OK() || rep.Interrupted || !ClientCause(rep.Verdict.Cause, o.Device) || ctx.Err() != nil {
		return rep
	}
	own := o
	own.Device, own.Progress = Device{}, nil
	or := Run(ctx, t, own)
	v := or.Verdict
	b := &Bridge{DeviceCause: rep.Verdict.Cause, Own: &v, Offered: or.OK() && !or.Interrupted}
	if b.Offered {
		b.Message = OfferMessage(rep.Verdict.Cause, "")
	} else {
		b.Message = fmt.Sprintf("the MFP cannot meet this server's demands (%s), and scanwarden's own client fails too (%s): the bridge would not deliver",
			rep.Verdict.Cause, v.Cause)
	}
	rep.Bridge = b
	return rep
}

// OfferMessage is how every output offers the bridge for a device cause;
// destination, when known, names the command and the page's button.
func OfferMessage(cause scanwarden.Cause, destination string) string {
	msg := fmt.Sprintf("the MFP cannot meet this server's demands (%s); scanwarden can: bridge it — the MFP scans to the fallback share and scanwarden delivers, verified", cause)
	if destination == "" {
		return msg + " (a check given by URL: add it as a destination first, then scanwarden destination bridge NAME)"
	}
	return msg + fmt.Sprintf(" (%s, or \"Bridge\" on the destination's page)", BridgeCommand(destination))
}

// BridgeCommand is the command line that bridges destination.
func BridgeCommand(destination string) string {
	return "scanwarden destination bridge " + destination
}

// Named gives the offer the destination's name: its command and the
// message naming it.
func (b *Bridge) Named(destination string) {
	if b == nil || !b.Offered || destination == "" {
		return
	}
	b.Command = BridgeCommand(destination)
	b.Message = OfferMessage(b.DeviceCause, destination)
}
