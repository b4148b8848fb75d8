// SPDX-License-Identifier: GPL-2.0
/*
 * bootlab-init: the smallest init for the reference device ("init= straight to the
 * application"): mount the pseudo filesystems, load the listed kernel modules, start the
 * application, print the ready marker, and power off.  No shell, no scripts.
 *
 * Reads /etc/bootlab/modules (one module per line: path, then its parameters),
 * /etc/bootlab/app (the application's argv, one argument per line), and
 * /etc/bootlab/flags (words: "prints-ready", "dmesg", "after=<path> <params>").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64
#define LINE 512
#define CLOCK_PROBES 4

/* Whether the kernel prints KERN_INFO messages on the console (not quiet). */
static int console_is_loud(void)
{
	int level = 7;
	FILE *f = fopen("/proc/sys/kernel/printk", "re");

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 7;
		fclose(f);
	}
	return level > 6;
}

/* A line into the kernel log, at KERN_INFO. */
static void to_kmsg(const char *prefix, const char *text)
{
	char line[LINE];
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		int n = snprintf(line, sizeof(line), "<6>%s%s\n", prefix, text);

		if (write(fd, line, n) < 0)
			perror("bootlab-init: /dev/kmsg");
		close(fd);
	}
}

/*
 * Into the kernel log (printk time); echoed on the console only when the kernel does not
 * print it there itself, or the two copies would interleave: see initramfs.py.
 */
static void announce(const char *prefix, const char *text)
{
	static int loud = -1;

	to_kmsg(prefix, text);
	if (loud < 0)
		loud = console_is_loud();
	if (!loud) {
		printf("%s%s\n", prefix, text);
		fflush(stdout);
	}
}

static void mark(const char *name)
{
	announce("bootlab-mark: ", name);
}

static void load_module(char *spec)
{
	char *params = strchr(spec, ' ');
	int fd;

	if (params)
		*params++ = '\0';
	fd = open(spec, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, params ? params : "", 0) != 0)
		fprintf(stderr, "bootlab-init: %s: %s\n", spec, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void load_modules(const char *list, const char *prefix)
{
	char line[LINE];
	FILE *f = fopen(list, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!prefix && line[0])
			load_module(line);
		else if (prefix && !strncmp(line, prefix, strlen(prefix)))
			load_module(line + strlen(prefix));
	}
	fclose(f);
}

static int has_flag(const char *flag)
{
	char line[LINE];
	FILE *f = fopen("/etc/bootlab/flags", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, flag, strlen(flag));
	fclose(f);
	return found;
}

static int run(char **argv)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		fprintf(stderr, "bootlab-init: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/*
 * Clock probes, after ready: kernel lines printed with the console idle, so the host sees
 * them as they happen and measures the printk clock's rate (sources/console.py).  Printed
 * at every log level; the half seconds also let the console drain before power-off.
 */
static void clock_probes(void)
{
	const struct timespec half = { 0, 500000000 };
	int fd = open("/proc/sys/kernel/printk", O_WRONLY | O_CLOEXEC);
	char text[32];
	int i;

	if (fd >= 0) {
		if (write(fd, "8", 1) < 0)
			perror("bootlab-init: /proc/sys/kernel/printk");
		close(fd);
	}
	for (i = 1; i <= CLOCK_PROBES; i++) {
		nanosleep(&half, NULL);
		snprintf(text, sizeof(text), "%d", i);
		to_kmsg("bootlab-clock ", text);
	}
	nanosleep(&half, NULL);
}

int main(void)
{
	static char args[MAX_ARGS][LINE];
	char *argv[MAX_ARGS + 1];
	int argc = 0;
	FILE *f;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mark("modules.start");
	load_modules("/etc/bootlab/modules", NULL);
	mark("modules.end");

	f = fopen("/etc/bootlab/app", "re");
	while (f && argc < MAX_ARGS && fgets(args[argc], LINE, f)) {
		args[argc][strcspn(args[argc], "\n")] = '\0';
		argv[argc] = args[argc];
		argc++;
	}
	if (f)
		fclose(f);
	argv[argc] = NULL;
	mark("app.start");
	if (argc)
		run(argv);
	if (!has_flag("prints-ready"))
		announce("", "BOOTLAB READY");
	load_modules("/etc/bootlab/flags", "after=");
	if (has_flag("dmesg")) {
		char *dmesg[] = { "/bin/busybox", "dmesg", NULL };

		printf("==== bootlab-dmesg begin ====\n");
		fflush(stdout);
		run(dmesg);
		printf("==== bootlab-dmesg end ====\n");
		fflush(stdout);
	}
	clock_probes();
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
