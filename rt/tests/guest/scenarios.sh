#!/bin/sh
# rtsched guest scenarios.  Runs inside the busybox initramfs as root with
# the modules in $RT (default /rt) and rtctl and the programs of
# rt/tests/guest (rt_periodic, rt_checks, rt_dropcap, rt_intruder) on PATH.  Each scenario prints its output between
#   ==== rtsched-scenario NAME begin ====
#   ==== rtsched-scenario NAME end rc=N ====
# and its trace, when it has one, between
#   ==== rtsched-trace begin ==== / ==== rtsched-trace end ====
# rt/tests/check_guest.py judges the console log on the host.
RT=${RT:-/rt}
CYCLES=${CYCLES:-100}

begin() { echo "==== rtsched-scenario $1 begin ===="; }
end() { echo "==== rtsched-scenario $1 end rc=$2 ===="; }
trace() {
	echo "==== rtsched-trace begin ===="
	rtctl trace
	echo "==== rtsched-trace end ===="
}
plugin() { name=$1; shift; insmod "$RT/rtsched_$name.ko" "$@"; }
unplugin() { rmmod "rtsched_$1"; }
# PASS or FAIL a check by its status, failing the scenario (rc) on FAIL.
verdict() { if [ "$2" = 0 ]; then echo "PASS $1"; else echo "FAIL $1"; rc=1; fi; }

# Run a configuration with the stock tasks, then show status and trace.
run_config() {
	name=$1; shift
	begin "$name"
	rtctl trace >/dev/null		# start from an empty recorder
	rtctl run "$@"
	rc=$?
	rtctl status
	trace
	end "$name" $rc
}

scenario_checks() {
	begin checks
	rc=0
	# Priority 99 is the kernel's own (watchdogs, migration).
	rmmod rtsched
	if insmod "$RT/rtsched.ko" fifo_prio=99 2>/dev/null; then
		echo "FAIL fifo_prio 99 refused"; rmmod rtsched; rc=1
	else
		echo "PASS fifo_prio 99 refused"
	fi
	insmod "$RT/rtsched.ko" || rc=1
	rt_checks noplugin || rc=1
	plugin fp
	rt_checks fp || rc=1
	rt_checks lifetime || rc=1
	rt_checks reload "$RT/rtsched_fp.ko" || rc=1
	rt_dropcap rt_checks unpriv || rc=1
	unplugin fp
	plugin hsf
	rt_checks hsf || rc=1
	rtctl clear
	unplugin hsf
	end checks $rc
}

# A kernel without a clocksource valid for high resolution early in its boot
# (the camera kernel: its TSC from 1.3 s) runs hrtimers on the tick until it
# has one, and every release is late by up to a tick: rtsched says so when a
# task starts then.  Reloads rtsched.ko (the next scenario wants it fresh).
hres() { grep -q '\.resolution: 1 nsecs' /proc/timer_list; }
scenario_lowres_timers() {
	begin lowres_timers
	rc=0
	if hres; then
		echo "PASS high-resolution timers already: nothing to say"
	else
		plugin fp
		rt_periodic -T 2000 -C 200 -n 3 >/dev/null || rc=1
		unplugin fp
		if dmesg | grep -q "timers are not high-resolution yet"; then
			echo "PASS a task started on tick-based timers is warned about"
		else
			echo "FAIL a task started on tick-based timers is warned about"; rc=1
		fi
	fi
	rmmod rtsched
	insmod "$RT/rtsched.ko" || rc=1
	end lowres_timers $rc
}

# The recorder's ring is allocated when the first task runs, not when the
# module loads (bench/rt_boot).  Loading and configuring leave it out; the
# first run's trace (table3_first) is whole from its first job, its servers'
# creation included; a ring the kernel cannot allocate is an error to the
# user, not an oops.
# A vmalloc area of 1 MB or more that rtsched's own code asked for: the ring.
ring_allocated() { awk '/\[rtsched\]/ && $2 >= 1048576 { print; n++ } END { exit !n }' /proc/vmallocinfo; }
scenario_lazy_ring() {
	begin lazy_ring
	rc=0
	plugin hsf
	rtctl load "$RT/table3.toml" || rc=1
	if ring_allocated; then
		echo "FAIL no ring before a task runs"; rc=1
	else
		echo "PASS no ring before a task runs"
	fi
	rtctl clear
	end lazy_ring $rc
	# Timing is judged on high-resolution timers (scenario_lowres_timers).
	i=0
	until hres || [ $i = 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	run_config table3_first "$RT/table3.toml"
	rtctl clear
	unplugin hsf
	begin ring_enomem
	rc=0
	if ring_allocated >/dev/null; then
		echo "PASS the ring is allocated when the first task runs"
	else
		echo "FAIL the ring is allocated when the first task runs"; rc=1
	fi
	rmmod rtsched
	insmod "$RT/rtsched.ko" trace_records=4000000000 || rc=1
	plugin fp
	out=$(rtctl run "$RT/fp.toml" 2>&1)
	if [ $? != 0 ] && echo "$out" | grep -q "cannot allocate the recorder's ring"; then
		echo "PASS a ring that cannot be allocated is refused with a clear error"
	else
		echo "FAIL a ring that cannot be allocated is refused with a clear error: $out"; rc=1
	fi
	rtctl clear
	unplugin fp
	rmmod rtsched
	insmod "$RT/rtsched.ko" || rc=1
	end ring_enomem $rc
}

scenario_killed_task() {
	begin killed_task
	plugin fp
	rt_periodic -i 5 -T 10000 -C 1000 -n 0 &
	pid=$!
	sleep 1
	kill -9 $pid
	wait $pid
	rtctl status
	# No task may remain: clear is refused while one runs.
	rtctl clear && rc=0 || rc=1
	unplugin fp
	end killed_task $rc
}

scenario_rmmod_with_tasks() {
	begin rmmod_with_tasks
	plugin fp
	rt_periodic -i 1 -T 10000 -C 1000 -p 0 -n 0 &
	a=$!
	rt_periodic -i 2 -T 20000 -C 2000 -p 1 -n 0 &
	b=$!
	sleep 1
	unplugin fp
	wait $a; ra=$?
	wait $b; rb=$?
	echo "detached rc=$ra,$rb"
	rtctl status
	[ $ra = 3 ] && [ $rb = 3 ] && rc=0 || rc=1
	end rmmod_with_tasks $rc
}

# Unload the plugin again and again while two 1 ms tasks are in and out of
# their wait ioctl: the plugin must never be used after it is gone (a crash
# or warning would show in the kernel log).
scenario_unload_race() {
	begin unload_race
	rc=0
	i=0
	while [ $i -lt 20 ]; do
		plugin fp || rc=1
		rt_periodic -i 1 -T 1000 -C 100 -p 0 -n 0 >/dev/null &
		a=$!
		rt_periodic -i 2 -T 1500 -C 100 -p 1 -n 0 >/dev/null &
		b=$!
		sleep 0.2
		unplugin fp || rc=1
		wait $a; ra=$?
		wait $b; rb=$?
		# 3: detached by the unload, as it should be
		[ $ra = 3 ] && [ $rb = 3 ] || { echo "cycle $i rc=$ra,$rb"; rc=1; }
		i=$((i + 1))
	done
	end unload_race $rc
}

# A task waiting in the kernel for its next period can be frozen (suspend,
# the cgroup freezer) and goes on once thawed.  The v1 freezer cgroup
# freezes a task asleep freezable at once, one that is not only when it
# returns to user space: here at its next release, 3 s later.
scenario_frozen_task() {
	begin frozen_task
	rc=0
	fz=/tmp/freezer
	mkdir -p $fz
	if ! mount -t cgroup -o freezer freezer $fz 2>/dev/null; then
		echo "SKIP this kernel has no freezer cgroup"
		end frozen_task 0
		return
	fi
	mkdir $fz/rt
	plugin fp
	rt_periodic -i 1 -T 3000000 -C 1000 -n 2 &
	pid=$!
	sleep 0.5
	echo $pid > $fz/rt/tasks
	echo FROZEN > $fz/rt/freezer.state
	sleep 0.2
	state=$(cat $fz/rt/freezer.state)
	echo "freezer.state $state"
	[ "$state" = FROZEN ]
	verdict "a task waiting for its next period is frozen" $?
	echo THAWED > $fz/rt/freezer.state
	wait $pid
	verdict "thawed, it runs its next job and ends" $?
	unplugin fp
	rmdir $fz/rt
	umount $fz
	end frozen_task $rc
}

# fp's release latency (rt_jitter: back in user code after its wait, from
# the planned release) beside plain SCHED_FIFO's, and beside 250 reservations
# no thread runs, then beside them and an unprivileged loop reading the status
# (rt_jitter status drops to nobody), which must list all 250: check_guest.py
# compares them.
scenario_release_latency() {
	begin release_latency
	rc=0
	plugin fp
	rt_jitter fp 2000 500 alone
	rt_jitter fifo 2000 500
	sh "$RT/reservations.sh" 250 > /tmp/reservations.toml
	rtctl load /tmp/reservations.toml >/dev/null
	verdict "250 reservations loaded" $?
	[ "$(rtctl status | grep -c '^task [0-9]* name=reader')" = 250 ]
	verdict "the status lists all 250, read in batches" $?
	rt_jitter fp 2000 500 reserved
	rt_jitter status &
	reader=$!
	rt_jitter fp 2000 500 reader
	kill $reader
	wait $reader 2>/dev/null
	rtctl clear
	unplugin fp
	end release_latency $rc
}

meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

scenario_load_cycles() {
	begin load_cycles
	rc=0
	# One cycle first, so that caches the kernel keeps are warm.
	i=0
	while [ $i -le "$CYCLES" ]; do
		if [ $i = 1 ]; then
			slab=$(meminfo_kb Slab)
			vmalloc=$(meminfo_kb VmallocUsed)
		fi
		insmod "$RT/rtsched.ko" && plugin fp || rc=1
		rt_periodic -T 2000 -C 200 -n 3 >/dev/null || rc=1
		unplugin fp && rmmod rtsched || rc=1
		i=$((i + 1))
	done
	echo 3 > /proc/sys/vm/drop_caches
	echo "cycles=$CYCLES slab_before_kb=$slab slab_after_kb=$(meminfo_kb Slab)" \
	     "vmalloc_before_kb=$vmalloc vmalloc_after_kb=$(meminfo_kb VmallocUsed)"
	grep rtsched /proc/modules && rc=1
	insmod "$RT/rtsched.ko"
	end load_cycles $rc
}

# The boot-time form: rtctl loads the framework and the plugin itself (one
# program instead of insmod, insmod, rtctl), tolerates modules already loaded,
# and reports a module the kernel refuses.
scenario_one_step_load() {
	begin one_step_load
	rc=0
	rmmod rtsched
	hsf="$RT/rtsched_hsf.ko servers=edf tasks=edf"
	logged=$(dmesg | grep -v taint | grep -c rtsched)
	if out=$(rtctl load --module "$RT/rtsched.ko" --module "$hsf" "$RT/hsf-edf.toml") &&
	   [ -z "$out" ] && [ "$(dmesg | grep -v taint | grep -c rtsched)" = "$logged" ]; then
		echo "PASS loading prints nothing: no output, no kernel message (a serial console waits for each)"
	else
		echo "FAIL loading prints nothing: output '$out', kernel log:"; dmesg | grep rtsched; rc=1
	fi
	if rtctl status | grep -q "^plugin hsf-edf " &&
	   [ "$(rtctl status | grep -c '^server ')" = 2 ] &&
	   [ "$(rtctl status | grep -c '^task ')" = 4 ]; then
		echo "PASS one program loads the modules and the configuration"
	else
		echo "FAIL one program loads the modules and the configuration"; rc=1
	fi
	rtctl clear
	if rtctl load --module "$RT/rtsched.ko" --module "$hsf" "$RT/hsf-edf.toml"; then
		echo "PASS modules already loaded are left as they are"
	else
		echo "FAIL modules already loaded are left as they are"; rc=1
	fi
	rtctl clear
	rmmod rtsched_hsf
	if rtctl load --module "$RT/rtsched_hsf.ko servers=rr" "$RT/table3.toml" 2>&1 |
	   grep -q "cannot load $RT/rtsched_hsf.ko: Invalid argument"; then
		echo "PASS a module the kernel refuses is reported"
	else
		echo "FAIL a module the kernel refuses is reported"; rc=1
	fi
	grep -q rtsched_hsf /proc/modules && rc=1
	end one_step_load $rc
}

scenario_dmesg() {
	begin dmesg
	dmesg
	end dmesg 0
}

# The multi-CPU sets' core, every CPU a real-time one.  OVERRUN_SLACK_US
# widens the budget enforcement's slack where the guest runs without
# -icount: the host's load steals time from the vCPUs, and a task chosen for
# its wcet may have run less (the debug kernel's run).
smp_core() {
	insmod "$RT/rtsched.ko" rt_cpus="$(grep -c ^processor /proc/cpuinfo)" \
		${OVERRUN_SLACK_US:+overrun_slack_us=$OVERRUN_SLACK_US}
}

# SET=smp: the partitioned plugins on every CPU of a multi-CPU guest.
scenario_partitioned() {
	smp_core
	plugin fp partitioned=1
	run_config partitioned_fp "$RT/partitioned.toml"
	unplugin fp
	plugin edf partitioned=1
	# worst-fit: 0.8 and 0.7 of the CPUs (first-fit fills CPU 0 to 1.0)
	sed -e 's/"partitioned-fp"/"partitioned-edf"/' -e 's/"first-fit"/"worst-fit"/' \
		"$RT/partitioned.toml" > /tmp/edf.toml
	run_config partitioned_edf /tmp/edf.toml
	unplugin edf
	rmmod rtsched
}

# SET=global: the global plugins, one scheduler over every CPU of a
# multi-CPU guest.
scenario_global() {
	smp_core
	begin global_params
	if insmod "$RT/rtsched_fp.ko" partitioned=1 global=1 2>/dev/null; then
		echo "FAIL partitioned=1 global=1 refused"; unplugin fp; rc=1
	else
		echo "PASS partitioned=1 global=1 refused"; rc=0
	fi
	end global_params $rc
	plugin fp global=1
	run_config global_fp "$RT/global.toml"
	unplugin fp
	plugin edf global=1
	sed -e 's/"global-fp"/"global-edf"/' "$RT/global.toml" > /tmp/edf.toml
	run_config global_edf /tmp/edf.toml
	unplugin edf
	rmmod rtsched
}

# SET=semi: the semi-partitioned plugin (C=D splitting) on every CPU of a
# multi-CPU guest.  SEMI_OVERHEAD_US gives the configuration that
# overhead_us: rtctl then splits with every job's overhead charged.
scenario_semi() {
	smp_core
	begin semi_params
	rc=0
	if insmod "$RT/rtsched_edf.ko" global=1 semi=1 2>/dev/null; then
		echo "FAIL global=1 semi=1 refused"; unplugin edf; rc=1
	else
		echo "PASS global=1 semi=1 refused"
	fi
	end semi_params $rc
	plugin edf semi=1
	{ [ -z "${SEMI_OVERHEAD_US:-}" ] || echo "overhead_us = $SEMI_OVERHEAD_US"
	  cat "$RT/semi.toml"; } > /tmp/semi.toml
	run_config semi /tmp/semi.toml
	unplugin edf
	rmmod rtsched
}

# SET=smp: the real-time CPUs stay online while rtsched is loaded (an
# offline one would take its timer and tasks elsewhere), and only then.
scenario_cpu_hotplug() {
	begin cpu_hotplug
	rc=0
	cpu=$(($(grep -c ^processor /proc/cpuinfo) - 1))
	online=/sys/devices/system/cpu/cpu$cpu/online
	[ -e "$online" ]
	verdict "CPU $cpu has an online switch" $?
	insmod "$RT/rtsched.ko"
	echo 0 > "$online" && [ "$(cat "$online")" = 0 ] && echo 1 > "$online"
	verdict "CPU $cpu, not a real-time one, goes offline and back while rtsched is loaded" $?
	rmmod rtsched
	insmod "$RT/rtsched.ko" rt_cpus=$((cpu + 1))
	! echo 0 2>/dev/null > "$online" && [ "$(cat "$online")" = 1 ]
	verdict "CPU $cpu is not taken offline while rtsched is loaded" $?
	rmmod rtsched
	echo 0 > "$online" && [ "$(cat "$online")" = 0 ]
	verdict "CPU $cpu is taken offline once rtsched is unloaded" $?
	! insmod "$RT/rtsched.ko" rt_cpus=$((cpu + 1)) 2>/dev/null
	verdict "rtsched refuses an offline real-time CPU" $?
	echo 1 > "$online" && [ "$(cat "$online")" = 1 ]
	verdict "CPU $cpu comes back online" $?
	end cpu_hotplug $rc
}

# SET=smp, global or semi runs that set of a multi-CPU guest; SET=multicore
# all three in one boot (the debug kernel's run, where a boot costs most).
# BEAT_US loads the metronome first (a guest under -icount, where QEMU runs
# the vCPUs in turn: rt/tests/guest/metronome).
case "${SET:-}" in
smp|global|semi|multicore)
	. "$RT/smp_tcg.sh"
	smp_tcg_start
	# The kernel's real-time throttling stops every SCHED_FIFO task of a CPU
	# for the rest of each second once they have had 95% of it
	# (sched_rt_runtime_us): C=D splitting fills CPU 0 (semi.toml), whose
	# tasks were stopped for 37 ms of the run's last second.
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us
	[ -z "${BEAT_US:-}" ] || insmod "$RT/metronome.ko" period_us="$BEAT_US"
	case "$SET" in smp|multicore) scenario_partitioned; scenario_cpu_hotplug;; esac
	case "$SET" in global|multicore) scenario_global;; esac
	case "$SET" in semi|multicore) scenario_semi;; esac
	scenario_dmesg
	echo "==== rtsched-guest done ===="
	exit 0
	;;
esac

insmod "$RT/rtsched.ko" || echo "insmod rtsched.ko failed"
scenario_lowres_timers
scenario_lazy_ring
scenario_checks

plugin fp
run_config fp "$RT/fp.toml"
unplugin fp

plugin edf
run_config edf "$RT/edf_guest.toml"
unplugin edf

plugin hsf
run_config table3 "$RT/table3.toml"
run_config overload --duration 1500 --spin 4 "$RT/table3.toml"
rtctl clear
unplugin hsf

plugin hsf servers=edf tasks=edf
run_config hsf_edf "$RT/hsf-edf.toml"
unplugin hsf

plugin fp
run_config overrun --duration 1500 --spin 1 "$RT/overrun_guest.toml"
rtctl clear
# A thread of a higher priority than rtsched's tasks (fifo_prio 50) holds
# the CPU 1 ms of every 2: "steady" is charged for the CPU it gets, never
# for the time it waits (kept_away_guest.toml).
rt_intruder 60 1000 2000 1700 &
run_config kept_away --duration 1500 "$RT/kept_away_guest.toml"
wait
rtctl clear
unplugin fp

scenario_killed_task
scenario_rmmod_with_tasks
scenario_unload_race
scenario_frozen_task
scenario_release_latency
rmmod rtsched
scenario_load_cycles
scenario_one_step_load
scenario_dmesg
echo "==== rtsched-guest done ===="
