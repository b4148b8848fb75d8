// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the policy core: validation, fp, edf, hsf-fp,
 * deadline misses and the common start, on the executor of executor.h.
 */
#include <stdio.h>
#include <string.h>

#include "executor.h"
#include "rts.h"
#include "unit.h"

#define MS 1000000LL

struct trace {
	int n;
	struct rts_event ev[4096];
};

static void collect(void *ctx, const struct rts_event *ev)
{
	struct trace *tr = ctx;

	if (tr->n < (int)(sizeof(tr->ev) / sizeof(tr->ev[0])))
		tr->ev[tr->n++] = *ev;
}

static int count(const struct trace *tr, int type, int task, int server)
{
	int i, n = 0;

	for (i = 0; i < tr->n; i++)
		if (tr->ev[i].type == type &&
		    (task == RTS_NONE || tr->ev[i].task == task) &&
		    (server == RTS_NONE || tr->ev[i].server == server))
			n++;
	return n;
}

/* An empty schedule of policy, its trace and its CPU. */
static void start_fresh(struct rts_sched *s, const struct rts_policy *policy,
			struct trace *tr, struct cpu *c)
{
	memset(tr, 0, sizeof(*tr));
	memset(c, 0, sizeof(*c));
	rts_init(s, policy, 0, collect, tr);
}

static struct rts_task_params task(int id, int server, int prio,
				   long long period, long long wcet)
{
	struct rts_task_params p = {
		.id = id, .server = server, .prio = prio, .period = period,
		.wcet = wcet, .deadline = period, .offset = 0,
	};
	return p;
}

static void add_server(struct rts_sched *s, int id, long long period,
		       long long budget, int prio)
{
	struct rts_server_params p = {
		.id = id, .prio = prio, .period = period, .budget = budget,
	};

	CHECK(rts_server_add(s, &p, 0, NULL) == 0);
}

static void run_task(struct rts_sched *s, struct rts_task_params p)
{
	const char *why = NULL;

	CHECK(rts_task_run(s, &p, 0, 0, &why) == 0);
	if (why)
		printf("  unexpected: %s\n", why);
}

static void test_validation(void)
{
	static struct rts_sched s;
	struct rts_server_params sp = { .id = 0, .prio = 0, .period = 10 * MS,
					.budget = 4 * MS };
	struct rts_task_params p = task(1, 0, 0, 10 * MS, 2 * MS);
	const char *why;

	rts_init(&s, &rts_policy_fp, 0, NULL, NULL);
	CHECK(rts_server_add(&s, &sp, 0, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "this plugin has no servers") == 0);
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p.server = RTS_NONE;
	CHECK(rts_check_task(&s, &p, &why) == 0);
	p.period = 0;
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p.period = -5;
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p = task(1, RTS_NONE, 0, 10 * MS, 2 * MS);
	p.deadline = 1 * MS;
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "wcet must be > 0 and <= deadline") == 0);
	p = task(1, RTS_NONE, 100, 10 * MS, 2 * MS);
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p = task(256, RTS_NONE, 1, 10 * MS, 2 * MS);
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p = task(1, RTS_NONE, 1, 10 * MS, 2 * MS);
	p.deadline = 11 * MS;
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	p = task(1, RTS_NONE, 1, 10 * MS, 2 * MS);
	CHECK(rts_task_run(&s, &p, 0, 0, &why) == 0);
	CHECK(rts_task_run(&s, &p, 0, 0, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "duplicate task id") == 0);
	CHECK(rts_task_run(&s, &p, 1, 0, &why) == -RTS_ENOENT);
	CHECK(rts_free_id(&s) == 0);
	CHECK(rts_clear(&s) == -RTS_EBUSY);

	rts_init(&s, &rts_policy_hsf[0][0], 0, NULL, NULL);
	CHECK(rts_server_add(&s, &sp, 0, &why) == 0);
	CHECK(rts_server_add(&s, &sp, 0, &why) == -RTS_EINVAL);
	sp.id = 1;
	sp.budget = 11 * MS;
	CHECK(rts_server_add(&s, &sp, 0, &why) == -RTS_EINVAL);
	sp.budget = 0;
	CHECK(rts_server_add(&s, &sp, 0, &why) == -RTS_EINVAL);
	sp.budget = 1;
	sp.id = 64;
	CHECK(rts_server_add(&s, &sp, 0, &why) == -RTS_EINVAL);
	p = task(1, 3, 0, 10 * MS, 2 * MS);
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "unknown server") == 0);
	p.server = RTS_NONE;
	CHECK(rts_check_task(&s, &p, &why) == -RTS_EINVAL);
}

/* A fresh fp schedule running tasks a and b. */
static void fp_pair(struct rts_sched *s, struct trace *tr, struct cpu *c,
		    struct rts_task_params a, struct rts_task_params b)
{
	start_fresh(s, &rts_policy_fp, tr, c);
	run_task(s, a);
	run_task(s, b);
}

static void test_fp_preemption(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	fp_pair(&s, &tr, &c, task(0, RTS_NONE, 1, 10 * MS, 4 * MS),
		task(1, RTS_NONE, 0, 5 * MS, 2 * MS));
	execute(&s, &c, 100 * MS - 1);
	CHECK(count(&tr, RTS_EV_RELEASE, 0, RTS_NONE) == 10);
	CHECK(count(&tr, RTS_EV_RELEASE, 1, RTS_NONE) == 20);
	CHECK(count(&tr, RTS_EV_COMPLETE, 0, RTS_NONE) == 10);
	CHECK(count(&tr, RTS_EV_COMPLETE, 1, RTS_NONE) == 20);
	CHECK(count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE) == 0);
	/* Task 1 (prio 0) runs first: task 0 completes at 2 + 4 = 6 ms. */
	CHECK(tr.ev[4].type == RTS_EV_COMPLETE && tr.ev[4].task == 1 &&
	      tr.ev[4].time == 2 * MS);
	CHECK(c.ran_task[0] == 40 * MS && c.ran_task[1] == 40 * MS);
}

static void test_fp_tie_lower_id(void)
{
	static struct rts_sched s;

	rts_init(&s, &rts_policy_fp, 0, NULL, NULL);
	run_task(&s, task(7, RTS_NONE, 3, 10 * MS, 1 * MS));
	run_task(&s, task(4, RTS_NONE, 3, 10 * MS, 1 * MS));
	rts_advance(&s, 0);
	CHECK(s.policy->pick(&s, 0) == 4);
}

/* C=2,T=5 and C=4,T=7: fixed priority misses, EDF does not (U = 0.97). */
static int misses_under(const struct rts_policy *policy)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	memset(&tr, 0, sizeof(tr));
	memset(&c, 0, sizeof(c));
	rts_init(&s, policy, 0, collect, &tr);
	run_task(&s, task(0, RTS_NONE, 0, 5 * MS, 2 * MS));
	run_task(&s, task(1, RTS_NONE, 1, 7 * MS, 4 * MS));
	execute(&s, &c, 35 * MS);
	return count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE);
}

static void test_edf_vs_fp(void)
{
	CHECK(misses_under(&rts_policy_fp) > 0);
	CHECK(misses_under(&rts_policy_edf) == 0);
}

static void test_miss_keeps_releasing(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;
	int i, last_release = -1, first_miss = -1;

	start_fresh(&s, &rts_policy_fp, &tr, &c);
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 4 * MS));
	c.spin[0] = 1;
	execute(&s, &c, 35 * MS);
	CHECK(count(&tr, RTS_EV_RELEASE, 0, RTS_NONE) == 4);
	CHECK(count(&tr, RTS_EV_MISS, 0, RTS_NONE) == 3);
	for (i = 0; i < tr.n; i++) {
		if (tr.ev[i].type == RTS_EV_MISS && first_miss < 0)
			first_miss = i;
		if (tr.ev[i].type == RTS_EV_RELEASE)
			last_release = i;
	}
	/* The miss of job 0 at 10 ms comes before the release of job 1. */
	CHECK(tr.ev[first_miss].time == 10 * MS && tr.ev[first_miss].job == 0);
	CHECK(tr.ev[last_release].job == 3);
	/* Job 1 stays queued behind job 0: jobs run in order. */
	CHECK(s.task[0].completed == 0);
}

static void table3(struct rts_sched *s, struct trace *tr, int spin_server2,
		   struct cpu *c)
{
	memset(tr, 0, sizeof(*tr));
	memset(c, 0, sizeof(*c));
	rts_init(s, &rts_policy_hsf[0][0], 0, collect, tr);
	add_server(s, 0, 12 * MS, 4 * MS, 0);
	add_server(s, 1, 20 * MS, 4 * MS, 1);
	add_server(s, 2, 28 * MS, 8 * MS, 2);
	run_task(s, task(1, 0, 0, 24 * MS, 2 * MS));
	run_task(s, task(2, 0, 1, 48 * MS, 3 * MS));
	run_task(s, task(3, 1, 0, 40 * MS, 3 * MS));
	run_task(s, task(4, 2, 0, 56 * MS, 6 * MS));
	c->spin[4] = spin_server2;
}

/*
 * fp, task 0 (T 37, C 12), task 1 (T 31, C 19): task 1's first two jobs
 * end at 31 and 62 ms, exactly at their deadlines, which they meet.
 */
static void test_complete_at_deadline(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	fp_pair(&s, &tr, &c, task(0, RTS_NONE, 0, 37 * MS, 12 * MS),
		task(1, RTS_NONE, 1, 31 * MS, 19 * MS));
	execute(&s, &c, 62 * MS);
	CHECK(count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_COMPLETE, 1, RTS_NONE) == 2);
	CHECK(s.task[1].completed == 2 && s.task[1].misses == 0);
}

/* The minimum period holds for tasks and servers alike. */
static void test_min_period(void)
{
	struct rts_server_params sp = { .id = 0, .prio = 0, .period = 99999,
					.budget = 10000 };
	struct rts_task_params p = task(1, RTS_NONE, 0, 99999, 10000);
	const char *why;

	CHECK(rts_check_task_values(&p, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "task period must be >= 100 us") == 0);
	p.period = p.deadline = RTS_MIN_PERIOD;
	CHECK(rts_check_task_values(&p, &why) == 0);
	CHECK(rts_check_server_values(&sp, &why) == -RTS_EINVAL);
	CHECK(strcmp(why, "server period must be >= 100 us") == 0);
	sp.period = RTS_MIN_PERIOD;
	CHECK(rts_check_server_values(&sp, &why) == 0);
}

static void test_hsf_table3(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;
	int i;

	table3(&s, &tr, 0, &c);
	execute(&s, &c, 840 * MS - 1);	/* the hyperperiod of 12, 20, 28 */
	CHECK(count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_REPLENISH, RTS_NONE, 0) == 70);
	CHECK(count(&tr, RTS_EV_REPLENISH, RTS_NONE, 1) == 42);
	CHECK(count(&tr, RTS_EV_REPLENISH, RTS_NONE, 2) == 30);
	/* Idling servers spend their whole budget every period. */
	CHECK(count(&tr, RTS_EV_DEPLETE, RTS_NONE, 0) == 70);
	CHECK(count(&tr, RTS_EV_DEPLETE, RTS_NONE, 1) == 42);
	CHECK(count(&tr, RTS_EV_DEPLETE, RTS_NONE, 2) == 30);
	/* At 0: Server0 runs [0,4), Server1 [4,8), Server2 [8,12). */
	for (i = 0; i < tr.n; i++)
		if (tr.ev[i].type == RTS_EV_SERVER_RESUME)
			break;
	CHECK(tr.ev[i].server == 0 && tr.ev[i].time == 0);
	CHECK(tr.ev[i - 1].type == RTS_EV_RELEASE);
	for (i = 0; i < tr.n; i++)
		if (tr.ev[i].type == RTS_EV_SERVER_RESUME &&
		    tr.ev[i].server == 2)
			break;
	CHECK(tr.ev[i].time == 8 * MS);
	/* Server2 is preempted at 12 by Server0 with budget left. */
	for (; i < tr.n; i++)
		if (tr.ev[i].type == RTS_EV_SERVER_PREEMPT)
			break;
	CHECK(tr.ev[i].server == 2 && tr.ev[i].time == 12 * MS);
	CHECK(tr.ev[i + 1].type == RTS_EV_SERVER_RESUME &&
	      tr.ev[i + 1].server == 0);
}

static void test_hsf_isolation(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	table3(&s, &tr, 1, &c);
	/* Signalled, not throttled: only the server holds the spinner. */
	s.task[4].p.overrun = RTS_OVERRUN_SIGNAL;
	execute(&s, &c, 840 * MS);
	CHECK(count(&tr, RTS_EV_MISS, 1, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_MISS, 2, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_MISS, 3, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_MISS, 4, RTS_NONE) > 0);
	/* The spinner gets exactly its server's budget: 30 periods * 8 ms. */
	CHECK(c.ran_server[2] == 240 * MS);
	/* One overrun per period of the spinner (15 in 840 ms). */
	CHECK(count(&tr, RTS_EV_OVERRUN, 4, RTS_NONE) == 15);
}

/*
 * A task spinning forever is throttled after its wcet in each period, so
 * the lower-priority task meets every deadline: fp on the whole CPU.
 */
static void test_throttle_fp(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	fp_pair(&s, &tr, &c, task(0, RTS_NONE, 0, 10 * MS, 2 * MS),
		task(1, RTS_NONE, 1, 10 * MS, 5 * MS));
	c.spin[0] = 1;
	execute(&s, &c, 100 * MS);
	CHECK(count(&tr, RTS_EV_MISS, 1, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_COMPLETE, 1, RTS_NONE) == 10);
	CHECK(count(&tr, RTS_EV_OVERRUN, 0, RTS_NONE) == 10);
	CHECK(c.ran_task[0] == 20 * MS);
}

/*
 * The CPU the kernel says task 0 got up to the instant being handled: all
 * of it but [away_from, away_until).
 */
static long long away_from, away_until;

static long long cpu_but_away(const struct rts_sched *s, int id, int *on_cpu)
{
	(void)id;
	*on_cpu = s->now < away_from || s->now >= away_until;
	return min_time(s->now, away_from) +
	       (s->now > away_until ? s->now - away_until : 0);
}

/* The kernel's watch_cpu: how often the core asked, and whether it is back. */
static int watched;

static int watch_away(const struct rts_sched *s, int id)
{
	int on_cpu;

	watched++;
	cpu_but_away(s, id, &on_cpu);
	return on_cpu;
}

/*
 * From back_at on, a task that took its CPU 5 us before the instant the
 * core handles, while the core set its watch.
 */
static long long back_at;

static int watch_came_back(const struct rts_sched *s, int id)
{
	int on_cpu;

	if (s->now >= back_at)
		away_until = s->now - 5000;
	cpu_but_away(s, id, &on_cpu);
	return on_cpu;
}

/* Advance to t and choose, as the kernel's timer does. */
static void advance_to(struct rts_sched *s, long long t)
{
	rts_advance(s, t);
	rts_choose(s);
}

/*
 * With the kernel's CPU time, a task kept from its CPU 20 us before the
 * end of its budget, for 3 ms, is not charged for them: throttled after
 * its 2 ms of CPU, at 5.02 ms, not at 2 ms.  While it is away the core
 * sets no timer for its budget (the next event is its next release) and
 * asks to be told when it is back (watch_cpu), as the kernel's switch
 * probe does.  Without the CPU time, chosen time is charged: throttled at
 * 2 ms.
 */
static void test_budget_charges_cpu_time(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	start_fresh(&s, &rts_policy_fp, &tr, &c);
	s.cpu_time = cpu_but_away;
	s.watch_cpu = watch_away;
	away_from = 2 * MS - 20000;
	away_until = 5 * MS;
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 2 * MS));
	advance_to(&s, 0);
	CHECK(rts_next_event(&s) == 2 * MS);
	watched = 0;
	advance_to(&s, 2 * MS);
	CHECK(count(&tr, RTS_EV_OVERRUN, 0, RTS_NONE) == 0);
	CHECK(rts_next_event(&s) == 10 * MS && watched > 0);
	/* Back on its CPU at 5 ms: the kernel handles that instant. */
	advance_to(&s, 5 * MS);
	CHECK(count(&tr, RTS_EV_OVERRUN, 0, RTS_NONE) == 0);
	CHECK(rts_next_event(&s) == 5 * MS + 20000);
	advance_to(&s, 5 * MS + 20000);
	CHECK(count(&tr, RTS_EV_OVERRUN, 0, RTS_NONE) == 1);
	CHECK(!s.task[0].chosen);

	/*
	 * Back on its CPU while the core looked (the kernel's switch probe
	 * and the watch crossed): charged from then, its budget ends 20 us
	 * less the 5 us it has had since, not 20 us from now.
	 */
	start_fresh(&s, &rts_policy_fp, &tr, &c);
	s.cpu_time = cpu_but_away;
	s.watch_cpu = watch_came_back;
	away_from = 2 * MS - 20000;
	away_until = 5 * MS;
	back_at = 3 * MS;
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 2 * MS));
	advance_to(&s, 0);
	advance_to(&s, 2 * MS);
	CHECK(rts_next_event(&s) == 10 * MS);
	advance_to(&s, 3 * MS);
	CHECK(rts_next_event(&s) == 3 * MS + 15000);

	/*
	 * A release handled 1.5 ms late, the task on its CPU all along: the
	 * CPU it had since the release is the new period's, so its budget of
	 * 2 ms ends 0.5 ms after the late timer, not 2 ms after.
	 */
	start_fresh(&s, &rts_policy_fp, &tr, &c);
	s.cpu_time = cpu_but_away;
	s.watch_cpu = watch_away;
	away_from = away_until = RTS_NEVER;
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 2 * MS));
	advance_to(&s, 0);
	CHECK(rts_complete(&s, 0, MS) == 0);
	rts_choose(&s);
	advance_to(&s, 11 * MS + MS / 2);
	CHECK(s.task[0].released == 2 && s.task[0].chosen);
	CHECK(rts_next_event(&s) == 12 * MS);

	/* The same without the kernel's CPU time: chosen from 0, over at 2. */
	start_fresh(&s, &rts_policy_fp, &tr, &c);
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 2 * MS));
	advance_to(&s, 0);
	advance_to(&s, 2 * MS);
	CHECK(count(&tr, RTS_EV_OVERRUN, 0, RTS_NONE) == 1);
}

/* The same inside one server: Server0's spinner leaves its sibling on time. */
static void test_throttle_in_server(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;

	table3(&s, &tr, 0, &c);
	c.spin[1] = 1;
	execute(&s, &c, 840 * MS);
	CHECK(count(&tr, RTS_EV_MISS, 2, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_MISS, 3, RTS_NONE) == 0);
	CHECK(count(&tr, RTS_EV_MISS, 4, RTS_NONE) == 0);
	CHECK(c.ran_task[1] == 35 * 2 * MS);
}

/* Times of the events of one type and task, in order; how many. */
static int times_of(const struct trace *tr, int type, int task,
		    long long *at, int max)
{
	int i, n = 0;

	for (i = 0; i < tr->n && n < max; i++)
		if (tr->ev[i].type == type && tr->ev[i].task == task)
			at[n++] = tr->ev[i].time;
	return n;
}

/*
 * A sporadic task (period = minimum inter-arrival time) is released by the
 * application: at once, or one period after its previous release.
 */
static void test_sporadic(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;
	struct rts_task_params p = task(0, RTS_NONE, 0, 10 * MS, 2 * MS);
	long long at[4];
	const char *why;

	p.sporadic = 1;
	fp_pair(&s, &tr, &c, p, task(1, RTS_NONE, 1, 40 * MS, 1 * MS));
	execute(&s, &c, 5 * MS);
	CHECK(count(&tr, RTS_EV_RELEASE, 0, RTS_NONE) == 0);
	CHECK(rts_release(&s, 0, 5 * MS, &why) == 0);
	execute(&s, &c, 8 * MS);
	CHECK(rts_release(&s, 0, 8 * MS, &why) == 0);
	CHECK(rts_release(&s, 0, 9 * MS, &why) == -RTS_EBUSY);
	CHECK(strcmp(why, "a release is already waiting") == 0);
	CHECK(rts_release(&s, 1, 9 * MS, &why) == -RTS_EINVAL);
	execute(&s, &c, 40 * MS);
	CHECK(times_of(&tr, RTS_EV_RELEASE, 0, at, 4) == 2);
	CHECK(at[0] == 5 * MS && at[1] == 15 * MS);
	CHECK(times_of(&tr, RTS_EV_COMPLETE, 0, at, 4) == 2);
	CHECK(at[0] == 7 * MS && at[1] == 17 * MS);
	CHECK(count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE) == 0);
}

static void test_common_start(void)
{
	static struct rts_sched s;
	struct rts_task_params late = task(1, RTS_NONE, 0, 10 * MS, 1 * MS);
	struct rts_task_params p = task(2, RTS_NONE, 0, 10 * MS, 1 * MS);

	rts_init(&s, &rts_policy_fp, 2 * MS, NULL, NULL);
	run_task(&s, task(0, RTS_NONE, 0, 10 * MS, 1 * MS));
	CHECK(s.epoch == 2 * MS);
	CHECK(s.task[0].first_release == 2 * MS);
	/* A task that joins late keeps the phase of the common start. */
	CHECK(rts_task_run(&s, &late, 0, 25 * MS, NULL) == 0);
	CHECK(s.task[1].first_release == 32 * MS);
	rts_task_stop(&s, 0, 40 * MS);
	rts_task_stop(&s, 1, 40 * MS);
	CHECK(s.epoch == RTS_NEVER);
	CHECK(rts_task_run(&s, &p, 0, 50 * MS, NULL) == 0);
	CHECK(s.epoch == 52 * MS);
}

static void test_reservation(void)
{
	static struct rts_sched s;
	struct rts_task_params p = task(9, RTS_NONE, 5, 10 * MS, 1 * MS);
	struct rts_task_params ref = { .id = 9 };

	rts_init(&s, &rts_policy_fp, 0, NULL, NULL);
	CHECK(rts_task_reserve(&s, &p, 0, NULL) == 0);
	CHECK(rts_task_run(&s, &ref, 1, 0, NULL) == 0);
	CHECK(s.task[9].p.prio == 5);
	CHECK(rts_task_run(&s, &ref, 1, 0, NULL) == -RTS_EBUSY);
	rts_task_stop(&s, 9, 1 * MS);
	CHECK(s.task[9].used && !s.task[9].running);
	CHECK(rts_task_run(&s, &ref, 1, 2 * MS, NULL) == 0);
	rts_task_stop(&s, 9, 3 * MS);
	CHECK(rts_clear(&s) == 0);
	CHECK(!s.task[9].used);
}

/*
 * semi-partitioned-edf: the parts' CPUs and C' are checked (they come from
 * the user), and a split job leaves its first CPU at C' for its second,
 * where a stop leaves the other CPU's task in its slot.
 */
static void test_semi_partitioned(void)
{
	static struct rts_sched s;
	static struct trace tr;
	static struct cpu c;
	struct rts_task_params whole = task(0, RTS_NONE, 0, 10 * MS, 6 * MS);
	struct rts_task_params split = task(1, RTS_NONE, 0, 10 * MS, 6 * MS);
	const char *why = NULL;

	start_fresh(&s, &rts_policy_semi_partitioned_edf, &tr, &c);
	s.nr_cpus = 2;
	split.cpu = 0;
	split.split_cpu = 1;
	split.split = 6 * MS;
	CHECK(rts_task_run(&s, &split, 0, 0, &why) == -RTS_EINVAL);
	CHECK(why && !strcmp(why, "split must be > 0 and < wcet"));
	split.split = 4 * MS;
	split.split_cpu = 2;
	CHECK(rts_task_run(&s, &split, 0, 0, &why) == -RTS_EINVAL);
	CHECK(why && !strcmp(why, "cpu out of range of the real-time CPUs"));
	split.split_cpu = 0;
	CHECK(rts_task_run(&s, &split, 0, 0, &why) == -RTS_EINVAL);
	split.split_cpu = 1;
	whole.cpu = 1;
	run_task(&s, whole);
	run_task(&s, split);
	execute(&s, &c, 4 * MS);
	rts_choose(&s);
	/* Its second part and task 0 share a deadline: task 0 (lower id). */
	CHECK(s.run[0] == RTS_NONE && s.run[1] == 0);
	CHECK(rts_part_cpu(&s.task[1]) == 1);
	rts_task_stop(&s, 0, 5 * MS);
	rts_choose(&s);
	CHECK(s.run[0] == RTS_NONE && s.run[1] == 1);
	execute(&s, &c, 7 * MS);
	CHECK(count(&tr, RTS_EV_COMPLETE, 1, RTS_NONE) == 1);
	CHECK(count(&tr, RTS_EV_MISS, RTS_NONE, RTS_NONE) == 0);
	/* Its next job starts on its first CPU again. */
	CHECK(rts_part_cpu(&s.task[1]) == 0);
}

/*
 * The recorder's view of a split job's events (rts_seen), as in a guest
 * run: job 0 started by its switch-in on its first CPU; its first part
 * ended (the timer, on that CPU) between its turn and its return to user
 * code there, where it went on without a switch; its switch-out on the
 * way to its second CPU is the job's preemption, and it resumes there.
 * The preemption was missing (the job shown holding CPU 0 while another
 * task resumed there).  Then job 1, pending behind it (late): no
 * preemption before it starts, nor while it is on its way.
 */
static void test_seen_split_job(void)
{
	struct rts_seen v = { .job_here = 1 };

	CHECK(rts_seen_switch_out(&v, 0, 0) == RTS_NONE);
	CHECK(rts_seen_switch_in(&v, 1, 1, 0) == RTS_EV_START);
	CHECK(rts_seen_go_on(&v, 0, 1, 0) == RTS_NONE);
	CHECK(rts_seen_switch_out(&v, 1, 0) == RTS_EV_PREEMPT);
	CHECK(rts_seen_switch_in(&v, 1, 1, 0) == RTS_EV_RESUME);
	CHECK(rts_seen_switch_out(&v, 1, 1) == RTS_NONE);
	CHECK(rts_seen_switch_in(&v, 0, 1, 1) == RTS_NONE);
	CHECK(rts_seen_switch_out(&v, 1, 1) == RTS_NONE);
	CHECK(rts_seen_switch_in(&v, 1, 1, 1) == RTS_EV_START);
	/* Job 2 pending as job 1 completes: it goes on to it, here. */
	CHECK(rts_seen_go_on(&v, 1, 1, 2) == RTS_EV_START);
	CHECK(rts_seen_switch_out(&v, 1, 2) == RTS_EV_PREEMPT);
}

int main(void)
{
	RUN(test_validation);
	RUN(test_fp_preemption);
	RUN(test_fp_tie_lower_id);
	RUN(test_edf_vs_fp);
	RUN(test_miss_keeps_releasing);
	RUN(test_complete_at_deadline);
	RUN(test_min_period);
	RUN(test_hsf_table3);
	RUN(test_hsf_isolation);
	RUN(test_throttle_fp);
	RUN(test_throttle_in_server);
	RUN(test_budget_charges_cpu_time);
	RUN(test_sporadic);
	RUN(test_common_start);
	RUN(test_reservation);
	RUN(test_semi_partitioned);
	RUN(test_seen_split_job);
	return unit_summary();
}
