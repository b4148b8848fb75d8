#!/bin/sh
# Stands in for the grabber in test_run.sh: answers like the real one, with
# fixed times per mux mode (epoll 10 s, poll 11 s, select 12 s; CPU 1, 2,
# 4 s) so the runner's table can be checked.
mux=epoll
while [ $# -gt 0 ]; do
	case "$1" in
	--mux) mux=$2; shift 2 ;;
	--output) mkdir -p "$2"; shift 2 ;;
	*) shift ;;
	esac
done
case $mux in
epoll) seconds=10 cpu=1 ;;
poll) seconds=11 cpu=2 ;;
select) seconds=12 cpu=4 ;;
esac
echo "iomux-bench grab first-frame device=/dev/fake seq=0 t_boot=1.000000 t_mono=1.000000"
echo "grabber: done mux=$mux devices=1 frames=5 corrupted=0 seconds=$seconds.000000 cpu_seconds=$cpu.000000"
