#!/bin/sh
# Guest side of the grabber test: runs inside the reference device (busybox
# initramfs) once vivid is loaded, and prints what it saw between marker
# lines on the console, for tests/guest_log_check.py to judge on the host.
#
# Needs on PATH: grabber, framestat and v4l2-button (make -C apps/grabber
# static), busybox applets (timeout, mount, sed, ls, sleep, kill, dmesg,
# readlink). Needs /dev (devtmpfs), /sys, /proc, a writable /tmp and four
# vivid capture devices (vivid n_devs=4 node_types=0x1,0x1,0x1,0x1); the
# last case unbinds vivid, so run this script last.
#
# Output, one block per case:
#   @@ case NAME begin
#   out: LINE / err: LINE     the grabber's stdout and stderr
#   @@ case NAME rc=STATUS
#   FRAME ...                 framestat line of every file left in the
#                             case's directory, temporary files included
#   @@ case NAME end
# framed by "@@ grabber-test begin ..." and "@@ grabber-test end".
#
# Interrupted cases start the grabber in the background under busybox
# timeout, which runs the grabber in its own process ($! is the grabber).
#
# Environment: GRABBER_TEST_FRAMES (default 3), GRABBER_TEST_SIZE (default
# 640x360, a size vivid's webcam input offers), GRABBER_TEST_DIR (default
# /tmp/grabber-test).

FRAMES=${GRABBER_TEST_FRAMES:-3}
SIZE=${GRABBER_TEST_SIZE:-640x360}
WORK=${GRABBER_TEST_DIR:-/tmp/grabber-test}
CASE_TIMEOUT=120

capture_devices() {
	for node in /sys/class/video4linux/video*; do
		case "$(cat "$node/name" 2>/dev/null)" in
		*vid-cap) echo "/dev/${node##*/}" ;;
		esac
	done
}

list_frames() {
	[ -d "$1" ] || return 0
	for name in $(ls -A "$1"); do
		framestat "$1/$name"
	done
}

# report NAME STATUS [DIR]: prints a finished case's block.
report() {
	sed 's/^/out: /' "$WORK/stdout"
	sed 's/^/err: /' "$WORK/stderr"
	echo "@@ case $1 rc=$2"
	[ -n "$3" ] && list_frames "$3"
	echo "@@ case $1 end"
}

# run_case NAME DIR GRABBER-ARGUMENT...: runs the grabber to the end.
run_case() {
	name=$1
	dir=$2
	shift 2
	echo "@@ case $name begin"
	timeout $CASE_TIMEOUT grabber "$@" >"$WORK/stdout" 2>"$WORK/stderr"
	report "$name" $? "$dir"
}

# is_running PID: the process exists and is not a zombie (a finished
# background job stays one until waited for, and kill -0 still succeeds).
is_running() {
	[ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# wait_for PID SECONDS CONDITION: until the shell test CONDITION holds,
# PID has ended or SECONDS have passed.
wait_for() {
	tries=0
	while ! eval "$3" && [ $tries -lt $(($2 * 5)) ] && is_running "$1"; do
		sleep 0.2
		tries=$((tries + 1))
	done
}

# run_interrupted NAME DIR ACTION GRABBER-ARGUMENT...: starts an endless
# capture, runs the shell command ACTION (with $pid set) once two frames
# are saved, then gives the grabber 10 s to end before killing it.
run_interrupted() {
	name=$1
	dir=$2
	action=$3
	shift 3
	echo "@@ case $name begin"
	timeout $CASE_TIMEOUT grabber "$@" >"$WORK/stdout" 2>"$WORK/stderr" &
	pid=$!
	wait_for $pid 30 '[ "$(ls "$dir" 2>/dev/null | wc -l)" -ge 2 ]'
	eval "$action"
	wait_for $pid 10 false
	if is_running $pid; then
		echo "test: still running 10 s after '$action', killed" >>"$WORK/stderr"
		kill -KILL $pid
	fi
	wait $pid
	report "$name" $? "$dir"
}

rm -rf "$WORK"
mkdir -p "$WORK"
DEVICES=$(capture_devices)
FIRST=$(echo "$DEVICES" | head -n 1)
echo "@@ grabber-test begin frames=$FRAMES size=$SIZE devices=$(echo $DEVICES | tr ' ' ',')"

for mux in select poll epoll; do
	run_case "mux-$mux" "$WORK/$mux" --mux $mux --frames "$FRAMES" --size "$SIZE" \
		--output "$WORK/$mux" "$FIRST"
done

run_case multi-device "$WORK/multi" --frames "$FRAMES" --size "$SIZE" --output "$WORK/multi" \
	$DEVICES

run_case raw "$WORK/raw" --frames 2 --size "$SIZE" --format YUYV --raw --output "$WORK/raw" \
	"$FIRST"

run_case ready-marker "" --frames 1 --ready-marker "CUSTOM READY MARK" "$FIRST"

run_case missing-device "$WORK/missing" --frames 1 --output "$WORK/missing" /dev/video99

run_case unsupported-format "$WORK/nv12" --frames 1 --format NV12 --output "$WORK/nv12" \
	"$FIRST"

run_case format-not-offered "$WORK/abcd" --frames 1 --format ABCD --raw --output "$WORK/abcd" \
	"$FIRST"

# A 1 MiB file system holds one 640x360 PPM (691,215 bytes), not two.
mkdir -p "$WORK/full"
mount -t tmpfs -o size=1m tmpfs "$WORK/full"
run_case disk-full "$WORK/full" --frames 20 --size "$SIZE" --output "$WORK/full" "$FIRST"

run_interrupted sigterm "$WORK/sigterm" 'kill -TERM $pid' --frames 0 --size "$SIZE" \
	--output "$WORK/sigterm" "$FIRST"

# A shell starts background jobs with SIGINT ignored; SIGINT must still
# stop the grabber cleanly.
run_interrupted sigint "$WORK/sigint" 'kill -INT $pid' --frames 0 --size "$SIZE" \
	--output "$WORK/sigint" "$FIRST"

echo "@@ case kmsg begin"
dmesg | grep -F "first-frame" | sed 's/^/kmsg: /'
echo "@@ case kmsg rc=0"
echo "@@ case kmsg end"

# A camera that goes away mid-capture, once per mechanism: vivid's
# Disconnect button unregisters one instance's node under the open grabber
# (select sees it readable, poll and epoll see an error and a hang-up, and
# the next ioctl fails with ENODEV).
device_number=2
for mux in select poll epoll; do
	device=$(echo "$DEVICES" | sed -n ${device_number}p)
	device_number=$((device_number + 1))
	run_interrupted "disconnected-$mux" "$WORK/disconnected-$mux" \
		"v4l2-button $device Disconnect" \
		--mux $mux --frames 0 --size "$SIZE" --output "$WORK/disconnected-$mux" "$device"
done

# The driver itself going away: unbinding vivid removes every instance.
platform=$(readlink "/sys/class/video4linux/${FIRST##*/}/device")
run_interrupted unbound "$WORK/unbound" \
	"echo ${platform##*/} > /sys/bus/platform/drivers/vivid/unbind" \
	--frames 0 --size "$SIZE" --output "$WORK/unbound" "$FIRST"

echo "@@ grabber-test end"
