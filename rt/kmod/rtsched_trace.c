// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched recorder: a ring of binary events read() from /dev/rtsched,
 * fed by the policy core and by the kernel's own sched_switch tracepoint
 * (an independent view of who really ran on the real-time CPU).
 *
 * When the ring is full new events are dropped and counted; the count
 * is recorded as an overflow event once there is room again.
 *
 * The ring is allocated when the first task runs (rt_trace_start()), not
 * when the module loads: 3 MB took 0.57 ms of a 0.74 ms module init in the
 * guest (bench/rt_boot), on the boot's critical path where the scheduler is
 * loaded.  Until then nothing is recorded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "rtsched.h"

static struct {
	raw_spinlock_t lock;		/* innermost: taken under rq locks */
	struct mutex start_lock;	/* serialises rt_trace_start() */
	struct rtsched_record *buf;	/* NULL until recording starts */
	unsigned int size;
	unsigned int head;		/* oldest record */
	unsigned int count;
	u64 lost;			/* dropped since the last overflow event */
	u64 lost_total;
	int first_cpu;			/* the real-time CPUs: first_cpu.. */
	int nr_cpus;
	struct tracepoint *sched_switch;
} ring;

static void ring_push(const struct rtsched_record *rec)
{
	ring.buf[(ring.head + ring.count) % ring.size] = *rec;
	ring.count++;
}

/* One record lost: counted, and marked by the next one pushed.  ring.lock held. */
static void ring_lose(void)
{
	ring.lost++;
	ring.lost_total++;
}

void rt_trace_put(struct rtsched_record *rec)
{
	struct rtsched_record ovf = { .type = RTS_EV_OVERFLOW, .task = -1,
				      .server = -1 };
	unsigned long flags;

	raw_spin_lock_irqsave(&ring.lock, flags);
	if (!ring.buf) {
		/* Not recording yet: nothing is lost. */
	} else if (ring.count + (ring.lost ? 2 : 1) > ring.size) {
		ring_lose();
	} else {
		if (ring.lost) {
			ovf.time = rec->time;
			ovf.cpu = rec->cpu;
			ovf.job = ring.lost;
			ring_push(&ovf);
			ring.lost = 0;
		}
		ring_push(rec);
	}
	raw_spin_unlock_irqrestore(&ring.lock, flags);
}

/* Whole records only; returns 0 when the ring is empty. */
ssize_t rt_trace_read(char __user *buf, size_t len)
{
	struct rtsched_record rec;
	size_t done = 0;
	bool got;

	while (done + sizeof(rec) <= len) {
		raw_spin_lock_irq(&ring.lock);
		got = ring.count > 0;
		if (got) {
			rec = ring.buf[ring.head];
			ring.head = (ring.head + 1) % ring.size;
			ring.count--;
		}
		raw_spin_unlock_irq(&ring.lock);
		if (!got)
			break;
		if (copy_to_user(buf + done, &rec, sizeof(rec))) {
			/* Taken but not delivered: lost, and marked as such. */
			raw_spin_lock_irq(&ring.lock);
			ring_lose();
			raw_spin_unlock_irq(&ring.lock);
			return done ? done : -EFAULT;
		}
		done += sizeof(rec);
	}
	return done;
}

u64 rt_trace_lost(void)
{
	return READ_ONCE(ring.lost_total);
}

/* The letter ps and the sched_switch event show for a task state. */
static char state_letter(bool preempt, unsigned int state)
{
	static const char letters[] = "SDTtXZPI";
	int i;

	if (preempt || !(state & TASK_REPORT))
		return 'R';
	for (i = 0; i < 8; i++)
		if (state & (1U << i))
			return letters[i];
	return '?';
}

static void job_event(int id, int type, u64 job, u64 now, int cpu)
{
	struct rtsched_record rec = {
		.time = now, .type = type, .cpu = cpu,
		.task = id, .server = -1, .job = job,
	};

	rt_trace_put(&rec);
}

/*
 * The framework's one sched_switch probe: it counts the CPU time of the
 * tasks switched out and in (their budgets are charged for it) on any CPU,
 * and records the switch and the job events on the real-time CPUs.
 */
static void probe_sched_switch(void *data, bool preempt,
			       struct task_struct *prev,
			       struct task_struct *next,
			       unsigned int prev_state)
{
	struct rtsched_record rec = {
		.type = RTS_EV_SWITCH, .task = -1, .server = -1,
	};
	struct rt_task *out, *in;
	int out_id, in_id, type, cpu = smp_processor_id();
	bool recorded;
	u64 job;

	out = rt_task_of(prev, &out_id);
	in = rt_task_of(next, &in_id);
	/* Unlocked: a quick filter, rt_trace_put() decides under the lock. */
	recorded = READ_ONCE(ring.buf) && cpu >= ring.first_cpu &&
		   cpu < ring.first_cpu + ring.nr_cpus;
	if (!out && !in && !recorded)
		return;
	rec.time = ktime_get_ns();
	rt_count_switch(out, in, rec.time);
	if (!recorded)
		return;
	rec.cpu = cpu;
	rec.pid = task_pid_nr(prev);
	rec.next_pid = task_pid_nr(next);
	rec.prev_state = state_letter(preempt, prev_state);
	memcpy(rec.prev_comm, prev->comm, sizeof(rec.prev_comm));
	memcpy(rec.next_comm, next->comm, sizeof(rec.next_comm));
	rec.prev_comm[sizeof(rec.prev_comm) - 1] = '\0';
	rec.next_comm[sizeof(rec.next_comm) - 1] = '\0';
	rt_trace_put(&rec);

	/* Job events of the task switched out and of the one switched in. */
	type = out ? rt_job_switch_out(out, out_id, &job) : RTS_NONE;
	if (type != RTS_NONE)
		job_event(out_id, type, job, rec.time, cpu);
	type = in ? rt_job_switch_in(in, in_id, cpu, &job) : RTS_NONE;
	if (type != RTS_NONE)
		job_event(in_id, type, job, rec.time, cpu);
}

/*
 * Task id (RTS_NONE: no longer one) returns to user space: the start of its
 * pending job if no switch-in started it (it went on from the previous job).
 */
void rt_trace_job_start(struct rt_task *rtt, int id)
{
	int cpu;
	u64 job;

	if (id == RTS_NONE)
		return;
	/* The time and CPU of one instant: no switch in between. */
	preempt_disable();
	cpu = smp_processor_id();
	if (rt_job_go_on(rtt, id, cpu, &job) == RTS_EV_START)
		job_event(id, RTS_EV_START, job, ktime_get_ns(), cpu);
	preempt_enable();
}

struct tracepoint_lookup {
	const char *const *names;
	struct tracepoint **found;
	int n;
};

static void match_tracepoint(struct tracepoint *tp, void *priv)
{
	struct tracepoint_lookup *l = priv;
	int i;

	for (i = 0; i < l->n; i++)
		if (!l->found[i] && !strcmp(tp->name, l->names[i]))
			l->found[i] = tp;
}

/*
 * The scheduler's tracepoint symbols are not exported: look them up, all
 * in one pass over the kernel's (each pass took 0.02 ms at boot in the
 * guest, bench/rt_boot).
 */
int rt_tracepoints(const char *const names[], struct tracepoint *found[],
		   int n)
{
	struct tracepoint_lookup l = { .names = names, .found = found, .n = n };
	int i, err = 0;

	for (i = 0; i < n; i++)
		found[i] = NULL;
	for_each_kernel_tracepoint(match_tracepoint, &l);
	for (i = 0; i < n; i++) {
		if (!found[i]) {
			pr_err("%s tracepoint not found\n", names[i]);
			err = -ENOENT;
		}
	}
	return err;
}

/*
 * Start recording: allocate the ring, the first time only (it stays until
 * the module is unloaded).  Process context, may sleep: never under a raw
 * lock.  1 if this call started it, 0 if it was recording, -ENOMEM.
 */
int rt_trace_start(void)
{
	struct rtsched_record *buf;
	size_t bytes = array_size(ring.size, sizeof(*buf));
	int ret = 0;

	mutex_lock(&ring.start_lock);
	/* Only written under start_lock. */
	if (ring.buf)
		goto out;
	/* Every record is written before it is read: no need to zero. */
	buf = __vmalloc(bytes, GFP_KERNEL | __GFP_NOWARN);
	if (!buf) {
		pr_err("cannot allocate the recorder's ring: %u records, %zu kB (trace_records)\n",
		       ring.size, bytes / 1024);
		ret = -ENOMEM;
		goto out;
	}
	raw_spin_lock_irq(&ring.lock);
	WRITE_ONCE(ring.buf, buf);
	raw_spin_unlock_irq(&ring.lock);
	ret = 1;
out:
	mutex_unlock(&ring.start_lock);
	return ret;
}

int rt_trace_init(unsigned int nr_records, int first_cpu, int nr_cpus,
		  struct tracepoint *sched_switch)
{
	raw_spin_lock_init(&ring.lock);
	mutex_init(&ring.start_lock);
	ring.size = max(nr_records, 16U);
	ring.first_cpu = first_cpu;
	ring.nr_cpus = nr_cpus;
	ring.sched_switch = sched_switch;
	return tracepoint_probe_register(ring.sched_switch, probe_sched_switch,
					 NULL);
}

void rt_trace_exit(void)
{
	tracepoint_probe_unregister(ring.sched_switch, probe_sched_switch,
				    NULL);
	tracepoint_synchronize_unregister();
	vfree(ring.buf);
}
