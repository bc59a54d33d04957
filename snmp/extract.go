package snmp

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jobEvents turns failed send jobs (with their attributes) into events. A
// job whose service types say it is not a send (a print job) is skipped; a
// job without service types counts when its message matches a rule.
func jobEvents(device string, jobs []jobRow, rules *Rules, now time.Time) []Event {
	var out []Event
	for _, j := range jobs {
		isSend := j.HasServices && j.Services&jmServiceSend != 0
		if j.HasServices && !isSend {
			continue
		}
		idx := fmt.Sprintf("%d.%d", j.Set, j.Index)
		msgOID := fmt.Sprintf("%s.%s.%d.1", oidJmAttrValueAsOctets, idx, jmAttrProcessingMessage)
		m, matched := rules.Match(Observation{Source: SourceJob, OID: msgOID, Text: j.Message})
		if matched && m.Ignore {
			continue
		}
		if !isSend && !matched {
			continue
		}
		text := j.Message
		if text == "" {
			text = "job aborted"
		}
		if r := reasonNames(j.Reasons); r != "" {
			text += " [" + r + "]"
		}
		ev := Event{
			Device: device, Time: now, Code: m.Code, Text: text, Source: SourceJob, Rule: m.Rule,
			Destination: jobDestination(j),
			Key:         eventKey(device, SourceJob, idx, j.Name),
			Detail: map[string]string{
				"job": idx, "owner": j.Owner, "job_name": j.Name,
				"state": strconv.FormatInt(j.State, 10), "reasons": strconv.FormatInt(j.Reasons, 10),
			},
		}
		out = append(out, ev)
	}
	return out
}

func jobDestination(j jobRow) string {
	for _, s := range []string{j.FileName, j.DocName} {
		if d := findDestination(s); d != "" {
			return d
		}
	}
	return findDestination(j.Message)
}

// panelEvents matches the console text (all lines joined: a panel often
// splits "Send error." and "Error code: 1102") and every alert row. One
// code gives one event per poll, whichever place showed it first; the key
// is the code, so a message that stays on the panel is one event.
func panelEvents(device string, st Status, rules *Rules, now time.Time) []Event {
	evs := newReportEvents(device, rules, now)
	add := func(src Source, oid, text string, intVal *int64) {
		if ev, ok := evs.match(Observation{Source: src, OID: oid, Text: text, Int: intVal}); ok {
			ev.Key, ev.Detail = eventKey(device, "panel", ev.Code), map[string]string{"oid": oid}
			evs.add(ev)
		}
	}
	if len(st.Console) > 0 {
		add(SourceConsole, oidPrtConsoleDisplayText, strings.Join(st.Console, " "), nil)
	}
	for _, a := range st.Alerts {
		switch a.Table {
		case "prtAlert":
			// Only the description: prtAlertCode numbers are Printer-MIB codes.
			add(SourceAlert, oidPrtAlertDescription+"."+a.Index, a.Text, nil)
		case "kcprtAlertState":
			add(SourceAlert, oidKcprtAlertStateDisp+"."+a.Index, a.Text, nil)
			if v, err := strconv.ParseInt(a.Code, 10, 64); err == nil {
				add(SourceAlert, oidKcprtAlertStateCode+"."+a.Index, "", &v)
			}
		}
	}
	return evs.out
}
