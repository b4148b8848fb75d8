// SPDX-License-Identifier: GPL-2.0
/*
 * rt_checks MODE: the kernel must refuse bad requests.  Raw ioctls are
 * used so that the kernel's checks are tested, not the library's.
 * Prints "PASS name" or "FAIL name: ..." per check; exits 1 on a failure.
 *   noplugin  no plugin loaded: RUN gives ENODEV
 *   fp        the fp plugin is loaded
 *   hsf       the hsf-fp plugin is loaded, no servers yet
 *   unpriv    run without CAP_SYS_NICE (nor CAP_PERFMON, CAP_SYS_ADMIN):
 *             EPERM, also for reading the trace
 *   lifetime  the fp plugin is loaded: a registration ends with its
 *             thread, is not inherited, and gives the thread back its class;
 *             a thread has one registration, whatever files it opens; an
 *             overrun is signalled when the task asks for it, also after
 *             its thread was moved to another class, which is charged only
 *             its CPU time; a task blocked elsewhere costs no budget
 *             timers; a sporadic task runs when released, a period apart
 *             at least; a trace record read into a bad buffer is counted
 *             as lost; a file's second thread registers without holding
 *             up others while it waits for the first's probes
 *   reload KO the fp plugin KO is loaded: a task it held is detached when
 *             it is unloaded, and its file registers again once it is back
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rtsched_uapi.h"

/* Task ids are 0..255. */
#define MAX_TASKS 256

static int fd, failed;

static void expect(const char *name, unsigned long cmd, void *arg, int err)
{
	int ret = ioctl(fd, cmd, arg);
	int got = ret ? errno : 0;

	if (got == err) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: expected %s, got %s\n", name, strerror(err),
		       strerror(got));
		failed = 1;
	}
}

static void verdict(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s", ok ? "PASS" : "FAIL", name);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		failed = 1;
	}
	printf("\n");
}

static struct rtsched_task_args task(int id, int server)
{
	struct rtsched_task_args a = {
		.id = id, .server = server, .prio = 1, .period_us = 10000,
		.wcet_us = 1000, .deadline_us = 10000,
	};
	return a;
}

static void check_task_args(int server)
{
	struct rtsched_task_args a;

	a = task(1, server);
	a.period_us = 0;
	expect("zero period", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.period_us = a.deadline_us = 99;
	a.wcet_us = 10;
	expect("period below 100 us", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.wcet_us = 20000;
	a.deadline_us = 10000;
	expect("wcet > deadline", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.deadline_us = 20000;
	expect("deadline > period", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.prio = 100;
	expect("priority 100", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a.prio = -1;
	expect("priority -1", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(256, server);
	expect("task id 256", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.period_us = ~0ULL;
	expect("huge period", RTSCHED_IOC_RUN, &a, EINVAL);
	a = task(1, server);
	a.flags = 0x80;
	expect("unknown flags", RTSCHED_IOC_RUN, &a, EINVAL);
	a = task(7, server);
	a.flags = RTSCHED_USE_RESERVATION;
	expect("run unreserved id", RTSCHED_IOC_RUN, &a, ENOENT);
	a = task(1, server);
	expect("reserve", RTSCHED_IOC_RESERVE, &a, 0);
	expect("duplicate task id", RTSCHED_IOC_RESERVE, &a, EINVAL);
	expect("run duplicate id", RTSCHED_IOC_RUN, &a, EINVAL);
	expect("wait without run", RTSCHED_IOC_WAIT, NULL, EINVAL);
	expect("exit without run", RTSCHED_IOC_EXIT, NULL, EINVAL);
	expect("bad pointer", RTSCHED_IOC_RUN, (void *)16, EFAULT);
	expect("release a task not running", RTSCHED_IOC_RELEASE, &a.id,
	       EINVAL);
	expect("unknown ioctl", _IO(RTSCHED_IOC_MAGIC, 99), NULL, ENOTTY);
	expect("clear", RTSCHED_IOC_CLEAR, NULL, 0);
}

static struct rtsched_server_args server(int id, int budget)
{
	struct rtsched_server_args s = {
		.id = id, .prio = 1, .period_us = 10000, .budget_us = budget,
	};
	return s;
}

static struct rtsched_task_status task_status[MAX_TASKS];

/* The status of every task into task_status: how many, or -1. */
static int read_status(void)
{
	struct rtsched_status st = {
		.tasks_ptr = (uintptr_t)task_status, .max_tasks = MAX_TASKS,
	};

	return ioctl(fd, RTSCHED_IOC_STATUS, &st) ? -1 : (int)st.nr_tasks;
}

/* Records the recorder lost so far, or -1. */
static long long trace_lost(void)
{
	struct rtsched_status st = { 0 };

	return ioctl(fd, RTSCHED_IOC_STATUS, &st) ? -1 : (long long)st.trace_lost;
}

/*
 * A record read into a buffer the kernel cannot write is lost, and counted
 * so (the tasks run before have left records in the ring).
 */
static void check_read_fault(void)
{
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	long long before = trace_lost();
	ssize_t got = read(fd, none, sizeof(struct rtsched_record));
	int err = errno;

	verdict("trace read into a bad buffer", got < 0 && err == EFAULT &&
		trace_lost() == before + 1, "read %zd (%s), lost %lld then %lld",
		got, strerror(err), before, trace_lost());
	munmap(none, 4096);
}

/* Tasks that a thread runs now (not only reserved), or -1. */
static int running_tasks(void)
{
	int i, n = 0, all = read_status();

	for (i = 0; i < all; i++)
		n += task_status[i].pid != 0;
	return all < 0 ? -1 : n;
}

/*
 * A 10 ms task with the library, sporadic with id sporadic_id unless that
 * is RTSCHED_AUTO_ID; 0 or the library's error.
 */
static int start_task(int overrun_signal, int sporadic_id)
{
	int err = rt_init();

	if (!err)
		err = rt_set_overrun_signal(overrun_signal);
	if (!err && sporadic_id != RTSCHED_AUTO_ID)
		err = rt_set_sporadic(1);
	if (!err && sporadic_id != RTSCHED_AUTO_ID)
		err = rt_set_id(sporadic_id);
	if (!err)
		err = rt_set_period(10);
	if (!err)
		err = rt_set_wcet(1);
	if (!err)
		err = rt_run(0);
	return err;
}

static void *run_and_vanish(void *unused)
{
	/* Leaves without rt_exit(): its file stays open in the process. */
	if (start_task(0, RTSCHED_AUTO_ID) || rt_wait_for_period())
		printf("  thread: %s\n", rt_last_error());
	return unused;
}

static void *run_and_fork(void *unused)
{
	int status = -1;
	pid_t child;

	if (start_task(0, RTSCHED_AUTO_ID)) {
		printf("  thread: %s\n", rt_last_error());
		return unused;
	}
	child = fork();
	if (!child)
		_exit(sched_getscheduler(0) == SCHED_OTHER ? 0 : 1);
	waitpid(child, &status, 0);
	verdict("forked child not real-time", status == 0,
		"child status %d", status);
	rt_exit();
	return unused;
}

static void *own_class_back(void *unused)
{
	struct sched_param none = { 0 };
	int policy, nice;

	if (sched_setscheduler(0, SCHED_BATCH, &none) ||
	    setpriority(PRIO_PROCESS, 0, 7) || start_task(0, RTSCHED_AUTO_ID) ||
	    rt_wait_for_period() || rt_exit()) {
		printf("  thread: %s\n", rt_last_error());
		return unused;
	}
	policy = sched_getscheduler(0);
	nice = getpriority(PRIO_PROCESS, 0);
	verdict("own class back after exit", policy == SCHED_BATCH &&
		nice == 7, "policy %d nice %d", policy, nice);
	return unused;
}

/* RUN succeeds, then the kernel cannot write the id back. */
static void *run_read_only_args(void *unused)
{
	struct rtsched_task_args *a;
	int policy, rfd = open(RTSCHED_DEVICE, O_RDWR);

	a = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rfd < 0 || a == MAP_FAILED) {
		verdict("run with read-only arguments", 0, "setup");
		return unused;
	}
	*a = task(RTSCHED_AUTO_ID, RTSCHED_NO_SERVER);
	mprotect(a, 4096, PROT_READ);
	verdict("run with read-only arguments",
		ioctl(rfd, RTSCHED_IOC_RUN, a) && errno == EFAULT,
		"expected EFAULT, got %s", strerror(errno));
	policy = sched_getscheduler(0);
	verdict("not registered after EFAULT", running_tasks() == 0 &&
		policy == SCHED_OTHER, "%d tasks, policy %d",
		running_tasks(), policy);
	close(rfd);
	return unused;
}

/* A second file, a second RUN by the same thread: refused. */
static void *run_through_two_files(void *unused)
{
	struct rtsched_task_args a = task(RTSCHED_AUTO_ID, RTSCHED_NO_SERVER);
	struct rtsched_task_args b = a;
	int f1 = open(RTSCHED_DEVICE, O_RDWR), f2 = open(RTSCHED_DEVICE, O_RDWR);
	int first = ioctl(f1, RTSCHED_IOC_RUN, &a) ? errno : 0;
	int second = ioctl(f2, RTSCHED_IOC_RUN, &b) ? errno : 0;

	verdict("one registration per thread", first == 0 && second == EBUSY,
		"first RUN %s, second %s", strerror(first), strerror(second));
	ioctl(f1, RTSCHED_IOC_EXIT);
	close(f1);
	close(f2);
	return unused;
}

static const char *reload_ko;

/*
 * Registered, the plugin unloaded under it (its WAIT says ENODEV), loaded
 * again: RUN on the same file registers the thread, and the policy holds it
 * (its WAIT returns at its next release).
 */
static void *run_across_a_reload(void *unused)
{
	struct rtsched_task_args a = task(RTSCHED_AUTO_ID, RTSCHED_NO_SERVER);
	struct rtsched_task_args b = a;
	int rfd = open(RTSCHED_DEVICE, O_RDWR), kfd = open(reload_ko, O_RDONLY);
	int ran, waited, rerun, rewaited;

	ran = ioctl(rfd, RTSCHED_IOC_RUN, &a) ? errno : 0;
	if (syscall(SYS_delete_module, "rtsched_fp", O_NONBLOCK))
		verdict("unload the plugin", 0, "%s", strerror(errno));
	waited = ioctl(rfd, RTSCHED_IOC_WAIT) ? errno : 0;
	if (syscall(SYS_finit_module, kfd, "", 0))
		verdict("load the plugin again", 0, "%s", strerror(errno));
	rerun = ioctl(rfd, RTSCHED_IOC_RUN, &b) ? errno : 0;
	rewaited = ioctl(rfd, RTSCHED_IOC_WAIT) ? errno : 0;
	verdict("registered again after a reload", ran == 0 && waited == ENODEV &&
		rerun == 0 && rewaited == 0,
		"RUN %s, WAIT after unload %s, RUN again %s, WAIT %s",
		strerror(ran), strerror(waited), strerror(rerun),
		strerror(rewaited));
	verdict("held again after a reload", running_tasks() == 1 &&
		(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO,
		"%d tasks, policy %d",
		running_tasks(), sched_getscheduler(0));
	ioctl(rfd, RTSCHED_IOC_EXIT);
	close(rfd);
	close(kfd);
	return unused;
}

static volatile sig_atomic_t got_xcpu;

static void on_xcpu(int sig)
{
	got_xcpu = sig == SIGXCPU;
}

/* A clock's time in ns: CLOCK_MONOTONIC, or the thread's CPU time. */
static long long clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spin (and leave) until SIGXCPU, for up to 2 s: whether it came. */
static int spin_until_signalled(void)
{
	long long end = clock_ns(CLOCK_MONOTONIC) + 2000000000LL;

	while (!got_xcpu && clock_ns(CLOCK_MONOTONIC) < end)
		;
	rt_exit();
	return got_xcpu;
}

/* A job that never ends, in a task that asked for SIGXCPU on overrun. */
static void *overrun_signalled(void *unused)
{
	signal(SIGXCPU, on_xcpu);
	if (start_task(1, RTSCHED_AUTO_ID)) {
		printf("  thread: %s\n", rt_last_error());
		return unused;
	}
	verdict("overrun signalled", spin_until_signalled(), "no SIGXCPU in 2 s");
	return unused;
}

/*
 * A registered thread moved to another class by someone else (chrt -p):
 * still charged for the CPU it gets, no more.  It sleeps through most of
 * three jobs (5 of its 10 ms, wcet 1 ms: no overrun), then spins past its
 * budget (signalled).  The switch probe used to find a thread by its
 * class: this one, asleep, was charged as on its CPU, and signalled.
 */
static void *class_changed(void *unused)
{
	struct timespec nap = { .tv_nsec = 5000000 };
	struct sched_param none = { 0 };
	int i, slept = 0;

	signal(SIGXCPU, on_xcpu);
	got_xcpu = 0;
	if (start_task(1, RTSCHED_AUTO_ID) ||
	    sched_setscheduler(0, SCHED_OTHER, &none)) {
		printf("  thread: %s %s\n", rt_last_error(), strerror(errno));
		return unused;
	}
	for (i = 0; i < 3 && !got_xcpu; i++) {
		nanosleep(&nap, NULL);
		slept += !got_xcpu && !rt_wait_for_period();
	}
	verdict("a thread moved to another class is charged only its CPU time",
		slept == 3, "SIGXCPU after %d sleeping jobs", slept);
	verdict("a thread moved to another class is signalled on overrun",
		spin_until_signalled(), "no SIGXCPU in 2 s");
	return unused;
}

/* Timer interrupts CPU 0 took (x86's LOC, arm64's arch_timer), or -1. */
static long long timer_irqs(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	long long n = -1;
	char line[1024];

	while (f && n < 0 && fgets(line, sizeof(line), f))
		if (strstr(line, "LOC:") || strstr(line, "arch_timer"))
			n = strtoll(strchr(line, ':') + 1, NULL, 10);
	if (f)
		fclose(f);
	return n;
}


/*
 * A chosen task that blocks elsewhere (a sleep, I/O) with most of its
 * budget left costs its CPU no timer interrupts for that budget while it
 * is away (at most 10 more than the same sleep before it registered), and
 * is still signalled when it spins past it once back.  The core used to
 * look again every time the rest could have run out, at least 50 us
 * apart: some 60 more interrupts in this 300 ms sleep with 4.9 ms left.
 * The budget is large for the debug kernel, whose system calls cost
 * hundreds of microseconds of it; reading /proc/interrupts costs CPU
 * time too: not within the job before its sleep.
 */
static void *blocked_while_chosen(void *unused)
{
	struct timespec nap = { .tv_nsec = 300000000 };
	long long quiet = timer_irqs(), irqs, job_start, job_cpu;
	int signalled;

	nanosleep(&nap, NULL);
	irqs = timer_irqs();
	quiet = irqs - quiet;
	signal(SIGXCPU, on_xcpu);
	got_xcpu = 0;
	if (rt_init() || rt_set_overrun_signal(1) || rt_set_period(500) ||
	    rt_set_wcet(5) || rt_run(0)) {
		printf("  thread: %s\n", rt_last_error());
		return unused;
	}
	job_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - job_start < 300000)
		;
	nanosleep(&nap, NULL);
	signalled = got_xcpu;
	job_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - job_start;
	irqs = timer_irqs() - irqs;
	printf("  %lld timer interrupts in the job and its 300 ms sleep, %lld in the sleep before; %lld us of CPU in the job\n",
	       irqs, quiet, job_cpu / 1000);
	verdict("a chosen task asleep elsewhere costs its CPU no budget timers",
		!signalled && quiet >= 0 && irqs <= quiet + 10,
		"%lld timer interrupts%s", irqs, signalled ? ", SIGXCPU" : "");
	verdict("a chosen task back from elsewhere is signalled on overrun",
		spin_until_signalled(), "no SIGXCPU in 2 s");
	return unused;
}

#define SPORADIC_ID	200
#define SPORADIC_PERIOD_NS	10000000LL
static volatile int sporadic_stop, sporadic_done;


/* Jobs released so far of task id, or -1. */
static long long released_jobs(int id)
{
	int i, all = read_status();

	for (i = 0; i < all; i++)
		if (task_status[i].id == id)
			return (long long)task_status[i].released;
	return -1;
}

/* A sporadic task with a 10 ms minimum inter-arrival time. */
static void *sporadic_task(void *unused)
{
	int err = start_task(0, SPORADIC_ID);

	while (!err && !sporadic_stop)
		err = rt_wait_for_period();
	if (err)
		printf("  sporadic thread: %s\n", rt_last_error());
	rt_exit();
	sporadic_done = 1;
	return unused;
}

/*
 * Released every 2 ms for 100 ms, far more often than it may be: the
 * kernel's count of releases (not the jobs' start times, which latency
 * moves) shows one per period at most.
 */
static void check_sporadic(void)
{
	struct timespec pause = { .tv_nsec = 2000000 };
	long long first = -1, begin = clock_ns(CLOCK_MONOTONIC), released, allowed;
	pthread_t t;
	int err, busy = 0;

	if (rt_init() || pthread_create(&t, NULL, sporadic_task, NULL)) {
		verdict("sporadic task", 0, "cannot start");
		return;
	}
	while (clock_ns(CLOCK_MONOTONIC) - begin < 5000000000LL &&
	       (first < 0 || clock_ns(CLOCK_MONOTONIC) - first < 10 * SPORADIC_PERIOD_NS)) {
		/* EINVAL until the thread has run rt_run(). */
		err = rt_release(SPORADIC_ID);
		if (!err && first < 0)
			first = clock_ns(CLOCK_MONOTONIC);
		busy += err == -EBUSY;
		nanosleep(&pause, NULL);
	}
	allowed = first < 0 ? 0 : (clock_ns(CLOCK_MONOTONIC) - first) / SPORADIC_PERIOD_NS + 1;
	released = released_jobs(SPORADIC_ID);
	sporadic_stop = 1;
	/* A last job lets it see the stop. */
	while (!sporadic_done) {
		rt_release(SPORADIC_ID);
		nanosleep(&pause, NULL);
	}
	pthread_join(t, NULL);
	verdict("sporadic releases a period apart", released >= 2 &&
		released <= allowed, "%lld released, at most %lld allowed",
		released, allowed);
	verdict("sporadic early releases refused", busy > 0,
		"no EBUSY in %d releases", busy);
}

static void in_thread(void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, NULL) || pthread_join(t, NULL))
		verdict("thread", 0, "cannot run one");
}

/*
 * A second thread of a file registers after the first's registration
 * ended: it waits until the probes that found the first have finished (an
 * RCU grace period), and meanwhile what takes rt.mutex (every task's
 * calls, closes and exits) goes on: the wait is not made holding it.
 */
static int handover_fd;
static long long handover_run_ns;
static volatile int handover_done;

static void *run_and_exit(void *unused)
{
	struct rtsched_task_args a = task(RTSCHED_AUTO_ID, RTSCHED_NO_SERVER);

	(void)unused;
	if (ioctl(handover_fd, RTSCHED_IOC_RUN, &a) ||
	    ioctl(handover_fd, RTSCHED_IOC_EXIT))
		verdict("a file's first thread", 0, "%s", strerror(errno));
	return NULL;
}

static void *run_after_another(void *unused)
{
	struct rtsched_task_args a = task(RTSCHED_AUTO_ID, RTSCHED_NO_SERVER);
	long long start = clock_ns(CLOCK_MONOTONIC);

	(void)unused;
	if (ioctl(handover_fd, RTSCHED_IOC_RUN, &a))
		verdict("a file's second thread", 0, "%s", strerror(errno));
	handover_run_ns = clock_ns(CLOCK_MONOTONIC) - start;
	handover_done = 1;
	ioctl(handover_fd, RTSCHED_IOC_EXIT);
	return NULL;
}

static void check_handover(void)
{
	struct timespec pause = { .tv_nsec = 50000 };
	struct rtsched_server_args s = server(0, 1000);
	long long start, took, longest = 0;
	pthread_t t;
	int calls = 0;

	handover_fd = open(RTSCHED_DEVICE, O_RDWR);
	in_thread(run_and_exit);
	handover_done = 0;
	if (pthread_create(&t, NULL, run_after_another, NULL)) {
		verdict("thread", 0, "cannot run one");
		return;
	}
	/* A call that takes rt.mutex (and is refused: fp has no servers). */
	while (!handover_done) {
		nanosleep(&pause, NULL);
		start = clock_ns(CLOCK_MONOTONIC);
		ioctl(fd, RTSCHED_IOC_CREATE_SERVER, &s);
		took = clock_ns(CLOCK_MONOTONIC) - start;
		if (took > longest)
			longest = took;
		calls++;
	}
	pthread_join(t, NULL);
	printf("handover run_us=%lld mutex_calls=%d longest_us=%lld\n",
	       handover_run_ns / 1000, calls, longest / 1000);
	verdict("a thread taking over a file waits without rt.mutex",
		longest < handover_run_ns / 4,
		"a call taking rt.mutex took %lld us during its %lld us RUN",
		longest / 1000, handover_run_ns / 1000);
	close(handover_fd);
}

/*
 * Tasks still running after up to a second: pthread_join() returns when
 * the thread's id is cleared, a little before its exit reaches the point
 * where rtsched unregisters it (on another CPU that is visible).
 */
static int running_tasks_settled(void)
{
	struct timespec pause = { .tv_nsec = 10000000 };
	int i, n = running_tasks();

	for (i = 0; n > 0 && i < 100; i++) {
		nanosleep(&pause, NULL);
		n = running_tasks();
	}
	return n;
}

static void check_lifetime(void)
{
	int n;

	in_thread(run_and_vanish);
	n = running_tasks_settled();
	verdict("exited thread unregistered", n == 0,
		"%d tasks still registered", n);
	in_thread(run_and_fork);
	in_thread(run_through_two_files);
	in_thread(own_class_back);
	in_thread(run_read_only_args);
	in_thread(overrun_signalled);
	in_thread(class_changed);
	in_thread(blocked_while_chosen);
	check_sporadic();
	check_read_fault();
	check_handover();
}

int main(int argc, char **argv)
{
	struct rtsched_server_args s;
	struct rtsched_task_args a;
	const char *mode = argc > 1 ? argv[1] : "";

	fd = open(RTSCHED_DEVICE, O_RDWR);
	if (fd < 0) {
		perror(RTSCHED_DEVICE);
		return 1;
	}
	if (!strcmp(mode, "noplugin")) {
		a = task(1, RTSCHED_NO_SERVER);
		expect("run without plugin", RTSCHED_IOC_RUN, &a, ENODEV);
		s = server(0, 1000);
		expect("server without plugin", RTSCHED_IOC_CREATE_SERVER,
		       &s, ENODEV);
	} else if (!strcmp(mode, "fp")) {
		s = server(0, 1000);
		expect("server under fp", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		a = task(1, 0);
		expect("task with server under fp", RTSCHED_IOC_RESERVE, &a,
		       EINVAL);
		check_task_args(RTSCHED_NO_SERVER);
	} else if (!strcmp(mode, "hsf")) {
		s = server(0, 20000);
		expect("budget > period", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		s = server(0, 0);
		expect("zero budget", RTSCHED_IOC_CREATE_SERVER, &s, EINVAL);
		s = server(64, 1000);
		expect("server id 64", RTSCHED_IOC_CREATE_SERVER, &s, EINVAL);
		s = server(0, 1000);
		s.prio = 100;
		expect("server priority 100", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		s = server(0, 1000);
		s.period_us = 0;
		expect("zero server period", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		a = task(1, 5);
		expect("unknown server", RTSCHED_IOC_RESERVE, &a, EINVAL);
		a = task(1, RTSCHED_NO_SERVER);
		expect("no server under hsf-fp", RTSCHED_IOC_RESERVE, &a,
		       EINVAL);
		s = server(0, 1000);
		expect("create server", RTSCHED_IOC_CREATE_SERVER, &s, 0);
		expect("duplicate server id", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		check_task_args(0);
	} else if (!strcmp(mode, "lifetime")) {
		check_lifetime();
	} else if (!strcmp(mode, "reload") && argc > 2) {
		reload_ko = argv[2];
		in_thread(run_across_a_reload);
	} else if (!strcmp(mode, "unpriv")) {
		char rec[sizeof(struct rtsched_record)];

		verdict("unprivileged trace read", read(fd, rec, sizeof(rec)) < 0 &&
			errno == EPERM, "expected EPERM, got %s",
			strerror(errno));
		s = server(0, 1000);
		expect("unprivileged server", RTSCHED_IOC_CREATE_SERVER, &s,
		       EPERM);
		a = task(1, RTSCHED_NO_SERVER);
		expect("unprivileged reserve", RTSCHED_IOC_RESERVE, &a, EPERM);
		expect("unprivileged run", RTSCHED_IOC_RUN, &a, EPERM);
		expect("unprivileged clear", RTSCHED_IOC_CLEAR, NULL, EPERM);
		expect("unprivileged release", RTSCHED_IOC_RELEASE, &a.id,
		       EPERM);
		if (rt_init() || rt_set_period(10) || rt_set_wcet(1) ||
		    rt_run(0) != -EPERM) {
			printf("FAIL library run: %s\n", rt_last_error());
			failed = 1;
		} else {
			printf("PASS library run: %s\n", rt_last_error());
		}
	} else {
		fprintf(stderr,
			"usage: rt_checks noplugin|fp|hsf|unpriv|lifetime|reload KO\n");
		return 2;
	}
	return failed;
}
