/* One interface over select(2), poll(2) and epoll(7), so that a loop can
 * switch mechanism without changing anything but the wait call. Waiting is
 * level-triggered for reading in all three. */
#ifndef GRABBER_MUX_H
#define GRABBER_MUX_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

enum mux_kind { MUX_SELECT, MUX_POLL, MUX_EPOLL };

#define MUX_KIND_COUNT 3

/* What a ready descriptor reports. select() folds errors and hang-ups into
 * "readable", so with it only MUX_READABLE is ever set. */
#define MUX_READABLE 0x1u
#define MUX_ERROR 0x2u
#define MUX_HANGUP 0x4u

struct mux_event {
	void *data; /* as given to mux_add() */
	unsigned flags;
};

struct mux {
	enum mux_kind kind;
	size_t count;
	size_t capacity;
	struct pollfd *registered; /* poll() waits on this array directly */
	void **data; /* data[i] belongs to registered[i] */
	int epoll_fd;
	struct epoll_event *epoll_events;
};

const char *mux_kind_name(enum mux_kind kind);
int mux_kind_from_name(const char *name, enum mux_kind *kind);

/* Room for capacity descriptors. Fails with errno set (ENOMEM, EMFILE). */
int mux_init(struct mux *mux, enum mux_kind kind, size_t capacity);
void mux_destroy(struct mux *mux);

/* Watches fd for reading. Fails with ENOSPC when capacity is reached and,
 * for select, with ERANGE when fd does not fit in an fd_set
 * (fd >= FD_SETSIZE). */
int mux_add(struct mux *mux, int fd, void *data);

/* Stops watching fd; ENOENT when it is not watched. */
int mux_remove(struct mux *mux, int fd);

/* Waits up to timeout_ms (-1: forever) and fills at most max_events
 * events; returns how many, 0 on timeout, -1 with errno (EINTR, ...). */
int mux_wait(struct mux *mux, struct mux_event *events, size_t max_events, int timeout_ms);

#endif
