package scanwarden

import "time"

// Fault is one part of the daemon that does not work (a listener that
// could not bind, the DC down, a store write that failed). The rest keeps
// running; faults show in the log, the status page and the metrics.
type Fault struct {
	Part    string    `json:"part"` // snmp.traps, snmp.mail, ad, store, notify.webhook, config, …
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}
