#!/bin/sh
# Runner of the I/O multiplexing benchmark; POSIX sh, so it runs on the host
# and in the reference device's busybox initramfs alike.
#
#   run.sh wait [IOMUX-BENCH-OPTION]...
#       wait cost of select, poll and epoll for 100 ... 20,000 descriptors
#       (iomux-bench; see its --help). Raises the open-file limit first.
#   run.sh grab [--frames N] [--size WxH] [--fps N] [--repeats N] [--dir DIR] DEVICE...
#       grabs N frames (default 1000) from the devices and saves them as PPM,
#       once per mux mode and repeat, and prints a table with ratios to epoll,
#       like the select/poll/epoll grabber table of the seed paper. Needs V4L2
#       devices (vivid in the guest). Frames are deleted after each run.
#
# Programs: $IOMUX_BENCH (default: iomux-bench on PATH, else build/iomux-bench
# beside this script) and $GRABBER (default: grabber on PATH, else
# apps/grabber/build/grabber).

here=$(dirname "$0")

find_program() {  # find_program NAME FALLBACK
	if command -v "$1" >/dev/null 2>&1; then
		command -v "$1"
	else
		echo "$2"
	fi
}

run_wait() {
	bench=${IOMUX_BENCH:-$(find_program iomux-bench "$here/build/iomux-bench")}
	# 20,000 pipes need 40,000 descriptors; the bench raises its own soft
	# limit, and as root the hard one too.
	ulimit -n 50000 2>/dev/null || ulimit -n "$(ulimit -H -n)" 2>/dev/null
	echo "iomux-bench on $(uname -sr), $(nproc 2>/dev/null || echo '?') CPUs"
	"$bench" "$@"
}

# median: the middle of the numbers on stdin.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# field NAME: the value of NAME=VALUE in the summary line on stdin.
field() {
	tr ' ' '\n' | sed -n "s/^$1=//p"
}

run_grab() {
	grabber=${GRABBER:-$(find_program grabber "$here/../../apps/grabber/build/grabber")}
	frames=1000 size=320x180 fps= repeats=1 dir=/tmp/iomux-grab
	while [ $# -gt 0 ]; do
		case "$1" in
		--frames) frames=$2; shift 2 ;;
		--size) size=$2; shift 2 ;;
		--fps) fps="--fps $2"; shift 2 ;;
		--repeats) repeats=$2; shift 2 ;;
		--dir) dir=$2; shift 2 ;;
		--*) echo "run.sh grab: unknown option $1" >&2; exit 2 ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || { echo "run.sh grab: no device given" >&2; exit 2; }
	results=$(mktemp)
	# Modes take turns, so slow drift on a shared machine spreads evenly.
	repeat=1
	while [ $repeat -le "$repeats" ]; do
		for mux in epoll poll select; do
			rm -rf "$dir"
			summary=$("$grabber" --mux $mux --frames "$frames" --size "$size" $fps \
				--ready-marker "iomux-bench grab" --output "$dir" "$@" 2>/dev/null |
				grep '^grabber: ')
			case "$summary" in
			"grabber: done "*) ;;
			*) echo "run.sh grab: $mux failed: $summary" >&2; rm -rf "$dir" "$results"; exit 1 ;;
			esac
			echo "$mux $(echo "$summary" | field seconds) $(echo "$summary" | field cpu_seconds)" >>"$results"
		done
		repeat=$((repeat + 1))
	done
	rm -rf "$dir"
	echo "Grab $frames frames of $size from $# device(s) and save them as PPM ($repeats run(s) per mode, median)"
	echo
	echo "| mux | seconds | CPU seconds | seconds / epoll | CPU / epoll |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	epoll_seconds=$(awk '$1 == "epoll" { print $2 }' "$results" | median)
	epoll_cpu=$(awk '$1 == "epoll" { print $3 }' "$results" | median)
	for mux in epoll poll select; do
		seconds=$(awk -v m=$mux '$1 == m { print $2 }' "$results" | median)
		cpu=$(awk -v m=$mux '$1 == m { print $3 }' "$results" | median)
		awk -v m=$mux -v s="$seconds" -v c="$cpu" -v es="$epoll_seconds" -v ec="$epoll_cpu" \
			'BEGIN { printf "| %s | %.2f | %.3f | %.3f | %.3f |\n", m, s, c, s / es, c / ec }'
	done
	rm -f "$results"
}

case "$1" in
wait) shift; run_wait "$@" ;;
grab) shift; run_grab "$@" ;;
*)
	echo "usage: run.sh wait [IOMUX-BENCH-OPTION]... | run.sh grab [OPTION]... DEVICE..." >&2
	exit 2
	;;
esac
