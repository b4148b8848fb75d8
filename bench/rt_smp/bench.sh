#!/bin/sh
# bench/rt_smp in the two-vCPU guest: timing.toml under each multicore plugin, twice in a
# row in one load: the first run ("calibrate") measures the overhead a job costs, the
# second ("judge") is checked against the analysis with that overhead charged
# (analyze.py).  Each trace is printed between
#   ==== rt_smp PLUGIN ROUND begin ==== / ==== rt_smp PLUGIN ROUND end rc=N ====
RT=${RT:-/rt}
. "$RT/smp_tcg.sh"
smp_tcg_start
cpus=$(grep -c ^processor /proc/cpuinfo)

# The guest's CLOCK_MONOTONIC (the trace's clock) on the console, whose arrival the host
# stamps: analyze.py matches the two clocks by these lines.
clock() {
	echo "==== rt_smp clock $(grep -m1 'now at' /proc/timer_list) ===="
}

# plugin module, its parameters, the configuration's plugin; partitioned plugins place
# worst-fit (first-fit would put the whole set on CPU 0)
run_plugin() {
	module=$1 params=$2 name=$3
	case $name in
	partitioned-*) echo 'assignment = "worst-fit"' ;;
	esac > /tmp/timing.toml
	sed -e "s/\"partitioned-fp\"/\"$name\"/" "$RT/timing.toml" >> /tmp/timing.toml
	insmod "$RT/rtsched.ko" rt_cpus="$cpus" overrun_slack_us=4000
	# shellcheck disable=SC2086 # the parameters are words
	insmod "$RT/rtsched_$module.ko" $params
	for round in calibrate judge; do
		rtctl trace >/dev/null
		clock
		rtctl run /tmp/timing.toml
		rc=$?
		clock
		echo "==== rt_smp $name $round begin ===="
		rtctl trace
		echo "==== rt_smp $name $round end rc=$rc ===="
	done
	rmmod "rtsched_$module"
	rmmod rtsched
}

run_plugin fp partitioned=1 partitioned-fp
run_plugin edf partitioned=1 partitioned-edf
run_plugin fp global=1 global-fp
run_plugin edf global=1 global-edf
