package store

import "github.com/scanwarden/scanwarden/incident"

// View is the stored event as the events page and API show it, its
// sender named device (the registered device's name, or its address).
func (e StoredEvent) View(device string) incident.EventView {
	return incident.EventView{ID: e.ID, Device: device, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen, Count: e.Count,
		Code: e.Code, Text: e.Text, Destination: e.Destination, Source: string(e.Source), Unverified: e.Unverified,
		Swept: e.Sweep.View()}
}
