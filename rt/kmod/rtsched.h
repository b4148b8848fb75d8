/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rtsched: loadable real-time scheduling framework.
 *
 * The framework core (rtsched.ko) owns tasks, timers, the device and the
 * recorder.  A scheduling plugin is a module that hands the core one
 * struct rts_policy (rt/core/rts.h) with rtsched_register_plugin().
 */
#ifndef RTSCHED_H
#define RTSCHED_H

#include <linux/device/driver.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "rts.h"
#include "rtsched_uapi.h"

int rtsched_register_plugin(const struct rts_policy *policy);
void rtsched_unregister_plugin(const struct rts_policy *policy);

/* The whole of a plugin module: its policy is registered while loaded. */
#define RTSCHED_PLUGIN(policy) \
	module_driver(policy, rtsched_register_plugin, rtsched_unregister_plugin)

/* Recorder (rtsched_trace.c), used by the core. */
int rt_trace_init(unsigned int nr_records, int first_cpu, int nr_cpus,
		  struct tracepoint *sched_switch);
int rt_trace_start(void);
void rt_trace_exit(void);
void rt_trace_put(struct rtsched_record *rec);
struct rt_task;
void rt_trace_job_start(struct rt_task *rtt, int id);
ssize_t rt_trace_read(char __user *buf, size_t len);
u64 rt_trace_lost(void);
int rt_tracepoints(const char *const names[], struct tracepoint *found[],
		   int n);

/* Core services for the recorder's sched_switch probe. */
struct rt_task *rt_task_of(struct task_struct *p, int *id);
void rt_count_switch(struct rt_task *out, struct rt_task *in, u64 now);
int rt_job_switch_in(struct rt_task *rtt, int id, int cpu, u64 *job);
int rt_job_switch_out(struct rt_task *rtt, int id, u64 *job);
int rt_job_go_on(struct rt_task *rtt, int id, int cpu, u64 *job);

#endif /* RTSCHED_H */
