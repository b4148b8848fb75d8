// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched framework core: task registry, job releases on one hrtimer,
 * deadline misses, the /dev/rtsched ioctl interface and the plugin API.
 *
 * Dispatch model: the policy picks one task (the "chosen" one); every
 * other registered task is held in the kernel until it is chosen again.
 * All registered tasks are SCHED_FIFO at one priority on one CPU, so
 * Linux runs exactly the chosen task and needs no priority changes.
 * A task that must stop while it runs in user space gets a task_work
 * with TWA_SIGNAL: it enters the kernel at once and waits there.
 *
 * Partitioned plugins get one instance of the policy core, with its own
 * timer and chosen task, per real-time CPU (rt_cpu and the next rt_cpus - 1);
 * each task belongs to one.  The others use the first instance only; a
 * global plugin's chooses up to rt_cpus tasks, allowed on every real-time
 * CPU, and Linux's real-time class gives each of them one (a task may
 * migrate whenever it was held).  A semi-partitioned plugin's chooses one
 * task per real-time CPU, each pinned to the CPU of the part its job is
 * in: a split job whose first part ends loses its first CPU's slot, and
 * its gate moves it to its second CPU before it waits for its turn there.
 *
 * Locking: rt.mutex serialises the task set, the plugin and changes of
 * scheduling class; rt.lock (raw: taken in the hard-irq timers, also on
 * PREEMPT_RT) protects every instance's policy core and chosen task, and
 * rt.task[].  Only
 * raw-lock-safe calls are made under rt.lock: wake_up_process(),
 * task_work_add(), hrtimer calls, asynchronous IPIs, the recorder's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <uapi/linux/sched/types.h>

#include "rtsched.h"

static int rt_cpu;
module_param(rt_cpu, int, 0444);
MODULE_PARM_DESC(rt_cpu, "First real-time CPU (default 0)");

#define RT_MAX_CPUS	RTS_MAX_CPUS
static int rt_cpus = 1;
module_param(rt_cpus, int, 0444);
MODULE_PARM_DESC(rt_cpus,
		 "Real-time CPUs rt_cpu.. for multicore plugins (1..8, default 1)");

static int fifo_prio = 50;
module_param(fifo_prio, int, 0444);
MODULE_PARM_DESC(fifo_prio, "SCHED_FIFO priority of real-time tasks (1..98)");
/* 99 is left to the kernel's own threads (watchdogs, migration). */
#define RT_FIFO_PRIO_MAX	(MAX_RT_PRIO - 2)

static uint start_lead_us = 10000;
module_param(start_lead_us, uint, 0444);
MODULE_PARM_DESC(start_lead_us,
		 "Common start = first rt_run() + this, so tasks can join it");

static uint overrun_slack_us = 200;
module_param(overrun_slack_us, uint, 0444);
MODULE_PARM_DESC(overrun_slack_us,
		 "Budget per period = wcet + this, for the framework's own overheads");

/*
 * 3 MB, allocated when the first task runs (0.57 ms in the guest, which was
 * most of loading the module: bench/rt_boot); 8192 overflowed in 1.5 s of
 * the overload scenario on the -rt kernel, whose irq threads switch often
 * on rt_cpu.
 */
static uint trace_records = 32768;
module_param(trace_records, uint, 0444);
MODULE_PARM_DESC(trace_records, "Recorder ring buffer size in events");

/* Longest wait slice: keeps the hung-task detector quiet in long waits. */
#define RT_WAIT_SLICE	(10 * HZ)
/* Flags that describe a task (RUN and RESERVE). */
#define RTSCHED_TASK_FLAGS	(RTSCHED_OVERRUN_SIGNAL | RTSCHED_SPORADIC)
/* Larger times would overflow nanoseconds in the policy core. */
#define RT_MAX_US	(1000ULL * USEC_PER_SEC)

/*
 * One open /dev/rtsched; a task once RUN succeeded.  The registration
 * belongs to the thread that made it (tsk, referenced while id is set):
 * it ends with rt_exit(), the last close, or the thread's exit.
 */
struct rt_task {
	struct kref ref;
	int id;				/* RTS_NONE when not running */
	struct task_struct *tsk;
	pid_t pid;
	cpumask_var_t saved_mask;
	struct sched_attr saved_attr;	/* tsk's class before RUN */
	struct callback_head gate;
	bool gate_queued;		/* gate is on tsk's task_work list */
	bool overrun_signal;		/* the gate sends SIGXCPU */
	bool in_wait;			/* will check its turn before user code */
	bool waiting;			/* asleep in rt_wait_turn(): wake it */
	bool detached;			/* its plugin was unloaded */
	bool follows_parts;		/* semi-partitioned: pinned to its part's CPU */
	struct rts_seen seen;		/* the recorder's view of its jobs */
	struct rt_inst *inst;		/* its CPU's scheduler while running */
	/*
	 * Its CPU time, which its budget is charged for: counted at its own
	 * switches (rt_count_switch) and read under rt.lock (rt_cpu_time).
	 */
	seqcount_t cpu_seq;
	u64 cpu_ns;			/* had up to on_cpu_since */
	u64 on_cpu_since;		/* when it took its CPU; 0: off it */
	/* Chosen off its CPU: its instance looks at budgets when it takes one. */
	bool budget_watch;
	long long woken_at;		/* the core's instant its dispatch woke it */
	/* Once this RCU state is done, no probe holds its last registration. */
	unsigned long unlinked_gp;
	struct hlist_node by_thread;	/* in rt.by_thread while registered */
	struct rcu_head rcu;
};

/* The policy core of one real-time CPU (of all of them: global plugins). */
struct rt_inst {
	struct rts_sched *sched;
	int cpu;			/* the first one for global plugins */
	struct hrtimer timer;		/* fires on cpu only */
	call_single_data_t rearm;	/* rearms the timer from cpu */
	struct irq_work took_cpu;	/* a watched task took a CPU (watch_cpu) */
};

static struct {
	struct mutex mutex;		/* task set, plugin, class changes */
	raw_spinlock_t lock;		/* policy cores, chosen, timers */
	struct rt_inst inst[RT_MAX_CPUS];
	int nr_inst;			/* used by the plugin: rt_cpus or 1 */
	struct cpumask cpus;		/* rt_cpu..: a global plugin's tasks' */
	const struct rts_policy *policy;
	struct rt_task __rcu *task[RTS_MAX_TASKS];
	/*
	 * The registrations of task[] by thread, for the probes' lookup on
	 * every switch: whatever class the thread is in now (another process
	 * may change it), in constant time however many tasks there are.
	 */
	DECLARE_HASHTABLE(by_thread, 6);
	bool gated;			/* a gate was queued since loading */
	struct tracepoint *process_exit;
	int hp_state;			/* refuses the CPUs' offlining */
	char server_name[RTS_MAX_SERVERS][RTSCHED_NAME_LEN];
	char task_name[RTS_MAX_TASKS][RTSCHED_NAME_LEN];
} rt;

static void rt_task_free(struct kref *ref)
{
	struct rt_task *rtt = container_of(ref, struct rt_task, ref);

	free_cpumask_var(rtt->saved_mask);
	kfree_rcu(rtt, rcu);
}

static void rt_task_put(struct rt_task *rtt)
{
	kref_put(&rtt->ref, rt_task_free);
}

static bool rt_kick(struct rt_task *rtt);

/* Policy core events go to the recorder with the configuration filled in. */
static void rt_emit(void *ctx, const struct rts_event *ev)
{
	struct rt_inst *in = ctx;
	/*
	 * A global plugin's job completes on the CPU it ran on, which calls
	 * (the wait ioctl, interrupts off).
	 */
	struct rtsched_record rec = {
		.time = ev->time, .type = ev->type,
		.cpu = in->sched->policy->global || in->sched->policy->split ?
		       smp_processor_id() : in->cpu,
		.task = ev->task, .server = ev->server, .job = ev->job,
		.deadline = ev->value,
	};
	struct rt_task *rtt;

	switch (ev->type) {
	case RTS_EV_SERVER_CREATE: {
		const struct rts_server *sv = &in->sched->server[ev->server];

		rec.period = sv->p.period;
		rec.budget = sv->p.budget;
		rec.prio = sv->p.prio;
		break;
	}
	case RTS_EV_TASK_CREATE: {
		const struct rts_task *t = &in->sched->task[ev->task];

		rec.period = t->p.period;
		rec.budget = t->p.wcet;
		rec.deadline = t->p.deadline;
		rec.prio = t->p.prio;
		rtt = rcu_dereference_protected(rt.task[ev->task], 1);
		rec.pid = rtt ? rtt->pid : 0;
		break;
	}
	case RTS_EV_REPLENISH:
		rec.budget = ev->value;
		rec.deadline = 0;
		break;
	case RTS_EV_OVERRUN:
		rec.deadline = 0;
		rtt = rcu_dereference_protected(rt.task[ev->task], 1);
		if (rtt && ev->value == RTS_OVERRUN_SIGNAL) {
			rtt->overrun_signal = true;
			rt_kick(rtt);
		}
		break;
	}
	rt_trace_put(&rec);
}

/* rts_emit is called by plugins (hsf-fp's server events). */
EXPORT_SYMBOL_GPL(rts_emit);

/*
 * Whether rtt is current's registration, still scheduled by a plugin.  A
 * thread whose registration ended while it slept (its plugin unloaded)
 * may find its file registered again, by another thread or after the
 * plugin came back: that one is not its own to wait for or follow.
 * rt.lock or rt.mutex held; detached is set under rt.mutex only.
 */
static bool rt_is_mine(const struct rt_task *rtt)
{
	return rtt->id != RTS_NONE && !READ_ONCE(rtt->detached) &&
	       rtt->tsk == current;
}

/* Whether rtt may run user code now.  rt.lock held (chosen changes under it). */
static bool rt_turn(struct rt_task *rtt)
{
	return !rt_is_mine(rtt) || rtt->inst->sched->task[rtt->id].chosen;
}

/* The CPU of the part rtt's job is in, or RTS_NONE if it is not a task. */
static int rt_part_cpu(struct rt_task *rtt)
{
	int cpu = RTS_NONE;

	raw_spin_lock_irq(&rt.lock);
	if (rt_is_mine(rtt))
		cpu = rt_cpu + rts_part_cpu(&rtt->inst->sched->task[rtt->id]);
	raw_spin_unlock_irq(&rt.lock);
	return cpu;
}

/* Is current where its job's part runs (if it follows parts)?  rt.lock held. */
static bool rt_on_part_cpu(struct rt_task *rtt)
{
	if (!rtt->follows_parts || !rt_is_mine(rtt))
		return true;
	return cpumask_equal(current->cpus_ptr, cpumask_of(rt_cpu +
			     rts_part_cpu(&rtt->inst->sched->task[rtt->id])));
}

/*
 * Semi-partitioned: pin current to the CPU of the part its job is in (a
 * split job moves to its second CPU when its first part ends, and back
 * for its next job).  Task context: set_cpus_allowed_ptr() may sleep, so
 * outside rt.lock, and under rt.mutex so that a concurrent stop cannot
 * give the task back its own mask before this pins it again.
 */
static void rt_follow_part(struct rt_task *rtt)
{
	int cpu;

	if (!rtt->follows_parts)
		return;
	/* Where it is already (most waits): no mutex, which other tasks take. */
	cpu = rt_part_cpu(rtt);
	if (cpu == RTS_NONE ||
	    cpumask_equal(current->cpus_ptr, cpumask_of(cpu)))
		return;
	mutex_lock(&rt.mutex);
	cpu = rt_part_cpu(rtt);
	if (cpu != RTS_NONE)
		set_cpus_allowed_ptr(current, cpumask_of(cpu));
	mutex_unlock(&rt.mutex);
}

/*
 * Sleep until the task is chosen (or no longer scheduled by us).  The
 * waker is the timer in hard-irq context, so no waitqueue (a sleeping
 * lock on PREEMPT_RT): the state is set under rt.lock, under which the
 * wakers change the turn before they call wake_up_process(), so no
 * wake-up is lost.
 */
static int rt_wait_turn(struct rt_task *rtt)
{
	bool turn, mine;

	for (;;) {
		rt_follow_part(rtt);
		raw_spin_lock_irq(&rt.lock);
		turn = rt_turn(rtt);
		/* Its part may have moved since it followed: follow again. */
		if (turn && !rt_on_part_cpu(rtt)) {
			raw_spin_unlock_irq(&rt.lock);
			continue;
		}
		if (turn || fatal_signal_pending(current)) {
			/* A waiting task's registration ends by an unload only. */
			mine = rt_is_mine(rtt);
			if (rtt->tsk == current)
				rtt->waiting = false;
			if (mine && turn)
				rtt->in_wait = false;
			raw_spin_unlock_irq(&rt.lock);
			return !turn ? -EINTR : mine ? 0 : -ENODEV;
		}
		/*
		 * The wakers wake only a task asleep here: one chosen while
		 * it sleeps elsewhere (I/O, a delay) is left to finish that.
		 * A fatal signal that comes now keeps schedule() from sleeping.
		 */
		rtt->waiting = true;
		/*
		 * Freezable: a task held here past the freezer's 20 s (a long
		 * period, or never chosen) would else fail a suspend or a
		 * cgroup freeze, since it never returns to user space while it
		 * waits.  No lock is held here, and a thawed task re-checks
		 * its turn like any other wake-up.
		 */
		set_current_state(TASK_KILLABLE | TASK_FREEZABLE);
		raw_spin_unlock_irq(&rt.lock);
		/* Sliced: keeps the hung-task detector quiet in long waits. */
		schedule_timeout(RT_WAIT_SLICE);
	}
}

/*
 * Wait for the task's turn, then back to user code.  A task whose job was
 * pending when it came to wait (its next one, or its first when it was
 * kept from sleeping at registration long enough for the release) goes
 * on with it without a switch: the probe saw no start then.
 */
static long rt_wait_go_on(struct rt_task *rtt)
{
	long err = rt_wait_turn(rtt);

	if (!err)
		rt_trace_job_start(rtt, READ_ONCE(rtt->id));
	return err;
}

static void rt_gate_fn(struct callback_head *head)
{
	struct rt_task *rtt = container_of(head, struct rt_task, gate);
	bool overrun;

	raw_spin_lock_irq(&rt.lock);
	rtt->gate_queued = false;
	overrun = rtt->overrun_signal;
	rtt->overrun_signal = false;
	raw_spin_unlock_irq(&rt.lock);
	if (overrun)
		send_sig(SIGXCPU, current, 1);
	if (!(current->flags & PF_EXITING))
		rt_wait_turn(rtt);
	rt_task_put(rtt);
	/*
	 * The gate holds a module reference because it can run after the
	 * file is released (task_work runs LIFO at exit).  Dropping it is
	 * the last statement, but the return after it is module code (a
	 * tail call on x86; arm64 builds with frame pointers make none), in
	 * which a preemptible kernel may preempt the task: rt_exit() waits
	 * for it with a Tasks RCU grace period.
	 */
	module_put(THIS_MODULE);
}

/*
 * Make the task enter the kernel at once and run the gate; whether the
 * gate is queued.  rt.lock held.
 */
static bool rt_kick(struct rt_task *rtt)
{
	if (rtt->gate_queued)
		return true;
	/*
	 * task_work_add() may be called here, in hard-irq context under a
	 * raw lock: a lockless list and a kick, no sleeping lock.  (6.1 with
	 * generic KASAN records the caller's stack, which may allocate: the
	 * debug kernel's tests boot with stack_depot_disable=1, rt/README.md.)
	 * Failing means exiting: it will never run user code again.
	 */
	if (task_work_add(rtt->tsk, &rtt->gate, TWA_SIGNAL))
		return false;
	/* rt_gate_fn takes rt.lock first: these come before it can run. */
	kref_get(&rtt->ref);
	__module_get(THIS_MODULE);
	rtt->gate_queued = true;
	rt.gated = true;
	return true;
}

/* Make a task that lost the CPU stop before it runs user code again. */
static void rt_gate(struct rt_task *rtt)
{
	if (!rtt->in_wait && rt_kick(rtt))
		rtt->in_wait = true;
}

static struct rt_task *rt_task_at(int id)
{
	return rcu_dereference_protected(rt.task[id],
					 lockdep_is_held(&rt.lock));
}

/*
 * Program the timer for the policy core's next event.  A pinned timer
 * goes to the CPU that starts it, so from any other CPU the instance's CPU
 * is asked to do it (by an IPI; one already queued will do, as it reads
 * the state when it runs).  rt.lock held.
 */
static void rt_rearm(struct rt_inst *in)
{
	long long next = rts_next_event(in->sched);

	if (next == RTS_NEVER)
		hrtimer_try_to_cancel(&in->timer);
	else if (smp_processor_id() == in->cpu)
		hrtimer_start(&in->timer, ns_to_ktime(next),
			      HRTIMER_MODE_ABS_PINNED_HARD);
	else {
		/* Before it is queued: the IPI may run (and put it) at once. */
		__module_get(THIS_MODULE);
		if (smp_call_function_single_async(in->cpu, &in->rearm))
			module_put(THIS_MODULE);	/* one already queued */
	}
}

/* The IPI of rt_rearm(), on the instance's CPU with interrupts off. */
static void rt_rearm_ipi(void *info)
{
	raw_spin_lock(&rt.lock);
	if (rt.policy)
		rt_rearm(info);
	raw_spin_unlock(&rt.lock);
	/*
	 * The last statement; interrupts stay off until the return, which
	 * the unload's RCU grace period waits for.
	 */
	module_put(THIS_MODULE);
}

/* Was task id chosen, by the list of those chosen before? */
static bool rt_was_chosen(const int *prev, int nr, int id)
{
	int i;

	for (i = 0; i < nr; i++)
		if (prev[i] == id)
			return true;
	return false;
}

/*
 * Apply the policy's choice on one instance: hold the tasks no longer
 * chosen, wake the newly chosen.  rt.lock held, a plugin loaded.
 */
static void rt_dispatch(struct rt_inst *in)
{
	struct rts_sched *s = in->sched;
	int i, id, prev[RTS_MAX_CPUS];
	struct rt_task *rtt;

	lockdep_assert_held(&rt.lock);
	if (WARN_ON_ONCE(!rt.policy))
		return;
	/* The chosen tasks are charged for their budgets from now. */
	rts_advance(s, ktime_get_ns());
	memcpy(prev, s->run, sizeof(prev));
	rts_choose(s);
	/* A split policy's task that changes CPU stops to move (its gate). */
	for (i = 0; i < s->nr_cpus; i++) {
		id = prev[i];
		rtt = id == RTS_NONE || (s->task[id].chosen &&
		      (!s->policy->split || s->run[i] == id)) ? NULL :
		      rt_task_at(id);
		if (rtt)
			rt_gate(rtt);
	}
	for (i = 0; i < s->nr_cpus; i++) {
		id = s->run[i];
		rtt = id == RTS_NONE || (s->policy->split ? prev[i] == id :
		      rt_was_chosen(prev, s->nr_cpus, id)) ?
		      NULL : rt_task_at(id);
		if (rtt && rtt->waiting) {
			rtt->woken_at = s->now;
			wake_up_process(rtt->tsk);
		}
	}
	rt_rearm(in);
}

/* The policy core's instant now: its events up to now, its choice, its timer. */
static void rt_handle_now(struct rt_inst *in)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&rt.lock, flags);
	/*
	 * An irq_work queued before an unload can run after the next plugin
	 * registered with fewer instances: this one's core is the old one's.
	 */
	if (rt.policy && in - rt.inst < rt.nr_inst) {
		rts_advance(in->sched, ktime_get_ns());
		rt_dispatch(in);
	}
	raw_spin_unlock_irqrestore(&rt.lock, flags);
}

static enum hrtimer_restart rt_timer_fn(struct hrtimer *timer)
{
	rt_handle_now(container_of(timer, struct rt_inst, timer));
	return HRTIMER_NORESTART;
}

/*
 * A watched task took a CPU (rt_count_switch): its budget's end can be
 * timed now.  Hard-irq context, also on PREEMPT_RT, on the CPU it took,
 * once the switch is done.
 */
static void rt_took_cpu(struct irq_work *work)
{
	rt_handle_now(container_of(work, struct rt_inst, took_cpu));
}

/*
 * The policy core's cpu_time: the CPU time task id has had, and whether it
 * is on a CPU.  rt.lock held; its switch on another CPU may be counting.
 */
static long long rt_cpu_time(const struct rts_sched *s, int id, int *on_cpu)
{
	struct rt_task *rtt = rt_task_at(id);
	unsigned int seq;
	u64 ns, since, at;

	*on_cpu = 0;
	if (!rtt)
		return 0;
	do {
		seq = read_seqcount_begin(&rtt->cpu_seq);
		ns = rtt->cpu_ns;
		since = rtt->on_cpu_since;
	} while (read_seqcount_retry(&rtt->cpu_seq, seq));
	if (!since)
		return ns;
	*on_cpu = 1;
	/*
	 * Up to the instant the core handles, not the clock: a release handled
	 * late (a late timer) starts the new budget at the release, so the CPU
	 * the task had since is charged to the new period, not the old one.
	 */
	at = s->now;
	return ns + (at > since ? at - since : 0);
}

/*
 * The policy core's watch_cpu: chosen task id is off its CPU.  Its next
 * switch-in has its instance handle that instant (rt_count_switch); true
 * if it is on a CPU already, or is about to be.  rt.lock held.
 */
static int rt_watch_cpu(const struct rts_sched *s, int id)
{
	struct rt_task *rtt = rt_task_at(id);
	int on_cpu;

	if (!rtt)
		return 0;
	/*
	 * Woken from its wait at this very instant, it takes its CPU within
	 * microseconds: its budget is timed as if it had, an end that comes
	 * early by that delay is timed again then (on its CPU, or watched).
	 * Watching it would queue the irq_work at every release, between its
	 * switch-in and its job: 2.1 us of each on the reference device.
	 */
	if (rtt->waiting && rtt->woken_at == s->now)
		return 1;
	WRITE_ONCE(rtt->budget_watch, true);
	/*
	 * Pairs with the barrier in rt_count_switch(): a switch-in either
	 * sees the watch or is seen here.
	 */
	smp_mb();
	rt_cpu_time(s, id, &on_cpu);
	return on_cpu;
}

/*
 * The CPU time of registered tasks switched out and in at now, counted by
 * the sched_switch probe (rtsched_trace.c).  Only the task's own switches
 * write its count (and its rt_ioctl_run(), as a switch-in), one at a time;
 * interrupts are off here.  A watched task switched in has its instance
 * handle the instant (rt_watch_cpu), once the switch is done: here the
 * runqueue's lock is held, under which rt.lock must not be taken.
 */
void rt_count_switch(struct rt_task *out, struct rt_task *in, u64 now)
{
	if (out) {
		write_seqcount_begin(&out->cpu_seq);
		if (out->on_cpu_since && now > out->on_cpu_since)
			out->cpu_ns += now - out->on_cpu_since;
		out->on_cpu_since = 0;
		write_seqcount_end(&out->cpu_seq);
	}
	if (in) {
		write_seqcount_begin(&in->cpu_seq);
		in->on_cpu_since = now;
		write_seqcount_end(&in->cpu_seq);
		smp_mb();	/* Pairs with rt_watch_cpu(). */
		if (READ_ONCE(in->budget_watch) &&
		    xchg(&in->budget_watch, false))
			irq_work_queue(&READ_ONCE(in->inst)->took_cpu);
	}
}

/* Save current's scheduling class, to give it back when it leaves. */
static int rt_save_class(struct rt_task *rtt)
{
	/* Deadline parameters cannot be read back from a module. */
	if (current->policy == SCHED_DEADLINE)
		return -EBUSY;
	rtt->saved_attr = (struct sched_attr) {
		.size = sizeof(rtt->saved_attr),
		.sched_policy = current->policy,
		.sched_flags = current->sched_reset_on_fork ?
			       SCHED_FLAG_RESET_ON_FORK : 0,
		.sched_nice = task_nice(current),
		.sched_priority = current->rt_priority,
	};
	cpumask_copy(rtt->saved_mask, current->cpus_ptr);
	return 0;
}

static void rt_restore_class(struct rt_task *rtt, struct task_struct *tsk)
{
	sched_setattr_nocheck(tsk, &rtt->saved_attr);
	set_cpus_allowed_ptr(tsk, rtt->saved_mask);
}

/* Take rtt off the policy core; false if it was not on.  rt.lock held. */
static bool rt_unlink(struct rt_task *rtt)
{
	int id = rtt->id;

	if (id == RTS_NONE)
		return false;
	rts_task_stop(rtt->inst->sched, id, ktime_get_ns());
	RCU_INIT_POINTER(rt.task[id], NULL);
	hash_del_rcu(&rtt->by_thread);
	rtt->unlinked_gp = get_state_synchronize_rcu();
	WRITE_ONCE(rtt->id, RTS_NONE);
	/* A probe that still finds it must not time its budget. */
	WRITE_ONCE(rtt->budget_watch, false);
	rt_dispatch(rtt->inst);
	return true;
}

/* Stop scheduling rtt and give it back its own class. rt.mutex held. */
static void rt_task_stop(struct rt_task *rtt)
{
	bool unlinked, waiting;

	raw_spin_lock_irq(&rt.lock);
	unlinked = rt_unlink(rtt);
	waiting = rtt->waiting;
	raw_spin_unlock_irq(&rt.lock);
	if (!unlinked)
		return;
	/* Its class first: once awake it may look (and may preempt us). */
	rt_restore_class(rtt, rtt->tsk);
	if (waiting)
		wake_up_process(rtt->tsk);
	put_task_struct(rtt->tsk);
}

/*
 * sched_process_exit: a registered thread that exits without rt_exit()
 * leaves at once, even while other threads or a forked child keep its
 * file open.  Runs in the exiting thread, preemption disabled (RCU).
 */
static void rt_probe_exit(void *data, struct task_struct *p)
{
	struct rt_task *rtt;
	unsigned long flags;
	bool unlinked;
	int id;

	rtt = rt_task_of(p, &id);
	if (!rtt)
		return;
	raw_spin_lock_irqsave(&rt.lock, flags);
	unlinked = rt_unlink(rtt);
	raw_spin_unlock_irqrestore(&rt.lock, flags);
	/* Not the last reference: p holds its own until it is reaped. */
	if (unlinked)
		put_task_struct(p);
}

static int rt_times(struct rts_task_params *p,
		    const struct rtsched_task_args *a)
{
	if (a->period_us > RT_MAX_US || a->wcet_us > RT_MAX_US ||
	    a->deadline_us > RT_MAX_US || a->offset_us > RT_MAX_US ||
	    a->split_us > RT_MAX_US || a->split_deadline_us > RT_MAX_US)
		return -EINVAL;
	p->id = a->id;
	p->server = a->server;
	p->prio = a->prio;
	p->period = a->period_us * NSEC_PER_USEC;
	p->wcet = a->wcet_us * NSEC_PER_USEC;
	p->deadline = a->deadline_us * NSEC_PER_USEC;
	p->offset = a->offset_us * NSEC_PER_USEC;
	p->overrun = a->flags & RTSCHED_OVERRUN_SIGNAL ? RTS_OVERRUN_SIGNAL :
			RTS_OVERRUN_THROTTLE;
	p->sporadic = !!(a->flags & RTSCHED_SPORADIC);
	p->cpu = a->cpu;
	p->split_cpu = a->split_cpu;
	p->split = a->split_us * NSEC_PER_USEC;
	p->split_deadline = a->split_deadline_us * NSEC_PER_USEC;
	return 0;
}

static void rt_set_name(char *dst, const char *src)
{
	/* Padded: STATUS, open to anyone, copies all RTSCHED_NAME_LEN bytes. */
	strscpy_pad(dst, src, RTSCHED_NAME_LEN);
}

/* Arguments of a call that makes real-time work: CAP_SYS_NICE only. */
static long rt_privileged_args(void *args, void __user *uarg, size_t len)
{
	if (copy_from_user(args, uarg, len))
		return -EFAULT;
	return capable(CAP_SYS_NICE) ? 0 : -EPERM;
}

/*
 * The instance a task goes to: its reservation's, else its CPU's (any CPU
 * is the first instance: only partitioned plugins have others, and there
 * a task must say which; a semi-partitioned task's CPUs are its parts',
 * checked by the policy core, all on the first instance).  rt.mutex held
 * (reservations change under it); NULL when there is none.
 */
static struct rt_inst *rt_inst_for(int id, int cpu, bool reserved)
{
	int i;

	if (reserved) {
		for (i = 0; id >= 0 && id < RTS_MAX_TASKS && i < rt.nr_inst; i++)
			if (rt.inst[i].sched->task[id].reserved)
				return &rt.inst[i];
		/* Where the policy core says there is no such reservation. */
		return &rt.inst[0];
	}
	if (cpu == RTSCHED_ANY_CPU || rt.policy->split)
		return rt.policy->per_cpu ? NULL : &rt.inst[0];
	return cpu >= 0 && cpu < rt.nr_inst ? &rt.inst[cpu] : NULL;
}

/* Is id used on an instance other than in?  rt.lock held. */
static bool rt_id_used_elsewhere(int id, const struct rt_inst *in)
{
	int i;

	for (i = 0; i < rt.nr_inst; i++)
		if (&rt.inst[i] != in && rt.inst[i].sched->task[id].used)
			return true;
	return false;
}

/* The lowest id free on every instance, or RTS_NONE.  rt.lock held. */
static int rt_free_id(void)
{
	int id;

	for (id = 0; id < RTS_MAX_TASKS; id++)
		if (!rt_id_used_elsewhere(id, NULL))
			return id;
	return RTS_NONE;
}

/* Tasks started together share a common start on every CPU.  rt.lock held. */
static void rt_share_epoch(struct rt_inst *in)
{
	int i;

	for (i = 0; i < rt.nr_inst; i++)
		rts_share_epoch(in->sched, rt.inst[i].sched->epoch,
				ktime_get_ns());
}

/*
 * The first task to run starts the recorder; the servers created before
 * are recorded then, at that time.  rt.mutex held: servers are created
 * under it, so each is recorded once.
 */
static int rt_start_recording(void)
{
	struct rts_sched *s = rt.inst[0].sched;
	int started = rt_trace_start();
	int i, k;

	if (started <= 0)
		return started;
	raw_spin_lock_irq(&rt.lock);
	rts_for_each_server(s, k, i)
		rts_emit(s, ktime_get_ns(), RTS_EV_SERVER_CREATE, RTS_NONE, i,
			 0, 0);
	raw_spin_unlock_irq(&rt.lock);
	return 0;
}

/*
 * The CPUs a task may run on from its registration on: its instance's
 * (partitioned, one CPU), every real-time CPU (global), or the CPU of its
 * job's first part (semi-partitioned: a whole task never leaves it; a split
 * one follows its parts in its gate).  Set before the task is registered:
 * pinned only afterwards, a thread woken in between (it sleeps on rt.mutex
 * while other tasks start) ran on any real-time CPU as a task, which the
 * recorder showed as a whole task switched in on both.  A CPU out of range
 * gets every real-time CPU: the policy core refuses the task, with its own
 * error.  rt.mutex held (reservations change under it).
 */
static const struct cpumask *rt_first_cpus(const struct rt_inst *in,
					   const struct rts_task_params *p,
					   bool reserved)
{
	const struct rts_sched *s = in->sched;
	int cpu = p->cpu;

	if (rt.policy->global)
		return &rt.cpus;
	if (!rt.policy->split)
		return cpumask_of(in->cpu);
	if (reserved && p->id >= 0 && p->id < RTS_MAX_TASKS &&
	    s->task[p->id].reserved)
		cpu = s->task[p->id].p.cpu;
	return cpu >= 0 && cpu < s->nr_cpus ? cpumask_of(rt_cpu + cpu) :
	       &rt.cpus;
}

static long rt_ioctl_run(struct rt_task *rtt, void __user *uarg)
{
	/* A forked child must not inherit a real-time class it does not own. */
	struct sched_attr attr = {
		.size = sizeof(attr), .sched_policy = SCHED_FIFO,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
		.sched_priority = fifo_prio,
	};
	bool reserved;
	struct rtsched_task_args a;
	struct rts_task_params p;
	struct task_struct *before;
	unsigned long gp;
	struct rt_inst *in;
	int other;
	long err;

	err = rt_privileged_args(&a, uarg, sizeof(a));
	if (err)
		return err;
	reserved = a.flags & RTSCHED_USE_RESERVATION;
	if (a.flags & ~(RTSCHED_USE_RESERVATION | RTSCHED_TASK_FLAGS))
		return -EINVAL;
	err = rt_times(&p, &a);
	if (err)
		return err;

again:
	mutex_lock(&rt.mutex);
	err = -ENODEV;
	if (!rt.policy)
		goto out;
	err = -EBUSY;
	if (rtt->id != RTS_NONE)
		goto out;
	/*
	 * Another thread of this file before: the probes that found its
	 * registration must finish first, so that only this thread's switches
	 * write its CPU time and its exit probe cannot end the new
	 * registration.  (The same thread has no probe of its own in flight
	 * while it runs this.)  Waited for without rt.mutex, which every
	 * task's calls, close and exit take.
	 */
	before = rtt->tsk;
	if (before && before != current) {
		/* The exit probe unlinks under rt.lock only. */
		raw_spin_lock_irq(&rt.lock);
		gp = rtt->unlinked_gp;
		raw_spin_unlock_irq(&rt.lock);
		if (!poll_state_synchronize_rcu(gp)) {
			mutex_unlock(&rt.mutex);
			cond_synchronize_rcu(gp);
			goto again;
		}
	}
	err = -EINVAL;
	in = rt_inst_for(p.id, a.cpu, reserved);
	if (!in)
		goto out;
	err = rt_start_recording();
	if (err)
		goto out;
	/*
	 * Early in a boot the kernel may still run its hrtimers on the tick
	 * (no clocksource valid for high resolution yet: the camera kernel's
	 * TSC until 1.3 s): every release is then late by up to a tick.
	 */
	if (hrtimer_resolution > NSEC_PER_USEC)
		pr_warn_once("timers are not high-resolution yet (%u ns): releases are late by up to that\n",
			     hrtimer_resolution);
	err = rt_save_class(rtt);
	if (err)
		goto out;
	err = set_cpus_allowed_ptr(current, rt_first_cpus(in, &p, reserved));
	if (err)
		goto out;
	err = sched_setattr_nocheck(current, &attr);
	if (err)
		goto out_mask;

	rtt->tsk = current;
	rtt->pid = task_pid_vnr(current);
	/* Its file may have lost a registration to an unload before. */
	WRITE_ONCE(rtt->detached, false);
	rtt->waiting = false;
	rtt->budget_watch = false;
	rtt->in_wait = true;
	rtt->inst = in;
	rtt->follows_parts = rt.policy->split;
	/* Running now: its next switch-out may preempt a job (recorder). */
	rtt->seen = (struct rts_seen) { .job_here = 1 };
	raw_spin_lock_irq(&rt.lock);
	/* On its CPU now, which its first switch-in would have said. */
	rt_count_switch(NULL, rtt, ktime_get_ns());
	if (p.id == RTSCHED_AUTO_ID && !reserved)
		p.id = rt_free_id();
	err = -EINVAL;
	/*
	 * One registration per thread: the probes would find only its first
	 * (one made through another open file) for its switches and exit.
	 */
	if (rt_task_of(current, &other)) {
		err = -EBUSY;
	/* Another thread's gate still queued would act for this thread. */
	} else if (before && before != current && rtt->gate_queued) {
		err = -EBUSY;
	/* A running task holds its slot; the recorder wants the pid early. */
	} else if (p.id >= 0 && p.id < RTS_MAX_TASKS && !rt_task_at(p.id) &&
		   !rt_id_used_elsewhere(p.id, in)) {
		rcu_assign_pointer(rt.task[p.id], rtt);
		rt_share_epoch(in);
		err = rts_task_run(in->sched, &p, reserved, ktime_get_ns(),
				   NULL);
		if (err)
			RCU_INIT_POINTER(rt.task[p.id], NULL);
	}
	if (!err) {
		/* Found by the probes once its id is set: rt_task_of(). */
		hash_add_rcu(rt.by_thread, &rtt->by_thread,
			     (unsigned long)current);
		get_task_struct(current);
		WRITE_ONCE(rtt->id, p.id);
		if (!reserved)
			rt_set_name(rt.task_name[p.id], a.name);
		rt_dispatch(in);
	}
	raw_spin_unlock_irq(&rt.lock);
	if (err)
		goto out_class;
	mutex_unlock(&rt.mutex);
	/*
	 * Outside rt.mutex: a fault may take as long as user space likes
	 * (userfaultfd), and every task's close and exit takes the mutex.
	 */
	a.id = p.id;
	if (copy_to_user(uarg, &a, sizeof(a))) {
		/* The caller cannot learn its id: it is not registered. */
		mutex_lock(&rt.mutex);
		if (rt_is_mine(rtt))
			rt_task_stop(rtt);
		mutex_unlock(&rt.mutex);
		return -EFAULT;
	}
	return rt_wait_go_on(rtt);

out_class:
	rt_restore_class(rtt, current);
	goto out;
out_mask:
	set_cpus_allowed_ptr(current, rtt->saved_mask);
out:
	mutex_unlock(&rt.mutex);
	return err;
}

/* Whether the caller may act as rtt's task now. rt.lock or rt.mutex held. */
static long rt_check_caller(const struct rt_task *rtt)
{
	if (rtt->id == RTS_NONE)
		return READ_ONCE(rtt->detached) ? -ENODEV : -EINVAL;
	return rtt->tsk == current ? 0 : -EPERM;
}

static long rt_ioctl_wait(struct rt_task *rtt)
{
	long err;

	/*
	 * Under rt.lock a registered id implies a loaded plugin: unloading
	 * unlinks every task before it clears rt.policy.
	 */
	raw_spin_lock_irq(&rt.lock);
	err = rt_check_caller(rtt);
	if (!err) {
		/* Nothing pending only if no job was started: not an error. */
		rts_complete(rtt->inst->sched, rtt->id, ktime_get_ns());
		rtt->in_wait = true;
		rt_dispatch(rtt->inst);
	}
	raw_spin_unlock_irq(&rt.lock);
	return err ? err : rt_wait_go_on(rtt);
}

static long rt_ioctl_exit(struct rt_task *rtt)
{
	long err;

	mutex_lock(&rt.mutex);
	err = rt_check_caller(rtt);
	if (!err)
		rt_task_stop(rtt);
	mutex_unlock(&rt.mutex);
	return err;
}

static long rt_ioctl_server(void __user *uarg)
{
	struct rtsched_server_args a;
	struct rts_server_params p;
	long err;

	err = rt_privileged_args(&a, uarg, sizeof(a));
	if (err)
		return err;
	if (a.period_us > RT_MAX_US || a.budget_us > RT_MAX_US)
		return -EINVAL;
	p.id = a.id;
	p.prio = a.prio;
	p.period = a.period_us * NSEC_PER_USEC;
	p.budget = a.budget_us * NSEC_PER_USEC;
	mutex_lock(&rt.mutex);
	err = -ENODEV;
	if (rt.policy) {
		raw_spin_lock_irq(&rt.lock);
		err = rts_server_add(rt.inst[0].sched, &p, ktime_get_ns(),
				     NULL);
		if (!err) {
			rt_set_name(rt.server_name[p.id], a.name);
			rt_dispatch(&rt.inst[0]);
		}
		raw_spin_unlock_irq(&rt.lock);
	}
	mutex_unlock(&rt.mutex);
	return err;
}

static long rt_ioctl_reserve(void __user *uarg)
{
	struct rtsched_task_args a;
	struct rts_task_params p;
	struct rt_inst *in;
	long err;

	err = rt_privileged_args(&a, uarg, sizeof(a));
	if (err)
		return err;
	if (a.flags & ~RTSCHED_TASK_FLAGS)
		return -EINVAL;
	err = rt_times(&p, &a);
	if (err)
		return err;
	mutex_lock(&rt.mutex);
	err = -ENODEV;
	if (!rt.policy)
		goto out;
	err = -EINVAL;
	in = rt_inst_for(p.id, a.cpu, false);
	if (!in || p.id < 0 || p.id >= RTS_MAX_TASKS)
		goto out;
	raw_spin_lock_irq(&rt.lock);
	if (!rt_id_used_elsewhere(p.id, in))
		err = rts_task_reserve(in->sched, &p, ktime_get_ns(), NULL);
	if (!err)
		rt_set_name(rt.task_name[p.id], a.name);
	raw_spin_unlock_irq(&rt.lock);
out:
	mutex_unlock(&rt.mutex);
	return err;
}

/* A job of a sporadic task, released by the application. */
static long rt_ioctl_release(void __user *uarg)
{
	struct rt_task *rtt;
	struct rt_inst *in;
	s32 id;
	long err;

	err = rt_privileged_args(&id, uarg, sizeof(id));
	if (err)
		return err;
	raw_spin_lock_irq(&rt.lock);
	err = -ENODEV;
	if (rt.policy) {
		/* A running task is on the instance of its registration. */
		rtt = id >= 0 && id < RTS_MAX_TASKS ? rt_task_at(id) : NULL;
		in = rtt ? rtt->inst : &rt.inst[0];
		err = rts_release(in->sched, id, ktime_get_ns(), NULL);
		if (!err)
			rt_dispatch(in);
	}
	raw_spin_unlock_irq(&rt.lock);
	return err;
}

static long rt_ioctl_clear(void)
{
	long err = -ENODEV;
	int i;

	if (!capable(CAP_SYS_NICE))
		return -EPERM;
	mutex_lock(&rt.mutex);
	if (rt.policy) {
		raw_spin_lock_irq(&rt.lock);
		/* Nothing cleared while a task runs anywhere. */
		err = 0;
		for (i = 0; i < rt.nr_inst; i++)
			if (rt.inst[i].sched->nr_running)
				err = -EBUSY;
		for (i = 0; !err && i < rt.nr_inst; i++)
			err = rts_clear(rt.inst[i].sched);
		raw_spin_unlock_irq(&rt.lock);
	}
	mutex_unlock(&rt.mutex);
	return err;
}

/*
 * STATUS is open to anyone, so it reads the tables a batch at a time under
 * rt.lock and copies each batch out before the next, a preemption point:
 * a reader keeps interrupts off (and, in a kernel without preemption, its
 * CPU) for one batch, not for every slot.  Read at once, a loop of it
 * beside a real-time task delayed that task's releases by up to 8 us (one
 * task) or 21 us (250 reserved) on the reference device.  Each entry is
 * consistent; the tables are not one snapshot.  Not under rt.mutex: a
 * reader preempted holding it would stall the tasks' own calls (a
 * semi-partitioned task's move).
 */
#define RT_STATUS_BATCH	16

/*
 * Fill up to room entries of a status table from slot *from on, under
 * rt.lock; *from becomes the next slot, RTS_NONE after the last.
 */
typedef int (*rt_status_fill)(void *buf, int cpu, int *from, u32 room);

static int rt_fill_servers(void *buf, int cpu, int *from, u32 room)
{
	const struct rts_sched *s = rt.inst[0].sched;
	struct rtsched_server_status *sv = buf;
	int n = 0;
	int i;

	for (i = *from; i < RTS_MAX_SERVERS && n < room; i++) {
		const struct rts_server *v = &s->server[i];

		if (!v->used)
			continue;
		sv->id = i;
		sv->prio = v->p.prio;
		sv->period_us = div_u64(v->p.period, NSEC_PER_USEC);
		sv->budget_us = div_u64(v->p.budget, NSEC_PER_USEC);
		sv->left_us = div_u64(v->left, NSEC_PER_USEC);
		sv->active = s->active_server == i;
		memcpy(sv->name, rt.server_name[i], RTSCHED_NAME_LEN);
		sv++;
		n++;
	}
	*from = i < RTS_MAX_SERVERS ? i : RTS_NONE;
	return n;
}

static int rt_fill_tasks(void *buf, int cpu, int *from, u32 room)
{
	const struct rts_sched *s = rt.inst[cpu].sched;
	struct rtsched_task_status *ts = buf;
	struct rt_task *rtt;
	int n = 0;
	int i;

	for (i = *from; i < RTS_MAX_TASKS && n < room; i++) {
		const struct rts_task *t = &s->task[i];

		if (!t->used)
			continue;
		rtt = rt_task_at(i);
		ts->id = i;
		ts->cpu = cpu;
		ts->server = t->p.server;
		ts->prio = t->p.prio;
		ts->pid = rtt ? rtt->pid : 0;
		ts->period_us = div_u64(t->p.period, NSEC_PER_USEC);
		ts->wcet_us = div_u64(t->p.wcet, NSEC_PER_USEC);
		ts->deadline_us = div_u64(t->p.deadline, NSEC_PER_USEC);
		ts->offset_us = div_u64(t->p.offset, NSEC_PER_USEC);
		ts->released = t->released;
		ts->completed = t->completed;
		ts->misses = t->misses;
		memcpy(ts->name, rt.task_name[i], RTSCHED_NAME_LEN);
		ts++;
		n++;
	}
	*from = i < RTS_MAX_TASKS ? i : RTS_NONE;
	return n;
}

/*
 * The header, after bringing every policy core up to now.  Returns the
 * plugin (NULL: none) and its policy cores' number in *nr_inst.
 */
static const struct rts_policy *rt_fill_header(struct rtsched_status *st,
						int *nr_inst)
{
	const struct rts_policy *policy;
	int i;

	raw_spin_lock_irq(&rt.lock);
	for (i = 0; rt.policy && i < rt.nr_inst; i++)
		rts_advance(rt.inst[i].sched, ktime_get_ns());
	st->now_ns = ktime_get_ns();
	st->trace_lost = rt_trace_lost();
	if (rt.policy) {
		strscpy(st->plugin, rt.policy->name, sizeof(st->plugin));
		st->nr_cpus = rt.policy->global || rt.policy->split ?
			      rt.inst[0].sched->nr_cpus : rt.nr_inst;
		/* The common start of whichever CPU has one (they share it). */
		for (i = 0; i < rt.nr_inst; i++)
			if (rt.inst[i].sched->epoch != RTS_NEVER)
				st->epoch_ns = rt.inst[i].sched->epoch;
	}
	policy = rt.policy;
	*nr_inst = rt.nr_inst;
	raw_spin_unlock_irq(&rt.lock);
	return policy;
}

/*
 * Copy one table of cpu to dst, batch by batch, after *nr entries and up
 * to max.  Stops if the plugin changes meanwhile (a later one's tables are
 * not this one's).
 */
static long rt_copy_status(rt_status_fill fill, size_t size, int cpu,
			   void *buf, u64 dst, u32 *nr, u32 max,
			   const struct rts_policy *policy)
{
	int from = 0;
	int n;

	while (from != RTS_NONE && *nr < max) {
		n = 0;
		raw_spin_lock_irq(&rt.lock);
		if (rt.policy == policy)
			n = fill(buf, cpu, &from,
				 min_t(u32, max - *nr, RT_STATUS_BATCH));
		else
			from = RTS_NONE;
		raw_spin_unlock_irq(&rt.lock);
		if (copy_to_user(u64_to_user_ptr(dst + (u64)*nr * size), buf,
				 n * size))
			return -EFAULT;
		*nr += n;
		/* copy_to_user() is no preemption point without debugging. */
		cond_resched();
	}
	return 0;
}

static long rt_ioctl_status(void __user *uarg)
{
	const struct rts_policy *policy;
	struct rtsched_status st;
	int i, nr_inst;
	void *buf;
	long err;

	if (copy_from_user(&st, uarg, sizeof(st)))
		return -EFAULT;
	st.max_servers = min_t(u32, st.max_servers, RTS_MAX_SERVERS);
	st.max_tasks = min_t(u32, st.max_tasks, RTS_MAX_TASKS);
	memset(st.plugin, 0, sizeof(st.plugin));
	st.epoch_ns = 0;
	st.nr_servers = 0;
	st.nr_tasks = 0;
	st.nr_cpus = 0;
	/* Zeroed once: every entry sets all but its padding. */
	buf = kcalloc(RT_STATUS_BATCH,
		      max(sizeof(struct rtsched_server_status),
			  sizeof(struct rtsched_task_status)), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	policy = rt_fill_header(&st, &nr_inst);
	err = rt_copy_status(rt_fill_servers, sizeof(struct rtsched_server_status),
			     0, buf, st.servers_ptr, &st.nr_servers,
			     policy ? st.max_servers : 0, policy);
	for (i = 0; !err && policy && i < nr_inst; i++)
		err = rt_copy_status(rt_fill_tasks,
				     sizeof(struct rtsched_task_status), i, buf,
				     st.tasks_ptr, &st.nr_tasks, st.max_tasks,
				     policy);
	if (!err && copy_to_user(uarg, &st, sizeof(st)))
		err = -EFAULT;
	kfree(buf);
	return err;
}

static long rt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct rt_task *rtt = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case RTSCHED_IOC_CREATE_SERVER:
		return rt_ioctl_server(uarg);
	case RTSCHED_IOC_RESERVE:
		return rt_ioctl_reserve(uarg);
	case RTSCHED_IOC_RUN:
		return rt_ioctl_run(rtt, uarg);
	case RTSCHED_IOC_WAIT:
		return rt_ioctl_wait(rtt);
	case RTSCHED_IOC_EXIT:
		return rt_ioctl_exit(rtt);
	case RTSCHED_IOC_STATUS:
		return rt_ioctl_status(uarg);
	case RTSCHED_IOC_CLEAR:
		return rt_ioctl_clear();
	case RTSCHED_IOC_RELEASE:
		return rt_ioctl_release(uarg);
	}
	return -ENOTTY;
}

static int rt_open(struct inode *inode, struct file *file)
{
	struct rt_task *rtt = kzalloc(sizeof(*rtt), GFP_KERNEL);

	if (!rtt)
		return -ENOMEM;
	if (!alloc_cpumask_var(&rtt->saved_mask, GFP_KERNEL)) {
		kfree(rtt);
		return -ENOMEM;
	}
	kref_init(&rtt->ref);
	seqcount_init(&rtt->cpu_seq);
	rtt->id = RTS_NONE;
	rtt->unlinked_gp = get_completed_synchronize_rcu();
	init_task_work(&rtt->gate, rt_gate_fn);
	file->private_data = rtt;
	return 0;
}

/*
 * The last close, including the one at exit or kill, ends the task.  Only a
 * file that ran a task takes rt.mutex: any user may open the device, and
 * one that closes it again and again must not hold up what waits for the
 * mutex (a semi-partitioned task's move, rt_follow_part()).  No ioctl of
 * this file is in flight, so its RUN is over and tsk is final.
 */
static int rt_release(struct inode *inode, struct file *file)
{
	struct rt_task *rtt = file->private_data;

	if (rtt->tsk) {
		mutex_lock(&rt.mutex);
		rt_task_stop(rtt);
		mutex_unlock(&rt.mutex);
	}
	rt_task_put(rtt);
	return 0;
}

/*
 * The trace shows every switch on rt_cpu (pids, commands) and reading
 * consumes it: as for perf, only for whoever may watch other processes.
 * The opener's credentials count, not the reader's.
 */
static ssize_t rt_read(struct file *file, char __user *buf, size_t len,
		       loff_t *ppos)
{
	if (!file_ns_capable(file, &init_user_ns, CAP_PERFMON) &&
	    !file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN))
		return -EPERM;
	return rt_trace_read(buf, len);
}

static const struct file_operations rt_fops = {
	.owner = THIS_MODULE,
	.open = rt_open,
	.release = rt_release,
	.read = rt_read,
	.unlocked_ioctl = rt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice rt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rtsched",
	.fops = &rt_fops,
	.mode = 0666,
};

int rtsched_register_plugin(const struct rts_policy *policy)
{
	int err = 0;
	int i;

	mutex_lock(&rt.mutex);
	if (rt.policy) {
		pr_err("plugin %s refused: %s is loaded\n", policy->name,
		       rt.policy->name);
		err = -EBUSY;
	} else {
		raw_spin_lock_irq(&rt.lock);
		rt.nr_inst = policy->per_cpu ? rt_cpus : 1;
		for (i = 0; i < rt.nr_inst; i++) {
			struct rt_inst *in = &rt.inst[i];

			rts_init(in->sched, policy,
				 (long long)start_lead_us * 1000, rt_emit, in);
			in->sched->overrun_slack = (long long)overrun_slack_us *
						   NSEC_PER_USEC;
			in->sched->cpu_time = rt_cpu_time;
			in->sched->watch_cpu = rt_watch_cpu;
			in->sched->nr_cpus = policy->global || policy->split ?
					     rt_cpus : 1;
		}
		memset(rt.server_name, 0, sizeof(rt.server_name));
		memset(rt.task_name, 0, sizeof(rt.task_name));
		rt.policy = policy;
		raw_spin_unlock_irq(&rt.lock);
	}
	mutex_unlock(&rt.mutex);
	return err;
}
EXPORT_SYMBOL_GPL(rtsched_register_plugin);

/* Running tasks go back to SCHED_OTHER; their next call gets -ENODEV. */
void rtsched_unregister_plugin(const struct rts_policy *policy)
{
	struct rt_task *rtt;
	int i;

	mutex_lock(&rt.mutex);
	if (WARN_ON(rt.policy != policy)) {
		mutex_unlock(&rt.mutex);
		return;
	}
	for (i = 0; i < RTS_MAX_TASKS; i++) {
		/* A thread's exit may clear its slot (under rt.lock only). */
		rtt = rcu_dereference_check(rt.task[i],
					    lockdep_is_held(&rt.mutex));
		if (!rtt)
			continue;
		WRITE_ONCE(rtt->detached, true);
		rt_task_stop(rtt);
	}
	raw_spin_lock_irq(&rt.lock);
	rt.policy = NULL;
	raw_spin_unlock_irq(&rt.lock);
	/* rt.policy is checked by the IPIs; the timers must not run at all. */
	for (i = 0; i < rt.nr_inst; i++)
		hrtimer_cancel(&rt.inst[i].timer);
	mutex_unlock(&rt.mutex);
}
EXPORT_SYMBOL_GPL(rtsched_unregister_plugin);

/*
 * The registration of thread p and its id (its slot, which stays valid
 * even if the task stops meanwhile), or NULL.  For the probes: runs under
 * RCU, no locks.  By thread, not by class: a thread another process moved
 * to another class (chrt -p) is still charged for the CPU it gets.
 */
struct rt_task *rt_task_of(struct task_struct *p, int *id)
{
	struct rt_task *rtt;

	hash_for_each_possible_rcu(rt.by_thread, rtt, by_thread,
				   (unsigned long)p) {
		if (rtt->tsk == p) {
			/* Added under rt.lock before its id was set. */
			*id = READ_ONCE(rtt->id);
			return *id == RTS_NONE ? NULL : rtt;
		}
	}
	return NULL;
}

/* Whether task id has an uncompleted job, and which; racy by design. */
static bool rt_job_pending(struct rt_task *rtt, int id, u64 *job)
{
	const struct rts_task *t = &READ_ONCE(rtt->inst)->sched->task[id];
	u64 completed = READ_ONCE(t->completed);

	*job = completed;
	return READ_ONCE(t->running) && READ_ONCE(t->released) > completed;
}

/*
 * Whether task id on cpu is where its job runs: not a semi-partitioned
 * task on another CPU than its part's (it is on its way there, in the
 * kernel).  Racy as rt_job_pending().
 */
static bool rt_job_here(struct rt_task *rtt, int id, int cpu)
{
	const struct rts_task *t = &READ_ONCE(rtt->inst)->sched->task[id];

	return !rtt->follows_parts || cpu == rt_cpu + rts_part_cpu(t);
}

/*
 * The job event (RTS_NONE: none) of task id's thread switched in on cpu,
 * switched out, or going on to user code on cpu without a switch (its
 * next job pending), and the job.  Called by the recorder's switch probe
 * and by the task itself, never at once (struct rts_seen).
 */
int rt_job_switch_in(struct rt_task *rtt, int id, int cpu, u64 *job)
{
	bool here = rt_job_here(rtt, id, cpu);
	bool pending = rt_job_pending(rtt, id, job);

	return rts_seen_switch_in(&rtt->seen, here, pending, *job);
}

int rt_job_switch_out(struct rt_task *rtt, int id, u64 *job)
{
	bool pending = rt_job_pending(rtt, id, job);

	return rts_seen_switch_out(&rtt->seen, pending, *job);
}

int rt_job_go_on(struct rt_task *rtt, int id, int cpu, u64 *job)
{
	bool here = rt_job_here(rtt, id, cpu);
	bool pending = rt_job_pending(rtt, id, job);

	return rts_seen_go_on(&rtt->seen, here, pending, *job);
}

/*
 * The real-time CPUs are the framework's while it is loaded: their timers
 * are pinned to them and its tasks' affinities name them.  Offlining one
 * would move its timer and its tasks to another CPU unseen, so it is
 * refused, as SCHED_DEADLINE refuses when what it admitted would no longer
 * fit; unlike SCHED_DEADLINE, also on suspend, which offlines every CPU but
 * the boot one (its tasks would resume off their CPUs).  Not once the
 * system goes down: arm64's kexec offlines every CPU but one and BUG()s if
 * one stays (smp_shutdown_nonboot_cpus()).
 */
static int rt_cpu_down(unsigned int cpu)
{
	if (system_state != SYSTEM_RUNNING)
		return 0;
	return cpumask_test_cpu(cpu, &rt.cpus) ? -EBUSY : 0;
}

/* rt.cpus set: they must be online, and stay online while we are loaded. */
static int rt_hold_cpus(void)
{
	int err = 0, i;

	cpus_read_lock();
	for (i = 0; i < rt_cpus && !err; i++) {
		if (!cpu_online(rt_cpu + i)) {
			pr_err("CPU %d is not online\n", rt_cpu + i);
			err = -EINVAL;
		}
	}
	if (!err) {
		err = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_AP_ONLINE_DYN,
							   "rtsched:online",
							   NULL, rt_cpu_down);
		if (err > 0) {
			rt.hp_state = err;
			err = 0;
		}
	}
	cpus_read_unlock();
	return err;
}

static int __init rt_init(void)
{
	/* The recorder's, and the one that ends a thread's registration. */
	static const char *const tracepoints[] = {
		"sched_switch", "sched_process_exit",
	};
	struct tracepoint *tp[ARRAY_SIZE(tracepoints)];
	int err, i;

	if (rt_cpus < 1 || rt_cpus > RT_MAX_CPUS || rt_cpu < 0 ||
	    rt_cpus > nr_cpu_ids || rt_cpu > nr_cpu_ids - rt_cpus ||
	    fifo_prio < 1 || fifo_prio > RT_FIFO_PRIO_MAX) {
		pr_err("rt_cpu %d, rt_cpus %d or fifo_prio %d out of range\n",
		       rt_cpu, rt_cpus, fifo_prio);
		return -EINVAL;
	}
	mutex_init(&rt.mutex);
	raw_spin_lock_init(&rt.lock);
	for (i = 0; i < rt_cpus; i++) {
		struct rt_inst *in = &rt.inst[i];

		in->cpu = rt_cpu + i;
		cpumask_set_cpu(in->cpu, &rt.cpus);
		hrtimer_init(&in->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_PINNED_HARD);
		in->timer.function = rt_timer_fn;
		INIT_CSD(&in->rearm, rt_rearm_ipi, in);
		in->took_cpu = IRQ_WORK_INIT_HARD(rt_took_cpu);
		in->sched = kvzalloc(sizeof(*in->sched), GFP_KERNEL);
		if (!in->sched) {
			err = -ENOMEM;
			goto err_sched;
		}
	}
	err = rt_hold_cpus();
	if (err)
		goto err_sched;
	err = rt_tracepoints(tracepoints, tp, ARRAY_SIZE(tp));
	if (err)
		goto err_cpus;
	err = rt_trace_init(trace_records, rt_cpu, rt_cpus, tp[0]);
	if (err)
		goto err_cpus;
	rt.process_exit = tp[1];
	err = tracepoint_probe_register(rt.process_exit, rt_probe_exit, NULL);
	if (err)
		goto err_trace;
	err = misc_register(&rt_misc);
	if (err)
		goto err_exit_probe;
	/*
	 * Nothing is printed when loading works: on a 115200 baud console each
	 * line held the loading insmod 4-5 ms (the camera demo).  rtctl status
	 * names the plugin, /sys/module/rtsched/parameters the CPUs.
	 */
	return 0;

err_exit_probe:
	tracepoint_probe_unregister(rt.process_exit, rt_probe_exit, NULL);
	tracepoint_synchronize_unregister();
err_trace:
	rt_trace_exit();
err_cpus:
	cpuhp_remove_state_nocalls(rt.hp_state);
err_sched:
	for (i = 0; i < rt_cpus; i++)
		kvfree(rt.inst[i].sched);
	return err;
}

static void __exit rt_exit(void)
{
	int i;

	misc_deregister(&rt_misc);
	tracepoint_probe_unregister(rt.process_exit, rt_probe_exit, NULL);
	/* rt_trace_exit() waits for the probes of both tracepoints. */
	rt_trace_exit();
	cpuhp_remove_state_nocalls(rt.hp_state);
	for (i = 0; i < rt_cpus; i++) {
		/* The probes are gone: no switch-in queues it again. */
		irq_work_sync(&rt.inst[i].took_cpu);
		kvfree(rt.inst[i].sched);
	}
	/*
	 * A gate's task may still be in rt_gate_fn's return after its
	 * module_put(), preempted there: it leaves only by a voluntary
	 * switch or a return to user space, which Tasks RCU waits for.
	 */
	if (rt.gated)
		synchronize_rcu_tasks();
}

module_init(rt_init);
module_exit(rt_exit);
MODULE_DESCRIPTION("Loadable real-time scheduling framework (rtsched)");
MODULE_LICENSE("GPL");
