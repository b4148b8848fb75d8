/* select, poll and epoll behind one interface report the same things. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "mux.h"

static void make_ready(int fd)
{
	uint64_t one = 1;

	CHECK(write(fd, &one, sizeof(one)) == sizeof(one));
}

static void test_readiness(enum mux_kind kind)
{
	struct mux mux;
	struct mux_event events[4];
	int fds[3];
	int tags[3] = { 10, 11, 12 };

	CHECK(mux_init(&mux, kind, 3) == 0);
	for (int i = 0; i < 3; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		CHECK(mux_add(&mux, fds[i], &tags[i]) == 0);
	}
	CHECK_EQ(mux_wait(&mux, events, 4, 0), 0);

	make_ready(fds[1]);
	CHECK_EQ(mux_wait(&mux, events, 4, 0), 1);
	CHECK(events[0].data == &tags[1]);
	CHECK_EQ(events[0].flags, MUX_READABLE);
	/* Level-triggered: still ready until read. */
	CHECK_EQ(mux_wait(&mux, events, 4, -1), 1);

	make_ready(fds[0]);
	make_ready(fds[2]);
	CHECK_EQ(mux_wait(&mux, events, 4, 1000), 3);
	CHECK_EQ(mux_wait(&mux, events, 2, 0), 2); /* never more than asked */

	CHECK(mux_remove(&mux, fds[1]) == 0);
	CHECK_EQ(mux_wait(&mux, events, 4, 0), 2);
	for (int i = 0; i < 2; i++)
		CHECK(events[i].data != &tags[1]);
	errno = 0;
	CHECK(mux_remove(&mux, fds[1]) == -1 && errno == ENOENT);

	CHECK(mux_add(&mux, fds[1], &tags[1]) == 0);
	errno = 0;
	CHECK(mux_add(&mux, fds[1], &tags[1]) == -1 && errno == ENOSPC);
	errno = 0;
	CHECK(mux_wait(&mux, events, 0, 0) == -1 && errno == EINVAL);
	mux_destroy(&mux);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

/* A pipe whose writer has gone hangs up; a write end polled for reading
 * whose reader has gone is an error. select only says "readable". */
static void test_hangup_and_error(enum mux_kind kind)
{
	struct mux mux;
	struct mux_event events[2];
	int hung_up[2], broken[2];

	CHECK(pipe(hung_up) == 0 && pipe(broken) == 0);
	close(hung_up[1]);
	close(broken[0]);
	CHECK(mux_init(&mux, kind, 2) == 0);
	CHECK(mux_add(&mux, hung_up[0], hung_up) == 0);
	CHECK(mux_wait(&mux, events, 2, 0) == 1);
	CHECK_EQ(events[0].flags, kind == MUX_SELECT ? MUX_READABLE : MUX_HANGUP);
	CHECK(mux_remove(&mux, hung_up[0]) == 0);
	CHECK(mux_add(&mux, broken[1], broken) == 0);
	CHECK(mux_wait(&mux, events, 2, 0) == 1);
	CHECK(events[0].data == broken);
	CHECK_EQ(events[0].flags, kind == MUX_SELECT ? MUX_READABLE : MUX_ERROR);
	mux_destroy(&mux);
	close(hung_up[0]);
	close(broken[1]);
}

/* select cannot take a descriptor at or above FD_SETSIZE; the others can. */
static void test_fd_setsize(void)
{
	struct rlimit limit;
	struct mux mux;

	getrlimit(RLIMIT_NOFILE, &limit);
	if (limit.rlim_cur <= FD_SETSIZE + 1) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
	int low = eventfd(0, EFD_CLOEXEC);
	int high = dup2(low, FD_SETSIZE + 1);

	close(low);

	if (high < 0) {
		printf("test_mux: skipped the FD_SETSIZE check (RLIMIT_NOFILE %llu)\n",
		       (unsigned long long)limit.rlim_cur);
		return;
	}
	for (int k = 0; k < MUX_KIND_COUNT; k++) {
		CHECK(mux_init(&mux, (enum mux_kind)k, 1) == 0);
		errno = 0;
		int result = mux_add(&mux, high, NULL);

		if (k == MUX_SELECT)
			CHECK(result == -1 && errno == ERANGE);
		else
			CHECK(result == 0);
		mux_destroy(&mux);
	}
	close(high);
}

static void test_names(void)
{
	enum mux_kind kind;

	for (int k = 0; k < MUX_KIND_COUNT; k++) {
		CHECK(mux_kind_from_name(mux_kind_name((enum mux_kind)k), &kind) == 0);
		CHECK_EQ(kind, k);
	}
	CHECK(strcmp(mux_kind_name(MUX_EPOLL), "epoll") == 0);
	errno = 0;
	CHECK(mux_kind_from_name("kqueue", &kind) == -1 && errno == EINVAL);
}

int main(void)
{
	for (int k = 0; k < MUX_KIND_COUNT; k++) {
		test_readiness((enum mux_kind)k);
		test_hangup_and_error((enum mux_kind)k);
	}
	test_fd_setsize();
	test_names();
	return check_summary("test_mux");
}
