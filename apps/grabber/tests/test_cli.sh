#!/bin/sh
# Command-line behaviour of the built grabber on a host without cameras:
# exit statuses, messages for bad input, and that nothing is written when
# capture cannot start. Usage: test_cli.sh GRABBER FRAMESTAT
GRABBER=$1
FRAMESTAT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

# expect NAME STATUS TEXT COMMAND...: runs COMMAND, wants exit STATUS and
# TEXT somewhere in its stdout or stderr.
expect() {
	name=$1
	status=$2
	text=$3
	shift 3
	"$@" >"$WORK/out" 2>&1
	got=$?
	if [ $got -ne "$status" ] || ! grep -qF -- "$text" "$WORK/out"; then
		echo "test_cli: $name: exit $got (wanted $status), output:" >&2
		sed 's/^/    /' "$WORK/out" >&2
		failures=$((failures + 1))
	fi
}

expect help 0 "--mux select|poll|epoll" "$GRABBER" --help
expect bad-mux 2 "--mux must be select, poll or epoll" "$GRABBER" --mux kqueue
expect raw-without-output 2 "--raw needs --output" "$GRABBER" --raw
expect missing-device 1 "cannot open $WORK/video9: No such file or directory" \
	"$GRABBER" --frames 1 --output "$WORK/frames" "$WORK/video9"
expect not-v4l2 1 "/dev/null: not a V4L2 device" "$GRABBER" --frames 1 /dev/null
: >"$WORK/regular"
expect regular-file 1 "$WORK/regular: not a V4L2 device" "$GRABBER" "$WORK/regular"
expect unwritable-output 1 "is not a writable directory" \
	"$GRABBER" --output "$WORK/regular" /dev/null
if [ -n "$(ls -A "$WORK/frames")" ]; then
	echo "test_cli: a failed start left files in $WORK/frames" >&2
	failures=$((failures + 1))
fi

printf 'P6\n2 1\n255\n\377\0\0\0\0\377' >"$WORK/tiny.ppm"
expect framestat-ppm 0 "ppm=2x1 maxval=255 header=11 complete=1" "$FRAMESTAT" "$WORK/tiny.ppm"
expect framestat-bands 0 "colours=2 mean=127,0,127" "$FRAMESTAT" "$WORK/tiny.ppm"
printf 'P6\n2 1\n255\n\377' >"$WORK/short.ppm"
expect framestat-short 0 "complete=0" "$FRAMESTAT" "$WORK/short.ppm"
expect framestat-missing 1 "error=No such file or directory" "$FRAMESTAT" "$WORK/none.ppm"

if [ $failures -ne 0 ]; then
	echo "test_cli: $failures failure(s)" >&2
	exit 1
fi
echo "test_cli: ok"
