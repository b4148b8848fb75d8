/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rts: the scheduling policy core of rtsched, in plain C.
 *
 * It includes no header at all so that the same files build into the
 * kernel modules and into the host unit tests.  Everything is decided
 * from explicit times (nanoseconds) passed in by the caller; the kernel
 * side only turns the decisions into wake-ups and timer expiries.
 *
 * Semantics are those of docs/rt-formats.md.
 */
#ifndef RTS_H
#define RTS_H

#define RTS_MAX_TASKS	256
#define RTS_MAX_SERVERS	64
/* CPUs one global scheduler runs jobs on at once. */
#define RTS_MAX_CPUS	8
#define RTS_PRIO_MAX	99
#define RTS_NONE	(-1)
#define RTS_NEVER	0x7fffffffffffffffLL
/*
 * Shortest task or server period (ns), as SCHED_DEADLINE's: shorter ones
 * would spend the real-time CPU on timer interrupts and switches.
 */
#define RTS_MIN_PERIOD	100000LL
/* Sporadic jobs released but not complete, at most (their release times). */
#define RTS_SPORADIC_BACKLOG	16

/* Error codes, equal to the Linux errno values so they pass through. */
#define RTS_ENOENT	2
#define RTS_EBUSY	16
#define RTS_EINVAL	22

/* Every time is a long long count of nanoseconds. */

enum rts_event_type {
	RTS_EV_SERVER_CREATE,
	RTS_EV_TASK_CREATE,
	RTS_EV_REPLENISH,
	RTS_EV_DEPLETE,
	RTS_EV_SERVER_RESUME,
	RTS_EV_SERVER_PREEMPT,
	RTS_EV_RELEASE,
	RTS_EV_START,
	RTS_EV_PREEMPT,
	RTS_EV_RESUME,
	RTS_EV_COMPLETE,
	RTS_EV_MISS,
	RTS_EV_SWITCH,
	RTS_EV_OVERFLOW,
	RTS_EV_EXIT,
	RTS_EV_OVERRUN,
	RTS_EV_COUNT
};

struct rts_event {
	long long time;
	int type;
	int task;
	int server;
	unsigned long long job;
	long long value;		/* absolute deadline, or budget for replenish */
};

struct rts_server_params {
	int id;
	int prio;
	long long period;
	long long budget;
};

/* What happens to a task that is chosen longer than its wcet in a period. */
enum rts_overrun {
	RTS_OVERRUN_THROTTLE,	/* no more CPU until its next release */
	RTS_OVERRUN_SIGNAL,	/* keeps running; the kernel sends SIGXCPU */
};

struct rts_task_params {
	int id;
	int server;		/* RTS_NONE without servers */
	int prio;
	int overrun;		/* enum rts_overrun */
	int sporadic;		/* released by rts_release(), period apart at least */
	long long period;
	long long wcet;
	long long deadline;
	long long offset;
	/*
	 * Semi-partitioned policies: the CPU (0..nr_cpus - 1) of its job's
	 * first part, and for a task split in two (C=D splitting) the first
	 * part's execution, its deadline after the release (split_deadline,
	 * 0: split itself, C = D; later by the overhead charged around the
	 * part) and the CPU of the rest; split 0: the whole job on cpu.
	 */
	int cpu;
	int split_cpu;
	long long split;
	long long split_deadline;
};

struct rts_server {
	int used;
	struct rts_server_params p;
	long long left;			/* budget left in this period */
	long long next_replenish;
};

struct rts_task {
	int used;			/* reserved or running */
	int reserved;			/* survives the thread that ran it */
	int running;			/* a thread runs it as a periodic task */
	struct rts_task_params p;
	long long first_release;
	unsigned long long released;	/* jobs released */
	unsigned long long completed;	/* jobs completed */
	unsigned long long checked;	/* jobs whose deadline was checked */
	unsigned long long misses;
	long long spent;		/* time chosen since its last release */
	long long cpu_base;		/* cpu_time() at its last release */
	long long executed;		/* time chosen in its current job */
	int overran;			/* used its budget in this period */
	int chosen;			/* among the tasks to run now (rts_choose) */
	/* Sporadic: the requested next release, RTS_NEVER when none. */
	long long next_sporadic;
	long long sporadic_release[RTS_SPORADIC_BACKLOG];	/* by job */
};

struct rts_sched;

/* A scheduling policy; the kernel plugins are one such struct each. */
struct rts_policy {
	const char *name;
	int has_servers;
	/* Each level by EDF rather than by priority (servers: hsf-* only). */
	int servers_by_deadline;
	int tasks_by_deadline;
	/* One scheduler per real-time CPU, each task on one (partitioned). */
	int per_cpu;
	/* One scheduler over all real-time CPUs: its nr_cpus first jobs run. */
	int global;
	/*
	 * One scheduler over all real-time CPUs, each job on the CPU of the
	 * part it is in (semi-partitioned): run[k] is CPU k's task.
	 */
	int split;
	/*
	 * Task index to run now among those not chosen yet, or RTS_NONE;
	 * cpu is the run[] slot being filled (a split policy's CPU).
	 */
	int (*pick)(const struct rts_sched *s, int cpu);
	/* Optional server layer (hierarchical policies). */
	long long (*next_event)(const struct rts_sched *s);
	void (*account)(struct rts_sched *s, long long t);
	void (*settle)(struct rts_sched *s, long long t);
	void (*reset)(struct rts_sched *s);
};

typedef void (*rts_emit_fn)(void *ctx, const struct rts_event *ev);

struct rts_sched {
	const struct rts_policy *policy;
	struct rts_task task[RTS_MAX_TASKS];
	struct rts_server server[RTS_MAX_SERVERS];
	long long start_lead;	/* common start = first run + this */
	long long epoch;		/* common start, RTS_NEVER while idle */
	long long now;		/* time accounted so far */
	int nr_running;
	/*
	 * The running tasks' ids in increasing order: what every event
	 * scans (ties go to the lower id), so that reservations without a
	 * thread and unused ids cost nothing.
	 */
	int running[RTS_MAX_TASKS];
	/* The servers' ids in increasing order, which the server level scans. */
	int servers[RTS_MAX_SERVERS];
	int nr_servers;
	int active_server;	/* hierarchical policies */
	int nr_cpus;		/* jobs that run at once: 1, or a global or split policy's CPUs */
	/*
	 * The tasks chosen by rts_choose(), in the policy's order, RTS_NONE
	 * after; under a split policy by CPU, RTS_NONE for an idle one.
	 */
	int run[RTS_MAX_CPUS];
	long long chosen_since;	/* the chosen tasks are charged up to here */
	long long overrun_slack;	/* budget = wcet + this, per period */
	/*
	 * Optional (the kernel): the CPU time task id has had up to s->now
	 * (the instant being handled, which is behind the clock when a late
	 * timer makes the core catch up), and whether it is on a CPU now.
	 * With it a task's budget is charged
	 * for the CPU it got, so time it was chosen but kept from its CPU
	 * (by a thread of higher priority, an interrupt thread, a stalled
	 * vCPU) does not count; without it (the simulator's twin), for the
	 * time it was chosen.
	 */
	long long (*cpu_time)(const struct rts_sched *s, int id, int *on_cpu);
	/*
	 * With cpu_time: a chosen task id is off its CPU, so its budget ends
	 * no sooner than it gets one back, which nothing else tells the core.
	 * The platform handles the instant (rts_advance, rts_next_event) as
	 * soon as it does, and returns whether it has already, or will at
	 * once: the core then times the budget from now, an end that comes
	 * early which it looks at again when it does.
	 */
	int (*watch_cpu)(const struct rts_sched *s, int id);
	rts_emit_fn emit;
	void *emit_ctx;
};

/* For each of the nr ids in ids[]: the id i (k counts). */
#define rts_for_each_id(ids, nr, k, i)					\
	for ((k) = 0; (k) < (nr) && ((i) = (ids)[k], 1); (k)++)
/* Each running task of s, each server of s, in increasing id order. */
#define rts_for_each_running(s, k, i)					\
	rts_for_each_id((s)->running, (s)->nr_running, k, i)
#define rts_for_each_server(s, k, i)					\
	rts_for_each_id((s)->servers, (s)->nr_servers, k, i)

void rts_init(struct rts_sched *s, const struct rts_policy *policy,
	      long long start_lead, rts_emit_fn emit, void *emit_ctx);
void rts_emit(struct rts_sched *s, long long t, int type, int task,
	      int server, unsigned long long job, long long value);

/* Checks of values alone, usable without a scheduler (the library). */
int rts_check_server_values(const struct rts_server_params *p,
			    const char **why);
int rts_check_task_values(const struct rts_task_params *p, const char **why);
int rts_check_server(const struct rts_sched *s,
		     const struct rts_server_params *p, const char **why);
int rts_check_task(const struct rts_sched *s,
		   const struct rts_task_params *p, const char **why);

int rts_server_add(struct rts_sched *s, const struct rts_server_params *p,
		   long long now, const char **why);
int rts_task_reserve(struct rts_sched *s, const struct rts_task_params *p,
		     long long now, const char **why);
int rts_task_run(struct rts_sched *s, const struct rts_task_params *p,
		 int use_reservation, long long now, const char **why);
void rts_share_epoch(struct rts_sched *s, long long epoch, long long now);
void rts_task_stop(struct rts_sched *s, int id, long long now);
int rts_clear(struct rts_sched *s);

void rts_advance(struct rts_sched *s, long long now);
int rts_release(struct rts_sched *s, int id, long long now, const char **why);
int rts_complete(struct rts_sched *s, int id, long long now);
int rts_complete_all(struct rts_sched *s, const int *ids, int n, long long now);
long long rts_next_event(const struct rts_sched *s);
int rts_free_id(const struct rts_sched *s);
int rts_choose(struct rts_sched *s);

/*
 * The recorder's view of one task's jobs, kept from the kernel's switches
 * of its thread and from its returns to user code without one: which job
 * event (start, preempt, resume) each of them is.  A job is pending when
 * released and not completed; "here" says its thread is where the job runs
 * (not so for a semi-partitioned task switched in on its way to the CPU of
 * its job's current part).  Updated by the switch probe and by the task
 * itself, never at once.
 */
struct rts_seen {
	int job_here;			/* switched in where its job runs */
	unsigned long long started;	/* job J has started iff started > J */
};

/* Each: RTS_EV_START, RTS_EV_RESUME or RTS_EV_PREEMPT of job, or RTS_NONE. */
int rts_seen_switch_in(struct rts_seen *v, int here, int pending,
		       unsigned long long job);
int rts_seen_switch_out(struct rts_seen *v, int pending,
			unsigned long long job);
int rts_seen_go_on(struct rts_seen *v, int here, int pending,
		   unsigned long long job);

static inline int rts_pending(const struct rts_task *t)
{
	return t->running && t->released > t->completed;
}

/* Pending and not throttled: a policy may pick it. */
static inline int rts_eligible(const struct rts_task *t)
{
	return rts_pending(t) &&
	       !(t->overran && t->p.overrun == RTS_OVERRUN_THROTTLE);
}

/* Release time of a job released (or, periodic, still to come). */
static inline long long rts_release_time(const struct rts_task *t,
					unsigned long long job)
{
	if (t->p.sporadic)
		return t->sporadic_release[job % RTS_SPORADIC_BACKLOG];
	return t->first_release + (long long)job * t->p.period;
}

/* Absolute deadline of the oldest uncompleted job. */
static inline long long rts_job_deadline(const struct rts_task *t)
{
	return rts_release_time(t, t->completed) + t->p.deadline;
}

/* Semi-partitioned: is the current job of t in its second part? */
static inline int rts_in_second_part(const struct rts_task *t)
{
	return t->p.split && t->executed >= t->p.split;
}

/* The CPU of the part the current job of t is in (split policies). */
static inline int rts_part_cpu(const struct rts_task *t)
{
	return rts_in_second_part(t) ? t->p.split_cpu : t->p.cpu;
}

/*
 * The absolute deadline EDF orders the current job of t by: a first
 * part's is its release + D' (C' = D' but for the overhead charged around
 * it), a second part's the job's.
 */
static inline long long rts_part_deadline(const struct rts_task *t)
{
	if (t->p.split && !rts_in_second_part(t))
		return rts_release_time(t, t->completed) +
		       (t->p.split_deadline ? t->p.split_deadline : t->p.split);
	return rts_job_deadline(t);
}

/*
 * May a policy restricted to server (RTS_NONE: any) pick task t?  Not if
 * it is chosen already (a global policy picks once per CPU).
 */
static inline int rts_candidate(const struct rts_task *t, int server)
{
	return rts_eligible(t) && !t->chosen &&
	       (server == RTS_NONE || t->p.server == server);
}

/*
 * Highest-priority pending task (ties: lower id), restricted to one server
 * unless server is RTS_NONE.  Shared by fp and the hierarchical policies.
 */
static inline int rts_pick_fp(const struct rts_sched *s, int server)
{
	int best = RTS_NONE;
	int i, k;

	rts_for_each_running(s, k, i) {
		if (!rts_candidate(&s->task[i], server))
			continue;
		if (best == RTS_NONE || s->task[i].p.prio < s->task[best].p.prio)
			best = i;
	}
	return best;
}

/* Earliest absolute deadline (ties: lower id), likewise. */
static inline int rts_pick_edf(const struct rts_sched *s, int server)
{
	int best = RTS_NONE;
	int i, k;

	rts_for_each_running(s, k, i) {
		if (!rts_candidate(&s->task[i], server))
			continue;
		if (best == RTS_NONE || rts_job_deadline(&s->task[i]) <
					rts_job_deadline(&s->task[best]))
			best = i;
	}
	return best;
}

extern const struct rts_policy rts_policy_fp;
extern const struct rts_policy rts_policy_edf;
extern const struct rts_policy rts_policy_partitioned_fp;
extern const struct rts_policy rts_policy_partitioned_edf;
extern const struct rts_policy rts_policy_global_fp;
extern const struct rts_policy rts_policy_global_edf;
extern const struct rts_policy rts_policy_semi_partitioned_edf;
/* Hierarchical: [servers by deadline][tasks by deadline]; [0][0] is hsf-fp. */
extern const struct rts_policy rts_policy_hsf[2][2];

#endif /* RTS_H */
