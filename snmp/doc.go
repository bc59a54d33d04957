// Package snmp turns Kyocera MFPs into inventory and send-failure Events.
//
// It knows nothing of SMB: a send failure is a Kyocera code (1101, 1102, …)
// with the device, the time, the text and, where the device says, the
// destination. The code book (codebook.json, embedded) explains each code
// with likely causes from smbcheck's cause vocabulary; the matching rules
// (rules.json, embedded, extendable from config) say where codes are found.
//
// Sources of events:
//   - the Job Monitoring MIB (RFC 2707): aborted scan/send jobs in jmJobTable
//     with their jmAttributeTable processingMessage, jobName, jobOwner;
//   - the console display text (Printer-MIB prtConsoleDisplayBufferText) and
//     the alert tables (Printer-MIB prtAlertTable, Kyocera
//     kcprtAlertStateTable), matched by rules;
//   - SNMP traps (TrapListener): printerV2Alert decoded, unknown traps kept raw;
//   - job-log e-mails from the device (MailListener, go-smtp).
//
// The Poller runs status cycles over many devices with a fixed pool of
// workers, each owning its own *gosnmp.GoSNMP; one status cycle costs one
// GETBULK per device (plus one GET when a new aborted job needs its
// attributes, and one GET to identify a device the first time).
//
// Every string a device sends is data: it is kept as received (made valid
// UTF-8, control bytes replaced), never used as a path, a filter or a
// command, and must be escaped by whoever renders it.
package snmp
