#!/usr/bin/env bash
# bench/soak.sh — memory of the receiver inside `scanwarden serve` over hours
# (issue 18, "Memory over hours"). Inside the lab, as root:
#   testlab/lab exec bench/soak.sh [MINUTES [OUT_DIR]]
# (defaults 180 minutes, a fresh folder under /var/tmp). It runs serve with
# [receiver] enabled (smbd its child, share on 127.0.0.1:1445) and one
# destination on the lab DC (//$SWLAB_DC_IP/scans/<sub>, alice) checked every
# 20 s; one PDF (30-90 KiB, content different each time) is put into the
# share every 5 s by smbclient, as an MFP does, and delivered there; the
# delivered copies are removed from the DC's folder as they arrive (the
# lab disk stays small). Every minute serve's VmRSS and its exact heap
# figures (/metrics: heap objects, heap bytes, goroutines; RSS split into
# anonymous and file pages; heap_sys, heap_released, stack_inuse) go to rss.tsv, every
# 15 minutes a heap profile (after a GC) to heap-MMM.pb.gz; at the end the
# first and the last profile are compared (go tool pprof -top -diff_base).
# SOAK_DAEMON=receiver runs `scanwarden receiver run` instead (the
# one-process CLI layout; no web, so no profiles): its live heap after each
# GC comes from GODEBUG=gctrace=1 (heap_alloc column, bytes; the other heap
# columns are empty). SOAK_PORT sets the share's port (default 1445).
# SOAK_EVERY sets the seconds between uploads (default 5); SOAK_SECONDS, when
# set, the run's length in seconds instead of MINUTES (scripts/test's short run).
# Bounded: MINUTES*60/SOAK_EVERY uploads at most, every wait has a limit; loopback and
# the lab DC only.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3 # the approved Go with the fixes for reachable std advisories (scripts/vulncheck); fetched through the module proxy
here=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-180}
out=${2:-$(mktemp -d /var/tmp/swsoak.XXXXXX)}
: "${SWLAB_DC_IP:?run inside the lab: testlab/lab exec bench/soak.sh (as root)}"
[ "$(id -u)" = 0 ] || { echo "bench/soak.sh: run as root (serve starts smbd)" >&2; exit 2; }
for b in smbclient curl go; do
	command -v $b >/dev/null || { echo "bench/soak.sh: $b not installed" >&2; exit 2; }
done
mkdir -p "$out"
chmod 755 "$out"
servepid=
sub="soak-$(date +%s)"
dest="$SWLAB_DIR/dc/shares/scans/$sub"
cleanup() {
	if [ -n "$servepid" ] && kill -0 "$servepid" 2>/dev/null; then
		kill "$servepid"
		wait "$servepid" 2>/dev/null || true
	fi
	# the receiver's smbd is kept across restarts (KeepSamba): end it by its pid file
	for p in $(find "$out/data" -path '*/smbd/run/smbd.pid' 2>/dev/null); do
		kill "$(cat "$p")" 2>/dev/null || true
	done
	rm -rf "$dest"
}
trap cleanup EXIT

echo "building into $out" >&2
(cd "$here" && go build -o "$out/scanwarden" ./cmd/scanwarden)
sw() { "$out/scanwarden" "$@" --data-dir "$out/data"; }
printf '%s' 'Soak.Mfp-25' >"$out/mfp.pw"
printf '%s' 'soak admin password' >"$out/admin.pw"
printf '%s' "$SWLAB_PASSWORD" >"$out/dest.pw"
chmod 600 "$out"/*.pw
mkdir -p "$dest"
chmod 777 "$dest"
sw admin set-password --password-file "$out/admin.pw" >&2
sw destination add soak "//$SWLAB_DC_IP/scans/$sub" --user "$SWLAB_DOMAIN\\alice" --password-file "$out/dest.pw" >&2
cat >"$out/serve.toml" <<TOML
data_dir = "$out/data"
listen = "127.0.0.1:18099"
log_level = "warn"
[checks]
interval = "20s"
jitter = "2s"
[receiver]
enabled = true
listen = "127.0.0.1:${SOAK_PORT:-1445}"
account = "mfp"
password_file = "$out/mfp.pw"
allow = ["127.0.0.1/32"]
quiet = "10s"
retention = "10m"
TOML
base=http://127.0.0.1:18099
rss() { awk '/VmRSS/ {print $2}' /proc/$servepid/status; }
# RSS split: anonymous pages (heap, stacks, runtime) and file pages (the
# binary's text as code paths are first run), in KiB
rssof() { awk -v k="$1:" '$1 == k {print $2}' /proc/$servepid/status; }
if [ "${SOAK_DAEMON:-serve}" = receiver ]; then
	GODEBUG=gctrace=1 "$out/scanwarden" receiver run --data-dir "$out/data" --listen "127.0.0.1:${SOAK_PORT:-1445}" --account mfp \
		--password-file "$out/mfp.pw" --allow 127.0.0.1/32 --retention 10m 2>"$out/serve.log" &
	servepid=$!
	heap() { :; }
	# the live heap after the last GC ("A->B->C MB": C), in bytes
	metric() {
		[ "$1" = go_memstats_heap_alloc_bytes ] || return 0
		grep -o 'gc [0-9]* @.*' "$out/serve.log" | tail -1 | sed -E 's/.* [0-9]+->[0-9]+->([0-9]+) MB.*/\1/' | awk '{printf "%d", $1 * 1048576}'
	}
else
	"$out/scanwarden" serve --config "$out/serve.toml" 2>"$out/serve.log" &
	servepid=$!
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "$base/healthz" && break
		sleep 0.2
	done
	curl -s -c "$out/cookies" -o /dev/null -d 'user=admin' --data-urlencode "password@$out/admin.pw" "$base/login"
	heap() { curl -s -b "$out/cookies" -o "$out/heap-$1.pb.gz" "$base/debug/pprof/heap?gc=1"; }
	# exact heap figures (the profiles sample one allocation per 512 KiB)
	metric() { curl -s -b "$out/cookies" "$base/metrics" | awk -v m="$1" '$1 == m {printf "%d", $2}'; }
fi
printf 'minute\trss_kib\tuploads\tdelivered\theap_objects\theap_alloc\tgoroutines\trss_anon\trss_file\theap_sys\theap_released\tstack_inuse\n' >"$out/rss.tsv"

row() {
	printf '%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$(rss)" "$uploads" "$2" \
		"$(metric go_memstats_heap_objects)" "$(metric go_memstats_heap_alloc_bytes)" "$(metric go_goroutines)" \
		"$(rssof RssAnon)" "$(rssof RssFile)" "$(metric go_memstats_heap_sys_bytes)" \
		"$(metric go_memstats_heap_released_bytes)" "$(metric go_memstats_stack_inuse_bytes)" >>"$out/rss.tsv"
}
every=${SOAK_EVERY:-5}
uploads=0
start=$(date +%s)
secs=${SOAK_SECONDS:-$((minutes * 60))}
end=$((start + secs))
next_min=0
for ((i = 0; i < secs / every; i++)); do
	now=$(date +%s)
	[ "$now" -lt "$end" ] || break
	kill -0 $servepid || { echo "serve died:" >&2; tail "$out/serve.log" >&2; exit 1; }
	m=$(((now - start) / 60))
	if [ "$m" -ge "$next_min" ]; then
		delivered=$(find "$dest" -type f | wc -l)
		row "$m" "$delivered"
		find "$dest" -type f -mmin +2 -delete
		if ((m % 15 == 0)); then heap "$(printf %03d "$m")"; fi
		next_min=$((m + 1))
	fi
	f="$out/scan.pdf"
	{
		printf '%%PDF-1.4\n1 0 obj\n<< /N %d >>\nstream\n' "$i"
		head -c $((30 * 1024 + (i % 60) * 1024)) /dev/urandom | base64
		printf 'endstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n'
	} >"$f"
	if timeout 30 smbclient //127.0.0.1/scans -p "${SOAK_PORT:-1445}" -U "mfp%$(cat "$out/mfp.pw")" --use-kerberos=disabled -m SMB3 \
		-c "cd soak; put $f doc$(printf %05d $i).pdf" >/dev/null 2>>"$out/upload.err"; then
		uploads=$((uploads + 1))
	fi
	sleep "$every"
done
m=$((($(date +%s) - start) / 60))
row "$m" "$(find "$dest" -type f | wc -l)"
heap "$(printf %03d "$m")-end"
sw receiver list --json >"$out/list.json" 2>/dev/null || true
echo "== $out/rss.tsv (RSS in KiB)" >&2
cat "$out/rss.tsv"
ls "$out"/heap-*.pb.gz >/dev/null 2>&1 || exit 0
first=$(ls "$out"/heap-*.pb.gz | head -1)
last=$(ls "$out"/heap-*.pb.gz | tail -1)
echo "== heap growth, $(basename "$first") -> $(basename "$last") (inuse_space)"
go tool pprof -top -inuse_space -diff_base "$first" "$out/scanwarden" "$last" 2>/dev/null | head -25
echo "== heap at the end (inuse_space)"
go tool pprof -top -inuse_space "$out/scanwarden" "$last" 2>/dev/null | head -20
