// SPDX-License-Identifier: GPL-2.0
/*
 * hsf-fp: idling periodic servers under global fixed priority, tasks under
 * local fixed priority.  The active server spends budget whether or not
 * it has work, so the server level is independent of the tasks.
 */
#include "rts.h"

/* Highest-priority server with budget left (ties: lower id). */
static int hsf_select(const struct rts_sched *s)
{
	int best = RTS_NONE;
	int i;

	for (i = 0; i < RTS_MAX_SERVERS; i++) {
		const struct rts_server *sv = &s->server[i];

		if (!sv->used || sv->left <= 0)
			continue;
		if (best == RTS_NONE || sv->p.prio < s->server[best].p.prio)
			best = i;
	}
	return best;
}

static long long hsf_next_event(const struct rts_sched *s)
{
	long long next = RTS_NEVER;
	int i;

	for (i = 0; i < RTS_MAX_SERVERS; i++)
		if (s->server[i].used && s->server[i].next_replenish < next)
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
	int i;

	if (s->active_server != RTS_NONE) {
		sv = &s->server[s->active_server];
		sv->left -= t - s->now;
		if (sv->left <= 0) {
			sv->left = 0;
			rts_emit(s, t, RTS_EV_DEPLETE, RTS_NONE, sv->p.id, 0, 0);
			s->active_server = RTS_NONE;
		}
	}
	for (i = 0; i < RTS_MAX_SERVERS; i++) {
		sv = &s->server[i];
		if (!sv->used || sv->next_replenish > t)
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

static int hsf_pick(const struct rts_sched *s)
{
	if (s->active_server == RTS_NONE)
		return RTS_NONE;
	return rts_pick_fp(s, s->active_server);
}

static void hsf_reset(struct rts_sched *s)
{
	int i;

	for (i = 0; i < RTS_MAX_SERVERS; i++)
		s->server[i].left = 0;
}

const struct rts_policy rts_policy_hsf_fp = {
	.name = "hsf-fp",
	.has_servers = 1,
	.pick = hsf_pick,
	.next_event = hsf_next_event,
	.account = hsf_account,
	.settle = hsf_settle,
	.reset = hsf_reset,
};
