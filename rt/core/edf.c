// SPDX-License-Identifier: GPL-2.0
/* edf: preemptive earliest-deadline-first; task priorities are ignored. */
#include "rts.h"

static int edf_pick(const struct rts_sched *s)
{
	int best = RTS_NONE;
	int i;

	for (i = 0; i < s->nr_ids; i++) {
		if (!rts_eligible(&s->task[i]))
			continue;
		if (best == RTS_NONE || rts_job_deadline(&s->task[i]) <
					rts_job_deadline(&s->task[best]))
			best = i;
	}
	return best;
}

const struct rts_policy rts_policy_edf = {
	.name = "edf",
	.pick = edf_pick,
};
