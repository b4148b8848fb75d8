/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librtsched: periodic real-time tasks on the rtsched kernel framework.
 *
 *	rt_init();
 *	rt_set_period(10); rt_set_wcet(2); rt_set_priority(1);
 *	rt_run(0);
 *	for (;;) { work(); rt_wait_for_period(); }
 *	rt_exit();
 *
 * Each thread is its own task.  Every call returns 0 or a negative errno
 * (also left in errno); rt_strerror() explains it and rt_last_error()
 * holds the detail of the calling thread's last failure.
 */
#ifndef RTSCHED_RT_H
#define RTSCHED_RT_H

#ifdef __cplusplus
extern "C" {
#endif

#define RT_NO_SERVER	(-1)
#define RT_ANY_CPU	(-1)

int rt_init(void);

/* Microseconds; the millisecond forms are conveniences. */
int rt_set_period_us(unsigned long long period_us);
int rt_set_wcet_us(unsigned long long wcet_us);
int rt_set_deadline_us(unsigned long long deadline_us);
int rt_set_period(unsigned long period_ms);
int rt_set_wcet(unsigned long wcet_ms);
int rt_set_deadline(unsigned long deadline_ms);	/* default: the period */
int rt_set_priority(int prio);			/* 0 (highest) .. 99 */
int rt_set_server(int server_id);		/* hsf-* only */
/* Partitioned plugins: the real-time CPU (0 is rtsched's rt_cpu) it runs on. */
int rt_set_cpu(int cpu);
int rt_set_id(int id);				/* default: lowest free id */
int rt_set_name(const char *name);
int rt_attach(int id);		/* take every parameter from rtctl load */
/* Past its wcet in a period the task is throttled until its next release;
 * with on, it gets SIGXCPU instead (and keeps running).
 */
int rt_set_overrun_signal(int on);
/* Sporadic: the period is the minimum inter-arrival time and jobs are
 * released by rt_release(id), from any thread of any process with
 * CAP_SYS_NICE, at the earliest one period after the previous release.
 */
int rt_set_sporadic(int on);
int rt_release(int task_id);

/* Become periodic: first release start after the common start. */
int rt_run_us(unsigned long long start_us);
int rt_run(unsigned long start_ms);
int rt_wait_for_period(void);
int rt_exit(void);
int rt_task_id(void);

int rt_create_server_us(int id, unsigned long long period_us,
			unsigned long long budget_us, int prio,
			const char *name);
int rt_create_server(int id, unsigned long period_ms,
		     unsigned long budget_ms, int prio);
/* Remove every server and reservation (no task may be running). */
int rt_clear(void);

const char *rt_strerror(int err);
const char *rt_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* RTSCHED_RT_H */
