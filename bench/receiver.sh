#!/usr/bin/env bash
# Benchmarks of the receiver (issue 10), inside the lab as root:
#   testlab/lab exec bench/receiver.sh [SIZE_MIB] [N]
# 1. forward one SIZE_MIB (default 1024) scan to the lab DC's share through the
#    forwarder (temp name, rename, read back, SHA-256) vs `smbclient put` of
#    the same file, alternating, 3 rounds; the forwarder's peak RSS.
# 2. N (default 1000) PDFs put by smbclient, one logon each, into a running
#    receiver: close -> catalogued p50/p90/p99.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
cd "$(dirname "$0")/.."
size="${1:-1024}"
n="${2:-1000}"
: "${SWLAB_DC_IP:?run inside the lab: testlab/lab exec bench/receiver.sh (as root)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/rxbench" ./bench/rxbench
"$work/rxbench" forward "$size"
"$work/rxbench" ingest "$n"
