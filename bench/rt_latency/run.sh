#!/bin/sh
# rt_latency benchmark: release jitter of a periodic task under the rtsched
# fp plugin, of a plain SCHED_FIFO clock_nanosleep() loop and of
# cyclictest (rt-tests) in the same guest, plus the latency of hsf-fp
# server switches.  Needs make -C rt and make -C bench/rt_latency first.
#   OUT  work directory (default bench/rt_latency/build)
# rt/tests/guest/boot-qemu.sh documents KERNEL, BUSYBOX and ICOUNT.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/build}
mkdir -p "$OUT"
"$here/../../rt/tests/guest/boot-qemu.sh" "$OUT" "$here/bench.sh" \
	"$OUT/rt_jitter" "${CYCLICTEST:-/usr/bin/cyclictest}"
python3 "$here/analyze.py" "$OUT/console.log"
