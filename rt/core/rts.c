// SPDX-License-Identifier: GPL-2.0
/*
 * rts: task registry, job releases, deadline checks and the event loop
 * shared by every policy.  Task and server ids are their array indexes.
 */
#include "rts.h"

void rts_init(struct rts_sched *s, const struct rts_policy *policy,
	      long long start_lead, rts_emit_fn emit, void *emit_ctx)
{
	char *p = (char *)s;
	unsigned long i;

	for (i = 0; i < sizeof(*s); i++)
		p[i] = 0;
	s->policy = policy;
	s->start_lead = start_lead;
	s->epoch = RTS_NEVER;
	s->active_server = RTS_NONE;
	s->nr_cpus = 1;
	for (i = 0; i < RTS_MAX_CPUS; i++)
		s->run[i] = RTS_NONE;
	s->emit = emit;
	s->emit_ctx = emit_ctx;
}

void rts_emit(struct rts_sched *s, long long t, int type, int task,
	      int server, unsigned long long job, long long value)
{
	struct rts_event ev = {
		.time = t, .type = type, .task = task, .server = server,
		.job = job, .value = value,
	};

	if (s->emit)
		s->emit(s->emit_ctx, &ev);
}

static int fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -RTS_EINVAL;
}

int rts_check_server_values(const struct rts_server_params *p,
			    const char **why)
{
	if (p->id < 0 || p->id >= RTS_MAX_SERVERS)
		return fail(why, "server id out of range 0..63");
	if (p->period <= 0)
		return fail(why, "server period must be > 0");
	if (p->period < RTS_MIN_PERIOD)
		return fail(why, "server period must be >= 100 us");
	if (p->budget <= 0 || p->budget > p->period)
		return fail(why, "server budget must be > 0 and <= period");
	if (p->prio < 0 || p->prio > RTS_PRIO_MAX)
		return fail(why, "priority out of range 0..99");
	return 0;
}

int rts_check_server(const struct rts_sched *s,
		     const struct rts_server_params *p, const char **why)
{
	int err;

	if (!s->policy->has_servers)
		return fail(why, "this plugin has no servers");
	err = rts_check_server_values(p, why);
	if (err)
		return err;
	if (s->server[p->id].used)
		return fail(why, "duplicate server id");
	return 0;
}

int rts_check_task_values(const struct rts_task_params *p, const char **why)
{
	if (p->id < 0 || p->id >= RTS_MAX_TASKS)
		return fail(why, "task id out of range 0..255");
	if (p->period <= 0)
		return fail(why, "task period must be > 0");
	if (p->period < RTS_MIN_PERIOD)
		return fail(why, "task period must be >= 100 us");
	if (p->deadline <= 0 || p->deadline > p->period)
		return fail(why, "deadline must be > 0 and <= period");
	if (p->wcet <= 0 || p->wcet > p->deadline)
		return fail(why, "wcet must be > 0 and <= deadline");
	if (p->prio < 0 || p->prio > RTS_PRIO_MAX)
		return fail(why, "priority out of range 0..99");
	if (p->offset < 0)
		return fail(why, "offset must be >= 0");
	if (p->overrun != RTS_OVERRUN_THROTTLE &&
	    p->overrun != RTS_OVERRUN_SIGNAL)
		return fail(why, "overrun must be throttle or signal");
	if (p->split && (p->split < 0 || p->split >= p->wcet))
		return fail(why, "split must be > 0 and < wcet");
	if (p->split_deadline &&
	    (!p->split || p->split_deadline < p->split ||
	     p->split_deadline >= p->deadline))
		return fail(why, "a split's deadline must be >= split and < deadline");
	if (p->split && p->split_cpu == p->cpu)
		return fail(why, "a split task's two parts need two CPUs");
	return 0;
}

/* Parameters alone; whether the id is free is the caller's question. */
static int check_task_params(const struct rts_sched *s,
			     const struct rts_task_params *p, const char **why)
{
	int err = rts_check_task_values(p, why);

	if (err)
		return err;
	if (s->policy->split &&
	    (p->cpu < 0 || p->cpu >= s->nr_cpus ||
	     (p->split && (p->split_cpu < 0 || p->split_cpu >= s->nr_cpus))))
		return fail(why, "cpu out of range of the real-time CPUs");
	if (!s->policy->split && p->split)
		return fail(why, "only semi-partitioned plugins split tasks");
	if (!s->policy->has_servers) {
		if (p->server != RTS_NONE)
			return fail(why, "this plugin has no servers");
	} else if (p->server < 0 || p->server >= RTS_MAX_SERVERS ||
		   !s->server[p->server].used) {
		return fail(why, "unknown server");
	}
	return 0;
}

int rts_check_task(const struct rts_sched *s,
		   const struct rts_task_params *p, const char **why)
{
	int err = check_task_params(s, p, why);

	if (err)
		return err;
	if (s->task[p->id].used)
		return fail(why, "duplicate task id");
	return 0;
}

/* First instant >= now that is phase + k * period for some k >= 0. */
static long long align_up(long long phase, long long period, long long now)
{
	if (phase >= now)
		return phase;
	return phase + (now - phase + period - 1) / period * period;
}

/* Add id to the nr ids in ids[], which stay in increasing order. */
static void insert_id(int *ids, int *nr, int id)
{
	int k = (*nr)++;

	for (; k > 0 && ids[k - 1] > id; k--)
		ids[k] = ids[k - 1];
	ids[k] = id;
}

int rts_server_add(struct rts_sched *s, const struct rts_server_params *p,
		   long long now, const char **why)
{
	struct rts_server *sv;
	int err = rts_check_server(s, p, why);

	if (err)
		return err;
	sv = &s->server[p->id];
	sv->used = 1;
	insert_id(s->servers, &s->nr_servers, p->id);
	sv->p = *p;
	sv->left = 0;
	sv->next_replenish = s->epoch == RTS_NEVER ? RTS_NEVER :
			     align_up(s->epoch, p->period, now);
	rts_emit(s, now, RTS_EV_SERVER_CREATE, RTS_NONE, p->id, 0, 0);
	return 0;
}

int rts_task_reserve(struct rts_sched *s, const struct rts_task_params *p,
		     long long now, const char **why)
{
	struct rts_task *t;
	int err = rts_check_task(s, p, why);

	if (err)
		return err;
	t = &s->task[p->id];
	t->used = 1;
	t->reserved = 1;
	t->p = *p;
	(void)now;
	return 0;
}

static void start_epoch(struct rts_sched *s, long long now, long long epoch)
{
	int i;

	s->epoch = epoch;
	s->now = now;
	s->active_server = RTS_NONE;
	for (i = 0; i < RTS_MAX_SERVERS; i++) {
		s->server[i].left = 0;
		s->server[i].next_replenish = s->server[i].used ?
					      s->epoch : RTS_NEVER;
	}
}

/* A new period (or the first): the budget is whole again. */
static void new_budget(struct rts_sched *s, struct rts_task *t)
{
	int on_cpu;

	t->spent = 0;
	t->overran = 0;
	if (s->cpu_time)
		t->cpu_base = s->cpu_time(s, t->p.id, &on_cpu);
}

static void remove_running(struct rts_sched *s, int id)
{
	int k, j;

	for (k = 0, j = 0; k < s->nr_running; k++)
		if (s->running[k] != id)
			s->running[j++] = s->running[k];
	s->nr_running = j;
}

/*
 * Start a periodic task.  With use_reservation the parameters come from
 * the reservation of p->id (made by rtctl load); otherwise p is new.
 */
int rts_task_run(struct rts_sched *s, const struct rts_task_params *p,
		 int use_reservation, long long now, const char **why)
{
	struct rts_task *t;
	int err;

	if (use_reservation) {
		if (p->id < 0 || p->id >= RTS_MAX_TASKS ||
		    !s->task[p->id].reserved) {
			if (why)
				*why = "no such reserved task";
			return -RTS_ENOENT;
		}
		t = &s->task[p->id];
		if (t->running) {
			if (why)
				*why = "reserved task already running";
			return -RTS_EBUSY;
		}
		/* Servers may have been removed since the reservation. */
		err = check_task_params(s, &t->p, why);
	} else {
		err = rts_check_task(s, p, why);
		t = &s->task[p->id];
	}
	if (err)
		return err;
	if (!use_reservation)
		t->p = *p;
	if (s->epoch == RTS_NEVER)
		start_epoch(s, now, now + s->start_lead);
	t->used = 1;
	t->running = 1;
	t->first_release = align_up(s->epoch + t->p.offset, t->p.period, now);
	t->released = 0;
	t->completed = 0;
	t->checked = 0;
	t->misses = 0;
	new_budget(s, t);
	t->executed = 0;
	t->next_sporadic = RTS_NEVER;
	insert_id(s->running, &s->nr_running, t->p.id);
	rts_emit(s, now, RTS_EV_TASK_CREATE, t->p.id, t->p.server, 0, 0);
	return 0;
}

/*
 * An idle scheduler takes the common start of another one (another CPU's,
 * partitioned), so that tasks started together share it wherever they run.
 */
void rts_share_epoch(struct rts_sched *s, long long epoch, long long now)
{
	if (s->epoch == RTS_NEVER && epoch != RTS_NEVER)
		start_epoch(s, now, epoch);
}

void rts_task_stop(struct rts_sched *s, int id, long long now)
{
	struct rts_task *t = &s->task[id];
	int i, j;

	if (!t->running)
		return;
	rts_advance(s, now);
	/* The task leaves in the middle of its current job: close it in the trace. */
	rts_emit(s, now, RTS_EV_EXIT, id, t->p.server, t->completed, 0);
	t->running = 0;
	if (t->chosen && s->policy->split) {
		t->chosen = 0;
		/* The others keep their CPUs. */
		for (i = 0; i < s->nr_cpus; i++)
			if (s->run[i] == id)
				s->run[i] = RTS_NONE;
	} else if (t->chosen) {
		t->chosen = 0;
		/* The others keep their order. */
		for (i = 0, j = 0; i < s->nr_cpus; i++)
			if (s->run[i] != id)
				s->run[j++] = s->run[i];
		s->run[j] = RTS_NONE;
	}
	t->used = t->reserved;
	remove_running(s, id);
	if (s->nr_running)
		return;
	/* Idle again: the next task to run starts a new common start. */
	s->epoch = RTS_NEVER;
	s->active_server = RTS_NONE;
	for (i = 0; i < RTS_MAX_SERVERS; i++)
		s->server[i].next_replenish = RTS_NEVER;
	if (s->policy->reset)
		s->policy->reset(s);
}

/* Remove every server and reservation; refused while tasks run. */
int rts_clear(struct rts_sched *s)
{
	int i;

	if (s->nr_running)
		return -RTS_EBUSY;
	for (i = 0; i < RTS_MAX_TASKS; i++)
		s->task[i].used = s->task[i].reserved = 0;
	for (i = 0; i < RTS_MAX_SERVERS; i++)
		s->server[i].used = 0;
	s->nr_servers = 0;
	return 0;
}

/*
 * How much of its budget task id has used in this period: the CPU time it
 * got since its release (cpu_time), or the time it was chosen.
 */
static long long budget_used(const struct rts_sched *s,
			     const struct rts_task *t, int *on_cpu)
{
	*on_cpu = 1;
	if (!s->cpu_time)
		return t->spent + s->now - s->chosen_since;
	return s->cpu_time(s, t->p.id, on_cpu) - t->cpu_base;
}

/* When the first chosen task will have used its budget of this period. */
static long long budget_end(const struct rts_sched *s)
{
	const struct rts_task *t;
	long long end, left, first = RTS_NEVER;
	int i, k, on_cpu;

	rts_for_each_running(s, k, i) {
		t = &s->task[i];
		if (!t->chosen || t->overran || !rts_pending(t))
			continue;
		left = t->p.wcet + s->overrun_slack - budget_used(s, t, &on_cpu);
		/*
		 * Off its CPU it uses no budget: the platform comes back when
		 * it has one (no polling while it is blocked elsewhere).  If it
		 * took one meanwhile, it is charged from then.
		 */
		if (!on_cpu) {
			if (!s->watch_cpu(s, t->p.id))
				continue;
			left = t->p.wcet + s->overrun_slack -
			       budget_used(s, t, &on_cpu);
		}
		end = s->now + left;
		if (end < first)
			first = end;
	}
	return first > s->now ? first : s->now;
}

/*
 * Charge the chosen tasks for the time up to t: their budget, and their
 * current job's execution (which part of it runs, semi-partitioned).
 */
static void charge(struct rts_sched *s, long long t)
{
	struct rts_task *c;
	int i, k;

	if (t <= s->chosen_since)
		return;
	rts_for_each_running(s, k, i) {
		c = &s->task[i];
		if (!c->chosen)
			continue;
		c->spent += t - s->chosen_since;
		if (rts_pending(c))
			c->executed += t - s->chosen_since;
	}
	s->chosen_since = t;
}

/* Chosen tasks that have used their budget: throttle or flag them. */
static void enforce(struct rts_sched *s, long long t)
{
	struct rts_task *c;
	int i, k, on_cpu;

	rts_for_each_running(s, k, i) {
		c = &s->task[i];
		if (!c->chosen || c->overran || !rts_pending(c) ||
		    budget_used(s, c, &on_cpu) < c->p.wcet + s->overrun_slack)
			continue;
		c->overran = 1;
		rts_emit(s, t, RTS_EV_OVERRUN, i, c->p.server, c->completed,
			 c->p.overrun);
	}
}

/*
 * The tasks to run now, by the policy among the tasks not throttled: one,
 * or under a global or split policy up to nr_cpus (each task's chosen flag
 * says);
 * they are charged for the CPU from now on.  Returns the first (RTS_NONE:
 * none).  Call after every change (advance, completion, new task or
 * server).
 */
int rts_choose(struct rts_sched *s)
{
	int i;

	charge(s, s->now);
	for (i = 0; i < s->nr_cpus; i++)
		if (s->run[i] != RTS_NONE)
			s->task[s->run[i]].chosen = 0;
	for (i = 0; i < s->nr_cpus; i++) {
		s->run[i] = s->policy->pick(s, i);
		if (s->run[i] != RTS_NONE)
			s->task[s->run[i]].chosen = 1;
	}
	return s->run[0];
}

static long long task_next_event(const struct rts_task *t)
{
	unsigned long long m = t->checked > t->completed ?
			       t->checked : t->completed;
	long long next = t->p.sporadic ? t->next_sporadic :
			 rts_release_time(t, t->released);
	long long dl;

	if (m < t->released) {
		dl = rts_release_time(t, m) + t->p.deadline;
		if (dl < next)
			next = dl;
	}
	return next;
}

long long rts_next_event(const struct rts_sched *s)
{
	long long next = RTS_NEVER;
	long long t;
	int i, k;

	if (s->epoch == RTS_NEVER)
		return RTS_NEVER;
	rts_for_each_running(s, k, i) {
		t = task_next_event(&s->task[i]);
		if (t < next)
			next = t;
	}
	if (s->policy->next_event) {
		t = s->policy->next_event(s);
		if (t < next)
			next = t;
	}
	t = budget_end(s);
	return t < next ? t : next;
}

static void check_misses(struct rts_sched *s, struct rts_task *t, long long at)
{
	unsigned long long m;
	long long dl;

	for (;;) {
		m = t->checked > t->completed ? t->checked : t->completed;
		if (m >= t->released)
			return;
		dl = rts_release_time(t, m) + t->p.deadline;
		if (dl > at)
			return;
		t->checked = m + 1;
		t->misses++;
		rts_emit(s, dl, RTS_EV_MISS, t->p.id, t->p.server, m, dl);
	}
}

static void release_jobs(struct rts_sched *s, struct rts_task *t, long long at)
{
	long long r;

	if (t->p.sporadic) {
		r = t->next_sporadic;
		if (r > at)
			return;
		t->sporadic_release[t->released % RTS_SPORADIC_BACKLOG] = r;
		t->next_sporadic = RTS_NEVER;
		new_budget(s, t);
		t->released++;
		rts_emit(s, r, RTS_EV_RELEASE, t->p.id, t->p.server,
			 t->released - 1, r + t->p.deadline);
		return;
	}
	while ((r = rts_release_time(t, t->released)) <= at) {
		new_budget(s, t);
		t->released++;
		rts_emit(s, r, RTS_EV_RELEASE, t->p.id, t->p.server,
			 t->released - 1, r + t->p.deadline);
	}
}

/*
 * Handle one instant t >= s->now.  The order is that of the documented
 * semantics: budget accounting and depletion, replenishment, the
 * completion of the current jobs of the n tasks done[] (a job completing
 * at its deadline meets it), deadline misses, releases, then the choice
 * of the active server.  Returns 0, or -RTS_EINVAL if one of them had no
 * pending job.
 */
static int handle_instant(struct rts_sched *s, long long t, const int *done,
			  int n)
{
	struct rts_task *task;
	int err = 0;
	int i, k;

	if (t < s->now)
		t = s->now;
	if (s->policy->account)
		s->policy->account(s, t);
	charge(s, t);
	s->now = t;
	for (i = 0; i < n; i++) {
		task = &s->task[done[i]];
		if (rts_pending(task)) {
			task->completed++;
			task->executed = 0;
			rts_emit(s, t, RTS_EV_COMPLETE, done[i], task->p.server,
				 task->completed - 1, 0);
		} else {
			err = -RTS_EINVAL;
		}
	}
	enforce(s, t);
	rts_for_each_running(s, k, i) {
		check_misses(s, &s->task[i], t);
		release_jobs(s, &s->task[i], t);
	}
	if (s->policy->settle)
		s->policy->settle(s, t);
	return err;
}

/* Process every event strictly before now, in time order. */
static void advance_before(struct rts_sched *s, long long now)
{
	long long t;

	while (s->epoch != RTS_NEVER && (t = rts_next_event(s)) < now)
		handle_instant(s, t, (const int *)0, 0);
}

/* Process every event up to and including now, in time order. */
void rts_advance(struct rts_sched *s, long long now)
{
	advance_before(s, now);
	if (s->epoch != RTS_NEVER && rts_next_event(s) <= now) {
		handle_instant(s, now, (const int *)0, 0);
	} else if (now > s->now) {
		if (s->policy->account)
			s->policy->account(s, now);
		charge(s, now);
		s->now = now;
	}
}

/*
 * The current jobs of the n tasks ids[] (valid ids) have finished at now:
 * 0, or -RTS_EINVAL if one had none.  The completions are part of the
 * instant now, before the deadline checks of that instant (jobs on several
 * CPUs, under a global policy, may end at one instant).
 */
int rts_complete_all(struct rts_sched *s, const int *ids, int n,
		     long long now)
{
	advance_before(s, now);
	if (s->epoch == RTS_NEVER)
		return -RTS_EINVAL;
	return handle_instant(s, now, ids, n);
}

/* The current job of task id has finished at now, as rts_complete_all(). */
int rts_complete(struct rts_sched *s, int id, long long now)
{
	return rts_complete_all(s, &id, 1, now);
}

/*
 * The application releases a job of sporadic task id at now.  It comes at
 * the earliest period (the minimum inter-arrival time) after the previous
 * release, and not before the common start.  0, -RTS_EINVAL (not a running
 * sporadic task) or -RTS_EBUSY (a release is already waiting, or too many
 * jobs are pending).
 */
int rts_release(struct rts_sched *s, int id, long long now, const char **why)
{
	struct rts_task *t;
	long long at = now;

	if (id < 0 || id >= RTS_MAX_TASKS || !s->task[id].running ||
	    !s->task[id].p.sporadic)
		return fail(why, "not a running sporadic task");
	t = &s->task[id];
	rts_advance(s, now);
	if (t->next_sporadic != RTS_NEVER ||
	    t->released - t->completed >= RTS_SPORADIC_BACKLOG - 1) {
		if (why)
			*why = "a release is already waiting";
		return -RTS_EBUSY;
	}
	if (at < s->epoch)
		at = s->epoch;
	if (t->released && at < rts_release_time(t, t->released - 1) +
				t->p.period)
		at = rts_release_time(t, t->released - 1) + t->p.period;
	t->next_sporadic = at;
	return 0;
}

/* Lowest id neither reserved nor running, or RTS_NONE. */
int rts_free_id(const struct rts_sched *s)
{
	int i;

	for (i = 0; i < RTS_MAX_TASKS; i++)
		if (!s->task[i].used)
			return i;
	return RTS_NONE;
}

/* Its thread is switched in: its pending job starts or resumes, if here. */
int rts_seen_switch_in(struct rts_seen *v, int here, int pending,
		       unsigned long long job)
{
	v->job_here = here;
	if (!here || !pending)
		return RTS_NONE;
	if (v->started > job)
		return RTS_EV_RESUME;
	v->started = job + 1;
	return RTS_EV_START;
}

/*
 * Its thread is switched out: a started job is preempted, unless it was
 * switched in elsewhere (on its way) or its job has not started (a
 * backlog's next job, pending behind a late one).
 */
int rts_seen_switch_out(struct rts_seen *v, int pending,
			unsigned long long job)
{
	int was_here = v->job_here;

	v->job_here = 0;
	return was_here && pending && v->started > job ? RTS_EV_PREEMPT :
							  RTS_NONE;
}

/*
 * It returns to user code with a job pending: that job starts now if no
 * switch-in started it (it went on from its previous job without one).
 * A started job keeps the view of its switch-in: it ran here, so its
 * switch-out preempts it, even if its part has moved meanwhile (it is
 * then on its way, and its gate makes it leave at once).
 */
int rts_seen_go_on(struct rts_seen *v, int here, int pending,
		   unsigned long long job)
{
	if (!pending || v->started > job)
		return RTS_NONE;
	v->job_here = here;
	if (!here)
		return RTS_NONE;
	v->started = job + 1;
	return RTS_EV_START;
}
