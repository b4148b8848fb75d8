#!/bin/sh
# boot-qemu.sh OUT SCRIPT [FILE...]: boot the reference kernel in QEMU
# (TCG, one CPU) with a throwaway busybox initramfs whose init runs SCRIPT,
# and save the console in OUT/console.log.  The initramfs holds busybox,
# the rtsched modules, rtctl and the guest test programs (build first:
# make -C rt), rt/examples/*.toml, and each FILE; everything lands in /rt,
# which is on PATH.  A dynamically linked FILE brings its libraries.
#   KERNEL   kernel image (default: bootlab's unpacked Debian 6.1.0-56)
#   BUSYBOX  a static busybox (default /bin/busybox from busybox-static)
#   ICOUNT   QEMU -icount setting (default shift=0,sleep=off: guest time
#            follows executed instructions, so host load on a shared
#            machine does not show up as guest scheduling latency;
#            "off" for none; -icount hangs the boot of an SMP guest)
#   SMP      guest CPUs (default 1: rtsched runs its tasks on CPU 0)
#   GUEST_ENV  variables passed to SCRIPT, e.g. "CYCLES=10"
set -eu
out=$1
script=$2
shift 2
rt=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=${KERNEL:-/root/.cache/bootlab/pkgroot/6.1.0-56/boot/vmlinuz-6.1.0-56-amd64}
BUSYBOX=${BUSYBOX:-/bin/busybox}
ICOUNT=${ICOUNT:-shift=0,sleep=off}
GUEST_ENV=${GUEST_ENV:-}
SMP=${SMP:-1}

root=$out/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/rt" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$BUSYBOX" "$root/bin/busybox"
cp "$rt/build/rtctl" "$rt/build/rt_periodic" "$rt/build/rt_checks" \
   "$rt/build/rt_dropcap" "$rt"/kmod/*.ko "$rt"/examples/*.toml \
   "$script" "$@" "$root/rt/"
for f in "$@"; do
	ldd "$f" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
cat > "$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/rt:/bin RT=/rt $GUEST_ENV
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
sh /rt/$(basename "$script")
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.gz"
icount="-icount $ICOUNT"
[ "$ICOUNT" = off ] && icount=
# shellcheck disable=SC2086  # $icount is zero or two words
timeout 1800 qemu-system-x86_64 -accel tcg $icount -m 512 -smp "$SMP" \
	-nographic -no-reboot -kernel "$KERNEL" -initrd "$out/initramfs.gz" \
	-append "console=ttyS0 panic=-1 quiet" > "$out/console.log" 2>&1 || true
echo "console: $out/console.log"
