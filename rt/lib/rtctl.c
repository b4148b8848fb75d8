// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rtctl: configure rtsched without recompiling.
 *
 *   rtctl check CONFIG        validate a configuration and say whether the
 *                             analysis admits it (no kernel needed)
 *   rtctl load [--force] [--module "PATH [PARAMS]"]... CONFIG
 *                             create its servers and reserve its tasks;
 *                             refused if the analysis rejects it, unless
 *                             forced; --module loads a kernel module first
 *                             (the framework, a plugin), so one program
 *                             does at boot what insmod, insmod and rtctl
 *                             would; prints nothing when it works
 *   rtctl run [--force] [--duration MS] [--spin ID] CONFIG
 *                             clear, load, then run the stock busy-loop
 *                             task of every [[task]] and wait for them
 *   rtctl status              servers, tasks, budgets left, misses
 *   rtctl trace               drain the recorder as text trace lines
 *   rtctl clear               remove every server and reservation
 *
 * check, load and run warn of a CPU the configuration loads beyond what
 * the kernel's real-time throttling leaves SCHED_FIFO tasks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_internal.h"

#define MAX_MODULES	4

static struct rt_config cfg;
static const char *modules[MAX_MODULES];
static int nr_modules;
static struct rtsched_server_status servers[RTS_MAX_SERVERS];
static struct rtsched_task_status tasks[RTS_MAX_TASKS];

static int usage(void)
{
	fprintf(stderr,
		"usage: rtctl check CONFIG | load [--force] [--module \"PATH [PARAMS]\"]... CONFIG |\n"
		"       run [--force] [--duration MS] [--spin ID] CONFIG |\n"
		"       status | trace | clear\n");
	return 2;
}

static int report(const char *what)
{
	fprintf(stderr, "rtctl %s: %s\n", what, rt_last_error());
	return 1;
}

/* Admission control: the analysis's verdict, printed when it refuses. */
static long sysctl_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Linux stops a CPU's SCHED_FIFO tasks for the rest of each
 * sched_rt_period_us once they have run sched_rt_runtime_us of it (-1:
 * never): a CPU the configuration loads beyond that share misses its
 * deadlines whatever the analysis says (C=D splitting fills a CPU).
 */
static void warn_throttling(const char *what, const char *path)
{
	long runtime = sysctl_long("/proc/sys/kernel/sched_rt_runtime_us");
	long period = sysctl_long("/proc/sys/kernel/sched_rt_period_us");
	double load[RT_CONFIG_MAX_CPUS], share;
	int cpu;

	if (runtime < 0 || period <= 0)
		return;
	share = (double)runtime / period;
	rt_config_loads(&cfg, load);
	for (cpu = 0; cpu < cfg.cpus; cpu++)
		if (load[cpu] > share)
			fprintf(stderr, "rtctl %s: %s: warning: CPU %d is %.3f loaded, above the %.3f real-time throttling leaves SCHED_FIFO tasks (sched_rt_runtime_us %ld of every %ld): they will be stopped for the rest of a period; write -1 to /proc/sys/kernel/sched_rt_runtime_us to turn it off\n",
				what, path, cpu, load[cpu], share, runtime,
				period);
}

static int admitted(const char *what, const char *path)
{
	char why[256];

	if (rt_config_admit(&cfg, why, sizeof(why))) {
		warn_throttling(what, path);
		return 1;
	}
	fprintf(stderr, "rtctl %s: %s: not schedulable: %s\n", what, path,
		why);
	return 0;
}

static int cmd_check(const char *path)
{
	int ok, i;

	if (rt_config_load(path, &cfg))
		return report("check");
	printf("%s: plugin %s, %d servers, %d tasks\n", path, cfg.plugin,
	       cfg.nr_servers, cfg.nr_tasks);
	ok = admitted("check", path);
	for (i = 0; i < cfg.nr_tasks && cfg.task[i].args.cpu != RTSCHED_ANY_CPU; i++) {
		const struct rtsched_task_args *a = &cfg.task[i].args;

		if (a->split_us)
			printf("task %d cpu %d split %llu us due %llu us then cpu %d\n",
			       a->id, a->cpu, (unsigned long long)a->split_us,
			       (unsigned long long)a->split_deadline_us,
			       a->split_cpu);
		else
			printf("task %d cpu %d\n", a->id, a->cpu);
	}
	if (!ok)
		return 1;
	printf("schedulable\n");
	return 0;
}

/*
 * Load the kernel module at the start of spec ("PATH [PARAMS]") as insmod
 * does; one already loaded is left as it is.
 */
static int load_module(const char *spec)
{
	char path[256];
	const char *params = strchr(spec, ' ');
	size_t len = params ? (size_t)(params - spec) : strlen(spec);
	int fd, err;

	if (len >= sizeof(path)) {
		fprintf(stderr, "rtctl load: module path too long: %s\n", spec);
		return 1;
	}
	memcpy(path, spec, len);
	path[len] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rtctl load: %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = syscall(SYS_finit_module, fd, params ? params + 1 : "", 0) ?
	      errno : 0;
	close(fd);
	if (err && err != EEXIST) {
		fprintf(stderr, "rtctl load: cannot load %s: %s\n", path,
			strerror(err));
		return 1;
	}
	return 0;
}

static int cmd_load(const char *path, int force)
{
	struct rtsched_status st;
	int i;

	if (rt_config_load(path, &cfg))
		return report("load");
	if (!admitted("load", path) && !force) {
		fprintf(stderr, "rtctl load: refused (--force loads it anyway)\n");
		return 1;
	}
	for (i = 0; i < nr_modules; i++)
		if (load_module(modules[i]))
			return 1;
	if (rt_init() || rt_status(&st, servers, tasks))
		return report("load");
	if (strcmp(st.plugin, cfg.plugin)) {
		fprintf(stderr, "rtctl load: %s wants plugin %s but %s is loaded\n",
			path, cfg.plugin, st.plugin[0] ? st.plugin : "none");
		return 1;
	}
	if (rt_trace_cpu_of(rt_policy_named(cfg.plugin)) != RT_TRACE_NO_CPU &&
	    (int)st.nr_cpus != cfg.cpus) {
		fprintf(stderr, "rtctl load: %s wants %d CPUs but rtsched schedules %u (its rt_cpus)\n",
			path, cfg.cpus, st.nr_cpus);
		return 1;
	}
	for (i = 0; i < cfg.nr_servers; i++) {
		struct rtsched_server_args *a = &cfg.server[i].args;

		if (rt_create_server_us(a->id, a->period_us, a->budget_us,
					a->prio, a->name)) {
			fprintf(stderr, "rtctl load: %s: %s\n",
				cfg.server[i].where, rt_last_error());
			return 1;
		}
	}
	for (i = 0; i < cfg.nr_tasks; i++) {
		if (rt_reserve(&cfg.task[i].args)) {
			fprintf(stderr, "rtctl load: %s: %s\n",
				cfg.task[i].where, rt_last_error());
			return 1;
		}
	}
	/*
	 * Nothing is printed when it works, as insmod: at boot rtctl's output
	 * is often a serial console, where its one-line summary cost the
	 * camera demo's boot 5 ms.  rtctl status shows what was loaded.
	 */
	return 0;
}

/* Burn CPU time: only time this thread actually ran counts. */
static void spin_us(unsigned long long us)
{
	struct timespec ts;
	unsigned long long start, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	} while (now - start < us);
}

/* The stock task: wcet of busy work per job, jobs times (0: forever). */
static int stock_task(const struct rt_config_task *t, int spin)
{
	unsigned long long j;

	/*
	 * Run the job's code once before the first release: a forked child
	 * maps each page of code and of the vDSO on its first use, and those
	 * page faults, before spin_us() starts counting, made a task's first
	 * job cost 20-40 us more than the others in the ARM64 SMP guest.
	 * mlockall() would fault in the whole program (rt/README.md).
	 */
	spin_us(0);
	if (rt_init() || rt_attach(t->args.id) || rt_run_us(0))
		return report("run");
	for (j = 0; !t->jobs || j < t->jobs; j++) {
		if (spin)
			for (;;)
				spin_us(1000000);
		spin_us(t->args.wcet_us);
		if (rt_wait_for_period())
			return report("run");
	}
	return rt_exit() ? report("run") : 0;
}

static int cmd_run(const char *path, int force, long duration_ms,
		   int spin_id)
{
	pid_t pid[RTS_MAX_TASKS];
	int i, status, failed = 0;
	struct timespec pause;

	if (rt_init())
		return report("run");
	if (rt_clear() && errno != ENODEV)
		return report("run");
	if (cmd_load(path, force))
		return 1;
	for (i = 0; i < cfg.nr_tasks; i++) {
		if (cfg.task[i].args.flags & RTSCHED_SPORADIC) {
			fprintf(stderr, "rtctl run: %s: task %d is sporadic: its application releases it (rt_release); rtctl load reserves it\n",
				cfg.task[i].where, cfg.task[i].args.id);
			return 1;
		}
	}
	fflush(stdout);
	for (i = 0; i < cfg.nr_tasks; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			/* The tasks started would run on (jobs = 0: forever). */
			perror("rtctl run: fork");
			while (i-- > 0) {
				kill(pid[i], SIGKILL);
				waitpid(pid[i], &status, 0);
			}
			return 1;
		}
		if (!pid[i])
			_exit(stock_task(&cfg.task[i],
					 cfg.task[i].args.id == spin_id));
	}
	if (duration_ms > 0) {
		pause.tv_sec = duration_ms / 1000;
		pause.tv_nsec = duration_ms % 1000 * 1000000L;
		nanosleep(&pause, NULL);
		for (i = 0; i < cfg.nr_tasks; i++)
			kill(pid[i], SIGKILL);
	}
	for (i = 0; i < cfg.nr_tasks; i++) {
		waitpid(pid[i], &status, 0);
		if (duration_ms <= 0 &&
		    (!WIFEXITED(status) || WEXITSTATUS(status)))
			failed = 1;
	}
	return failed;
}

static int cmd_status(void)
{
	struct rtsched_status st;
	unsigned int i;

	if (rt_init() || rt_status(&st, servers, tasks))
		return report("status");
	printf("plugin %s epoch_ns %llu now_ns %llu trace_lost %llu\n",
	       st.plugin[0] ? st.plugin : "none",
	       (unsigned long long)st.epoch_ns,
	       (unsigned long long)st.now_ns,
	       (unsigned long long)st.trace_lost);
	for (i = 0; i < st.nr_servers; i++) {
		struct rtsched_server_status *s = &servers[i];

		printf("server %d name=%s period_us=%llu budget_us=%llu prio=%d left_us=%llu%s\n",
		       s->id, s->name[0] ? s->name : "-",
		       (unsigned long long)s->period_us,
		       (unsigned long long)s->budget_us, s->prio,
		       (unsigned long long)s->left_us,
		       s->active ? " active" : "");
	}
	for (i = 0; i < st.nr_tasks; i++) {
		struct rtsched_task_status *t = &tasks[i];

		printf("task %d name=%s pid=%d server=%d period_us=%llu wcet_us=%llu deadline_us=%llu prio=%d released=%llu completed=%llu misses=%llu\n",
		       t->id, t->name[0] ? t->name : "-", t->pid, t->server,
		       (unsigned long long)t->period_us,
		       (unsigned long long)t->wcet_us,
		       (unsigned long long)t->deadline_us, t->prio,
		       (unsigned long long)t->released,
		       (unsigned long long)t->completed,
		       (unsigned long long)t->misses);
	}
	return 0;
}

/* Stable insertion sort: fast on a ring that is almost in order. */
static void sort_by_time(struct rtsched_record *rec, size_t n)
{
	struct rtsched_record r;
	size_t i, j;

	for (i = 1; i < n; i++) {
		r = rec[i];
		for (j = i; j > 0 && rec[j - 1].time > r.time; j--)
			rec[j] = rec[j - 1];
		rec[j] = r;
	}
}

/*
 * Policy events carry their planned instant, switches the instant they
 * happened, so the ring is nearly but not quite in time order: sort.
 */
static int cmd_trace(void)
{
	struct rtsched_status st;
	struct rtsched_record *rec = NULL, *grown;
	const struct rts_policy *policy;
	size_t n = 0, cap = 0, i;
	char line[256];
	ssize_t got;

	if (rt_init() || rt_status(&st, servers, tasks))
		return report("trace");
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			grown = realloc(rec, cap * sizeof(*rec));
			if (!grown) {
				free(rec);
				fprintf(stderr, "rtctl trace: out of memory\n");
				return 1;
			}
			rec = grown;
		}
		got = read(rt_device_fd(), rec + n, (cap - n) * sizeof(*rec));
		if (got < 0) {
			perror("rtctl trace");
			free(rec);
			return 1;
		}
		if (!got)
			break;
		n += got / sizeof(*rec);
	}
	sort_by_time(rec, n);
	rt_trace_header(stdout, st.plugin[0] ? st.plugin : "none");
	policy = rt_policy_named(st.plugin);
	for (i = 0; i < n; i++) {
		rt_trace_format(line, sizeof(line), &rec[i],
				rt_trace_cpu_of(policy));
		puts(line);
	}
	free(rec);
	return 0;
}

int main(int argc, char **argv)
{
	long duration_ms = 0;
	int spin_id = -2;
	int force = 0;
	int i = 2;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "status") && argc == 2)
		return cmd_status();
	if (!strcmp(argv[1], "trace") && argc == 2)
		return cmd_trace();
	if (!strcmp(argv[1], "clear") && argc == 2)
		return rt_init() || rt_clear() ? report("clear") : 0;
	if (!strcmp(argv[1], "check") && argc == 3)
		return cmd_check(argv[2]);
	if (strcmp(argv[1], "load") && strcmp(argv[1], "run"))
		return usage();
	for (; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[1], "load") &&
			 !strcmp(argv[i], "--module") && i + 2 < argc &&
			 nr_modules < MAX_MODULES)
			modules[nr_modules++] = argv[++i];
		else if (!strcmp(argv[1], "run") &&
			 !strcmp(argv[i], "--duration") && i + 2 < argc)
			duration_ms = atol(argv[++i]);
		else if (!strcmp(argv[1], "run") &&
			 !strcmp(argv[i], "--spin") && i + 2 < argc)
			spin_id = atoi(argv[++i]);
		else
			return usage();
	}
	if (i + 1 != argc)
		return usage();
	if (!strcmp(argv[1], "load"))
		return cmd_load(argv[i], force);
	return cmd_run(argv[i], force, duration_ms, spin_id);
}
