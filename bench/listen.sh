#!/bin/bash
# bench/listen.sh — scanwarden's device listeners under load (issue 8):
# RSS and descriptors of the SMTP listener while 10,000 idle connections are
# held against it (targets: < 64 MB, descriptors bounded), and the rate at
# which traps are stored with batched writes (target: >= 5,000 traps/s).
# Loopback only; every loop is bounded in count and time.
# Usage: bench/listen.sh [CONNS [TRAPS [RATE]]]   (default 10000 50000 10000)
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/swbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/listenbench" ./bench/listenbench)
ulimit -n 32768 2>/dev/null || true
"$work/listenbench" -mode all -conns "${1:-10000}" -traps "${2:-50000}" -rate "${3:-10000}"
