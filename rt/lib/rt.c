// SPDX-License-Identifier: LGPL-2.1-or-later
/* librtsched: thin wrappers over the /dev/rtsched ioctls. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rt.h"
#include "rt_internal.h"
#include "rts.h"
#include "rtsched_uapi.h"

static __thread int self_fd = -1;
static __thread pid_t self_pid;		/* the process that opened self_fd */
static __thread int self_attached;
static __thread int self_deadline_set;
static __thread struct rtsched_task_args self = {
	.id = RTSCHED_AUTO_ID, .server = RTSCHED_NO_SERVER,
	.cpu = RTSCHED_ANY_CPU,
};
static __thread char last_error[224];

static int failv(int err, const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	errno = err;
	return -err;
}

int rt_fail(int err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = failv(err, fmt, ap);
	va_end(ap);
	return ret;
}

const char *rt_last_error(void)
{
	return last_error;
}

const char *rt_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case EPERM:
		return "permission denied: CAP_SYS_NICE is required";
	case ENODEV:
		return "no scheduling plugin loaded (insmod rtsched_fp.ko, rtsched_edf.ko or rtsched_hsf.ko)";
	case ENOENT:
		return "not found (is rtsched.ko loaded? is the task reserved?)";
	case EINVAL:
		return "invalid parameters";
	case EBUSY:
		return "busy: already running, or tasks still running";
	case EBADF:
		return "rt_init() was not called in this thread";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

/* Call an ioctl, turning -1/errno into -errno with a message. */
static int rt_ioctl(int fd, unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg) == 0)
		return 0;
	return rt_fail(errno, "%s: %s", what, rt_strerror(errno));
}

int rt_open_device(void)
{
	int fd = open(RTSCHED_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return rt_fail(errno, "cannot open %s: %s (is rtsched.ko loaded?)",
			    RTSCHED_DEVICE, strerror(errno));
	return fd;
}

int rt_init(void)
{
	int fd;

	/* A forked child shares its parent's file, which is one task. */
	if (self_fd >= 0 && self_pid == getpid())
		return 0;
	fd = rt_open_device();
	if (fd < 0)
		return fd;
	self_fd = fd;
	self_pid = getpid();
	return 0;
}

static int need_init(void)
{
	return self_fd < 0 ? rt_fail(EBADF, "%s", rt_strerror(EBADF)) : 0;
}

static int set_time(__u64 *field, unsigned long long us, const char *what)
{
	int err = need_init();

	if (err)
		return err;
	if (us == 0)
		return rt_fail(EINVAL, "%s must be > 0", what);
	*field = us;
	return 0;
}

int rt_set_period_us(unsigned long long period_us)
{
	return set_time(&self.period_us, period_us, "period");
}

int rt_set_wcet_us(unsigned long long wcet_us)
{
	return set_time(&self.wcet_us, wcet_us, "wcet");
}

int rt_set_deadline_us(unsigned long long deadline_us)
{
	int err = set_time(&self.deadline_us, deadline_us, "deadline");

	self_deadline_set = !err;
	return err;
}

int rt_set_period(unsigned long period_ms)
{
	return rt_set_period_us(period_ms * 1000ULL);
}

int rt_set_wcet(unsigned long wcet_ms)
{
	return rt_set_wcet_us(wcet_ms * 1000ULL);
}

int rt_set_deadline(unsigned long deadline_ms)
{
	return rt_set_deadline_us(deadline_ms * 1000ULL);
}

static int set_flag(unsigned int flag, int on)
{
	int err = need_init();

	if (err)
		return err;
	if (on)
		self.flags |= flag;
	else
		self.flags &= ~flag;
	return 0;
}

int rt_set_overrun_signal(int on)
{
	return set_flag(RTSCHED_OVERRUN_SIGNAL, on);
}

int rt_set_sporadic(int on)
{
	return set_flag(RTSCHED_SPORADIC, on);
}

int rt_release(int task_id)
{
	__s32 id = task_id;
	int err = need_init();

	return err ? err : rt_ioctl(self_fd, RTSCHED_IOC_RELEASE, &id,
				    "rt_release");
}

int rt_set_priority(int prio)
{
	int err = need_init();

	if (err)
		return err;
	if (prio < 0 || prio > RTS_PRIO_MAX)
		return rt_fail(EINVAL, "priority %d out of range 0..99", prio);
	self.prio = prio;
	return 0;
}

int rt_set_cpu(int cpu)
{
	int err = need_init();

	if (err)
		return err;
	if (cpu != RT_ANY_CPU && cpu < 0)
		return rt_fail(EINVAL, "cpu %d: must be >= 0", cpu);
	self.cpu = cpu;
	return 0;
}

int rt_set_server(int server_id)
{
	int err = need_init();

	if (err)
		return err;
	if (server_id != RT_NO_SERVER &&
	    (server_id < 0 || server_id >= RTS_MAX_SERVERS))
		return rt_fail(EINVAL, "server id %d out of range 0..63",
			    server_id);
	self.server = server_id;
	return 0;
}

int rt_set_id(int id)
{
	int err = need_init();

	if (err)
		return err;
	if (id < 0 || id >= RTS_MAX_TASKS)
		return rt_fail(EINVAL, "task id %d out of range 0..255", id);
	self.id = id;
	return 0;
}

int rt_set_name(const char *name)
{
	int err = need_init();

	if (err)
		return err;
	snprintf(self.name, sizeof(self.name), "%s", name);
	return 0;
}

int rt_attach(int id)
{
	int err = rt_set_id(id);

	self_attached = !err;
	return err;
}

/* Microseconds to nanoseconds; too large stays too large. */
static long long us_to_ns(unsigned long long us)
{
	return us > RTS_NEVER / 1000 ? RTS_NEVER : (long long)us * 1000;
}

void rt_task_params(struct rts_task_params *p,
		    const struct rtsched_task_args *a)
{
	p->id = a->id;
	p->server = a->server;
	p->prio = a->prio;
	p->period = us_to_ns(a->period_us);
	p->wcet = us_to_ns(a->wcet_us);
	p->deadline = us_to_ns(a->deadline_us);
	p->offset = us_to_ns(a->offset_us);
	p->overrun = a->flags & RTSCHED_OVERRUN_SIGNAL ? RTS_OVERRUN_SIGNAL :
			RTS_OVERRUN_THROTTLE;
	p->sporadic = !!(a->flags & RTSCHED_SPORADIC);
	p->cpu = a->cpu;
	p->split_cpu = a->split_cpu;
	p->split = us_to_ns(a->split_us);
	p->split_deadline = us_to_ns(a->split_deadline_us);
}

void rt_server_params(struct rts_server_params *p,
		      const struct rtsched_server_args *a)
{
	p->id = a->id;
	p->prio = a->prio;
	p->period = us_to_ns(a->period_us);
	p->budget = us_to_ns(a->budget_us);
}

/* The values the kernel will check, checked here to explain a refusal. */
static int check_self(void)
{
	struct rts_task_params p;
	const char *why = NULL;

	rt_task_params(&p, &self);
	if (p.id == RTSCHED_AUTO_ID)
		p.id = 0;
	if (rts_check_task_values(&p, &why))
		return rt_fail(EINVAL, "task %d: %s", self.id, why);
	return 0;
}

int rt_run_us(unsigned long long start_us)
{
	int err = need_init();

	if (err)
		return err;
	self.offset_us = start_us;
	self.flags &= RTSCHED_OVERRUN_SIGNAL | RTSCHED_SPORADIC;
	if (self_attached) {
		self.flags |= RTSCHED_USE_RESERVATION;
	} else {
		if (!self_deadline_set)
			self.deadline_us = self.period_us;
		err = check_self();
		if (err)
			return err;
	}
	err = rt_ioctl(self_fd, RTSCHED_IOC_RUN, &self, "rt_run");
	/* The first task to run starts the recorder, which allocates its ring. */
	if (err == -ENOMEM)
		rt_fail(ENOMEM, "rt_run: the kernel cannot allocate the recorder's ring "
			"(rtsched.ko trace_records; see dmesg)");
	else if (err == -EINVAL)
		rt_fail(EINVAL, "rt_run: refused by the kernel (%s)",
		     self.server == RT_NO_SERVER ?
		     "duplicate id, or the plugin needs a server" :
		     "duplicate id, unknown server, or the plugin has no servers");
	return err;
}

int rt_run(unsigned long start_ms)
{
	return rt_run_us(start_ms * 1000ULL);
}

int rt_wait_for_period(void)
{
	int err = need_init();

	return err ? err : rt_ioctl(self_fd, RTSCHED_IOC_WAIT, NULL,
				    "rt_wait_for_period");
}

int rt_exit(void)
{
	int err = need_init();

	if (err)
		return err;
	err = rt_ioctl(self_fd, RTSCHED_IOC_EXIT, NULL, "rt_exit");
	close(self_fd);
	self_fd = -1;
	return err;
}

int rt_task_id(void)
{
	return self.id;
}

int rt_create_server_us(int id, unsigned long long period_us,
			unsigned long long budget_us, int prio,
			const char *name)
{
	struct rtsched_server_args a = {
		.id = id, .prio = prio, .period_us = period_us,
		.budget_us = budget_us,
	};
	struct rts_server_params p;
	const char *why = NULL;
	int err = need_init();

	if (err)
		return err;
	rt_server_params(&p, &a);
	if (rts_check_server_values(&p, &why))
		return rt_fail(EINVAL, "server %d: %s", id, why);
	if (name)
		snprintf(a.name, sizeof(a.name), "%s", name);
	err = rt_ioctl(self_fd, RTSCHED_IOC_CREATE_SERVER, &a,
		       "rt_create_server");
	if (err == -EINVAL)
		rt_fail(EINVAL, "server %d: refused by the kernel (duplicate id, or the plugin has no servers)",
		     id);
	return err;
}

int rt_create_server(int id, unsigned long period_ms,
		     unsigned long budget_ms, int prio)
{
	return rt_create_server_us(id, period_ms * 1000ULL,
				   budget_ms * 1000ULL, prio, NULL);
}

int rt_reserve(const struct rtsched_task_args *a)
{
	struct rtsched_task_args copy = *a;
	int err = need_init();

	return err ? err : rt_ioctl(self_fd, RTSCHED_IOC_RESERVE, &copy,
				    "reserve");
}

int rt_clear(void)
{
	int err = need_init();

	return err ? err : rt_ioctl(self_fd, RTSCHED_IOC_CLEAR, NULL,
				    "rt_clear");
}

int rt_status(struct rtsched_status *st, struct rtsched_server_status *sv,
	      struct rtsched_task_status *ts)
{
	int err = need_init();

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->servers_ptr = (__u64)(unsigned long)sv;
	st->tasks_ptr = (__u64)(unsigned long)ts;
	st->max_servers = RTS_MAX_SERVERS;
	st->max_tasks = RTS_MAX_TASKS;
	return rt_ioctl(self_fd, RTSCHED_IOC_STATUS, st, "status");
}

int rt_device_fd(void)
{
	return self_fd;
}
