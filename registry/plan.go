package registry

import (
	"fmt"
	"strings"
)

// ImportPlan is what importing an address book into one device changes.
type ImportPlan struct {
	Device string
	// Put are the book's SMB contacts as destinations, in file order, each
	// with its final name: an earlier import of the same contact (same
	// device, same address-book Id) keeps its name, created time and
	// workstation override; a new one gets a fresh unique name.
	Put []Destination
	// New tells, for each Put, whether it is new.
	New []bool
	// Removed are this device's imported destinations whose contact is no
	// longer in the book.
	Removed []Destination
	Skipped int // contacts without SMB
}

// PlanImport matches a book's contacts against the registry (existing: every
// destination, of every device) and names the new ones. Pure and
// deterministic: the same registry and book give the same plan.
func PlanImport(device string, existing []Destination, book *AddressBook) ImportPlan {
	p := ImportPlan{Device: device, Skipped: book.Skipped}
	taken := map[string]bool{}
	mine := map[string]Destination{}
	for _, d := range existing {
		taken[strings.ToLower(d.Name)] = true
		if strings.EqualFold(d.Device, device) && d.Source == SourceImported && d.AddressBookID != "" {
			mine[d.AddressBookID] = d
		}
	}
	inBook := map[string]bool{}
	for _, c := range book.Contacts {
		inBook[c.ID] = true
		d := Destination{
			Host: c.Host, Port: c.Port, Share: c.Share, Path: c.Path, User: c.User, Password: c.Password,
			Device: device, AddressBookID: c.ID, DisplayName: c.DisplayName, Source: SourceImported,
		}
		if d.Port == 0 {
			d.Port = 445
		}
		old, ok := mine[c.ID]
		if ok {
			d.Name, d.Workstation, d.Created = old.Name, old.Workstation, old.Created
		} else {
			d.Name = uniqueName(taken, c, device)
			taken[strings.ToLower(d.Name)] = true
		}
		p.Put = append(p.Put, d)
		p.New = append(p.New, !ok)
	}
	for _, d := range existing {
		if strings.EqualFold(d.Device, device) && d.Source == SourceImported && d.AddressBookID != "" && !inBook[d.AddressBookID] {
			p.Removed = append(p.Removed, d)
		}
	}
	return p
}

// uniqueName derives a destination name from the contact's display name:
// its slug; taken, the slug and the device; then numbered.
func uniqueName(taken map[string]bool, c Contact, device string) string {
	base := Slug(c.DisplayName)
	if base == "" {
		base = "contact-" + Slug(c.ID)
		if base == "contact-" {
			base = "contact"
		}
	}
	try := func(n string) bool {
		if len(n) > maxName {
			n = n[:maxName]
		}
		return !taken[strings.ToLower(n)] && ValidName(n) == nil
	}
	if try(base) {
		return base
	}
	if dev := Slug(device); dev != "" && try(base+"-"+dev) {
		return clipName(base + "-" + dev)
	}
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d", base, i)
		if try(n) {
			return clipName(n)
		}
	}
}

func clipName(n string) string {
	if len(n) > maxName {
		return n[:maxName]
	}
	return n
}
