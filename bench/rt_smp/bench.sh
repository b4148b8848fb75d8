#!/bin/sh
# bench/rt_smp in the two-vCPU guest: timing.toml under each multicore plugin, twice in a
# row in one load: the first run ("calibrate") measures the overhead a job costs, the
# second ("judge") is checked against the analysis with that overhead charged
# (analyze.py).  Each trace is printed between
#   ==== rt_smp PLUGIN ROUND begin ==== / ==== rt_smp PLUGIN ROUND end rc=N ====
RT=${RT:-/rt}
BEAT_US=${BEAT_US:-20}
cpus=$(grep -c ^processor /proc/cpuinfo)
# A timer every BEAT_US on each CPU: no vCPU waits longer than the others' shares of a beat
# (guest.toml).  analyze.py reads the beat from this line.
insmod "$RT/metronome.ko" period_us="$BEAT_US"
echo "==== rt_smp metronome period_us=$BEAT_US cpus=$cpus ===="

# plugin module, its parameters, the configuration's plugin; partitioned plugins place
# worst-fit (first-fit would put the whole set on CPU 0)
run_plugin() {
	module=$1 params=$2 name=$3
	case $name in
	partitioned-*) echo 'assignment = "worst-fit"' ;;
	esac > /tmp/timing.toml
	sed -e "s/\"partitioned-fp\"/\"$name\"/" -e "s/^cpus = .*/cpus = $cpus/" "$RT/timing.toml" >> /tmp/timing.toml
	insmod "$RT/rtsched.ko" rt_cpus="$cpus" overrun_slack_us=4000
	# shellcheck disable=SC2086 # the parameters are words
	insmod "$RT/rtsched_$module.ko" $params
	for round in calibrate judge; do
		rtctl trace >/dev/null
		rtctl run /tmp/timing.toml
		rc=$?
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
rmmod metronome
