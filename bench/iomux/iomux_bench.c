/* iomux-bench: what one wait costs with select, poll and epoll as the
 * number of watched descriptors grows, for a few shares of them ready.
 *
 * It drives the grabber's own mux (apps/grabber/src/mux.c), so it measures
 * exactly what the grabber's loop pays per wake-up: for select, rebuilding
 * the fd_set and scanning it; for poll, scanning the array; for epoll, the
 * ready list. Descriptors are eventfds (or pipes) made readable by writing
 * to them; they stay readable (level-triggered), so every wait returns at
 * once with the same ready set and the loop times the wait alone. Waits
 * block (timeout -1) like the grabber's do.
 *
 * Output: a Markdown table (per-wait median in microseconds and ratios to
 * epoll), or CSV with --csv. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "mux.h"
#include "number.h"

#define MAX_LIST 16
#define MAX_REPEATS 64
/* Descriptors besides the watched ones: stdio, the epoll instance, slack. */
#define RESERVED_FDS 16

/* A count, or with percent set a share of the descriptors. */
struct amount {
	unsigned long value;
	int percent;
};

struct bench_options {
	struct amount descriptors[MAX_LIST];
	size_t descriptor_count;
	struct amount ready[MAX_LIST];
	size_t ready_count;
	int use_pipes;
	unsigned repeats;
	double batch_seconds;
	int csv;
};

struct sources {
	size_t count;
	int *read_fds; /* what the mux watches */
	int *write_fds; /* where readiness is made: the same eventfd, or a pipe's writer */
};

struct measurement {
	int supported; /* 0: select and a descriptor >= FD_SETSIZE */
	double median_us;
	double min_us;
	double max_us;
	double setup_us; /* registering every descriptor once */
};

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "iomux-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Raises the soft limit on open files to at least needed (and the hard one
 * when allowed); returns the limit now in force. */
static rlim_t raise_file_limit(rlim_t needed)
{
	struct rlimit limit;

	getrlimit(RLIMIT_NOFILE, &limit);
	if (limit.rlim_cur >= needed)
		return limit.rlim_cur;
	if (limit.rlim_max < needed) {
		struct rlimit wanted = { needed, needed };

		if (setrlimit(RLIMIT_NOFILE, &wanted) == 0)
			return needed;
	}
	limit.rlim_cur = limit.rlim_max;
	setrlimit(RLIMIT_NOFILE, &limit);
	getrlimit(RLIMIT_NOFILE, &limit);
	return limit.rlim_cur;
}

static void sources_open(struct sources *sources, size_t count, int use_pipes)
{
	sources->count = count;
	sources->read_fds = calloc(count, sizeof(int));
	sources->write_fds = calloc(count, sizeof(int));
	if (sources->read_fds == NULL || sources->write_fds == NULL)
		die("calloc");
	for (size_t i = 0; i < count; i++) {
		int ends[2];

		if (use_pipes) {
			if (pipe(ends) != 0)
				die("pipe");
		} else {
			ends[0] = ends[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (ends[0] < 0)
				die("eventfd");
		}
		sources->read_fds[i] = ends[0];
		sources->write_fds[i] = ends[1];
	}
}

static void sources_close(struct sources *sources)
{
	for (size_t i = 0; i < sources->count; i++) {
		close(sources->read_fds[i]);
		if (sources->write_fds[i] != sources->read_fds[i])
			close(sources->write_fds[i]);
	}
	free(sources->read_fds);
	free(sources->write_fds);
}

/* Makes `ready` descriptors readable (or, with readable 0, drains them),
 * spread evenly over the set: a lone ready one sits in the middle, where a
 * random device would be on average. */
static void set_ready(const struct sources *sources, size_t ready, int readable)
{
	for (size_t k = 0; k < ready; k++) {
		size_t i = (2 * k + 1) * sources->count / (2 * ready);
		uint64_t value = 1;
		ssize_t done = readable ? write(sources->write_fds[i], &value, sizeof(value))
					: read(sources->read_fds[i], &value, sizeof(value));

		if (done != (ssize_t)sizeof(value))
			die(readable ? "making a descriptor ready" : "draining a descriptor");
	}
}

/* Seconds for `waits` waits, each of which must report `ready` events. */
static double time_waits(struct mux *mux, struct mux_event *events, size_t ready,
			 unsigned long waits)
{
	double start = now_seconds();

	for (unsigned long w = 0; w < waits; w++) {
		int got = mux_wait(mux, events, mux->count, -1);

		if (got != (int)ready) {
			fprintf(stderr, "iomux-bench: %s reported %d ready, expected %zu\n",
				mux_kind_name(mux->kind), got, ready);
			exit(1);
		}
	}
	return now_seconds() - start;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct measurement measure(const struct bench_options *options,
				  const struct sources *sources, enum mux_kind kind, size_t ready)
{
	struct measurement result = { .supported = 1 };
	struct mux_event *events = calloc(sources->count, sizeof(*events));
	double per_wait[MAX_REPEATS];
	struct mux mux;

	if (events == NULL || mux_init(&mux, kind, sources->count) != 0)
		die("mux_init");
	double start = now_seconds();

	for (size_t i = 0; i < sources->count; i++) {
		if (mux_add(&mux, sources->read_fds[i], NULL) != 0) {
			if (errno != ERANGE)
				die("mux_add");
			result.supported = 0;
			break;
		}
	}
	result.setup_us = (now_seconds() - start) * 1e6;
	if (result.supported) {
		/* Size the batches from a short trial so each takes about
		 * batch_seconds, whatever one wait costs. */
		unsigned long trial = 16;
		double trial_seconds = time_waits(&mux, events, ready, trial);
		unsigned long waits = (unsigned long)(options->batch_seconds / trial_seconds * trial);

		if (waits < 8)
			waits = 8;
		for (unsigned r = 0; r < options->repeats; r++)
			per_wait[r] = time_waits(&mux, events, ready, waits) / (double)waits * 1e6;
		qsort(per_wait, options->repeats, sizeof(double), compare_doubles);
		result.median_us = per_wait[options->repeats / 2];
		result.min_us = per_wait[0];
		result.max_us = per_wait[options->repeats - 1];
	}
	mux_destroy(&mux);
	free(events);
	return result;
}

static size_t ready_count(const struct amount *share, size_t descriptors)
{
	size_t count = share->percent ? descriptors * share->value / 100 : share->value;

	if (count < 1)
		count = 1;
	return count > descriptors ? descriptors : count;
}

static void print_ratio(const struct measurement *m, const struct measurement *epoll)
{
	if (m->supported)
		printf(" %.2f |", m->median_us / epoll->median_us);
	else
		printf(" – |");
}

static void print_row(const struct bench_options *options, size_t descriptors,
		      const struct amount *share, size_t ready,
		      const struct measurement m[MUX_KIND_COUNT])
{
	if (options->csv) {
		for (int k = 0; k < MUX_KIND_COUNT; k++) {
			if (!m[k].supported)
				printf("%zu,%zu,%s,,,,\n", descriptors, ready,
				       mux_kind_name((enum mux_kind)k));
			else
				printf("%zu,%zu,%s,%.3f,%.3f,%.3f,%.1f\n", descriptors, ready,
				       mux_kind_name((enum mux_kind)k), m[k].median_us, m[k].min_us,
				       m[k].max_us, m[k].setup_us);
		}
		return;
	}
	char share_text[32];

	snprintf(share_text, sizeof(share_text), share->percent ? "%zu (%lu%%)" : "%zu", ready,
		 share->value);
	printf("| %zu | %s |", descriptors, share_text);
	for (int k = 0; k < MUX_KIND_COUNT; k++) {
		if (m[k].supported)
			printf(" %.2f |", m[k].median_us);
		else
			printf(" n/a: fd ≥ FD_SETSIZE (%d) |", FD_SETSIZE);
	}
	print_ratio(&m[MUX_SELECT], &m[MUX_EPOLL]);
	print_ratio(&m[MUX_POLL], &m[MUX_EPOLL]);
	printf(" %.0f |\n", m[MUX_EPOLL].setup_us);
}

static void print_header(const struct bench_options *options)
{
	if (options->csv) {
		printf("descriptors,ready,mux,median_us,min_us,max_us,setup_us\n");
		return;
	}
	printf("Wait cost per call, µs (median of %u batches of ~%.0f ms; %s)\n\n", options->repeats,
	       options->batch_seconds * 1e3, options->use_pipes ? "pipes" : "eventfds");
	printf("| descriptors | ready | select | poll | epoll | select/epoll | poll/epoll "
	       "| epoll_ctl setup, µs |\n");
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
}

static void run(const struct bench_options *options)
{
	size_t last_measured = 0;

	print_header(options);
	for (size_t d = 0; d < options->descriptor_count; d++) {
		size_t descriptors = options->descriptors[d].value;
		size_t per_source = options->use_pipes ? 2 : 1;
		rlim_t needed = descriptors * per_source + RESERVED_FDS;
		rlim_t limit = raise_file_limit(needed);
		struct sources sources;

		/* Without the right to raise the hard limit, measure as many as
		 * it allows and say so, rather than skip the row. */
		if (limit < needed) {
			if (limit <= RESERVED_FDS + per_source)
				continue;
			fprintf(stderr,
				"iomux-bench: RLIMIT_NOFILE is %lu: %zu descriptors measured instead of "
				"%zu\n",
				(unsigned long)limit, (size_t)(limit - RESERVED_FDS) / per_source,
				descriptors);
			descriptors = (size_t)(limit - RESERVED_FDS) / per_source;
		}
		if (descriptors == last_measured)
			continue;
		last_measured = descriptors;
		sources_open(&sources, descriptors, options->use_pipes);
		for (size_t s = 0; s < options->ready_count; s++) {
			size_t ready = ready_count(&options->ready[s], descriptors);
			struct measurement m[MUX_KIND_COUNT];

			set_ready(&sources, ready, 1);
			for (int k = 0; k < MUX_KIND_COUNT; k++)
				m[k] = measure(options, &sources, (enum mux_kind)k, ready);
			set_ready(&sources, ready, 0);
			print_row(options, descriptors, &options->ready[s], ready, m);
			fflush(stdout);
		}
		sources_close(&sources);
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: iomux-bench [--descriptors N,N,...] [--ready R,R,...] [--pipes]\n"
		"                   [--repeats N] [--batch-ms MS] [--csv]\n"
		"  --descriptors  how many descriptors to watch (default 100,1000,5000,10000,20000)\n"
		"  --ready        how many are ready: a count or a share, e.g. 1,1%%,100%% (default)\n"
		"  --pipes        watch pipes instead of eventfds (needs twice the descriptors)\n"
		"  --repeats      timed batches per cell, median reported (default 5, at most %d)\n"
		"  --batch-ms     length of one batch (default 50)\n"
		"  --csv          descriptors,ready,mux,median_us,min_us,max_us,setup_us\n",
		MAX_REPEATS);
}

/* "100,1000" or, with allow_percent, "1,1%,100%". */
static int parse_amounts(const char *text, struct amount *items, size_t *count, int allow_percent)
{
	*count = 0;
	for (;;) {
		struct amount *item = &items[*count];
		char *end;

		if (*count == MAX_LIST || text[0] < '0' || text[0] > '9')
			return -1;
		errno = 0;
		item->value = strtoul(text, &end, 10);
		item->percent = allow_percent && *end == '%';
		end += item->percent;
		if (errno != 0 || item->value == 0 || (item->percent && item->value > 100))
			return -1;
		(*count)++;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		text = end + 1;
	}
}

static int parse_options(int argc, char **argv, struct bench_options *options)
{
	unsigned long number;

	*options = (struct bench_options){
		.descriptors = { { 100, 0 }, { 1000, 0 }, { 5000, 0 }, { 10000, 0 }, { 20000, 0 } },
		.descriptor_count = 5,
		.ready = { { 1, 0 }, { 1, 1 }, { 100, 1 } },
		.ready_count = 3,
		.repeats = 5,
		.batch_seconds = 0.05,
	};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : "";

		if (strcmp(arg, "--descriptors") == 0 &&
		    parse_amounts(value, options->descriptors, &options->descriptor_count, 0) == 0) {
			i++;
		} else if (strcmp(arg, "--ready") == 0 &&
			   parse_amounts(value, options->ready, &options->ready_count, 1) == 0) {
			i++;
		} else if (strcmp(arg, "--repeats") == 0 &&
			   parse_unsigned(value, 1, MAX_REPEATS, &number) == 0) {
			options->repeats = (unsigned)number;
			i++;
		} else if (strcmp(arg, "--batch-ms") == 0 &&
			   parse_unsigned(value, 1, 60000, &number) == 0) {
			options->batch_seconds = (double)number / 1e3;
			i++;
		} else if (strcmp(arg, "--pipes") == 0) {
			options->use_pipes = 1;
		} else if (strcmp(arg, "--csv") == 0) {
			options->csv = 1;
		} else if (strcmp(arg, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "iomux-bench: bad argument '%s'%s\n", arg,
				i + 1 < argc ? " or its value" : "");
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_options options;

	if (parse_options(argc, argv, &options) != 0)
		return 2;
	run(&options);
	return 0;
}
