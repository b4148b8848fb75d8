#!/bin/sh
# Guest side of the rt_latency benchmark (the application of guest.toml, booted by
# bench/guest.sh).  A SCHED_OTHER busy loop competes for the
# CPU throughout, as an application would.
PERIOD_US=${PERIOD_US:-2000}
JOBS=${JOBS:-2000}
RT=${RT:-/rt}

sh -c 'while :; do :; done' &
hog=$!
insmod "$RT/rtsched.ko"
insmod "$RT/rtsched_fp.ko"
echo "==== rt_latency begin ===="
rt_jitter fp "$PERIOD_US" "$JOBS"
rmmod rtsched_fp
rt_jitter fifo "$PERIOD_US" "$JOBS"
cyclictest -m -p 50 -i "$PERIOD_US" -l "$JOBS" -q -h 20000 2>&1 |
	sed 's/^/cyclictest /'
echo "==== rt_latency end ===="
# Server switches: Table III with its tasks, traced.
insmod "$RT/rtsched_hsf.ko"
rtctl run "$RT/table3.toml" >/dev/null
echo "==== rtsched-trace begin ===="
rtctl trace
echo "==== rtsched-trace end ===="
kill $hog
