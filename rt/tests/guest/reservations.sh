#!/bin/sh
# reservations.sh N: an fp configuration of N reserved tasks (ids 1..N, "readerI", 1 ms of
# every second each), which no thread runs: what a reader of the status has to list.
n=${1:?usage: reservations.sh N}
echo 'plugin = "fp"'
echo 'unit = "ms"'
i=1
while [ "$i" -le "$n" ]; do
	printf '[[task]]\nid = %d\nname = "reader%d"\nperiod = 1000\nwcet = 1\npriority = %d\n' \
	       "$i" "$i" $((i % 90))
	i=$((i + 1))
done
