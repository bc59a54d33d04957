# bench/snmpsim.sh — sourced by the benchmarks that poll simulated devices.
#
# start_snmpsim COUNT BASE COMMUNITY starts one snmpsimd serving COUNT
# endpoints, 127.0.0.1:BASE onwards, from testlab/snmp (LAB-NOTES:
# --args-from-file, raise ulimit -n), and waits (at most 30 s) until the
# last endpoint answers COMMUNITY; it exits the script when snmpsimd dies or
# never answers. It sets simpid, which the caller's cleanup ends, and needs
# $here (the repository) and $work (the run's scratch folder).
start_snmpsim() {
	local count=$1 base=$2 community=$3
	local last=$((base + count - 1)) i
	ulimit -n 8192
	mkdir -p "$work/cache"
	{
		echo "--v2c-arch"
		echo "--data-dir=$here/testlab/snmp"
		echo "--cache-dir=$work/cache"
		echo "--logging-method=null"
		for ((i = 0; i < count; i++)); do echo "--agent-udpv4-endpoint=127.0.0.1:$((base + i))"; done
	} >"$work/args"
	# As root snmpsimd must drop privileges (these must be on the command
	# line: it checks them before reading --args-from-file).
	local drop=()
	if [ "$(id -u)" = 0 ]; then
		chown -R nobody:nogroup "$work/cache"
		drop=(--process-user=nobody --process-group=nogroup)
	fi
	snmpsimd "${drop[@]}" --args-from-file="$work/args" </dev/null >"$work/snmpsimd.log" 2>&1 &
	simpid=$!
	for _ in $(seq 1 150); do # at most 30 s
		if snmpget -v2c -c "$community" -t 0.5 -r 0 "127.0.0.1:$last" 1.3.6.1.2.1.1.5.0 >/dev/null 2>&1; then break; fi
		kill -0 "$simpid" 2>/dev/null || { echo "snmpsimd died:" >&2; tail "$work/snmpsimd.log" >&2; exit 1; }
		sleep 0.2
	done
	snmpget -v2c -c "$community" -t 1 -r 0 "127.0.0.1:$last" 1.3.6.1.2.1.1.5.0 >/dev/null || { echo "snmpsimd not answering" >&2; exit 1; }
}
