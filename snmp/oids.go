package snmp

// OIDs read by this package, with the MIB each comes from. Column OIDs end
// without an instance; the code appends the index.
const (
	// SNMPv2-MIB (RFC 3418) and IF-MIB (RFC 2863).
	oidSysDescr     = "1.3.6.1.2.1.1.1.0"
	oidSysObjectID  = "1.3.6.1.2.1.1.2.0"
	oidSysUpTime    = "1.3.6.1.2.1.1.3.0"
	oidSysName      = "1.3.6.1.2.1.1.5.0"
	oidSysLocation  = "1.3.6.1.2.1.1.6.0"
	oidIfPhysAddr1  = "1.3.6.1.2.1.2.2.1.6.1"
	oidSysUpTimeCol = "1.3.6.1.2.1.1.3" // GETNEXT target for sysUpTime.0
	oidSnmpTrapOID  = "1.3.6.1.6.3.1.1.4.1.0"

	// HOST-RESOURCES-MIB (RFC 2790).
	oidHrDeviceDescr1          = "1.3.6.1.2.1.25.3.2.1.3.1"
	oidHrPrinterStatus         = "1.3.6.1.2.1.25.3.5.1.1"
	oidHrPrinterDetectedErrors = "1.3.6.1.2.1.25.3.5.1.2"

	// Printer-MIB (RFC 3805) and IANA-PRINTER-MIB.
	oidPrtGeneralSerialNumber1 = "1.3.6.1.2.1.43.5.1.1.17.1"
	oidPrtConsoleDisplayText   = "1.3.6.1.2.1.43.16.5.1.2"
	oidPrtAlertEntry           = "1.3.6.1.2.1.43.18.1.1"
	oidPrtAlertSeverity        = "1.3.6.1.2.1.43.18.1.1.2"
	oidPrtAlertGroup           = "1.3.6.1.2.1.43.18.1.1.4"
	oidPrtAlertCode            = "1.3.6.1.2.1.43.18.1.1.7"
	oidPrtAlertDescription     = "1.3.6.1.2.1.43.18.1.1.8"
	oidPrinterV2Alert          = "1.3.6.1.2.1.43.18.2.0.1" // printerV2Alert notification

	// KYOCERA-MIB / KYOCERA-Private-MIB (LibreNMS and Observium collections).
	oidKyocera              = "1.3.6.1.4.1.1347"
	oidKcprtModelName1      = "1.3.6.1.4.1.1347.43.5.1.1.1.1"
	oidKcprtSerialNumber1   = "1.3.6.1.4.1.1347.43.5.1.1.28.1"
	oidKcprtFirmware11      = "1.3.6.1.4.1.1347.43.5.4.1.5.1.1"
	oidKcprtAlertStateTable = "1.3.6.1.4.1.1347.43.18.2"
	oidKcprtAlertStateDisp  = "1.3.6.1.4.1.1347.43.18.2.1.2"
	oidKcprtAlertStateCode  = "1.3.6.1.4.1.1347.43.18.2.1.3"

	// Job-Monitoring-MIB (RFC 2707).
	oidJobmon              = "1.3.6.1.4.1.2699.1.1"
	oidJmJobState          = "1.3.6.1.4.1.2699.1.1.1.3.1.1.2"
	oidJmJobStateReasons1  = "1.3.6.1.4.1.2699.1.1.1.3.1.1.3"
	oidJmJobOwner          = "1.3.6.1.4.1.2699.1.1.1.3.1.1.9"
	oidJmAttrValueAsInt    = "1.3.6.1.4.1.2699.1.1.1.4.1.1.3"
	oidJmAttrValueAsOctets = "1.3.6.1.4.1.2699.1.1.1.4.1.1.4"
)

// Job Monitoring MIB values (RFC 2707).
const (
	jmStateCanceled  = 7
	jmStateAborted   = 8
	jmStateCompleted = 9

	// JmAttributeTypeTC values read for a failed job.
	jmAttrProcessingMessage = 6
	jmAttrJobName           = 23
	jmAttrJobServiceTypes   = 24
	jmAttrFileName          = 34
	jmAttrDocumentName      = 35

	// JmJobServiceTypesTC bits: a send is scan, faxOut, putFile or mailList.
	jmServiceScan     = 0x8
	jmServiceFaxOut   = 0x20
	jmServicePutFile  = 0x80
	jmServiceMailList = 0x100
	jmServiceSend     = jmServiceScan | jmServiceFaxOut | jmServicePutFile | jmServiceMailList

	// JmJobStateReasons1TC bits worth naming in an event text.
	jmReasonCanceledByUser      = 0x2000
	jmReasonCanceledByOperator  = 0x4000
	jmReasonCanceledAtDevice    = 0x8000
	jmReasonAbortedBySystem     = 0x10000
	jmReasonServiceOffLine      = 0x40000
	jmReasonCompletedWithErrors = 0x200000
)

// SubtreesForWalk are the subtrees `scanwarden snmp walk` records: enough to
// replay identification, status, alerts and the job tables in snmpsim.
var SubtreesForWalk = []string{
	"1.3.6.1.2.1.1",      // system
	"1.3.6.1.2.1.2.2.1",  // ifTable (MAC)
	"1.3.6.1.2.1.25.3",   // hrDevice, hrPrinter
	"1.3.6.1.2.1.43",     // Printer-MIB
	"1.3.6.1.4.1.1347",   // Kyocera
	"1.3.6.1.4.1.2699.1", // Job Monitoring MIB
}

// hasPrefix reports whether oid equals prefix or lies below it. OIDs may
// come with or without a leading dot.
func hasPrefix(oid, prefix string) bool {
	oid, prefix = trimDot(oid), trimDot(prefix)
	return oid == prefix || (len(oid) > len(prefix) && oid[:len(prefix)] == prefix && oid[len(prefix)] == '.')
}

func trimDot(s string) string {
	if len(s) > 0 && s[0] == '.' {
		return s[1:]
	}
	return s
}

// suffix returns the part of oid after prefix and its dot ("" if none).
func suffix(oid, prefix string) string {
	oid, prefix = trimDot(oid), trimDot(prefix)
	if !hasPrefix(oid, prefix) || len(oid) == len(prefix) {
		return ""
	}
	return oid[len(prefix)+1:]
}
