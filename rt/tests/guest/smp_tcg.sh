# Sourced by scenarios.sh for its multi-CPU sets: smp_tcg_start brings the
# other CPUs online so that the kernel never patches code another vCPU runs,
# in the guests that boot with maxcpus=1 for it (without -icount: the debug
# kernel's run); it does nothing where every CPU is online (under -icount
# QEMU never runs two vCPUs at once).
#
# QEMU 7.2's multi-threaded TCG can leave a vCPU executing the int3 of a
# kernel text patch that another vCPU has already completed (a stale
# translation): the first vCPU loops through the int3 handler with
# interrupts off, and the patching CPU waits for it for ever in
# smp_call_function_many_cond() (rt/README.md, "SMP guests under TCG").
# The kernel patches its code when a static key or a static call changes:
# at boot when sched_clock becomes stable (late_initcall, with tsc=reliable),
# and whenever a tracepoint gets its first or its second probe or loses
# them, as rtsched's on sched_switch and sched_process_exit do at load and
# unload.  So these guests boot with maxcpus=1, and smp_tcg_start, with one
# CPU online, registers two other probes on those tracepoints (the events of
# two trace instances that record nothing; rtsched's probes are then the
# third and change nothing), then brings the other CPUs online.
smp_tcg_start() {
	others=$(grep -l 0 /sys/devices/system/cpu/cpu[1-9]*/online 2>/dev/null)
	[ -n "$others" ] || return 0
	tracing=/sys/kernel/tracing
	[ -d "$tracing/instances" ] || mount -t tracefs nodev "$tracing"
	for instance in hold_a hold_b; do
		dir=$tracing/instances/$instance
		{ mkdir "$dir" && echo 0 > "$dir/tracing_on" &&
		  echo 1 > "$dir/events/sched/sched_switch/enable" &&
		  echo 1 > "$dir/events/sched/sched_process_exit/enable"; } ||
			echo "smp_tcg_start: $dir failed"
	done
	for online in $others; do echo 1 > "$online"; done
}
