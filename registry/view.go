package registry

import (
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

// The registry's read models: a device, a destination, a check and an
// import as the admin's pages and API show them. None carries a secret:
// they say only whether one is stored.

// DeviceView is an MFP as shown: what it is, whether it answers, what its
// form edits — never an SNMP community or passphrase.
type DeviceView struct {
	Name      string    `json:"name"`
	Address   string    `json:"address"` // host[:port] it is polled at
	SysName   string    `json:"sys_name"`
	Model     string    `json:"model"`
	Serial    string    `json:"serial"`
	Firmware  string    `json:"firmware"`
	Location  string    `json:"location"`
	MAC       string    `json:"mac"`
	Status    string    `json:"status"` // the device's own status words ("idle", "error: …")
	Reachable bool      `json:"reachable"`
	LastSeen  time.Time `json:"last_seen"` // zero: never answered
	// Fault is why the device is not polled or not answering, "" when fine.
	Fault string `json:"fault,omitempty"`
	// What its form edits (SNMP secrets never: only whether one is stored).
	Workstation     string `json:"workstation,omitempty"` // the override of SysName
	SNMPVersion     string `json:"snmp_version,omitempty"`
	SNMPCredentials bool   `json:"snmp_credentials"`
	V3User          string `json:"v3_user,omitempty"`
	V3AuthProto     string `json:"v3_auth_proto,omitempty"`
	V3PrivProto     string `json:"v3_priv_proto,omitempty"`
	// DestinationCount is how many destinations it has.
	DestinationCount int               `json:"destination_count"`
	Destinations     []DestinationView `json:"destinations,omitempty"` // one device's page only
	// SMBProfile is its SMB client as its checks replay it, each value with
	// where it came from (nil: not known to the reader).
	SMBProfile *ProfileJSON `json:"smb_profile,omitempty"`
}

// View is the device as shown, with what its poller last read (inv; nil:
// it never answered) judged against the poll interval.
func (d Device) View(inv *snmp.Inventory, interval time.Duration) DeviceView {
	p := d.ProfileJSON()
	v := DeviceView{Name: d.Name, Address: d.Address, SysName: d.SysName, Model: d.Model, Serial: d.Serial,
		Workstation: d.Workstation, SNMPVersion: d.SNMP.Version, SNMPCredentials: d.HasSNMPCredentials(),
		V3User: d.SNMP.V3User, V3AuthProto: d.SNMP.V3AuthProto, V3PrivProto: d.SNMP.V3PrivProto, SMBProfile: &p}
	if d.Address == "" {
		v.Fault = "not polled: no SNMP address"
		return v
	}
	if inv != nil {
		v.SysName, v.Model, v.Serial = first(inv.SysName, d.SysName), first(inv.Model, d.Model), first(inv.Serial, d.Serial)
		v.Firmware, v.Location, v.MAC, v.LastSeen = inv.Firmware, inv.SysLocation, inv.MAC, inv.SeenAt
		v.Reachable = Reachable(inv.SeenAt, interval)
	}
	if !v.Reachable {
		v.Fault = "does not answer SNMP"
		if v.LastSeen.IsZero() {
			v.Fault = "has not answered SNMP yet"
		}
	}
	return v
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// DestinationView is one SMB scan destination as shown. It never carries
// the password: PasswordSet says whether one is stored.
type DestinationView struct {
	Name        string `json:"name"`
	Device      string `json:"device"`
	DisplayName string `json:"display_name"`
	Host        string `json:"host"`
	Port        int    `json:"port"`
	Share       string `json:"share"`
	Path        string `json:"path"`
	User        string `json:"user"`
	Workstation string `json:"workstation"`
	// Auth is how the MFP logs on: ntlm, kerberos or auto.
	Auth        string `json:"auth"`
	PasswordSet bool   `json:"password_set"`
	// PasswordUnreadable says why an imported password could not be read
	// ("" : known); the destination has none until one is entered.
	PasswordUnreadable string `json:"password_unreadable,omitempty"`
	Source             string `json:"source"` // imported | added
	// Last is the newest check, nil when never checked.
	Last *ReportView `json:"last_check,omitempty"`
	// Report is the newest report in full (one destination's page only).
	Report *smbcheck.Report `json:"report,omitempty"`
	// OpenIncident is the open incident's id, 0 when none.
	OpenIncident int64 `json:"open_incident,omitempty"`
	// Pattern is the sentence of its history (package pattern), and
	// ServerPattern that of every destination on its file server (one
	// destination's page only).
	Pattern       string `json:"pattern,omitempty"`
	ServerPattern string `json:"server_pattern,omitempty"`
	// BridgedAt is when it was bridged (absent: it is not); Bridge its
	// bridge's own health (the reader's to add).
	BridgedAt *time.Time     `json:"bridged_at,omitempty"`
	Bridge    *bridge.Health `json:"bridge,omitempty"`
}

// View is the destination as shown (its check, incident and patterns are
// the reader's to add).
func (d Destination) View() DestinationView {
	v := DestinationView{Name: d.Name, Device: d.Device, DisplayName: d.DisplayName, Host: d.Host, Port: d.Port,
		Share: d.Share, Path: d.Path, User: d.User, Workstation: d.Workstation, PasswordSet: !d.Password.IsZero(),
		PasswordUnreadable: d.PasswordUnreadable, Source: string(d.Source), Auth: string(d.Target(nil).Info().Auth)}
	if v.Auth == "" {
		v.Auth = string(scanwarden.AuthNTLM)
	}
	if d.Bridged() {
		at := d.BridgedAt
		v.BridgedAt = &at
	}
	return v
}

// ReportView is one stored check as shown: when, and its verdict.
type ReportView struct {
	At          time.Time        `json:"at"`
	Duration    time.Duration    `json:"-"`
	Verdict     smbcheck.Verdict `json:"verdict"`
	WorkingForm string           `json:"working_form,omitempty"`
	Trigger     string           `json:"trigger,omitempty"`  // schedule | event | manual
	Replayed    string           `json:"replayed,omitempty"` // whose SMB client the check replayed ("": not recorded)
	Report      *smbcheck.Report `json:"report,omitempty"`   // a history may fill it
}

// View is the check as shown: its verdict, the name form that worked and
// the time its steps took.
func (r Report) View() ReportView {
	v := ReportView{At: r.At, Verdict: r.Report.Verdict, Replayed: r.Report.Replayed()}
	if r.Report.WorkingForm != nil {
		v.WorkingForm = r.Report.WorkingForm.Typed
	}
	for _, s := range r.Report.Steps {
		v.Duration += s.Duration
	}
	return v
}

// ImportView is an address-book import, or its preview, as shown.
type ImportView struct {
	Device  string          `json:"device"`
	DryRun  bool            `json:"dry_run"`
	Entries []ImportRowView `json:"entries"`
	Skipped int             `json:"skipped"`         // contacts with no SMB destination
	Notes   []string        `json:"notes,omitempty"` // one line each, e.g. the device is new
}

// ImportRowView is one address-book contact and what the import does
// with it.
type ImportRowView struct {
	Name        string `json:"name"`         // the destination's name in the registry
	DisplayName string `json:"display_name"` // the contact's name in the address book
	Target      string `json:"target"`       // the folder as the panel shows it: \\host\share\path [port N]
	User        string `json:"user"`
	Action      string `json:"action"` // add | update | remove
	Reason      string `json:"reason,omitempty"`
}

// View is the plan as shown: each contact put or removed with why, and a
// note when the device is new (deviceCreated) or contacts were skipped.
func (p ImportPlan) View(deviceCreated, dryRun bool) ImportView {
	out := ImportView{Device: p.Device, DryRun: dryRun, Skipped: p.Skipped}
	for n, d := range p.Put {
		action := "update"
		if p.New[n] {
			action = "add"
		}
		reason := "contact " + d.AddressBookID
		if d.PasswordUnreadable != "" {
			reason += "; " + PasswordUnreadableMark + " (" + d.PasswordUnreadable + "): imported without a password"
		}
		out.Entries = append(out.Entries, ImportRowView{Name: d.Name, DisplayName: d.DisplayName, Target: d.PanelFolder(), User: d.User,
			Action: action, Reason: reason})
	}
	for _, d := range p.Removed {
		out.Entries = append(out.Entries, ImportRowView{Name: d.Name, DisplayName: d.DisplayName, Target: d.PanelFolder(), User: d.User,
			Action: "remove", Reason: "contact " + d.AddressBookID + " is no longer in the address book"})
	}
	if deviceCreated {
		out.Notes = append(out.Notes, "The device "+p.Device+" is new and is added.")
	}
	if p.Skipped > 0 {
		out.Notes = append(out.Notes, strconv.Itoa(p.Skipped)+" contacts without an SMB destination are skipped.")
	}
	return out
}

// PanelFolder is the destination's folder as the admin types it on the
// MFP's panel: \\HOST\SHARE\PATH, and the port beside it when not 445.
func (d Destination) PanelFolder() string {
	s := scanwarden.UNC(d.Host, d.Share, d.Path)
	if scanwarden.NonDefaultPort(d.Port) {
		s += " port " + strconv.Itoa(d.Port)
	}
	return s
}
