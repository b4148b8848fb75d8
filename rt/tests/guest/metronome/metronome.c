// SPDX-License-Identifier: GPL-2.0
/*
 * metronome: a hard-irq hrtimer every period_us on each online CPU, and
 * nothing more.  A test module for SMP guests under QEMU's -icount
 * (bench/rt_smp, the SMP guest tests), not part of rtsched.
 *
 * Under -icount QEMU runs the vCPUs in turn on one host thread and divides
 * the span to the machine's next timer between them (QEMU 10; 7.2 gives it
 * all to one): a vCPU stands still while another runs its share.  The
 * framework's next timer may be milliseconds away, so a release on one
 * vCPU waited up to 1.4 ms for the other's share (bench/rt_smp); with a
 * timer every period_us on each CPU no share is longer than period_us /
 * the number of vCPUs, and a vCPU waits at most for the others' shares.
 * Each beat costs its CPU a timer interrupt, which the traces measure with
 * the framework's own overhead.
 */
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/percpu.h>

static unsigned int period_us = 50;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "the beat in microseconds, 10..1000000");

static DEFINE_PER_CPU(struct hrtimer, beat);
static enum cpuhp_state metronome_state;

static ktime_t metronome_period(void)
{
	return ns_to_ktime((u64)period_us * NSEC_PER_USEC);
}

static enum hrtimer_restart metronome_beat(struct hrtimer *timer)
{
	hrtimer_forward_now(timer, metronome_period());
	return HRTIMER_RESTART;
}

/* On the CPU coming online (an AP_ONLINE_DYN state): pinned to it. */
static int metronome_start(unsigned int cpu)
{
	struct hrtimer *timer = per_cpu_ptr(&beat, cpu);

	hrtimer_init(timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	timer->function = metronome_beat;
	hrtimer_start(timer, metronome_period(), HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

/* On the CPU going offline, or at unload: its timer is not moved elsewhere. */
static int metronome_stop(unsigned int cpu)
{
	hrtimer_cancel(per_cpu_ptr(&beat, cpu));
	return 0;
}

static int __init metronome_init(void)
{
	int ret;

	if (period_us < 10 || period_us > USEC_PER_SEC) {
		pr_err("metronome: period_us %u is not within 10..1000000\n",
		       period_us);
		return -EINVAL;
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "metronome:online",
				metronome_start, metronome_stop);
	if (ret < 0)
		return ret;
	metronome_state = ret;
	return 0;
}
module_init(metronome_init);

static void __exit metronome_exit(void)
{
	cpuhp_remove_state(metronome_state);
}
module_exit(metronome_exit);

MODULE_DESCRIPTION("A timer interrupt every period_us on each CPU (SMP guests under QEMU -icount)");
MODULE_LICENSE("GPL");
