package web

import (
	"log/slog"
	"sync"
	"time"
)

// The server's handlers, one small type per area of the site. Each holds
// the *base (the configuration and its backends, the logger, the clock,
// the parsed views and the page cache: render, fail, audit) and, where its
// pages need them, the gate (sessions, tokens, the login limiter), the
// running checks or the pending imports. routes wires them.

// base is what every handler shares.
type base struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	views *views
	cache *pageCache
}

// gate lets requests in: the admin's session or an API token, the
// one-time setup link, the login limiter.
type gate struct {
	*base
	limiter  *limiter
	setup    setupToken
	sessions sessionCache
	touched  sync.Map // token name → time.Time of the last stored use
}

// accountPages log the admin in and out and set the first password.
type accountPages struct{ *gate }

// settingsPages show and change the settings, the API tokens and the
// admin password.
type settingsPages struct{ *gate }

// overview is the dashboard, the headline and "check all".
type overview struct{ *base }

// devicePages list, show, add, change and remove devices (pages and API).
type devicePages struct{ *base }

// destinationPages list and show destinations, check one now and stream
// its steps, set its auth, and write destinations over the API.
type destinationPages struct {
	*base
	runs *runs
}

// destinationForms add, change, try and remove a destination from a form.
type destinationForms struct {
	*base
	runs *runs
}

// receiverPages are the fallback share's scans: list, download, deliver,
// force.
type receiverPages struct{ *base }

// importPages preview and confirm an address-book import.
type importPages struct {
	*base
	imports *pendingImports
}

// historyPages are what happened: incidents, the devices' events, the
// audit log.
type historyPages struct{ *base }
