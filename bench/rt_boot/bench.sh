#!/bin/sh
# Guest side of bench/rt_boot: load an empty module, then the scheduler as the camera demo
# does at boot (core, plugin, configuration), each step between two kernel-log marks, for
# ROUNDS rounds (the first is the first load in this boot), unloading between rounds.
# `rtctl status` alone is the floor of any rtctl step: starting the program.  Then the
# same three in one program: rtctl load --module ... (onestep).
ROUNDS=${ROUNDS:-5}
RT=${RT:-/rt}
# The loader's steps in load_module() (kernel/module/main.c of 6.1) that are functions of
# their own, timed by function_graph in the traced round; those one architecture has not got
# (x86's ORC and retpolines, arm64's PLTs) or the compiler inlined are left out by ftrace.
LOADER_PHASES="kernel_read_file_from_fd module_sig_check elf_validity_check setup_load_info
	module_frob_arch_sections sort_r resolve_symbol find_symbol check_version move_module
	layout_sections rewrite_section_headers check_modinfo elf_validity_cache_copy
	layout_and_allocate module_alloc simplify_symbols apply_relocations post_relocation module_finalize
	flush_module_icache complete_formation prepare_coming_module parse_args
	mod_sysfs_setup do_init_module do_one_initcall module_enable_ro
	find_module_sections setup_modinfo add_unformed_module vmalloc vfree
	unwind_module_init apply_alternatives apply_retpolines apply_returns
	apply_paravirt apply_ibt_endbr alternatives_smp_module_add
	jump_label_module_notify static_call_module_notify tracepoint_module_notify
	add_sect_attrs add_notes_attrs module_param_sysfs_setup
	misc_register for_each_kernel_tracepoint tracepoint_probe_register kvmalloc_node
	apply_relocate_add add_kallsyms layout_symtab"
mark() { echo "rtboot: $1" > /dev/kmsg; }
# The traced round's system calls are numbered by architecture (analyze.py).
mark "machine $(uname -m)"
step() {
	name=$1; shift
	mark "$name.start"
	"$@" > /dev/null || echo "rtboot: $name failed"
	mark "$name.end"
}
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	mark "round $i"
	step empty insmod "$RT/rtboot_empty.ko"
	step core insmod "$RT/rtsched.ko"
	step plugin insmod "$RT/rtsched_hsf.ko"
	step config rtctl load "$RT/table3.toml"
	step rtctl rtctl status
	rtctl clear
	rmmod rtsched_hsf rtsched
	step onestep rtctl load --module "$RT/rtsched.ko" --module "$RT/rtsched_hsf.ko" "$RT/table3.toml"
	rtctl clear
	rmmod rtsched_hsf rtsched rtboot_empty
	i=$((i + 1))
done
# One more round under ftrace, after the measured ones (tracing adds its own cost): every
# system call, fork, exec and exit of this shell and its children, and the phases of the
# kernel's module loader, to split each step into program start, module loads, reading the
# configuration, its parsing and admission, and the ioctls.
T=/sys/kernel/tracing
if mount -t tracefs nodev $T 2>/dev/null || [ -e $T/trace ]; then
	echo 0 > $T/tracing_on
	echo 8192 > $T/buffer_size_kb
	for fn in $LOADER_PHASES; do echo "$fn" >> $T/set_ftrace_filter 2>/dev/null; done
	echo function_graph > $T/current_tracer 2>/dev/null
	echo 1 > $T/options/funcgraph-abstime
	echo 1 > $T/options/event-fork
	echo $$ > $T/set_event_pid
	echo $$ > $T/set_ftrace_pid
	echo 1 > $T/options/function-fork 2>/dev/null
	echo "raw_syscalls:* sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit" > $T/set_event
	echo 1 > $T/tracing_on
	mark "round traced"
	step empty insmod "$RT/rtboot_empty.ko"
	step onestep rtctl load --module "$RT/rtsched.ko" --module "$RT/rtsched_hsf.ko" "$RT/table3.toml"
	step rtctl rtctl status
	echo 0 > $T/tracing_on
	rtctl clear
	rmmod rtsched_hsf rtsched rtboot_empty
	echo "==== rtboot trace begin ===="
	cat $T/trace
	echo "==== rtboot trace end ===="
fi
echo "==== rtboot log begin ===="
dmesg | grep -E "rtboot|initcall .*\[(rtsched|rtsched_hsf|rtboot_empty)\]"
echo "==== rtboot log end ===="
