// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Admission control for rtctl: the verdict of bootlab's analysis
 * (docs/rt-analysis.md, src/bootlab/rt/schedulability.py) on a
 * configuration, computed in C so that the device can refuse what the
 * analysis rejects before any task runs.
 *
 *   fp      response-time analysis on the whole CPU, R <= D (R <= T bound)
 *   edf     processor demand criterion, walked with QPA
 *   hsf-fp  servers by response-time analysis as periodic tasks; the tasks
 *           of each by response-time analysis on its periodic supply, the
 *           blackout shortened by the server's response time
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
#define FRACTION_LIMIT ((__int128)1 << 80)

/*
 * EDF on the whole CPU: dbf(t) <= t for every t.  Beyond the horizon
 * L = max(D_max, sum((T - D) U) / (1 - U)) (or D_max + lcm(T) when U = 1)
 * it cannot fail; below it QPA walks down from deadline to deadline.
 */
static int edf_admit(const struct item *set, int n, char *why, size_t len)
{
	__int128 lcm = 1, u = 0, slack = 0, g;
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
	for (i = 0; i < n; i++) {
		u += lcm / set[i].t * set[i].c;
		slack += lcm / set[i].t * set[i].c * (set[i].t - set[i].d);
	}
	if (u > lcm)
		return refuse(why, len, "utilisation %.3f > 1", (double)u / (double)lcm);
	if (u < lcm) {
		/* ceil(slack / (1 - U)) with both over the same lcm */
		g = (slack + (lcm - u) - 1) / (lcm - u);
		if (g > horizon)
			horizon = g > (__int128)RTS_NEVER / 4 ? RTS_NEVER / 4 :
				  (long long)g;
	} else if (lcm > RTS_NEVER / 4) {
		return refuse(why, len, "periods too diverse for rtctl's exact EDF test: use bootlab rt analyze");
	} else {
		horizon += (long long)lcm;
	}
	for (t = deadline_before(set, n, horizon + 1); t >= earliest && t >= 0;) {
		demand = demand_bound(set, n, t);
		if (demand > t)
			return refuse(why, len, "demand %lld us within %lld us exceeds it (processor demand test)",
				      demand, t);
		t = demand < t ? demand : deadline_before(set, n, t);
	}
	return 1;
}

static void task_item(struct item *it, const struct rtsched_task_args *a)
{
	it->c = (long long)a->wcet_us;
	it->t = (long long)a->period_us;
	it->d = (long long)a->deadline_us;
	it->prio = a->prio;
	it->id = a->id;
}

static int hsf_admit(const struct rt_config *cfg, char *why, size_t len)
{
	static struct item servers[RTS_MAX_SERVERS], tasks[RTS_MAX_TASKS];
	struct supply whole = { 0 }, s;
	long long r;
	int i, j, n;

	for (i = 0; i < cfg->nr_servers; i++) {
		const struct rtsched_server_args *a = &cfg->server[i].args;

		servers[i] = (struct item) {
			.c = (long long)a->budget_us, .t = (long long)a->period_us,
			.d = (long long)a->period_us, .prio = a->prio, .id = a->id,
		};
	}
	qsort(servers, cfg->nr_servers, sizeof(*servers), by_priority);
	if (!fp_admit(servers, cfg->nr_servers, &whole, "server", why, len))
		return 0;
	for (i = 0; i < cfg->nr_servers; i++) {
		r = fp_response(servers, i, &whole);
		s = (struct supply) {
			.period = servers[i].t, .budget = servers[i].c,
			.blackout = servers[i].t + r - 2 * servers[i].c,
		};
		for (j = n = 0; j < cfg->nr_tasks; j++)
			if (cfg->task[j].args.server == servers[i].id)
				task_item(&tasks[n++], &cfg->task[j].args);
		qsort(tasks, n, sizeof(*tasks), by_priority);
		if (!fp_admit(tasks, n, &s, "task", why, len))
			return 0;
	}
	return 1;
}

int rt_config_admit(const struct rt_config *cfg, char *why, size_t len)
{
	static struct item set[RTS_MAX_TASKS];
	struct supply whole = { 0 };
	int i;

	if (!strcmp(cfg->plugin, "hsf-fp"))
		return hsf_admit(cfg, why, len);
	for (i = 0; i < cfg->nr_tasks; i++)
		task_item(&set[i], &cfg->task[i].args);
	if (!strcmp(cfg->plugin, "edf"))
		return edf_admit(set, cfg->nr_tasks, why, len);
	qsort(set, cfg->nr_tasks, sizeof(*set), by_priority);
	return fp_admit(set, cfg->nr_tasks, &whole, "task", why, len);
}
