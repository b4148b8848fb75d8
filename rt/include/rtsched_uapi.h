/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rtsched user/kernel interface: ioctls on /dev/rtsched and the binary
 * trace records read() from it.  Times are microseconds in the ioctls
 * and nanoseconds (ktime_get_ns()) in trace records.
 */
#ifndef RTSCHED_UAPI_H
#define RTSCHED_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define RTSCHED_DEVICE		"/dev/rtsched"
#define RTSCHED_NAME_LEN	16
#define RTSCHED_PLUGIN_LEN	24
#define RTSCHED_NO_SERVER	(-1)
#define RTSCHED_AUTO_ID		(-1)
#define RTSCHED_ANY_CPU		(-1)

struct rtsched_server_args {
	__s32 id;
	__s32 prio;
	__u64 period_us;
	__u64 budget_us;
	char name[RTSCHED_NAME_LEN];
};

/* RUN with RTSCHED_USE_RESERVATION takes every parameter from the
 * reservation of id (made by RESERVE) and ignores the rest.
 */
#define RTSCHED_USE_RESERVATION	0x1
/* RUN, RESERVE: a task chosen longer than wcet (+ the module's
 * overrun_slack_us) in one period gets SIGXCPU instead of being throttled
 * until its next release.
 */
#define RTSCHED_OVERRUN_SIGNAL	0x2
/* RUN, RESERVE: sporadic; period is the minimum inter-arrival time, and
 * jobs are released by RELEASE (from any thread), not by the clock.
 */
#define RTSCHED_SPORADIC	0x4

struct rtsched_task_args {
	__s32 id;		/* RTSCHED_AUTO_ID: lowest free id (RUN) */
	__s32 server;		/* RTSCHED_NO_SERVER outside hsf-fp */
	__s32 prio;
	__u32 flags;
	__u64 period_us;
	__u64 wcet_us;
	__u64 deadline_us;
	__u64 offset_us;	/* first release after the common start */
	char name[RTSCHED_NAME_LEN];
	/* Partitioned plugins: the real-time CPU (0 is rt_cpu) it runs
	 * on; RTSCHED_ANY_CPU for the others.  Semi-partitioned: the CPU
	 * of its jobs' first part; split_us > 0 splits each job: split_us
	 * of execution on cpu, due split_deadline_us after the release (0:
	 * split_us, C = D), then the rest on split_cpu, due at the job's
	 * deadline.  A first part due later than its length leaves room for
	 * the overhead around it (a configuration's overhead_us).
	 */
	__s32 cpu;
	__s32 split_cpu;
	__u64 split_us;
	__u64 split_deadline_us;
};

struct rtsched_server_status {
	__s32 id;
	__s32 prio;
	__u64 period_us;
	__u64 budget_us;
	__u64 left_us;
	__u32 active;
	__u32 pad;
	char name[RTSCHED_NAME_LEN];
};

struct rtsched_task_status {
	__s32 id;
	__s32 server;
	__s32 prio;
	__s32 pid;		/* 0 while only reserved */
	__u64 period_us;
	__u64 wcet_us;
	__u64 deadline_us;
	__u64 offset_us;
	__u64 released;
	__u64 completed;
	__u64 misses;
	char name[RTSCHED_NAME_LEN];
	__s32 cpu;		/* its real-time CPU (0 is rt_cpu) */
	__u32 pad;
};

struct rtsched_status {
	char plugin[RTSCHED_PLUGIN_LEN];	/* "" when none is loaded */
	__u64 now_ns;
	__u64 epoch_ns;				/* 0 while idle */
	__u64 trace_lost;
	__u32 nr_servers;
	__u32 nr_tasks;
	__u64 servers_ptr;	/* in: array of max_servers entries */
	__u64 tasks_ptr;	/* in: array of max_tasks entries */
	__u32 max_servers;
	__u32 max_tasks;
	__u32 nr_cpus;		/* real-time CPUs the plugin schedules */
	__u32 pad;
};

#define RTSCHED_IOC_MAGIC	0xb7
#define RTSCHED_IOC_CREATE_SERVER \
	_IOW(RTSCHED_IOC_MAGIC, 1, struct rtsched_server_args)
#define RTSCHED_IOC_RESERVE	_IOW(RTSCHED_IOC_MAGIC, 2, struct rtsched_task_args)
#define RTSCHED_IOC_RUN		_IOWR(RTSCHED_IOC_MAGIC, 3, struct rtsched_task_args)
#define RTSCHED_IOC_WAIT	_IO(RTSCHED_IOC_MAGIC, 4)
#define RTSCHED_IOC_EXIT	_IO(RTSCHED_IOC_MAGIC, 5)
#define RTSCHED_IOC_STATUS	_IOWR(RTSCHED_IOC_MAGIC, 6, struct rtsched_status)
#define RTSCHED_IOC_CLEAR	_IO(RTSCHED_IOC_MAGIC, 7)
/* Release a job of the sporadic task whose id is the argument. */
#define RTSCHED_IOC_RELEASE	_IOW(RTSCHED_IOC_MAGIC, 8, __s32)

/* One trace event; type is enum rts_event_type of rt/core/rts.h. */
struct rtsched_record {
	__u64 time;
	__u16 type;
	__u16 cpu;
	__s16 task;
	__s16 server;
	__s32 prio;
	__s32 pid;		/* task_create; switch: prev_pid */
	__u64 job;		/* overflow: events lost */
	__s64 deadline;		/* absolute; task_create: relative */
	__s64 period;
	__s64 budget;		/* replenish, server_create; task_create: wcet */
	__s32 next_pid;
	__u32 prev_state;	/* a letter: R S D T t X Z P I */
	char prev_comm[16];
	char next_comm[16];
};

#endif /* RTSCHED_UAPI_H */
