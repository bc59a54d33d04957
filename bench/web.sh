#!/usr/bin/env bash
# bench/web.sh — wrk against the web admin's dashboard and a destination page,
# 50 connections, with 300 destinations (with reports), 100 devices, 100k events
# and 10k scans. Target: p99 < 50 ms on 2 cores. wrk asks for gzip as a browser does.
#   bench/web.sh [SECONDS]          web over an in-memory fleet (bench/webbench)
#   BENCH_URL=http://127.0.0.1:8080 BENCH_COOKIE='scanwarden=…' bench/web.sh
#                                   a running daemon (its data filled beforehand)
set -Eeuo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v wrk >/dev/null || { echo "web.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
if [[ -z ${BENCH_URL:-} ]]; then
	go build -o /tmp/webbench.$$ ./bench/webbench
	out=$(mktemp)
	/tmp/webbench.$$ >"$out" &
	pid=$!
	trap 'kill $pid 2>/dev/null; rm -f /tmp/webbench.$$ "$out"' EXIT
	for _ in $(seq 100); do [[ -s $out ]] && break; sleep 0.1; done
	read -r BENCH_URL BENCH_COOKIE <"$out"
fi
dest=${BENCH_DEST:-dest-009}
for path in / "/destinations/$dest"; do
	echo "== GET $path (50 connections, 2 threads, ${secs}s)"
	wrk -t2 -c50 -d"${secs}s" --latency -H "Cookie: $BENCH_COOKIE" -H "Accept-Encoding: gzip" "$BENCH_URL$path" | grep -E 'Latency|50%|90%|99%|Requests/sec|Non-2xx|Socket errors'
done
