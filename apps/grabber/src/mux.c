#include "mux.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

/* flags_from_revents() reads poll and epoll bits alike. */
_Static_assert(POLLIN == EPOLLIN && POLLRDNORM == EPOLLRDNORM && POLLERR == EPOLLERR &&
		       POLLHUP == EPOLLHUP,
	       "poll and epoll event bits differ");

static const char *const kind_names[MUX_KIND_COUNT] = { "select", "poll", "epoll" };

const char *mux_kind_name(enum mux_kind kind)
{
	return kind_names[kind];
}

int mux_kind_from_name(const char *name, enum mux_kind *kind)
{
	for (int k = 0; k < MUX_KIND_COUNT; k++) {
		if (strcmp(name, kind_names[k]) == 0) {
			*kind = (enum mux_kind)k;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

int mux_init(struct mux *mux, enum mux_kind kind, size_t capacity)
{
	memset(mux, 0, sizeof(*mux));
	mux->kind = kind;
	mux->capacity = capacity;
	mux->epoll_fd = -1;
	mux->registered = calloc(capacity ? capacity : 1, sizeof(*mux->registered));
	mux->data = calloc(capacity ? capacity : 1, sizeof(*mux->data));
	if (kind == MUX_EPOLL) {
		mux->epoll_events = calloc(capacity ? capacity : 1, sizeof(*mux->epoll_events));
		mux->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	}
	if (mux->registered == NULL || mux->data == NULL ||
	    (kind == MUX_EPOLL && (mux->epoll_events == NULL || mux->epoll_fd < 0))) {
		int saved_errno = mux->epoll_fd < 0 && kind == MUX_EPOLL ? errno : ENOMEM;

		mux_destroy(mux);
		errno = saved_errno;
		return -1;
	}
	return 0;
}

void mux_destroy(struct mux *mux)
{
	if (mux->epoll_fd >= 0)
		close(mux->epoll_fd);
	free(mux->registered);
	free(mux->data);
	free(mux->epoll_events);
	memset(mux, 0, sizeof(*mux));
	mux->epoll_fd = -1;
}

int mux_add(struct mux *mux, int fd, void *data)
{
	if (mux->count == mux->capacity) {
		errno = ENOSPC;
		return -1;
	}
	if (mux->kind == MUX_SELECT && fd >= FD_SETSIZE) {
		errno = ERANGE;
		return -1;
	}
	if (mux->kind == MUX_EPOLL) {
		struct epoll_event event = { .events = EPOLLIN, .data.ptr = data };

		if (epoll_ctl(mux->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0)
			return -1;
	}
	mux->registered[mux->count] = (struct pollfd){ .fd = fd, .events = POLLIN };
	mux->data[mux->count] = data;
	mux->count++;
	return 0;
}

int mux_remove(struct mux *mux, int fd)
{
	for (size_t i = 0; i < mux->count; i++) {
		if (mux->registered[i].fd != fd)
			continue;
		/* A descriptor that is already closed has left the epoll set. */
		if (mux->kind == MUX_EPOLL &&
		    epoll_ctl(mux->epoll_fd, EPOLL_CTL_DEL, fd, NULL) != 0 && errno != EBADF)
			return -1;
		mux->count--;
		mux->registered[i] = mux->registered[mux->count];
		mux->data[i] = mux->data[mux->count];
		return 0;
	}
	errno = ENOENT;
	return -1;
}

static unsigned flags_from_revents(uint32_t revents)
{
	unsigned flags = 0;

	if (revents & (POLLIN | POLLRDNORM))
		flags |= MUX_READABLE;
	if (revents & (POLLERR | POLLNVAL))
		flags |= MUX_ERROR;
	if (revents & POLLHUP)
		flags |= MUX_HANGUP;
	return flags;
}

/* select() needs its set rebuilt before every call and scanned after it:
 * that rebuilding and scanning is part of its cost and is kept here. */
static int wait_select(struct mux *mux, struct mux_event *events, size_t max_events,
		       int timeout_ms)
{
	fd_set readable;
	int max_fd = -1;
	struct timeval timeout = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	FD_ZERO(&readable);
	for (size_t i = 0; i < mux->count; i++) {
		FD_SET(mux->registered[i].fd, &readable);
		if (mux->registered[i].fd > max_fd)
			max_fd = mux->registered[i].fd;
	}
	int ready = select(max_fd + 1, &readable, NULL, NULL, timeout_ms < 0 ? NULL : &timeout);
	size_t found = 0;

	for (size_t i = 0; ready > 0 && i < mux->count && found < max_events; i++) {
		if (FD_ISSET(mux->registered[i].fd, &readable)) {
			events[found++] = (struct mux_event){ mux->data[i], MUX_READABLE };
			ready--;
		}
	}
	return ready < 0 ? -1 : (int)found;
}

static int wait_poll(struct mux *mux, struct mux_event *events, size_t max_events,
		     int timeout_ms)
{
	int ready = poll(mux->registered, mux->count, timeout_ms);
	size_t found = 0;

	for (size_t i = 0; ready > 0 && i < mux->count && found < max_events; i++) {
		if (mux->registered[i].revents != 0) {
			events[found++] = (struct mux_event){
				mux->data[i], flags_from_revents((uint32_t)mux->registered[i].revents)
			};
			ready--;
		}
	}
	return ready < 0 ? -1 : (int)found;
}

static int wait_epoll(struct mux *mux, struct mux_event *events, size_t max_events,
		      int timeout_ms)
{
	size_t room = max_events < mux->capacity ? max_events : mux->capacity;
	int ready = epoll_wait(mux->epoll_fd, mux->epoll_events, (int)room, timeout_ms);

	for (int i = 0; i < ready; i++)
		events[i] = (struct mux_event){ mux->epoll_events[i].data.ptr,
						flags_from_revents(mux->epoll_events[i].events) };
	return ready;
}

int mux_wait(struct mux *mux, struct mux_event *events, size_t max_events, int timeout_ms)
{
	if (max_events == 0) {
		errno = EINVAL;
		return -1;
	}
	switch (mux->kind) {
	case MUX_SELECT:
		return wait_select(mux, events, max_events, timeout_ms);
	case MUX_POLL:
		return wait_poll(mux, events, max_events, timeout_ms);
	case MUX_EPOLL:
		return wait_epoll(mux, events, max_events, timeout_ms);
	}
	errno = EINVAL;
	return -1;
}
