// SPDX-License-Identifier: GPL-2.0
/*
 * Hierarchical scheduling: idling periodic servers, chosen by fixed
 * priority or by EDF (a server's deadline is the end of its current
 * period), and inside the active server its tasks, by fixed priority or by
 * EDF.  The active server spends budget whether or not it has work, so the
 * server level is independent of the tasks.  The four combinations share
 * this code; a policy says which order each level uses.
 */
#include "rts.h"

/* Does server a go before server b (a has the lower id)? */
static int hsf_before(const struct rts_sched *s, const struct rts_server *a,
		      const struct rts_server *b)
{
	if (s->policy->servers_by_deadline)
		return a->next_replenish < b->next_replenish;
	return a->p.prio < b->p.prio;
}

/* The first server with budget left (ties: lower id). */
static int hsf_select(const struct rts_sched *s)
{
	int best = RTS_NONE;
	int i, k;

	rts_for_each_server(s, k, i) {
		const struct rts_server *sv = &s->server[i];

		if (sv->left <= 0)
			continue;
		if (best == RTS_NONE || hsf_before(s, sv, &s->server[best]))
			best = i;
	}
	return best;
}

static long long hsf_next_event(const struct rts_sched *s)
{
	long long next = RTS_NEVER;
	int i, k;

	rts_for_each_server(s, k, i)
		if (s->server[i].next_replenish < next)
			next = s->server[i].next_replenish;
	if (s->active_server != RTS_NONE &&
	    s->now + s->server[s->active_server].left < next)
		next = s->now + s->server[s->active_server].left;
	return next;
}

/* Charge the active server for [now, t), then replenish those due at t. */
static void hsf_account(struct rts_sched *s, long long t)
{
	struct rts_server *sv;
	int i, k;

	if (s->active_server != RTS_NONE) {
		sv = &s->server[s->active_server];
		sv->left -= t - s->now;
		if (sv->left <= 0) {
			sv->left = 0;
			rts_emit(s, t, RTS_EV_DEPLETE, RTS_NONE, sv->p.id, 0, 0);
			s->active_server = RTS_NONE;
		}
	}
	rts_for_each_server(s, k, i) {
		sv = &s->server[i];
		if (sv->next_replenish > t)
			continue;
		sv->left = sv->p.budget;
		sv->next_replenish += sv->p.period;
		rts_emit(s, t, RTS_EV_REPLENISH, RTS_NONE, i, 0, sv->left);
	}
}

static void hsf_settle(struct rts_sched *s, long long t)
{
	int next = hsf_select(s);

	if (next == s->active_server)
		return;
	if (s->active_server != RTS_NONE)
		rts_emit(s, t, RTS_EV_SERVER_PREEMPT, RTS_NONE,
			 s->active_server, 0, 0);
	if (next != RTS_NONE)
		rts_emit(s, t, RTS_EV_SERVER_RESUME, RTS_NONE, next, 0, 0);
	s->active_server = next;
}

static int hsf_pick(const struct rts_sched *s, int cpu)
{
	(void)cpu;
	if (s->active_server == RTS_NONE)
		return RTS_NONE;
	if (s->policy->tasks_by_deadline)
		return rts_pick_edf(s, s->active_server);
	return rts_pick_fp(s, s->active_server);
}

static void hsf_reset(struct rts_sched *s)
{
	int i;

	for (i = 0; i < RTS_MAX_SERVERS; i++)
		s->server[i].left = 0;
}

#define HSF_POLICY(policy_name, servers_edf, tasks_edf) {	\
	.name = policy_name,					\
	.has_servers = 1,					\
	.servers_by_deadline = servers_edf,			\
	.tasks_by_deadline = tasks_edf,				\
	.pick = hsf_pick,					\
	.next_event = hsf_next_event,				\
	.account = hsf_account,					\
	.settle = hsf_settle,					\
	.reset = hsf_reset,					\
}

/* By [servers by deadline][tasks by deadline]. */
const struct rts_policy rts_policy_hsf[2][2] = {
	{ HSF_POLICY("hsf-fp", 0, 0), HSF_POLICY("hsf-fp-edf", 0, 1) },
	{ HSF_POLICY("hsf-edf-fp", 1, 0), HSF_POLICY("hsf-edf", 1, 1) },
};
