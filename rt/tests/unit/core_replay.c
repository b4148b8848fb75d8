// SPDX-License-Identifier: GPL-2.0
/*
 * core_replay CONFIG UNTIL_NS [SPIN_ID]: run the policy core on the host
 * executor for a configuration (every job takes exactly its wcet, but task
 * SPIN_ID never completes one; common start at 0, no overrun slack) and
 * print its events before UNTIL_NS as trace lines, so that the Python
 * tests can compare them with the simulator's (with enforcement).  Under
 * a global or semi-partitioned policy the executor plays cfg.cpus CPUs and
 * job events say which; a semi-partitioned configuration is placed and
 * split as rtctl does (admission control's C=D splitting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "rt.h"
#include "rt_internal.h"

static struct rts_sched s;
static struct cpu c;
static long long until;

static void print_event(void *ctx, const struct rts_event *ev)
{
	struct rtsched_record rec = {
		.time = ev->time, .type = ev->type, .task = ev->task,
		.server = ev->server, .job = ev->job, .deadline = ev->value,
		.budget = ev->value,
	};
	char line[256];

	(void)ctx;
	if (ev->time >= until || ev->type == RTS_EV_SERVER_CREATE ||
	    ev->type == RTS_EV_TASK_CREATE)
		return;
	if (ev->task != RTS_NONE)
		rec.cpu = cpu_of(&s, &c, ev->task);
	rt_trace_format(line, sizeof(line), &rec, rt_trace_cpu_of(s.policy));
	puts(line);
}

int main(int argc, char **argv)
{
	static struct rt_config cfg;
	struct rts_server_params sp;
	struct rts_task_params tp;
	const char *why = NULL;
	int i;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: core_replay CONFIG UNTIL_NS [SPIN_ID]\n");
		return 2;
	}
	if (argc == 4)
		c.spin[atoi(argv[3]) & (RTS_MAX_TASKS - 1)] = 1;
	until = atoll(argv[2]);
	if (rt_config_load(argv[1], &cfg)) {
		fprintf(stderr, "%s\n", rt_last_error());
		return 2;
	}
	rts_init(&s, rt_policy_named(cfg.plugin), 0, print_event, NULL);
	if ((s.policy->global || s.policy->split) && cfg.cpus > RTS_MAX_CPUS) {
		fprintf(stderr, "%s: at most %d CPUs\n", argv[1], RTS_MAX_CPUS);
		return 2;
	}
	if (s.policy->global || s.policy->split)
		s.nr_cpus = cfg.cpus;
	if (s.policy->split) {
		char ignored[8];

		rt_config_admit(&cfg, ignored, sizeof(ignored));
	}
	for (i = 0; i < cfg.nr_servers; i++) {
		rt_server_params(&sp, &cfg.server[i].args);
		if (rts_server_add(&s, &sp, 0, &why))
			break;
	}
	for (i = 0; !why && i < cfg.nr_tasks; i++) {
		rt_task_params(&tp, &cfg.task[i].args);
		rts_task_run(&s, &tp, 0, 0, &why);
	}
	if (why) {
		fprintf(stderr, "%s: %s\n", argv[1], why);
		return 2;
	}
	c.job_events = 1;
	execute(&s, &c, until);
	return 0;
}
