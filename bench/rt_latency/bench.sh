#!/bin/sh
# Guest side of the rt_latency benchmark (the application of guest.toml or
# guest-smp.toml, booted by bench/guest.sh).  A SCHED_OTHER busy loop
# competes for each CPU throughout, as an application would.  Every CPU in
# turn is the real-time CPU (rtsched's rt_cpu): its section of the console
# is "==== rt_latency begin cpu=N ====" .. "==== rt_latency end ====", then
# its traced Table III run.
PERIOD_US=${PERIOD_US:-2000}
JOBS=${JOBS:-2000}
RT=${RT:-/rt}
CPUS=$(grep -c ^processor /proc/cpuinfo)
# A multi-CPU guest under -icount (guest-smp.toml) names the metronome's beat.
[ -z "${BEAT_US:-}" ] || insmod "$RT/metronome.ko" period_us="$BEAT_US"

hogs=
cpu=0
while [ "$cpu" -lt "$CPUS" ]; do
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hogs="$hogs $!"
	cpu=$((cpu + 1))
done
cpu=0
while [ "$cpu" -lt "$CPUS" ]; do
	insmod "$RT/rtsched.ko" rt_cpu="$cpu"
	insmod "$RT/rtsched_fp.ko"
	echo "==== rt_latency begin cpu=$cpu ===="
	rt_jitter fp "$PERIOD_US" "$JOBS"
	# The same beside 250 reservations no thread runs, then beside them and
	# a user's loop reading the status (rt_jitter status drops to nobody).
	sh "$RT/reservations.sh" 250 > /tmp/reservations.toml
	rtctl load /tmp/reservations.toml > /dev/null
	rt_jitter fp "$PERIOD_US" "$JOBS" fp_reserved
	rt_jitter status &
	reader=$!
	rt_jitter fp "$PERIOD_US" "$JOBS" fp_reader
	kill $reader
	wait $reader 2>/dev/null
	rtctl clear
	rmmod rtsched_fp
	taskset -c "$cpu" rt_jitter fifo "$PERIOD_US" "$JOBS"
	cyclictest -m -p 50 -a "$cpu" -i "$PERIOD_US" -l "$JOBS" -q -h 20000 2>&1 |
		sed 's/^/cyclictest /'
	echo "==== rt_latency end ===="
	# Server switches: Table III with its tasks, traced.  The recorder keeps
	# the jitter runs' records until read (its ring would be full): out first.
	rtctl trace > /dev/null
	insmod "$RT/rtsched_hsf.ko"
	rtctl run "$RT/table3.toml" >/dev/null
	echo "==== rtsched-trace begin ===="
	rtctl trace
	echo "==== rtsched-trace end ===="
	rmmod rtsched_hsf
	rmmod rtsched
	cpu=$((cpu + 1))
done
kill $hogs
