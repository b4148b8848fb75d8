// SPDX-License-Identifier: LGPL-2.1-or-later
/* Binary recorder events to the text trace format of docs/rt-formats.md. */
#include <stdio.h>

#include "rt_internal.h"

static const char *const event_names[RTS_EV_COUNT] = {
	[RTS_EV_SERVER_CREATE] = "server_create",
	[RTS_EV_TASK_CREATE] = "task_create",
	[RTS_EV_REPLENISH] = "replenish",
	[RTS_EV_DEPLETE] = "deplete",
	[RTS_EV_SERVER_RESUME] = "server_resume",
	[RTS_EV_SERVER_PREEMPT] = "server_preempt",
	[RTS_EV_RELEASE] = "release",
	[RTS_EV_START] = "start",
	[RTS_EV_PREEMPT] = "preempt",
	[RTS_EV_RESUME] = "resume",
	[RTS_EV_COMPLETE] = "complete",
	[RTS_EV_MISS] = "miss",
	[RTS_EV_SWITCH] = "switch",
	[RTS_EV_OVERFLOW] = "overflow",
	[RTS_EV_EXIT] = "exit",
	[RTS_EV_OVERRUN] = "overrun",
};

/* Commands may contain spaces; the format separates keys by spaces. */
static void comm_copy(char *dst, const char *src)
{
	int i;

	for (i = 0; i < 15 && src[i]; i++)
		dst[i] = src[i] == ' ' || src[i] == '=' ? '_' : src[i];
	dst[i] = '\0';
}

void rt_trace_header(FILE *out, const char *plugin)
{
	fprintf(out, "# rtsched-trace 1 plugin=%s\n", plugin);
}

enum rt_trace_cpu rt_trace_cpu_of(const struct rts_policy *policy)
{
	if (policy && policy->per_cpu)
		return RT_TRACE_TASK_CPU;
	if (policy && (policy->global || policy->split))
		return RT_TRACE_JOB_CPU;
	return RT_TRACE_NO_CPU;
}

int rt_trace_format(char *buf, size_t len, const struct rtsched_record *r,
		    enum rt_trace_cpu with_cpu)
{
	unsigned long long t = r->time;
	const char *name;
	char prev[16], next[16];
	int n;

	if (r->type >= RTS_EV_COUNT)
		return snprintf(buf, len, "# unknown event %u", r->type);
	name = event_names[r->type];
	switch (r->type) {
	case RTS_EV_START:
	case RTS_EV_PREEMPT:
	case RTS_EV_RESUME:
	case RTS_EV_COMPLETE:
		if (with_cpu == RT_TRACE_NO_CPU)
			break;
		return snprintf(buf, len, "%llu %s task=%d job=%llu cpu=%u", t,
				name, r->task, (unsigned long long)r->job,
				r->cpu);
	case RTS_EV_SERVER_CREATE:
		return snprintf(buf, len, "%llu %s server=%d period=%lld budget=%lld prio=%d",
				t, name, r->server, (long long)r->period,
				(long long)r->budget, r->prio);
	case RTS_EV_TASK_CREATE:
		if (r->server < 0) {
			n = snprintf(buf, len, "%llu %s task=%d pid=%d period=%lld wcet=%lld deadline=%lld prio=%d",
				     t, name, r->task, r->pid,
				     (long long)r->period,
				     (long long)r->budget,
				     (long long)r->deadline, r->prio);
			if (with_cpu == RT_TRACE_TASK_CPU && n >= 0 &&
			    (size_t)n < len)
				n += snprintf(buf + n, len - n, " cpu=%u",
					      r->cpu);
			return n;
		}
		return snprintf(buf, len, "%llu %s task=%d pid=%d server=%d period=%lld wcet=%lld deadline=%lld prio=%d",
				t, name, r->task, r->pid, r->server,
				(long long)r->period, (long long)r->budget,
				(long long)r->deadline, r->prio);
	case RTS_EV_REPLENISH:
		return snprintf(buf, len, "%llu %s server=%d budget=%lld", t,
				name, r->server, (long long)r->budget);
	case RTS_EV_DEPLETE:
	case RTS_EV_SERVER_RESUME:
	case RTS_EV_SERVER_PREEMPT:
		return snprintf(buf, len, "%llu %s server=%d", t, name,
				r->server);
	case RTS_EV_RELEASE:
	case RTS_EV_MISS:
		return snprintf(buf, len, "%llu %s task=%d job=%llu deadline=%lld",
				t, name, r->task, (unsigned long long)r->job,
				(long long)r->deadline);
	case RTS_EV_SWITCH:
		comm_copy(prev, r->prev_comm);
		comm_copy(next, r->next_comm);
		return snprintf(buf, len, "%llu %s cpu=%u prev_pid=%d prev_comm=%s prev_state=%c next_pid=%d next_comm=%s",
				t, name, r->cpu, r->pid, prev,
				(char)r->prev_state, r->next_pid, next);
	case RTS_EV_OVERFLOW:
		return snprintf(buf, len, "%llu %s lost=%llu", t, name,
				(unsigned long long)r->job);
	}
	/* start, preempt, resume, complete (one CPU), exit, overrun */
	return snprintf(buf, len, "%llu %s task=%d job=%llu", t, name,
			r->task, (unsigned long long)r->job);
}
