#!/bin/sh
# Guest side of bench/rt_boot: load an empty module, then the scheduler as the camera demo
# does at boot (core, plugin, configuration), each step between two kernel-log marks, for
# ROUNDS rounds (the first is the first load in this boot), unloading between rounds.
# `rtctl status` alone is the floor of any rtctl step: starting the program.  Then the
# same three in one program: rtctl load --module ... (onestep).
ROUNDS=${ROUNDS:-5}
RT=${RT:-/rt}
mark() { echo "rtboot: $1" > /dev/kmsg; }
step() {
	name=$1; shift
	mark "$name.start"
	"$@" > /dev/null || echo "rtboot: $name failed"
	mark "$name.end"
}
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	mark "round $i"
	step empty insmod "$RT/rtboot_empty.ko"
	step core insmod "$RT/rtsched.ko"
	step plugin insmod "$RT/rtsched_hsf.ko"
	step config rtctl load "$RT/table3.toml"
	step rtctl rtctl status
	rtctl clear
	rmmod rtsched_hsf rtsched
	step onestep rtctl load --module "$RT/rtsched.ko" --module "$RT/rtsched_hsf.ko" "$RT/table3.toml"
	rtctl clear
	rmmod rtsched_hsf rtsched rtboot_empty
	i=$((i + 1))
done
echo "==== rtboot log begin ===="
dmesg | grep -E "rtboot|initcall .*\[(rtsched|rtsched_hsf|rtboot_empty)\]"
echo "==== rtboot log end ===="
