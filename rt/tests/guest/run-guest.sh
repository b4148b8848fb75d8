#!/bin/sh
# Boot the reference kernel in QEMU (TCG, one CPU) with a throwaway busybox
# initramfs that runs scenarios.sh, save the console, and judge it with
# check_guest.py.  Build first: make -C rt (run-guest.sh does not build).
#   KERNEL   kernel image (default: bootlab's unpacked Debian 6.1.0-56)
#   BUSYBOX  a static busybox (default /bin/busybox from busybox-static)
#   OUT      work directory (default rt/build/guest)
#   CYCLES   module load/unload cycles (default 100)
#   ICOUNT   QEMU -icount setting (default shift=0,sleep=off: guest time
#            follows executed instructions, so host load on a shared
#            machine does not show up as guest scheduling latency)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rt=$(cd "$here/../.." && pwd)
KERNEL=${KERNEL:-/root/.cache/bootlab/pkgroot/6.1.0-56/boot/vmlinuz-6.1.0-56-amd64}
BUSYBOX=${BUSYBOX:-/bin/busybox}
OUT=${OUT:-$rt/build/guest}
CYCLES=${CYCLES:-100}
ICOUNT=${ICOUNT:-shift=0,sleep=off}

root=$OUT/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/rt" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$BUSYBOX" "$root/bin/busybox"
cp "$rt/build/rtctl" "$rt/build/rt_periodic" "$rt/build/rt_checks" \
   "$rt/build/rt_dropcap" "$root/bin/"
cp "$rt"/kmod/*.ko "$rt/examples/table3.toml" "$rt/examples/fp.toml" \
   "$here/edf.toml" "$here/scenarios.sh" "$root/rt/"
cat > "$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
CYCLES=$CYCLES sh /rt/scenarios.sh
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT/initramfs.gz"

timeout 1800 qemu-system-x86_64 -accel tcg -icount "$ICOUNT" -m 512 -smp 1 -nographic \
	-no-reboot -kernel "$KERNEL" -initrd "$OUT/initramfs.gz" \
	-append "console=ttyS0 panic=-1 quiet" > "$OUT/console.log" 2>&1 || true
echo "console: $OUT/console.log"
python3 "$here/../check_guest.py" "$OUT/console.log"
