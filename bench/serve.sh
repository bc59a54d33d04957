#!/bin/bash
# bench/serve.sh — `scanwarden serve` at idle with 100 devices (one snmpsimd,
# endpoints 127.0.0.1:30000-30099, polled every minute) and 300 destinations
# (checked every 15 min; their first round runs in the first 90 s): resident
# memory and CPU once the first round is done, and how long SIGTERM takes.
#
# Targets (issue 11): idle RSS < 40 MB, CPU at idle < 1 %. Loopback only;
# every wait is bounded. Usage: bench/serve.sh [SETTLE_S [MEASURE_S]]
# (defaults 150 and 60).
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/snmpsim.sh"
settle=${1:-150}
measure=${2:-60}
count=100
base=30000
for b in snmpsimd snmpget go; do
	command -v $b >/dev/null || { echo "bench/serve.sh: $b not installed" >&2; exit 2; }
done
work=$(mktemp -d /tmp/swservebench.XXXXXX)
chmod 755 "$work"
simpid= servepid=
cleanup() {
	for p in $servepid $simpid; do
		if kill -0 "$p" 2>/dev/null; then kill "$p"; wait "$p" 2>/dev/null || true; fi
	done
	rm -rf "$work"
}
trap cleanup EXIT

echo "building" >&2
(cd "$here" && go build -o "$work/scanwarden" ./cmd/scanwarden && go build -o "$work/servebench" ./bench/servebench)

start_snmpsim $count $base kyocera-idle

"$work/servebench" -data "$work/data" -devices $count -destinations 300 -snmp-base $base >&2
cat >"$work/serve.toml" <<TOML
data_dir = "$work/data"
listen = "127.0.0.1:0"
log_level = "warn"
TOML
"$work/scanwarden" serve --config "$work/serve.toml" 2>"$work/serve.log" &
servepid=$!
echo "serve running (pid $servepid); settling $settle s (first round of 300 checks, poll cycles)" >&2
sleep "$settle"
kill -0 $servepid || { echo "serve died:" >&2; tail "$work/serve.log" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' /proc/$servepid/stat; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
s0=$(date +%s.%N)
sleep "$measure"
t1=$(ticks)
s1=$(date +%s.%N)
rss=$(awk '/VmRSS/ {print $2}' /proc/$servepid/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$servepid/status)
threads=$(awk '/Threads/ {print $2}' /proc/$servepid/status)
polled=$(sqlite3 "file:$work/data/scanwarden.db?mode=ro" "SELECT count(*) FROM snmp_devices WHERE sys_name = 'MFP01'" 2>/dev/null || echo "?")
checked=$(sqlite3 "file:$work/data/scanwarden.db?mode=ro" "SELECT count(DISTINCT destination_id) FROM destination_reports" 2>/dev/null || echo "?")
echo "devices answering SNMP: $polled of $count; destinations checked in the first round: $checked of 300" >&2
st0=$(date +%s.%N)
kill -TERM $servepid
wait $servepid || true
st1=$(date +%s.%N)
servepid=
python3 - "$t0" "$t1" "$s0" "$s1" "$hz" "$rss" "$hwm" "$threads" "$st0" "$st1" <<'PY'
import sys
t0, t1, s0, s1, hz, rss, hwm, thr, st0, st1 = map(float, sys.argv[1:])
cpu = (t1 - t0) / hz / (s1 - s0) * 100
print(f"idle over {s1 - s0:.0f} s: CPU {cpu:.2f} % of one core (target < 1 %)")
print(f"RSS {rss / 1024:.1f} MiB (peak {hwm / 1024:.1f} MiB; target < 40 MB), {thr:.0f} threads")
print(f"SIGTERM to exit: {st1 - st0:.2f} s (target < 10 s)")
PY
grep -c "level=ERROR" "$work/serve.log" | sed 's/^/ERROR lines in the log: /' >&2 || true
