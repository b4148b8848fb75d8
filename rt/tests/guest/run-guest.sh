#!/bin/sh
# Run the rtsched guest scenarios (scenarios.sh) in QEMU and judge the
# console with check_guest.py.  Build first: make -C rt.
#   OUT     work directory (default rt/build/guest)
#   CYCLES  module load/unload cycles (default 100)
# boot-qemu.sh documents KERNEL, BUSYBOX and ICOUNT.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/../../build/guest}
mkdir -p "$OUT"
GUEST_ENV="CYCLES=${CYCLES:-100}" "$here/boot-qemu.sh" "$OUT" \
	"$here/scenarios.sh" "$here/edf_guest.toml"
python3 "$here/../check_guest.py" "$OUT/console.log"
