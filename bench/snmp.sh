#!/bin/bash
# bench/snmp.sh — one status cycle of scanwarden's SNMP poller over 1,000
# simulated Kyocera devices (one snmpsimd process, endpoints
# 127.0.0.1:20000-20999), then snmpbulkwalk over the same devices and
# subtrees in the same run. Prints both and the ratio.
#
# Targets (issue 4): <= 10 s per cycle on 2 cores, <= 2 PDUs per device for
# status, peak RSS < 100 MB. Loopback only; every loop is bounded in count
# and time. Usage: bench/snmp.sh [COUNT]   (default 1000, at most 2000)
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/snmpsim.sh"
count=${1:-1000}
[ "$count" -ge 1 ] && [ "$count" -le 2000 ] || { echo "COUNT must be 1..2000" >&2; exit 2; }
base=20000
community=kyocera-idle
for b in snmpsimd snmpbulkwalk go; do
	command -v $b >/dev/null || { echo "bench/snmp.sh: $b not installed (apt-get install snmpsim snmp)" >&2; exit 2; }
done

work=$(mktemp -d /tmp/swbench.XXXXXX)
chmod 755 "$work"
simpid=
cleanup() {
	if [ -n "$simpid" ] && kill -0 "$simpid" 2>/dev/null; then kill "$simpid"; wait "$simpid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "building snmpbench" >&2
(cd "$here" && go build -o "$work/snmpbench" ./bench/snmpbench)

# One snmpsimd, COUNT endpoints.
t0=$(date +%s.%N)
start_snmpsim "$count" $base $community
last=$((base + count - 1))
echo "snmpsimd up with $count endpoints in $(echo "$(date +%s.%N) - $t0" | bc) s" >&2

# scanwarden's poller: cycle 1 identifies (GET) + status (GETBULK); cycle 2
# is the steady-state status cycle.
"$work/snmpbench" -base-port $base -count "$count" -community $community -cycles 2 -limit 120s >"$work/poller.json"

# snmpbulkwalk over the same devices, walking the subtrees the status poll
# covers (hrPrinter, console text, prtAlert, kcprtAlertState, jmJobTable),
# two at a time (2 cores), bounded by timeout.
subtrees="1.3.6.1.2.1.25.3.5 1.3.6.1.2.1.43.16.5.1.2 1.3.6.1.2.1.43.18.1.1 1.3.6.1.4.1.1347.43.18.2 1.3.6.1.4.1.2699.1.1.1.3"
t0=$(date +%s.%N)
seq $base $last | timeout 600 xargs -P 2 -I{} sh -c \
	"for s in $subtrees; do snmpbulkwalk -v2c -c $community -Cr8 -t 2 -r 1 -d -On 127.0.0.1:{} \$s; done" 2>&1 |
	grep -c '^Sending' >"$work/bulk.pdus" || true
t1=$(date +%s.%N)
bulk_wall=$(echo "$t1 - $t0" | bc)
bulk_pdus=$(cat "$work/bulk.pdus")

python3 - "$work/poller.json" "$bulk_wall" "$bulk_pdus" "$count" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); bw = float(sys.argv[2]); bp = int(sys.argv[3]); n = int(sys.argv[4])
c1, c2 = p["cycles"][0], p["cycles"][-1]
print(f"devices: {n}  (snmpsimd, one process, 127.0.0.1:20000-{20000+n-1}), workers: {p['workers']}")
print(f"scanwarden poller, cycle 1 (identify + status): {c1['wall_seconds']:.2f} s, {c1['pdus_per_device']:.2f} PDUs/device, answered {c1['answered']}/{c1['polled']}")
print(f"scanwarden poller, status cycle:                {c2['wall_seconds']:.2f} s, {c2['pdus_per_device']:.2f} PDUs/device, answered {c2['answered']}/{c2['polled']}")
print(f"scanwarden peak RSS: {p['peak_rss_mb']:.1f} MB")
print(f"snmpbulkwalk (5 subtrees/device, -Cr8, 2 parallel): {bw:.2f} s, {bp/n:.2f} PDUs/device")
print(f"ratio snmpbulkwalk / poller status cycle: {bw / max(c2['wall_seconds'], 1e-9):.1f}x time, {bp/n / max(c2['pdus_per_device'], 1e-9):.1f}x PDUs")
ok = c2['wall_seconds'] <= 10 and c2['pdus_per_device'] <= 2 and p['peak_rss_mb'] < 100 and c2['answered'] == n
print("targets (<=10 s, <=2 PDUs/device, <100 MB, all answered):", "MET" if ok else "NOT MET")
sys.exit(0 if ok else 1)
PY
