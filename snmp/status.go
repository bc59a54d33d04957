package snmp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// Alert is one row of an alert table.
type Alert struct {
	Severity string `json:"severity"`            // critical, warning, warningBinaryChangeEvent, other, unknown, "" (Kyocera table)
	Code     string `json:"code"`                // prtAlertCode (IANA-PRINTER-MIB) or kcprtAlertStateCode, as a number
	CodeName string `json:"code_name,omitempty"` // e.g. markerTonerAlmostEmpty; never a Kyocera send code
	Text     string `json:"text"`                // prtAlertDescription / kcprtAlertStateDisplay, cleaned
	Table    string `json:"table"`               // prtAlert or kcprtAlertState
	Index    string `json:"index"`
}

// Status is what one status poll saw.
type Status struct {
	UpTime   int64    `json:"uptime_ticks"` // sysUpTime, hundredths of a second
	Printer  string   `json:"status"`       // hrPrinterStatus: other, unknown, idle, printing, warmup
	Errors   []string `json:"errors"`       // hrPrinterDetectedErrorState bits
	Console  []string `json:"console"`      // prtConsoleDisplayBufferText lines
	Alerts   []Alert  `json:"alerts"`
	jobs     []jobRow
	jobsMore bool // the job column filled the response: more rows may follow
}

type jobRow struct {
	Set, Index int
	State      int64
	Reasons    int64
	// From the attribute GET.
	Owner, Message, Name, FileName, DocName string
	Services                                int64
	HasServices                             bool
}

// column ids of the status request, in request order.
const (
	colConsole = iota
	colAlertSeverity
	colAlertCode
	colAlertDescr
	colKcDisplay
	colKcCode
	colJobState
	colJobReasons
	numCols
)

var statusColumns = [numCols]string{
	oidPrtConsoleDisplayText, oidPrtAlertSeverity, oidPrtAlertCode, oidPrtAlertDescription,
	oidKcprtAlertStateDisp, oidKcprtAlertStateCode, oidJmJobState, oidJmJobStateReasons1,
}

// statusScalars are fetched as GETBULK non-repeaters (one GETNEXT each).
var statusScalars = []string{oidSysUpTimeCol, oidHrPrinterStatus, oidHrPrinterDetectedErrors}

// jobCursor is the last job row seen ("set.index"), "" to start at the top.
type jobCursor string

// statusRequest builds the single GETBULK varbind list.
func statusRequest(cur jobCursor) []string {
	oids := append([]string(nil), statusScalars...)
	for i, col := range statusColumns {
		if cur != "" && (i == colJobState || i == colJobReasons) {
			col += "." + string(cur)
		}
		oids = append(oids, col)
	}
	return oids
}

// columns holds the rows of each requested column, and whether a column may
// have more rows than the response carried.
type columns struct {
	rows [numCols][]gosnmp.SnmpPDU
	more [numCols]bool
}

// splitBulk distributes a GETBULK response (non-repeaters first, then
// repetitions of the repeaters in order) into columns, stopping each column
// where it leaves its subtree.
func splitBulk(vars []gosnmp.SnmpPDU, nonRep, maxRep int) (scalars []gosnmp.SnmpPDU, cols columns) {
	if len(vars) < nonRep {
		return vars, cols
	}
	scalars = vars[:nonRep]
	rest := vars[nonRep:]
	for i := 0; i < numCols; i++ {
		done := false
		for r := 0; r < maxRep; r++ {
			idx := r*numCols + i
			if idx >= len(rest) {
				break
			}
			p := rest[idx]
			if p.Type == gosnmp.EndOfMibView || !hasPrefix(p.Name, statusColumns[i]) {
				done = true
				break
			}
			cols.rows[i] = append(cols.rows[i], p)
		}
		cols.more[i] = !done
	}
	return scalars, cols
}

// pollStatus runs the status request: one GETBULK (v2c/v3) or a bounded
// series of GETNEXTs (v1, which has no GETBULK).
func pollStatus(ctx context.Context, c *client, v Version, cur jobCursor, maxRep int) (Status, error) {
	if v == V1 {
		return pollStatusV1(ctx, c, cur, maxRep)
	}
	oids := statusRequest(cur)
	pkt, err := c.getBulk(ctx, oids, uint8(len(statusScalars)), uint32(maxRep))
	if err != nil {
		return Status{}, err
	}
	scalars, cols := splitBulk(pkt.Variables, len(statusScalars), maxRep)
	return decodeStatus(scalars, cols), nil
}

// pollStatusV1 walks each column with GETNEXT, all columns in one request
// per step; a column that ends (or that the agent refuses with noSuchName)
// leaves the request. At most maxRep+1 steps, plus one per refused column.
func pollStatusV1(ctx context.Context, c *client, cur jobCursor, maxRep int) (Status, error) {
	var cols columns
	scalars, err := getNextTolerant(ctx, c, statusScalars)
	if err != nil {
		return Status{}, err
	}
	next := statusRequest(cur)[len(statusScalars):]
	active := make([]int, numCols)
	for i := range active {
		active[i] = i
	}
	for step := 0; step < maxRep && len(active) > 0; step++ {
		req := make([]string, len(active))
		for k, i := range active {
			req[k] = next[i]
		}
		vars, err := getNextTolerantKeep(ctx, c, req)
		if err != nil {
			return Status{}, err
		}
		var still []int
		for k, i := range active {
			p := vars[k]
			if p.Name == "" || !hasPrefix(p.Name, statusColumns[i]) {
				continue
			}
			cols.rows[i] = append(cols.rows[i], p)
			next[i] = trimDot(p.Name)
			still = append(still, i)
		}
		active = still
	}
	for _, i := range active {
		cols.more[i] = true
	}
	return decodeStatus(scalars, cols), nil
}

// getNextTolerant does GETNEXT, dropping variables a v1 agent refuses.
func getNextTolerant(ctx context.Context, c *client, oids []string) ([]gosnmp.SnmpPDU, error) {
	vars, err := getNextTolerantKeep(ctx, c, oids)
	var out []gosnmp.SnmpPDU
	for _, v := range vars {
		if v.Name != "" {
			out = append(out, v)
		}
	}
	return out, err
}

// getNextTolerantKeep returns one PDU per requested OID, in order; refused
// ones have an empty Name.
func getNextTolerantKeep(ctx context.Context, c *client, oids []string) ([]gosnmp.SnmpPDU, error) {
	return tolerant(ctx, oids, func(req []string) (*gosnmp.SnmpPacket, error) { return c.getNext(ctx, req) })
}

// getTolerant is GET with the same v1 tolerance.
func getTolerant(ctx context.Context, c *client, oids []string) ([]gosnmp.SnmpPDU, error) {
	return tolerant(ctx, oids, func(req []string) (*gosnmp.SnmpPacket, error) { return c.get(ctx, req) })
}

func tolerant(ctx context.Context, oids []string, do func([]string) (*gosnmp.SnmpPacket, error)) ([]gosnmp.SnmpPDU, error) {
	out := make([]gosnmp.SnmpPDU, len(oids))
	live := make([]int, len(oids)) // positions still asked for
	for i := range live {
		live[i] = i
	}
	for attempt := 0; attempt <= len(oids) && len(live) > 0; attempt++ {
		req := make([]string, len(live))
		for k, i := range live {
			req[k] = oids[i]
		}
		pkt, err := do(req)
		var pe *PDUError
		if errors.As(err, &pe) && pe.Status == gosnmp.NoSuchName.String() && pe.Index >= 1 && pe.Index <= len(live) {
			live = append(live[:pe.Index-1], live[pe.Index:]...)
			continue
		}
		if err != nil {
			return out, err
		}
		for k, p := range pkt.Variables {
			if k < len(live) {
				out[live[k]] = p
			}
		}
		return out, nil
	}
	return out, nil
}

var hrPrinterStatusNames = map[int64]string{1: "other", 2: "unknown", 3: "idle", 4: "printing", 5: "warmup"}

// hrPrinterDetectedErrorState bits, most significant bit of the first octet
// first (HOST-RESOURCES-MIB).
var hrErrorBits = []string{
	"lowPaper", "noPaper", "lowToner", "noToner", "doorOpen", "jammed", "offline", "serviceRequested",
	"inputTrayMissing", "outputTrayMissing", "markerSupplyMissing", "outputNearFull", "outputFull",
	"inputTrayEmpty", "overduePreventMaint",
}

var alertSeverityNames = map[int64]string{1: "other", 3: "critical", 4: "warning", 5: "warningBinaryChangeEvent"}

// decodeStatus is a pure function of the scalars and columns.
func decodeStatus(scalars []gosnmp.SnmpPDU, cols columns) Status {
	st := Status{Printer: "unknown", Errors: []string{}, Console: []string{}, Alerts: []Alert{}}
	decodeScalars(&st, scalars)
	for _, p := range cols.rows[colConsole] {
		if t := pduText(p); t != "" {
			st.Console = append(st.Console, t)
		}
	}
	st.Alerts = append(st.Alerts, prtAlerts(cols)...)
	st.Alerts = append(st.Alerts, kyoceraAlerts(cols)...)
	st.jobs = decodeJobs(cols)
	st.jobsMore = cols.more[colJobState]
	return st
}

// decodeScalars fills the up time, the printer status and the detected-error bits.
func decodeScalars(st *Status, scalars []gosnmp.SnmpPDU) {
	for _, p := range scalars {
		if !pduExists(p) {
			continue
		}
		switch {
		case hasPrefix(p.Name, oidSysUpTimeCol):
			st.UpTime, _ = pduInt(p)
		case hasPrefix(p.Name, oidHrPrinterStatus):
			if v, ok := pduInt(p); ok {
				if name, ok := hrPrinterStatusNames[v]; ok {
					st.Printer = name
				} else {
					st.Printer = "unknown"
				}
			}
		case hasPrefix(p.Name, oidHrPrinterDetectedErrors):
			b := pduBytes(p)
			for i, name := range hrErrorBits {
				if i/8 < len(b) && b[i/8]&(0x80>>(i%8)) != 0 {
					st.Errors = append(st.Errors, name)
				}
			}
		}
	}
}

// prtAlerts joins the Printer-MIB alert rows by index (hrDeviceIndex.prtAlertIndex), in the order first seen.
func prtAlerts(cols columns) []Alert {
	type prtRow struct {
		sev  int64
		code int64
		desc string
		has  bool
	}
	rows := map[string]*prtRow{}
	var order []string
	row := func(idx string) *prtRow {
		r, ok := rows[idx]
		if !ok {
			r = &prtRow{}
			rows[idx] = r
			order = append(order, idx)
		}
		return r
	}
	for _, p := range cols.rows[colAlertSeverity] {
		if v, ok := pduInt(p); ok {
			r := row(suffix(p.Name, oidPrtAlertSeverity))
			r.sev, r.has = v, true
		}
	}
	for _, p := range cols.rows[colAlertCode] {
		if v, ok := pduInt(p); ok {
			r := row(suffix(p.Name, oidPrtAlertCode))
			r.code, r.has = v, true
		}
	}
	for _, p := range cols.rows[colAlertDescr] {
		r := row(suffix(p.Name, oidPrtAlertDescription))
		r.desc, r.has = pduText(p), true
	}
	var alerts []Alert
	for _, idx := range order {
		r := rows[idx]
		sev := alertSeverityNames[r.sev]
		if sev == "" {
			sev = "unknown"
		}
		alerts = append(alerts, Alert{
			Severity: sev, Code: strconv.FormatInt(r.code, 10), CodeName: prtAlertCodeNames[r.code],
			Text: r.desc, Table: "prtAlert", Index: idx,
		})
	}
	return alerts
}

// kyoceraAlerts joins the Kyocera alert state rows (display text and code) by index, in the order first seen.
func kyoceraAlerts(cols columns) []Alert {
	kc := map[string]*Alert{}
	var order []string
	row := func(idx string) *Alert {
		a, ok := kc[idx]
		if !ok {
			a = &Alert{Table: "kcprtAlertState", Index: idx}
			kc[idx] = a
			order = append(order, idx)
		}
		return a
	}
	for _, p := range cols.rows[colKcDisplay] {
		row(suffix(p.Name, oidKcprtAlertStateDisp)).Text = pduText(p)
	}
	for _, p := range cols.rows[colKcCode] {
		if v, ok := pduInt(p); ok {
			row(suffix(p.Name, oidKcprtAlertStateCode)).Code = strconv.FormatInt(v, 10)
		}
	}
	alerts := make([]Alert, 0, len(order))
	for _, idx := range order {
		alerts = append(alerts, *kc[idx])
	}
	return alerts
}

// decodeJobs joins the job state rows (jmJobSetIndex.jmJobIndex) with their state reasons, in walk order.
func decodeJobs(cols columns) []jobRow {
	jobs := map[string]*jobRow{}
	var order []string
	for _, p := range cols.rows[colJobState] {
		idx := suffix(p.Name, oidJmJobState)
		n := indexInts(idx)
		v, ok := pduInt(p)
		if len(n) != 2 || !ok {
			continue
		}
		jobs[idx] = &jobRow{Set: n[0], Index: n[1], State: v}
		order = append(order, idx)
	}
	for _, p := range cols.rows[colJobReasons] {
		if j, ok := jobs[suffix(p.Name, oidJmJobStateReasons1)]; ok {
			j.Reasons, _ = pduInt(p)
		}
	}
	var out []jobRow
	for _, idx := range order {
		out = append(out, *jobs[idx])
	}
	return out
}

// prtAlertCodeNames names the IANA-PRINTER-MIB alert codes that matter
// here. Note 1101..1115 are marker supplies (1101 markerTonerEmpty), NOT
// Kyocera send codes: alert numbers are never matched as send codes.
var prtAlertCodeNames = map[int64]string{
	1: "other", 2: "unknown", 3: "coverOpen", 4: "coverClosed", 8: "jam", 13: "subunitEmpty",
	22: "subunitOffline", 501: "doorOpen", 807: "inputMediaSupplyLow", 808: "inputMediaSupplyEmpty",
	903: "outputMediaTrayFull", 1101: "markerTonerEmpty", 1102: "markerInkEmpty", 1104: "markerTonerAlmostEmpty",
	1107: "markerWasteTonerReceptacleAlmostFull", 1109: "markerWasteTonerReceptacleFull",
	1111: "markerOpcLifeAlmostOver", 1112: "markerOpcLifeOver", 1115: "markerTonerCartridgeMissing",
}

// failedSendCandidates are the jobs worth a closer look: aborted, or
// completed with errors, and not cancelled by someone.
func failedSendCandidates(jobs []jobRow) []jobRow {
	var out []jobRow
	for _, j := range jobs {
		failed := j.State == jmStateAborted || (j.State == jmStateCompleted && j.Reasons&jmReasonCompletedWithErrors != 0)
		cancelled := j.Reasons&(jmReasonCanceledByUser|jmReasonCanceledByOperator|jmReasonCanceledAtDevice) != 0
		if failed && !cancelled {
			out = append(out, j)
		}
	}
	return out
}

// maxJobsPerPoll bounds the attribute GET (6 variables per job, gosnmp
// allows 60 per request).
const maxJobsPerPoll = 8

func jobAttrOIDs(j jobRow) []string {
	idx := fmt.Sprintf("%d.%d", j.Set, j.Index)
	return []string{
		oidJmJobOwner + "." + idx,
		fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsInt, idx, jmAttrJobServiceTypes),
		fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsOctets, idx, jmAttrProcessingMessage),
		fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsOctets, idx, jmAttrJobName),
		fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsOctets, idx, jmAttrFileName),
		fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsOctets, idx, jmAttrDocumentName),
	}
}

// fetchJobAttrs reads the attributes of up to maxJobsPerPoll jobs in one GET.
func fetchJobAttrs(ctx context.Context, c *client, jobs []jobRow) ([]jobRow, error) {
	if len(jobs) > maxJobsPerPoll {
		jobs = jobs[:maxJobsPerPoll]
	}
	var oids []string
	for _, j := range jobs {
		oids = append(oids, jobAttrOIDs(j)...)
	}
	if len(oids) == 0 {
		return nil, nil
	}
	vars, err := getTolerant(ctx, c, oids)
	if err != nil {
		return nil, fmt.Errorf("read job attributes: %w", err)
	}
	return applyJobAttrs(jobs, vars), nil
}

// applyJobAttrs is the pure half of fetchJobAttrs.
func applyJobAttrs(jobs []jobRow, vars []gosnmp.SnmpPDU) []jobRow {
	byName := map[string]gosnmp.SnmpPDU{}
	for _, p := range vars {
		if p.Name != "" && pduExists(p) {
			byName[trimDot(p.Name)] = p
		}
	}
	out := make([]jobRow, len(jobs))
	for i, j := range jobs {
		o := jobAttrOIDs(j)
		if p, ok := byName[o[0]]; ok {
			j.Owner = pduText(p)
		}
		if p, ok := byName[o[1]]; ok {
			j.Services, j.HasServices = pduInt(p)
		}
		if p, ok := byName[o[2]]; ok {
			j.Message = pduText(p)
		}
		if p, ok := byName[o[3]]; ok {
			j.Name = pduText(p)
		}
		if p, ok := byName[o[4]]; ok {
			j.FileName = pduText(p)
		}
		if p, ok := byName[o[5]]; ok {
			j.DocName = pduText(p)
		}
		out[i] = j
	}
	return out
}

// reasonNames renders the JmJobStateReasons1 bits we name.
func reasonNames(r int64) string {
	var names []string
	for _, b := range []struct {
		bit  int64
		name string
	}{
		{jmReasonAbortedBySystem, "abortedBySystem"}, {jmReasonCompletedWithErrors, "jobCompletedWithErrors"},
		{jmReasonServiceOffLine, "serviceOffLine"}, {jmReasonCanceledByUser, "jobCanceledByUser"},
		{jmReasonCanceledByOperator, "jobCanceledByOperator"}, {jmReasonCanceledAtDevice, "jobCanceledAtDevice"},
	} {
		if r&b.bit != 0 {
			names = append(names, b.name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
