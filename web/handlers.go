package web

import (
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// The server's handlers, one small type per area of the site. Each holds
// the *base (render, fail, audit: the logger, the clock, the parsed views,
// the page cache, the audit log) and the backends its pages call, named;
// the pages behind the login hold the gate (sessions, tokens, the login
// limiter). Server.routes builds them from the Config and wires them.

// base is what every handler shares.
type base struct {
	log   *slog.Logger
	now   func() time.Time
	views *views
	cache *pageCache
	auth  AuthStore // the audit log (and, for the gate, sessions and tokens)
}

// gate lets requests in: the admin's session or an API token, the
// one-time setup link, the login limiter.
type gate struct {
	*base
	tls                     bool // cookies Secure and __Host-
	sessionIdle, sessionMax time.Duration
	onAuthenticated         func(netip.Addr) // Config.Authenticated
	limiter                 *limiter
	setup                   setupToken
	sessions                sessionCache
	touched                 sync.Map // token name → time.Time of the last stored use
}

// accountPages log the admin in and out and set the first password.
type accountPages struct {
	*gate
	setupDone func() // Config.SetupDone
}

// settingsPages show and change the settings, the API tokens and the
// admin password.
type settingsPages struct {
	*gate
	settings Settings
}

// overview is the dashboard, its headline, "check all" and the getting
// started steps: it reads every part.
type overview struct {
	*base
	fleet              Fleet
	incidents          Incidents
	receiver           Receiver
	status             Status
	summary            Summarizer
	allChecker         AllChecker
	warnings           WarningLister
	settings           Settings
	deviceManager      DeviceManager
	destinationManager DestinationManager
}

// devicePages list, show, add, change and remove devices (pages and API).
type devicePages struct {
	*base
	fleet              Fleet
	events             Events
	profiles           ProfileEditor
	deviceManager      DeviceManager
	destinationManager DestinationManager
}

// destinationPages list and show destinations, check one now and stream
// its steps, set its auth, and write destinations over the API.
type destinationPages struct {
	*base
	fleet              Fleet
	checker            Checker
	editor             Editor
	warnings           WarningLister
	destinationManager DestinationManager
	runs               *runs
}

// destinationForms add, change, try and remove a destination from a form.
type destinationForms struct {
	*base
	fleet              Fleet
	destinationManager DestinationManager
	runs               *runs
}

// receiverPages are the fallback share's scans: list, download, deliver,
// force.
type receiverPages struct {
	*base
	receiver Receiver
}

// importPages preview and confirm an address-book import.
type importPages struct {
	*base
	fleet    Fleet
	importer Importer
	imports  *pendingImports
}

// historyPages are what happened: incidents, the devices' events, the
// audit log.
type historyPages struct {
	*base
	incidents Incidents
	events    Events
}

// handlers are the site's handler types, one per area.
type handlers struct {
	account      *accountPages
	settings     *settingsPages
	overview     *overview
	devices      *devicePages
	destinations *destinationPages
	forms        *destinationForms
	receiver     *receiverPages
	imports      *importPages
	history      *historyPages
}

// handlers builds the handler types over the server's config.
func (s *Server) handlers() handlers {
	c := s.cfg
	return handlers{
		account:  &accountPages{gate: s.gate, setupDone: c.SetupDone},
		settings: &settingsPages{gate: s.gate, settings: c.Settings},
		overview: &overview{base: s.base, fleet: c.Fleet, incidents: c.Incidents, receiver: c.Receiver, status: c.Status,
			summary: c.Summary, allChecker: c.CheckAll, warnings: c.Warnings, settings: c.Settings,
			deviceManager: c.DeviceManager, destinationManager: c.DestinationManager},
		devices: &devicePages{base: s.base, fleet: c.Fleet, events: c.Events, profiles: c.Profiles,
			deviceManager: c.DeviceManager, destinationManager: c.DestinationManager},
		destinations: &destinationPages{base: s.base, fleet: c.Fleet, checker: c.Checker, editor: c.Editor, warnings: c.Warnings,
			destinationManager: c.DestinationManager, runs: s.runs},
		forms:    &destinationForms{base: s.base, fleet: c.Fleet, destinationManager: c.DestinationManager, runs: s.runs},
		receiver: &receiverPages{base: s.base, receiver: c.Receiver},
		imports:  &importPages{base: s.base, fleet: c.Fleet, importer: c.Importer, imports: s.imports},
		history:  &historyPages{base: s.base, incidents: c.Incidents, events: c.Events},
	}
}
