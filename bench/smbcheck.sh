#!/usr/bin/env bash
# Benchmark: N full `scanwarden check` runs against the lab's DC share versus
# the equivalent smbclient sequence (list shares, cd to the folder, put a
# canary, rm it), in the same run, alternating. Prints both medians and the
# ratio (target: scanwarden <= 0.3 x smbclient).
#
#   testlab/lab up && testlab/lab exec bench/smbcheck.sh [N]   # as root (or each through sudo)
#   BENCH_HOST=smb2srv.kyolab.test BENCH_USER=scanuser BENCH_DOMAIN=SMB2SRV \
#     testlab/lab exec bench/smbcheck.sh           # a standalone Samba file server
#   BENCH_BASELINE=/path/to/an/older/scanwarden testlab/lab exec bench/smbcheck.sh 40
#     # also alternates that binary's check (its own state dir): old and new
#     # compared in the same run, as ratios to the same smbclient runs
#
# Then the check's phases: the medians of each step's time from the same
# checks run again with --json (not timed), and what is left of the whole
# (the process, the state store, the log-off, the exit).
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
cd "$(dirname "$0")/.."
n="${1:-30}"
[ "$n" -ge 1 ] && [ "$n" -le 500 ] || { echo "N must be 1..500" >&2; exit 2; }
: "${SWLAB_DC_HOST:?run inside the lab: testlab/lab exec bench/smbcheck.sh (as root)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/scanwarden" ./cmd/scanwarden
go build -o "$work/smbfloor" ./bench/smbfloor
printf '%s\n' "$SWLAB_PASSWORD" >"$work/pw"
chmod 600 "$work/pw"
head -c 65536 /dev/urandom >"$work/canary.tmp"
auth="$work/auth"
host="${BENCH_HOST:-$SWLAB_DC_HOST}"
user="${BENCH_USER:-alice}"
domain="${BENCH_DOMAIN:-$SWLAB_DOMAIN}"
printf 'username = %s\npassword = %s\ndomain = %s\n' "$user" "$SWLAB_PASSWORD" "$domain" >"$auth"
chmod 600 "$auth"

base="${BENCH_BASELINE:-}"
[ -z "$base" ] || [ -x "$base" ] || { echo "BENCH_BASELINE: $base is not an executable" >&2; exit 2; }
now() { date +%s%N; }
sw=() sc=() ex=() bl=()
for i in $(seq "$n"); do
	t0=$(now)
	"$work/scanwarden" version >/dev/null
	ex+=($((($(now) - t0) / 1000)))
	t0=$(now)
	"$work/scanwarden" check "//$host/scans" --user "$domain\\$user" --password-file "$work/pw" \
		--state-dir "$work/state" >/dev/null
	t1=$(now)
	smbclient -L "//$host" -A "$auth" >/dev/null 2>&1
	smbclient "//$host/scans" -A "$auth" -c "lcd $work; put canary.tmp bench-canary-$i.tmp; rm bench-canary-$i.tmp" >/dev/null 2>&1
	t2=$(now)
	sw+=($(((t1 - t0) / 1000)))
	sc+=($(((t2 - t1) / 1000)))
	if [ -n "$base" ]; then
		t0=$(now)
		"$base" check "//$host/scans" --user "$domain\\$user" --password-file "$work/pw" \
			--state-dir "$work/state-baseline" >/dev/null
		bl+=($((($(now) - t0) / 1000)))
	fi
	"$work/scanwarden" check "//$host/scans" --user "$domain\\$user" --password-file "$work/pw" \
		--state-dir "$work/state" --json >"$work/phases-$i.json"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
msw=$(median "${sw[@]}")
msc=$(median "${sc[@]}")
mex=$(median "${ex[@]}")
awk -v a="$msw" -v b="$msc" -v x="$mex" -v n="$n" -v host="$host" 'BEGIN {
	printf "runs: %d each, alternating, against %s\n", n, host
	printf "scanwarden check (name, tcp, negotiate, session, tree, path, write): median %.1f ms\n", a/1000
	printf "smbclient -L + put/rm canary:                                      median %.1f ms\n", b/1000
	printf "ratio scanwarden/smbclient: %.2f (target <= 0.30)\n", a/b
	printf "floor: starting the binary (scanwarden version): median %.1f ms\n", x/1000
}'
if [ -n "$base" ]; then
	awk -v a="$(median "${bl[@]}")" -v b="$msc" -v bin="$base" 'BEGIN {
		printf "baseline %s check, alternating with the above: median %.1f ms, ratio %.2f\n", bin, a/1000, a/b
	}'
fi
python3 - "$work" "$n" "$msw" <<'PY'
import json, statistics, sys
work, n, total = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
steps = {}
for i in range(1, n + 1):
    for s in json.load(open(f"{work}/phases-{i}.json"))["steps"]:
        if s["status"] != "skipped":
            steps.setdefault(s["id"], []).append(s["ms"])
med = {k: statistics.median(v) for k, v in steps.items()}
rest = total - sum(med.values())
print("the check's phases (medians of the steps' ms from --json): " +
      ", ".join(f"{k} {v:g}" for k, v in med.items()) +
      f"; the rest of the timed check (process, state store, log-off, exit) {rest:.1f}")
PY
# What one connection needs at least — the same requests through the same SMB
# library in one process (no process start, no name lookup, no state store) —
# alternating with whole checks in one process with the store open, as serve
# runs them.
addr=$(getent hosts "$host" | awk '{print $1; exit}')
SMBFLOOR_PASSWORD="$SWLAB_PASSWORD" "$work/smbfloor" -addr "${addr:-$host}" -user "$user" -domain "$domain" -n "$n"
