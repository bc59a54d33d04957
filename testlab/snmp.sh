#!/bin/bash
# testlab/snmp.sh — the lab's SNMP peers (called by testlab/lab).
#
#   testlab/snmp.sh up    start snmpsimd (v2c, one community per .snmprec in
#                         testlab/snmp/) on $SWLAB_SNMPSIM_IP:161 and net-snmp
#                         snmpd (SNMPv3 authPriv) on $SWLAB_SNMPD_IP:161, both
#                         inside `ip netns exec $SWLAB_NS_SRV`; wait until both
#                         answer; print `export NAME=value` lines on stdout.
#   testlab/snmp.sh down  stop them (pid files under $SWLAB_DIR/snmp*); safe
#                         when nothing runs.
#
# Environment: SWLAB_DIR (lab state), SWLAB_NS_SRV, SWLAB_SNMPSIM_IP,
# SWLAB_SNMPD_IP. Both addresses are already up in the namespace. Without
# SWLAB_NS_SRV (empty) the daemons run in the current namespace, which is how
# a developer runs them on 127.0.0.1. Diagnostics go to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${SWLAB_DIR:?SWLAB_DIR must be set}"
SWLAB_NS_SRV=${SWLAB_NS_SRV-swlab-srv}
SWLAB_SNMPSIM_IP=${SWLAB_SNMPSIM_IP:-10.77.0.40}
SWLAB_SNMPD_IP=${SWLAB_SNMPD_IP:-10.77.0.41}
SWLAB_SNMP_PORT=${SWLAB_SNMP_PORT:-161}
simdir=$SWLAB_DIR/snmpsim
snmpddir=$SWLAB_DIR/snmpd
v3user=swlab-v3

log() { echo "snmp.sh: $*" >&2; }

# ns is the command prefix that runs inside the server namespace. It is an
# array, not a function, so that `"${ns[@]}" daemon &` leaves $! = the
# daemon's pid (ip netns exec execs it).
ns=()
if [ -n "$SWLAB_NS_SRV" ]; then ns=(ip netns exec "$SWLAB_NS_SRV"); fi
inns() { "${ns[@]}" "$@"; }

stop_pidfile() { # FILE NAME
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f" 2>/dev/null || true)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			log "$2 (pid $pid) did not stop, killing"
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$f"
}

down() {
	stop_pidfile "$simdir/snmpsimd.pid" snmpsimd
	stop_pidfile "$snmpddir/snmpd.pid" snmpd
}

randpass() { head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20; }

up() {
	for b in snmpsimd snmpd snmpget; do
		command -v "$b" >/dev/null || { log "$b not installed (apt-get install snmpsim snmpd snmp)"; exit 1; }
	done
	down
	# snmpsimd: drops privileges to nobody; its cache must be nobody's, and
	# the data directory readable by it.
	mkdir -p "$simdir/cache"
	chown -R nobody:nogroup "$simdir/cache"
	chmod -R a+rX "$here/snmp"
	"${ns[@]}" snmpsimd --v2c-arch --data-dir="$here/snmp" --cache-dir="$simdir/cache" \
		--agent-udpv4-endpoint="$SWLAB_SNMPSIM_IP:$SWLAB_SNMP_PORT" \
		--process-user=nobody --process-group=nogroup \
		--logging-method=file:"$simdir/snmpsimd.log" </dev/null >/dev/null 2>&1 &
	echo $! >"$simdir/snmpsimd.pid"

	# snmpd: own config and persistent dir; the v3 user's passphrases are
	# made once per lab directory and kept there.
	mkdir -p "$snmpddir/persist"
	chmod 700 "$snmpddir"
	if [ ! -f "$snmpddir/v3.env" ]; then
		umask 077
		printf 'V3_AUTH=%s\nV3_PRIV=%s\n' "$(randpass)" "$(randpass)" >"$snmpddir/v3.env"
	fi
	# shellcheck disable=SC1091
	. "$snmpddir/v3.env"
	sed -e "s/@ADDR@/$SWLAB_SNMPD_IP:$SWLAB_SNMP_PORT/" -e "s/@USER@/$v3user/" \
		"$here/snmp/snmpd.conf.tmpl" >"$snmpddir/snmpd.conf"
	# createUser in the (0600) main config: the keys are derived at each start.
	echo "createUser $v3user SHA \"$V3_AUTH\" AES \"$V3_PRIV\"" >>"$snmpddir/snmpd.conf"
	chmod 600 "$snmpddir/snmpd.conf"
	"${ns[@]}" env SNMP_PERSISTENT_DIR="$snmpddir/persist" MIBS= \
		snmpd -f -C -I -smux -c "$snmpddir/snmpd.conf" -Lf "$snmpddir/snmpd.log" -p "$snmpddir/snmpd.pid" \
		</dev/null >/dev/null 2>&1 &
	echo $! >"$snmpddir/snmpd.pid.launch"

	# Wait (bounded: 15 s) until both answer.
	local ok_sim=0 ok_d=0
	for _ in $(seq 1 75); do
		if [ $ok_sim = 0 ] && inns snmpget -v2c -c kyocera-idle -t 1 -r 0 -On "$SWLAB_SNMPSIM_IP:$SWLAB_SNMP_PORT" 1.3.6.1.2.1.1.5.0 >/dev/null 2>&1; then
			ok_sim=1
		fi
		if [ $ok_d = 0 ] && inns snmpget -v3 -l authPriv -u "$v3user" -a SHA -A "$V3_AUTH" -x AES -X "$V3_PRIV" \
			-t 1 -r 0 -On "$SWLAB_SNMPD_IP:$SWLAB_SNMP_PORT" 1.3.6.1.2.1.1.5.0 >/dev/null 2>&1; then
			ok_d=1
		fi
		[ $ok_sim = 1 ] && [ $ok_d = 1 ] && break
		sleep 0.2
	done
	[ -f "$snmpddir/snmpd.pid" ] || mv -f "$snmpddir/snmpd.pid.launch" "$snmpddir/snmpd.pid"
	rm -f "$snmpddir/snmpd.pid.launch"
	if [ $ok_sim = 0 ]; then log "snmpsimd does not answer on $SWLAB_SNMPSIM_IP:$SWLAB_SNMP_PORT (see $simdir/snmpsimd.log)"; down; exit 1; fi
	if [ $ok_d = 0 ]; then log "snmpd does not answer on $SWLAB_SNMPD_IP:$SWLAB_SNMP_PORT (see $snmpddir/snmpd.log)"; down; exit 1; fi
	log "snmpsimd on $SWLAB_SNMPSIM_IP:$SWLAB_SNMP_PORT, snmpd (v3 $v3user) on $SWLAB_SNMPD_IP:$SWLAB_SNMP_PORT"

	local communities
	communities=$(cd "$here/snmp" && ls -1 ./*.snmprec | sed -e 's|^\./||' -e 's|\.snmprec$||' | tr '\n' ' ' | sed 's/ $//')
	cat <<OUT
export SWLAB_SNMPSIM_IP=$SWLAB_SNMPSIM_IP
export SWLAB_SNMPD_IP=$SWLAB_SNMPD_IP
export SWLAB_SNMP_PORT=$SWLAB_SNMP_PORT
export SWLAB_SNMPSIM_COMMUNITIES='$communities'
export SWLAB_SNMP_V3_USER=$v3user
export SWLAB_SNMP_V3_AUTH=$V3_AUTH
export SWLAB_SNMP_V3_AUTH_PROTO=SHA
export SWLAB_SNMP_V3_PRIV=$V3_PRIV
export SWLAB_SNMP_V3_PRIV_PROTO=AES
OUT
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
