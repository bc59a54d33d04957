package web

import (
	"context"
)

// startStep is one step of the overview's getting-started list.
type startStep struct {
	ID    string
	Title string
	Done  bool
	What  string // what it is for (or what is done)
	Links []startLink
}

type startLink struct{ Href, Text string }

// gettingStarted is the list an overview without devices or destinations
// shows: register the MFP, import its address book or add a destination,
// notifications, Active Directory — each done or linked. nil once devices
// and destinations exist.
func (s *overview) gettingStarted(ctx context.Context, v dashboardView) []startStep {
	if len(v.Devices) > 0 && len(v.Destinations) > 0 {
		return nil
	}
	var notify, ad bool
	if st := s.settings; st != nil {
		secs, err := st.Settings(ctx)
		if err != nil {
			s.log.Error("dashboard: settings", "err", err)
		}
		val := func(sec, key string) string {
			for _, x := range secs {
				if x.Name != sec {
					continue
				}
				for _, f := range x.Fields {
					if f.Key == key {
						return f.Value
					}
				}
			}
			return ""
		}
		notify = val("notify", "webhook_url") != "" || (val("notify", "smtp_host") != "" && val("notify", "mail_to") != "")
		ad = val("ad", "url") != ""
	}
	steps := []startStep{
		{ID: "start-device", Title: "Register the MFP", Done: len(v.Devices) > 0,
			What: "its SNMP address: scanwarden reads its send failures and replays its logons with its name"},
		{ID: "start-destinations", Title: "Import its address book, or add a destination", Done: len(v.Destinations) > 0,
			What: "the scan-to-folder destinations the MFP stores: each one is checked as the MFP would log on"},
		{ID: "start-notify", Title: "Notifications", Done: notify,
			What: "a webhook or e-mail when a destination starts failing"},
		{ID: "start-ad", Title: "Active Directory", Done: ad,
			What: "a read-only account: the checks then say why a logon fails (locked, expired, restricted) and never lock it"},
	}
	if s.deviceManager != nil {
		steps[0].Links = []startLink{{"/devices/_new", "Add a device"}}
	}
	steps[1].Links = []startLink{{"/import", "Import an address book"}}
	if s.destinationManager != nil {
		steps[1].Links = append(steps[1].Links, startLink{"/destinations/_new", "Add a destination"})
	}
	if s.settings != nil {
		steps[2].Links = []startLink{{"/settings#notify", "Set up notifications"}}
		steps[3].Links = []startLink{{"/settings#ad", "Connect Active Directory"}}
	}
	return steps
}
