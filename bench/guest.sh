#!/bin/sh
# bench/guest.sh TARGET.toml CONSOLE.log [CAPTURE]: boot a benchmark's target (the reference
# device running the benchmark as its application) and save the guest's console (and the
# capture: the console with each line's host arrival time).  BOOT_OPTIONS adjust the target
# (bootlab boot's options, e.g. "--cpus 4").
set -eu
cd "$(dirname "$0")/.."
db=$(mktemp -d)/bench.db
# shellcheck disable=SC2086 # the options are words
.venv/bin/bootlab boot --target "$1" --db "$db" ${BOOT_OPTIONS:-} >&2
.venv/bin/bootlab show 1 --db "$db" --console -o "$2"
[ -z "${3:-}" ] || .venv/bin/bootlab show 1 --db "$db" --capture -o "$3"
