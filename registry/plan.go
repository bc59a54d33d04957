package registry

import (
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden"
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
// deterministic: the same registry and book give the same plan. Linear in
// the registry and the book, however many contacts share a display name.
func PlanImport(device string, existing []Destination, book *AddressBook) ImportPlan {
	p := ImportPlan{Device: device, Skipped: book.Skipped}
	names := newNamer(len(existing) + len(book.Contacts))
	mine := map[string]Destination{}
	for _, d := range existing {
		names.take(d.Name)
		if strings.EqualFold(d.Device, device) && d.Source == SourceImported && d.AddressBookID != "" {
			mine[d.AddressBookID] = d
		}
	}
	inBook := make(map[string]bool, len(book.Contacts))
	p.Put = make([]Destination, 0, len(book.Contacts))
	p.New = make([]bool, 0, len(book.Contacts))
	for _, c := range book.Contacts {
		inBook[c.ID] = true
		d := Destination{
			Host: c.Host, Port: c.Port, Share: c.Share, Path: c.Path, User: c.User, Password: c.Password,
			Device: device, AddressBookID: c.ID, DisplayName: c.DisplayName, Source: SourceImported,
			PasswordUnreadable: c.PasswordUnreadable,
		}
		d.Port = scanwarden.DialPort(d.Port)
		old, ok := mine[c.ID]
		if ok {
			d.Name, d.Workstation, d.Created = old.Name, old.Workstation, old.Created
		} else {
			d.Name = names.fresh(c, device)
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

// namer hands out unique destination names. For each base it remembers the
// next number to try, so n contacts sharing a display name cost O(n), not
// O(n²) (every one used to count up from 2 again).
type namer struct {
	taken map[string]bool // lower-cased names in use
	next  map[string]int  // lower-cased base → next number to try
}

func newNamer(n int) *namer {
	return &namer{taken: make(map[string]bool, n), next: map[string]int{}}
}

func (n *namer) take(name string) { n.taken[strings.ToLower(name)] = true }

func (n *namer) free(name string) bool {
	return !n.taken[strings.ToLower(name)] && ValidName(name) == nil
}

// fresh derives a name from the contact's display name: its slug; taken,
// the slug and the device; then the slug numbered from 2.
func (n *namer) fresh(c Contact, device string) string {
	base := Slug(c.DisplayName)
	if base == "" {
		base = "contact-" + Slug(c.ID)
		if base == "contact-" {
			base = "contact"
		}
	}
	for _, try := range []string{clipName(base), clipName(base + "-" + Slug(device))} {
		if strings.HasSuffix(try, "-") {
			continue // no device slug
		}
		if n.free(try) {
			n.take(try)
			return try
		}
	}
	key := strings.ToLower(base)
	i := max(n.next[key], 2)
	for ; ; i++ {
		suffix := "-" + strconv.Itoa(i)
		try := clipName(base[:min(len(base), maxName-len(suffix))] + suffix)
		if n.free(try) {
			n.next[key] = i + 1
			n.take(try)
			return try
		}
	}
}

func clipName(n string) string {
	if len(n) > maxName {
		return n[:maxName]
	}
	return n
}
