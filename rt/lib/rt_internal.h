/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Library internals shared with rtctl: device access, config, trace text. */
#ifndef RTSCHED_RT_INTERNAL_H
#define RTSCHED_RT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "rts.h"
#include "rtsched_uapi.h"

int rt_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rt_open_device(void);
int rt_device_fd(void);
int rt_reserve(const struct rtsched_task_args *a);
int rt_status(struct rtsched_status *st, struct rtsched_server_status *sv,
	      struct rtsched_task_status *ts);

/* The policy core's view (nanoseconds) of ioctl arguments (microseconds),
 * to check them with the kernel's own rules.
 */
void rt_task_params(struct rts_task_params *p,
		    const struct rtsched_task_args *a);
void rt_server_params(struct rts_server_params *p,
		      const struct rtsched_server_args *a);

/* A configuration file (docs/rt-formats.md), times in microseconds. */
struct rt_config_task {
	struct rtsched_task_args args;
	unsigned long long jobs;	/* 0: forever */
	char where[64];			/* "FILE:LINE" or "FILE: task[N]" */
};

struct rt_config_server {
	struct rtsched_server_args args;
	char where[64];
};

/* As bootlab's configuration reader (MAX_CPUS, MAX_OVERHEAD_US). */
#define RT_CONFIG_MAX_CPUS	64
#define RT_CONFIG_MAX_OVERHEAD_US	1000000

struct rt_config {
	char plugin[RTSCHED_PLUGIN_LEN];
	int cpus;			/* multicore plugins; else 1 */
	int worst_fit;			/* assignment = "worst-fit" */
	/* What each job costs beyond its wcet on the platform (its release,
	 * switches and wait): admission charges it to every job, and to each
	 * part of a split one.
	 */
	long long overhead_us;
	int nr_servers;
	int nr_tasks;
	/* Only the first nr_servers and nr_tasks are set. */
	struct rt_config_server server[RTS_MAX_SERVERS];
	struct rt_config_task task[RTS_MAX_TASKS];
};

/* The policy core's policy of a configuration's plugin name, or NULL. */
const struct rts_policy *rt_policy_named(const char *name);

/* 0, or -EINVAL with "FILE:LINE: reason" in rt_last_error() (JSON
 * locations are "FILE: task[N]").
 */
int rt_config_load(const char *path, struct rt_config *cfg);
int rt_config_parse(const char *name, const char *text,
		    struct rt_config *cfg);

/* Admission control: 1 if bootlab's analysis accepts cfg (the same
 * verdict as `bootlab rt analyze`), else 0 with the first reason in why.
 * Under a partitioned plugin it first places the tasks without a cpu, as
 * the analysis does (first-fit or worst-fit decreasing utilisation);
 * under a semi-partitioned one it places every task, splitting those that
 * fit on no CPU whole (C=D splitting: cpu, split_cpu, split_us,
 * split_deadline_us).  Every task's wcet counts cfg->overhead_us more.
 */
int rt_config_admit(struct rt_config *cfg, char *why, size_t len);

/* The share of each of cfg->cpus CPUs an admitted cfg takes, into load. */
void rt_config_loads(const struct rt_config *cfg, double *load);

/* Which trace lines say cpu=: none (one-CPU plugins), the job events
 * (global plugins: where each ran), also task_create (partitioned: the
 * task's CPU).
 */
enum rt_trace_cpu { RT_TRACE_NO_CPU, RT_TRACE_JOB_CPU, RT_TRACE_TASK_CPU };

/* The cpu= a plugin's trace lines carry; policy may be NULL. */
enum rt_trace_cpu rt_trace_cpu_of(const struct rts_policy *policy);

/* One trace record as a line of the text format, without newline. */
int rt_trace_format(char *buf, size_t len, const struct rtsched_record *r,
		    enum rt_trace_cpu with_cpu);
void rt_trace_header(FILE *out, const char *plugin);

#endif /* RTSCHED_RT_INTERNAL_H */
