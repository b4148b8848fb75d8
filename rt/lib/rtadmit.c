// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Admission control for rtctl: the verdict of bootlab's analysis
 * (docs/rt-analysis.md, src/bootlab/rt/schedulability.py) on a
 * configuration, computed in C so that the device can refuse what the
 * analysis rejects before any task runs.
 *
 *   fp      response-time analysis on the whole CPU, R <= D (R <= T bound)
 *   edf     processor demand criterion, walked with QPA
 *   partitioned-*
 *           the tasks without a cpu placed by first-fit or worst-fit
 *           decreasing utilisation, each on a CPU whose test (fp or edf
 *           above) still holds with it; then that test on every CPU
 *   global-edf
 *           the density test of Goossens, Funk & Baruah (GFB):
 *           sum(C/D) <= m - (m - 1) max(C/D), in exact fractions
 *   global-fp
 *           the response-time analysis of Bertogna & Cirinei on m CPUs
 *   semi-partitioned-edf
 *           C=D splitting: first-fit decreasing with the edf test above
 *           on each CPU, a task that fits on none split in two parts
 *   hsf-*   servers as periodic tasks: by response-time analysis (fp) or
 *           by the demand test and Spuri's response times (edf); the
 *           tasks of each on its periodic supply, the blackout shortened
 *           by the server's response time: by response-time analysis
 *           (fp) or by the demand test on the supply (edf)
 *
 * Every job is charged the configuration's overhead_us beyond its wcet
 * (each part of a split job too), as bootlab's analysis charges it.
 *
 * Times are microseconds.  Utilisations are exact fractions (__int128);
 * a set whose periods make them too large to hold is refused with a
 * reason rather than guessed at.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

struct item {		/* a task, or a server as a periodic task */
	long long c, t, d;
	int prio, id;
};

/* Budget every period, all of it within deadline of the period's start;
 * period 0 is the whole CPU.
 */
struct supply {
	long long period, budget, blackout;
};

static long long to_supply(const struct supply *s, long long amount)
{
	long long periods;

	if (amount <= 0)
		return 0;
	if (!s->period)
		return amount;
	periods = (amount - 1) / s->budget;
	return s->blackout + periods * s->period + amount -
	       periods * s->budget;
}

/* Least supply in any interval of length t. */
static long long sbf(const struct supply *s, long long t)
{
	long long periods;

	if (!s->period)
		return t;
	if (t <= s->blackout)
		return 0;
	periods = (t - s->blackout) / s->period;
	t -= s->blackout + periods * s->period;
	return periods * s->budget + (t < s->budget ? t : s->budget);
}

static long long ceil_div(long long a, long long b)
{
	return (a + b - 1) / b;
}

static int by_priority(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Worst response of item rank of a set sorted by priority, released with
 * everything above it at the worst moment of the supply; -1 beyond its
 * period.
 */
static long long fp_response(const struct item *set, int rank,
			     const struct supply *s)
{
	long long demand = set[rank].c, t, settled;
	int j;

	for (j = 0; j < rank; j++)
		demand += set[j].c;
	t = to_supply(s, demand);
	while (t <= set[rank].t) {
		demand = set[rank].c;
		for (j = 0; j < rank; j++)
			demand += ceil_div(t, set[j].t) * set[j].c;
		settled = to_supply(s, demand);
		if (settled == t)
			return t;
		t = settled;
	}
	return -1;
}

static int refuse(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 0;
}

/* Every item of a sorted set within its deadline on the supply. */
static int fp_admit(const struct item *set, int n, const struct supply *s,
		    const char *what, char *why, size_t len)
{
	long long r;
	int i;

	for (i = 0; i < n; i++) {
		r = fp_response(set, i, s);
		if (r < 0)
			return refuse(why, len, "%s %d: worst-case response beyond its period %lld us",
				      what, set[i].id, set[i].t);
		if (r > set[i].d)
			return refuse(why, len, "%s %d: worst-case response %lld us > deadline %lld us",
				      what, set[i].id, r, set[i].d);
	}
	return 1;
}

static long long demand_bound(const struct item *set, int n, long long t)
{
	long long sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if (t >= set[i].d)
			sum += ((t - set[i].d) / set[i].t + 1) * set[i].c;
	return sum;
}

/* The largest deadline k T + D (k >= 0) strictly before t, or -1. */
static long long deadline_before(const struct item *set, int n, long long t)
{
	long long best = -1, d;
	int i;

	for (i = 0; i < n; i++) {
		if (set[i].d >= t)
			continue;
		d = (t - set[i].d - 1) / set[i].t * set[i].t + set[i].d;
		if (d > best)
			best = d;
	}
	return best;
}

static __int128 gcd(__int128 a, __int128 b)
{
	while (b) {
		__int128 r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/* Denominators past this could overflow the sums below. */
#define FRACTION_LIMIT ((__int128)1 << 72)

/*
 * EDF on a supply (the whole CPU, or a server's): dbf(t) <= sbf(t) for
 * every t.  With U the tasks' utilisation and a = budget / period the
 * supply's rate, beyond the horizon L = max(D_max, (sum((T - D) U) + a b) /
 * (a - U)) (or max(D_max, b) + lcm(T, period) when U = a) it cannot fail;
 * below it QPA walks down from deadline to deadline.  L is rounded up in
 * floating point: a longer walk gives the same verdict.
 */
static int edf_admit(const struct item *set, int n, const struct supply *s,
		     const char *what, char *why, size_t len)
{
	__int128 lcm = s->period ? s->period : 1, u = 0, g;
	__int128 rate_num = s->period ? s->budget : 1;
	__int128 rate_den = s->period ? s->period : 1;
	long double slack = 0, horizon_ld;
	long long horizon = 0, t, demand, earliest = -1;
	int i;

	for (i = 0; i < n; i++) {
		g = gcd(lcm, set[i].t);
		lcm = lcm / g * set[i].t;
		if (lcm > FRACTION_LIMIT)
			return refuse(why, len, "periods too diverse for rtctl's exact EDF test: use bootlab rt analyze");
		if (set[i].d > horizon)
			horizon = set[i].d;
		if (earliest < 0 || set[i].d < earliest)
			earliest = set[i].d;
	}
	if (!n)
		return 1;
	for (i = 0; i < n; i++) {
		u += lcm / set[i].t * set[i].c;
		slack += (long double)set[i].c * (set[i].t - set[i].d) / set[i].t;
	}
	/* U > a, with U = u / lcm and a = rate_num / rate_den */
	if (u * rate_den > rate_num * lcm)
		return refuse(why, len, "%sutilisation %.3f > %.3f", what,
			      (double)u / (double)lcm,
			      (double)rate_num / (double)rate_den);
	if (u * rate_den < rate_num * lcm) {
		horizon_ld = (slack + (long double)rate_num / rate_den * s->blackout) /
			     ((long double)rate_num / rate_den - (long double)u / lcm);
		if (horizon_ld > RTS_NEVER / 4)
			horizon = RTS_NEVER / 4;
		else if (horizon_ld + 1 > horizon)
			horizon = (long long)horizon_ld + 1;
	} else if (lcm > RTS_NEVER / 4) {
		return refuse(why, len, "periods too diverse for rtctl's exact EDF test: use bootlab rt analyze");
	} else {
		if (s->blackout > horizon)
			horizon = s->blackout;
		horizon += (long long)lcm;
	}
	for (t = deadline_before(set, n, horizon + 1); t >= earliest && t >= 0;) {
		demand = demand_bound(set, n, t);
		if (demand > sbf(s, t))
			return refuse(why, len, "%sdemand %lld us within %lld us exceeds the supply %lld us (processor demand test)",
				      what, demand, t, sbf(s, t));
		t = to_supply(s, demand) < t ? to_supply(s, demand) :
		    deadline_before(set, n, t);
	}
	return 1;
}

/* Busy period of synchronous items on the whole CPU (utilisation <= 1). */
static long long busy_period(const struct item *set, int n)
{
	long long length = 0, longer;
	int i;

	for (i = 0; i < n; i++)
		length += set[i].c;
	for (;;) {
		longer = 0;
		for (i = 0; i < n; i++)
			longer += ceil_div(length, set[i].t) * set[i].c;
		if (longer == length)
			return length;
		length = longer;
	}
}

/*
 * Spuri's worst-case response time of set[i] under EDF on the whole CPU,
 * for a set the demand test admits: the longest deadline-d busy period
 * less the release a, over the releases a = k T_j + D_j - D_i in the busy
 * period (docs/rt-analysis.md).
 */
static long long edf_response(const struct item *set, int n, int i,
			      long long busy)
{
	long long worst = set[i].c, a, due, own, span, longer;
	long long k;
	int j, m;

	for (j = 0; j < n; j++) {
		k = set[i].d > set[j].d ?
		    ceil_div(set[i].d - set[j].d, set[j].t) : 0;
		for (; (a = k * set[j].t + set[j].d - set[i].d) < busy; k++) {
			due = a + set[i].d;
			own = (a / set[i].t + 1) * set[i].c;
			span = own;
			for (;;) {
				longer = own;
				for (m = 0; m < n; m++) {
					long long arrived, due_by;

					if (m == i || set[m].d > due)
						continue;
					arrived = ceil_div(span, set[m].t);
					due_by = (due - set[m].d) / set[m].t + 1;
					longer += (arrived < due_by ? arrived : due_by) *
						  set[m].c;
				}
				if (longer == span)
					break;
				span = longer;
			}
			if (span - a > worst)
				worst = span - a;
		}
	}
	return worst;
}

/*
 * The configuration's overhead_us, while rt_config_admit() or
 * rt_config_loads() runs: every job's execution is charged it (a split
 * task's two parts each).
 */
static long long overhead;

static long long charged_wcet(const struct rtsched_task_args *a)
{
	return (long long)a->wcet_us + overhead;
}

static void task_item(struct item *it, const struct rtsched_task_args *a)
{
	it->c = charged_wcet(a);
	it->t = (long long)a->period_us;
	it->d = (long long)a->deadline_us;
	it->prio = a->prio;
	it->id = a->id;
}

static int hsf_admit(const struct rt_config *cfg,
		     const struct rts_policy *policy, char *why, size_t len)
{
	static struct item servers[RTS_MAX_SERVERS], tasks[RTS_MAX_TASKS];
	static long long response[RTS_MAX_SERVERS];
	struct supply whole = { 0 }, s;
	char what[32];
	long long busy;
	int i, j, n;

	for (i = 0; i < cfg->nr_servers; i++) {
		const struct rtsched_server_args *a = &cfg->server[i].args;

		servers[i] = (struct item) {
			.c = (long long)a->budget_us, .t = (long long)a->period_us,
			.d = (long long)a->period_us, .prio = a->prio, .id = a->id,
		};
	}
	n = cfg->nr_servers;
	if (policy->servers_by_deadline) {
		if (!edf_admit(servers, n, &whole, "servers: ", why, len))
			return 0;
		busy = busy_period(servers, n);
		for (i = 0; i < n; i++)
			response[i] = edf_response(servers, n, i, busy);
	} else {
		qsort(servers, n, sizeof(*servers), by_priority);
		if (!fp_admit(servers, n, &whole, "server", why, len))
			return 0;
		for (i = 0; i < n; i++)
			response[i] = fp_response(servers, i, &whole);
	}
	for (i = 0; i < cfg->nr_servers; i++) {
		s = (struct supply) {
			.period = servers[i].t, .budget = servers[i].c,
			.blackout = servers[i].t + response[i] - 2 * servers[i].c,
		};
		for (j = n = 0; j < cfg->nr_tasks; j++)
			if (cfg->task[j].args.server == servers[i].id)
				task_item(&tasks[n++], &cfg->task[j].args);
		snprintf(what, sizeof(what), "server %d: tasks' ", servers[i].id);
		if (policy->tasks_by_deadline) {
			if (!edf_admit(tasks, n, &s, what, why, len))
				return 0;
			continue;
		}
		qsort(tasks, n, sizeof(*tasks), by_priority);
		if (!fp_admit(tasks, n, &s, "task", why, len))
			return 0;
	}
	return 1;
}

/* The verdict of the one-CPU test of policy on a set; 1 if it holds. */
static int cpu_admit(const struct rts_policy *policy, struct item *set, int n,
		     char *why, size_t len)
{
	struct supply whole = { 0 };

	if (policy->tasks_by_deadline)
		return edf_admit(set, n, &whole, "", why, len);
	qsort(set, n, sizeof(*set), by_priority);
	return fp_admit(set, n, &whole, "task", why, len);
}

/* The tasks of cfg on cpu, plus extra when it is not NULL. */
static int cpu_items(const struct rt_config *cfg, int cpu,
		     const struct rtsched_task_args *extra, struct item *set)
{
	int i, n = 0;

	for (i = 0; i < cfg->nr_tasks; i++)
		if (cfg->task[i].args.cpu == cpu)
			task_item(&set[n++], &cfg->task[i].args);
	if (extra)
		task_item(&set[n++], extra);
	return n;
}

/* Does a go before b in decreasing utilisation (ties: lower id)? */
static int heavier(const struct rtsched_task_args *a,
		   const struct rtsched_task_args *b)
{
	__int128 ua = (__int128)charged_wcet(a) * b->period_us;
	__int128 ub = (__int128)charged_wcet(b) * a->period_us;

	return ua != ub ? ua > ub : a->id < b->id;
}

/*
 * Place the tasks without a cpu as bootlab's analysis does
 * (multicore.partition): by decreasing utilisation, on the first CPU
 * (worst-fit: the least loaded, ties to the lower index) whose test holds
 * with it; a task that fits nowhere goes to the least loaded CPU and is
 * refused.  Loads are exact, over the lcm of the periods.
 */
static int periods_lcm(const struct rt_config *cfg, __int128 *lcm, char *why,
		       size_t len)
{
	__int128 g;
	int i;

	*lcm = 1;
	for (i = 0; i < cfg->nr_tasks; i++) {
		g = gcd(*lcm, cfg->task[i].args.period_us);
		*lcm = *lcm / g * cfg->task[i].args.period_us;
		if (*lcm > FRACTION_LIMIT)
			return refuse(why, len, "periods too diverse for rtctl's placement: use bootlab rt analyze");
	}
	return 1;
}

/*
 * The tasks without a cpu in decreasing utilisation (ties: lower id), as
 * indexes into order; their count.
 */
static int heaviest_first(const struct rt_config *cfg, int *order)
{
	int i, j, k, n = 0;

	for (i = 0; i < cfg->nr_tasks; i++)
		if (cfg->task[i].args.cpu == RTSCHED_ANY_CPU)
			order[n++] = i;
	for (i = 1; i < n; i++)		/* insertion sort: a few tasks */
		for (j = i; j > 0 && heavier(&cfg->task[order[j]].args,
					     &cfg->task[order[j - 1]].args); j--) {
			k = order[j];
			order[j] = order[j - 1];
			order[j - 1] = k;
		}
	return n;
}

/* The least loaded CPU (ties: the lower index). */
static int least_loaded(const __int128 *load, int cpus)
{
	int cpu, best = 0;

	for (cpu = 1; cpu < cpus; cpu++)
		if (load[cpu] < load[best])
			best = cpu;
	return best;
}

static int place(struct rt_config *cfg, const struct rts_policy *policy,
		 char *why, size_t len)
{
	static struct item set[RTS_MAX_TASKS];
	static int order[RTS_MAX_TASKS];
	__int128 lcm, load[RT_CONFIG_MAX_CPUS];
	int i, n, cpu, best, unfit = -1, fits;
	char ignored[8];

	if (!periods_lcm(cfg, &lcm, why, len))
		return 0;
	for (cpu = 0; cpu < cfg->cpus; cpu++)
		load[cpu] = 0;
	for (i = 0; i < cfg->nr_tasks; i++) {
		const struct rtsched_task_args *a = &cfg->task[i].args;

		if (a->cpu != RTSCHED_ANY_CPU)
			load[a->cpu] += lcm / a->period_us * charged_wcet(a);
	}
	n = heaviest_first(cfg, order);
	for (i = 0; i < n; i++) {
		struct rtsched_task_args *a = &cfg->task[order[i]].args;

		best = -1;
		for (cpu = 0; cpu < cfg->cpus; cpu++) {
			fits = cpu_admit(policy, set,
					 cpu_items(cfg, cpu, a, set), ignored,
					 sizeof(ignored));
			if (fits && (best < 0 || (cfg->worst_fit &&
						  load[cpu] < load[best])))
				best = cpu;
			if (best >= 0 && !cfg->worst_fit)
				break;
		}
		if (best < 0) {
			best = least_loaded(load, cfg->cpus);
			if (unfit < 0)
				unfit = a->id;
		}
		a->cpu = best;
		load[best] += lcm / a->period_us * charged_wcet(a);
	}
	if (unfit >= 0)
		return refuse(why, len, "task %d fits on no CPU", unfit);
	return 1;
}

static int partitioned_admit(struct rt_config *cfg,
			     const struct rts_policy *policy, char *why,
			     size_t len)
{
	static struct item set[RTS_MAX_TASKS];
	char reason[200];
	int cpu;

	if (!place(cfg, policy, why, len))
		return 0;
	for (cpu = 0; cpu < cfg->cpus; cpu++) {
		if (!cpu_admit(policy, set, cpu_items(cfg, cpu, NULL, set),
			       reason, sizeof(reason)))
			return refuse(why, len, "CPU %d: %s", cpu, reason);
	}
	return 1;
}

/* A task's part on a CPU, as an EDF item (semi-partitioned). */
struct part {
	int cpu;
	struct item it;
};

static struct part parts[2 * RTS_MAX_TASKS];
static int nr_parts;

/* Does cpu's EDF test hold with its parts and, if c > 0, one more? */
static int part_fits(int cpu, const struct rtsched_task_args *a, long long c,
		     long long d, char *why, size_t len)
{
	static struct item set[2 * RTS_MAX_TASKS + 1];
	struct supply whole = { 0 };
	int i, n = 0;

	for (i = 0; i < nr_parts; i++)
		if (parts[i].cpu == cpu)
			set[n++] = parts[i].it;
	if (c > 0) {
		task_item(&set[n], a);
		set[n].c = c;
		set[n++].d = d;
	}
	return edf_admit(set, n, &whole, "", why, len);
}

static void add_part(int cpu, const struct rtsched_task_args *a, long long c,
		     long long d, __int128 *load, __int128 lcm)
{
	parts[nr_parts].cpu = cpu;
	task_item(&parts[nr_parts].it, a);
	parts[nr_parts].it.c = c;
	parts[nr_parts++].it.d = d;
	load[cpu] += lcm / a->period_us * c;
}

/*
 * Split task a once, as multicore._split: on the first CPU that takes
 * some of it, the largest C' (= D') bisection over [1, min(C, D) - 1]
 * finds that keeps that CPU schedulable, and the rest, C - C' due D - C',
 * on the first other CPU that takes it.  1 if placed so.  C is charged
 * with the overhead, and the rest with it once more (a part of its own):
 * the first part executes C' less the overhead, due C' after the release.
 */
static int split_task(struct rtsched_task_args *a, int cpus, __int128 *load,
		      __int128 lcm)
{
	long long low, high, middle, c = charged_wcet(a);
	long long d = (long long)a->deadline_us;
	char ignored[8];
	int first, rest;

	for (first = 0; first < cpus; first++) {
		/* Charged, C may exceed D: the rest keeps some of the deadline. */
		for (low = 0, high = (c < d ? c : d) - 1; low < high;) {
			middle = (low + high + 1) / 2;
			if (part_fits(first, a, middle, middle, ignored,
				      sizeof(ignored)))
				low = middle;
			else
				high = middle - 1;
		}
		if (low <= overhead)	/* no execution left in the part */
			continue;
		for (rest = 0; rest < cpus; rest++)
			if (rest != first &&
			    part_fits(rest, a, c - low + overhead, d - low,
				      ignored, sizeof(ignored)))
				break;
		if (rest == cpus)
			continue;
		add_part(first, a, low, low, load, lcm);
		add_part(rest, a, c - low + overhead, d - low, load, lcm);
		a->cpu = first;
		a->split_cpu = rest;
		a->split_us = (unsigned long long)(low - overhead);
		a->split_deadline_us = (unsigned long long)low;
		return 1;
	}
	return 0;
}

/*
 * Semi-partitioned EDF with C=D splitting (multicore.split_cd): by
 * decreasing utilisation, each task whole on the first CPU whose EDF test
 * holds with it, else split once (split_task); one that fits nowhere even
 * split goes whole to the least loaded CPU and is refused.  Sets every
 * task's cpu, and split_cpu and split_us for a split one.
 */
static int split_admit(struct rt_config *cfg, char *why, size_t len)
{
	static int order[RTS_MAX_TASKS];
	__int128 lcm, load[RT_CONFIG_MAX_CPUS];
	char reason[200], ignored[8];
	int i, n, cpu, unfit = -1;

	if (!periods_lcm(cfg, &lcm, why, len))
		return 0;
	nr_parts = 0;
	for (cpu = 0; cpu < cfg->cpus; cpu++)
		load[cpu] = 0;
	n = heaviest_first(cfg, order);
	for (i = 0; i < n; i++) {
		struct rtsched_task_args *a = &cfg->task[order[i]].args;
		long long c = charged_wcet(a);
		long long d = (long long)a->deadline_us;

		for (cpu = 0; cpu < cfg->cpus; cpu++)
			if (part_fits(cpu, a, c, d, ignored, sizeof(ignored)))
				break;
		if (cpu == cfg->cpus && split_task(a, cfg->cpus, load, lcm))
			continue;
		if (cpu == cfg->cpus) {
			cpu = least_loaded(load, cfg->cpus);
			if (unfit < 0)
				unfit = a->id;
		}
		add_part(cpu, a, c, d, load, lcm);
		a->cpu = cpu;
	}
	if (unfit >= 0)
		return refuse(why, len, "task %d fits on no CPU, even split",
			      unfit);
	for (cpu = 0; cpu < cfg->cpus; cpu++)
		if (!part_fits(cpu, NULL, 0, 0, reason, sizeof(reason)))
			return refuse(why, len, "CPU %d: %s", cpu, reason);
	return 1;
}

/* GFB: the sum of the densities plus (m - 1) times the largest <= m. */
static int gfb_admit(const struct item *set, int n, int m, char *why,
		     size_t len)
{
	__int128 num = 0, den = 1, g;
	int i, big = 0;

	for (i = 0; i < n; i++) {
		if ((__int128)set[i].c * set[big].d > (__int128)set[big].c * set[i].d)
			big = i;
		g = gcd(den, set[i].d);
		num = num * (set[i].d / g) + set[i].c * (den / g);
		den = den / g * set[i].d;
		if (den > FRACTION_LIMIT)
			return refuse(why, len, "deadlines too diverse for rtctl's exact GFB test: use bootlab rt analyze");
		g = gcd(num, den);
		num /= g;
		den /= g;
	}
	/* num/den + (m - 1) c/d <= m, times den * d. */
	if (n && num * set[big].d + (__int128)(m - 1) * set[big].c * den >
		 (__int128)m * den * set[big].d)
		return refuse(why, len, "density %.3f > %.3f (GFB test on %d CPUs)",
			      (double)num / (double)den,
			      m - (m - 1) * (double)set[big].c / set[big].d, m);
	return 1;
}

/*
 * Most execution of task h within any window of l when its jobs end
 * within r of their release (Bertogna & Cirinei): N C + min(C, l + r - C -
 * N T), N = (l + r - C) / T.
 */
static long long bc_workload(const struct item *h, long long r, long long l)
{
	long long jobs = (l + r - h->c) / h->t;
	long long rest = l + r - h->c - jobs * h->t;

	return jobs * h->c + (rest < h->c ? rest : h->c);
}

/*
 * Global fp on m CPUs, set by priority: R_k = C_k + floor(sum over the
 * higher ones of min(W_i(R_k), R_k - C_k + 1) / m), from R_k = C_k, each
 * bound within its deadline.
 */
static int global_fp_admit(const struct item *set, int n, int m, char *why,
			   size_t len)
{
	static long long bound[RTS_MAX_TASKS];
	long long r, next, interference, w;
	int k, i;

	for (k = 0; k < n; k++) {
		for (r = set[k].c; r <= set[k].d; r = next) {
			interference = 0;
			for (i = 0; i < k; i++) {
				w = bc_workload(&set[i], bound[i], r);
				interference += w < r - set[k].c + 1 ?
						w : r - set[k].c + 1;
			}
			next = set[k].c + interference / m;
			if (next == r)
				break;
		}
		if (r > set[k].d)
			return refuse(why, len, "task %d: worst-case response beyond its deadline %lld us (Bertogna & Cirinei on %d CPUs)",
				      set[k].id, set[k].d, m);
		bound[k] = r;
	}
	return 1;
}

int rt_config_admit(struct rt_config *cfg, char *why, size_t len)
{
	static struct item set[RTS_MAX_TASKS];
	const struct rts_policy *policy = rt_policy_named(cfg->plugin);
	struct supply whole = { 0 };
	int i;

	overhead = cfg->overhead_us;
	if (policy->has_servers)
		return hsf_admit(cfg, policy, why, len);
	if (policy->per_cpu)
		return partitioned_admit(cfg, policy, why, len);
	if (policy->split)
		return split_admit(cfg, why, len);
	for (i = 0; i < cfg->nr_tasks; i++)
		task_item(&set[i], &cfg->task[i].args);
	if (policy->global && policy->tasks_by_deadline)
		return gfb_admit(set, cfg->nr_tasks, cfg->cpus, why, len);
	if (policy->tasks_by_deadline)
		return edf_admit(set, cfg->nr_tasks, &whole, "", why, len);
	qsort(set, cfg->nr_tasks, sizeof(*set), by_priority);
	if (policy->global)
		return global_fp_admit(set, cfg->nr_tasks, cfg->cpus, why, len);
	return fp_admit(set, cfg->nr_tasks, &whole, "task", why, len);
}

/*
 * The share of each CPU an admitted cfg takes (placed and split by
 * rt_config_admit), its overhead charged: the servers' budgets
 * (hierarchical), each task's or part's demand on its CPU (partitioned,
 * semi-partitioned), the tasks' spread over every CPU (global).  load
 * gets cfg->cpus entries.
 */
void rt_config_loads(const struct rt_config *cfg, double *load)
{
	const struct rts_policy *policy = rt_policy_named(cfg->plugin);
	int i, cpu;

	overhead = cfg->overhead_us;
	for (cpu = 0; cpu < cfg->cpus; cpu++)
		load[cpu] = 0;
	for (i = 0; i < cfg->nr_servers; i++)
		load[0] += (double)cfg->server[i].args.budget_us /
			   cfg->server[i].args.period_us;
	for (i = 0; !cfg->nr_servers && i < cfg->nr_tasks; i++) {
		const struct rtsched_task_args *a = &cfg->task[i].args;
		double t = (double)a->period_us, c = (double)charged_wcet(a);

		if (policy->global) {
			for (cpu = 0; cpu < cfg->cpus; cpu++)
				load[cpu] += c / t / cfg->cpus;
		} else if (a->split_us) {
			load[a->cpu] += a->split_deadline_us / t;
			load[a->split_cpu] += (c - a->split_deadline_us + overhead) / t;
		} else {
			load[a->cpu == RTSCHED_ANY_CPU ? 0 : a->cpu] += c / t;
		}
	}
}
