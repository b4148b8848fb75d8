#!/bin/sh
# Tests of run.sh: the wait sweep runs the given bench, and the grab table
# shows medians and ratios to epoll (with a stand-in grabber, as the host
# has no camera). Usage: test_run.sh IOMUX-BENCH
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failures=0

# expect TEXT: the last run's output holds TEXT.
expect() {
	if ! grep -qF -- "$1" "$out"; then
		echo "test_run: missing '$1' in:" >&2
		sed 's/^/    /' "$out" >&2
		failures=$((failures + 1))
	fi
}

IOMUX_BENCH=$1 sh "$here/../run.sh" wait --descriptors 20 --ready 1,100% --repeats 1 \
	--batch-ms 1 >"$out" 2>&1
expect "| 20 | 1 |"
expect "| 20 | 20 (100%) |"

GRABBER="$here/fake_grabber.sh" sh "$here/../run.sh" grab --frames 5 --repeats 3 \
	--dir "$(mktemp -d)" /dev/fake >"$out" 2>&1
expect "| epoll | 10.00 | 1.000 | 1.000 | 1.000 |"
expect "| poll | 11.00 | 2.000 | 1.100 | 2.000 |"
expect "| select | 12.00 | 4.000 | 1.200 | 4.000 |"
expect "(3 run(s) per mode, median)"

sh "$here/../run.sh" grab >"$out" 2>&1 && failures=$((failures + 1))
expect "no device given"

if [ $failures -ne 0 ]; then
	echo "test_run: $failures failure(s)" >&2
	exit 1
fi
echo "test_run: ok"
