/* One pass over a plain dmesg for sources/dmesg_bulk.py: the lines and their fixed-layout
 * printk stamps, then what each timed message is (an initcall line of the usual form and
 * its fields, or a message the interpreter may do something with).  Pure C, no Python:
 * module.c hands the columns to Python; tests/test_dmesg_scan.c runs it under ASan/UBSan.
 * Every rule here is the one dmesg_bulk.py's numpy path applies (tests/test_dmesg_bulk.py
 * checks that both read the same), but for a `calling` line after a prefix, which the numpy
 * path leaves to the interpreter (the same spans either way). */
#ifndef DMESG_SCAN_H
#define DMESG_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define DMESG_NO_TIME INT64_MIN     /* timeline.NO_TIME */
#define DMESG_NO_RET_CODE INT64_MIN /* initcall.NO_RET_CODE */

/* What a timed message is (messages' kind). */
enum { DMESG_OTHER = 0, DMESG_CALL = 1, DMESG_RETURN = 2, DMESG_MEANINGFUL = 4, DMESG_FIXUP = 8, DMESG_HINTED = 16 };

/* The number of lines of data[0..n) (an empty text is one empty line), or -1 when the text does not fit the fast path: a
 * byte that is not ASCII, a control character other than tab, LF and a CR before LF. */
long dmesg_count_lines(const uint8_t *data, size_t n);

/* Per line (nlines from dmesg_count_lines): where it starts, where its text ends (a CR
 * before its LF is not text), the bytes it took (its LF included), its stamp in ns when
 * it starts with "[sssss.uuuuuu] " (DMESG_NO_TIME otherwise; its message then starts 15
 * bytes in). */
void dmesg_lines(const uint8_t *data, size_t n, size_t nlines, int64_t *start, int64_t *end,
		 int64_t *nbytes, int64_t *t);

/* Literal strings: a message holding one of `words` or starting with one of `starts` is
 * DMESG_MEANINGFUL. */
struct dmesg_words {
	const uint8_t *const *text;
	const size_t *len;
	size_t count;
};

/* Per line data[start[i]..end[i]), which of `words` (at most 64, none empty) it holds:
 * bit k of masks[i] for words k. */
void dmesg_holding(const uint8_t *data, size_t count, const int64_t *start, const int64_t *end,
		   const struct dmesg_words *words, uint64_t *masks);

/* Which function texts were seen: each different text once (its first offset and length),
 * in the order first seen. */
struct dmesg_names {
	int64_t *at, *len;
	size_t count;
	/* an open-addressing table of name indices + 1 (0: empty), size a power of two */
	int64_t *slots;
	size_t nslots;
};

/* For each of `count` messages data[offset[i]..end[i]): kind[i] (DMESG_CALL: `calling  FN @
 * PID`, at the start or after a prefix holding no "[" (a device's: "pci 0000:00:00.0: "), a = PID; DMESG_RETURN: `initcall FN returned [RET ]after N usecs|msecs`, a = RET or
 * DMESG_NO_RET_CODE, b = N in ns; either way fn[i] = the index of FN's text in names, else
 * -1), plus DMESG_MEANINGFUL when the message holds a word or starts with a start.  A
 * meaningful message `DEVICE: FN+0xA/0xB took N usecs` (a PCI fixup run for one device) is
 * DMESG_FIXUP | DMESG_MEANINGFUL: fn[i] = FN+0xA/0xB's index in names, a = DEVICE's, b = N
 * in ns.  Any message holding one of `hints` (the ready and app-start patterns' texts) is
 * also DMESG_HINTED: the same look through it finds both.  names must have room for 2 *
 * `count` names and dmesg_name_slots(count) slots.  Returns 0, or -1 (nothing done) when an
 * offset or end lies outside the text, a word, a hint or a start is empty or there are more
 * than 64 words and hints or 64 starts. */
int dmesg_messages(const uint8_t *data, size_t n, size_t count, const int64_t *offset, const int64_t *end,
		   const struct dmesg_words *words, const struct dmesg_words *starts, const struct dmesg_words *hints,
		   uint8_t *kind, int64_t *fn, int64_t *a, int64_t *b, struct dmesg_names *names);

/* The slot count dmesg_messages needs for `count` messages. */
size_t dmesg_name_slots(size_t count);

/* Where `needle` (len bytes, at least one) first lies wholly within data[from..to), or -1
 * (glibc's memmem: three times as fast as CPython's bytes.find on a log). */
int64_t dmesg_find(const uint8_t *data, size_t n, const uint8_t *needle, size_t len, size_t from, size_t to);

/* Calls (entries 0..n_calls) and returns (entries n_calls..n), each with its line and its
 * function's key (0 or more), paired as a stack per function in line order (entries of one
 * line in entry order): answered[r] is the call return n_calls + r answers, or -1.  The
 * calls left open are written to open, a stack (oldest first) after another, and each
 * stack's length to open_len.  Returns the number of stacks, or -1 (nothing done) on a
 * negative key or no memory. */
long dmesg_pair(size_t n, size_t n_calls, const int64_t *line, const int64_t *key, int64_t *answered,
		int64_t *open, int64_t *open_len);

#endif
