/* The plain dmesg scanner behind sources/dmesg_bulk.py (see dmesg_scan.h). */
#define _GNU_SOURCE /* memmem */
#include "dmesg_scan.h"

#include <stdlib.h>
#include <string.h>

/* The LFs of data[from..to), added to *lines; -1 on a byte the fast path does not take. */
static int count_bytes(const uint8_t *data, size_t n, size_t from, size_t to, long *lines)
{
	for (size_t i = from; i < to; i++) {
		uint8_t c = data[i];

		if (c >= 32 && c < 127)
			continue;
		if (c == '\n')
			(*lines)++;
		else if (c == '\r') {
			if (i + 1 == n || data[i + 1] != '\n')
				return -1; /* a lone CR: the line needs the per-line cleaning */
		} else if (c != '\t')
			return -1;
	}
	return 0;
}

/* Bytes are taken a block at a time: a block of printable bytes and LFs (nearly every block
 * of a log) is counted without a branch per byte, which the compiler turns into vector
 * instructions; only a block holding something else is looked at byte by byte. */
#define BLOCK 64

long dmesg_count_lines(const uint8_t *data, size_t n)
{
	long lines = 0;
	size_t i = 0;

	for (; i + BLOCK <= n; i += BLOCK) {
		unsigned other = 0, lf = 0;

		for (size_t k = 0; k < BLOCK; k++) {
			uint8_t c = data[i + k];

			other |= (c < 32 && c != '\n') | (c >= 127);
			lf += c == '\n';
		}
		if (!other)
			lines += lf;
		else if (count_bytes(data, n, i, i + BLOCK, &lines) < 0)
			return -1;
	}
	if (count_bytes(data, n, i, n, &lines) < 0)
		return -1;
	if (n == 0 || data[n - 1] != '\n')
		lines++; /* the last line has no LF (an empty text: one empty line) */
	return lines;
}

static int is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* "[sssss.uuuuuu] " at s (the line has at least 15 bytes of text): the time in ns, the
 * seconds' left padding read as zeros as the numpy path does; DMESG_NO_TIME otherwise. */
static int64_t stamp(const uint8_t *s)
{
	int64_t whole = 0, micro = 0;

	if (s[0] != '[' || s[6] != '.' || s[13] != ']' || s[14] != ' ')
		return DMESG_NO_TIME;
	for (int k = 1; k < 6; k++) {
		if (!is_digit(s[k]) && s[k] != ' ')
			return DMESG_NO_TIME;
		whole = whole * 10 + (is_digit(s[k]) ? s[k] - '0' : 0);
	}
	for (int k = 7; k < 13; k++) {
		if (!is_digit(s[k]))
			return DMESG_NO_TIME;
		micro = micro * 10 + (s[k] - '0');
	}
	return whole * 1000000000 + micro * 1000;
}

void dmesg_lines(const uint8_t *data, size_t n, size_t nlines, int64_t *start, int64_t *end,
		 int64_t *nbytes, int64_t *t)
{
	size_t at = 0;

	for (size_t i = 0; i < nlines; i++) {
		const uint8_t *lf = memchr(data + at, '\n', n - at);
		size_t stop = lf ? (size_t)(lf - data) : n;
		size_t text_end = stop > at && data[stop - 1] == '\r' ? stop - 1 : stop;

		start[i] = (int64_t)at;
		end[i] = (int64_t)text_end;
		nbytes[i] = (int64_t)((lf ? stop + 1 : stop) - at);
		t[i] = text_end - at >= 15 ? stamp(data + at) : DMESG_NO_TIME;
		at = stop + 1;
	}
}

/* Whether `word` lies at `at`, wholly inside the text (a position off the text: no). */
static int word_at(const uint8_t *data, int64_t n, int64_t at, const char *word)
{
	int64_t len = (int64_t)strlen(word);

	return at >= 0 && at + len <= n && memcmp(data + at, word, (size_t)len) == 0;
}

/* The decimal digits just before `end`, none before `low`: their count (most + 1 when
 * there are more than `most`) and value. */
static int digits_before(const uint8_t *data, int64_t end, int64_t low, int most, int64_t *value)
{
	int count = 0;
	int64_t scale = 1;

	*value = 0;
	while (count <= most && end - count - 1 >= low && is_digit(data[end - count - 1])) {
		*value += (data[end - count - 1] - '0') * scale;
		scale *= 10;
		count++;
	}
	return count;
}

/* `FUNCTION @ PID` in [from, end): where FUNCTION ends, or -1. */
static int64_t call_fields(const uint8_t *data, int64_t n, int64_t from, int64_t end, int64_t *pid)
{
	int digits = digits_before(data, end, from, 10, pid);
	int64_t at = end - digits - 3;

	if (digits < 1 || digits > 10 || at <= from || !word_at(data, n, at, " @ "))
		return -1;
	if (digits > 1 && data[end - digits] == '0')
		return -1; /* "01": not how the kernel prints a number */
	return at;
}

/* `FUNCTION returned [RET ]after N usecs|msecs` in [from, end): where FUNCTION ends, or -1. */
static int64_t return_fields(const uint8_t *data, int64_t n, int64_t from, int64_t end, int64_t *ret,
			     int64_t *dur)
{
	int usecs = word_at(data, n, end - 5, "usecs");
	int64_t count, value, after, ret_at, fn_end;
	int digits, ret_digits, minus, plain, with_ret;

	if (end - from < (int64_t)strlen("x returned after 0 usecs") || !(usecs || word_at(data, n, end - 5, "msecs")))
		return -1;
	digits = digits_before(data, end - 6, from, 10, &count);
	if (digits < 1 || digits > 10 || data[end - 6] != ' ')
		return -1;
	after = end - 6 - digits - 7;
	if (!word_at(data, n, after, " after "))
		return -1;
	plain = word_at(data, n, after - 9, " returned");
	ret_digits = digits_before(data, after, from, 10, &value);
	minus = ret_digits >= 1 && after - ret_digits - 1 >= 0 && data[after - ret_digits - 1] == '-';
	ret_at = after - ret_digits - minus - 10;
	with_ret = ret_digits >= 1 && ret_digits <= 10 && word_at(data, n, ret_at, " returned ");
	if (!plain && !with_ret)
		return -1;
	fn_end = plain ? after - 9 : ret_at;
	if (fn_end <= from)
		return -1;
	*ret = plain ? DMESG_NO_RET_CODE : minus ? -value : value;
	*dur = count * (usecs ? 1000 : 1000000);
	return fn_end;
}

/* Where to look for a set of words, to skip quickly past bytes that start none of them. */
struct word_index {
	uint64_t first[256]; /* per byte value, the words that start with it (bit k: words k) */
	uint64_t pairs[1024]; /* bit b0 | b1 << 8: a word starts with bytes b0 b1 (or is b0 alone) */
	int lead; /* the byte every word starts with, or -1 when they start with different bytes */
	int64_t shortest; /* the shortest word's length */
	/* Per pair of bytes (block()), how far a window of `shortest` bytes that ends with them can
	 * move on before a word could start in it (0: one may start where it starts). */
	uint8_t shift[4096];
};

/* A pair of bytes as an index of word_index.shift: pairs that share one share the least shift. */
static unsigned block(uint8_t b0, uint8_t b1)
{
	return (unsigned)(b0 & 63) << 6 | (b1 & 63);
}

static void index_words(const struct dmesg_words *words, struct word_index *index)
{
	index->lead = words->count ? words->text[0][0] : -1;
	index->shortest = 0;
	memset(index->first, 0, sizeof(index->first));
	memset(index->pairs, 0, sizeof(index->pairs));
	for (size_t k = 0; k < words->count && k < 64; k++) {
		const uint8_t *w = words->text[k];

		index->first[w[0]] |= (uint64_t)1 << k;
		if (w[0] != index->lead)
			index->lead = -1;
		for (unsigned next = 0; next < 256; next++) {
			unsigned pair = w[0] | next << 8;

			if (words->len[k] == 1 || w[1] == next)
				index->pairs[pair >> 6] |= (uint64_t)1 << (pair & 63);
		}
		if (!index->shortest || (int64_t)words->len[k] < index->shortest)
			index->shortest = (int64_t)words->len[k];
	}
	/* (shifts only for words of 3 bytes or more, below 256) */
	memset(index->shift, index->shortest >= 3 && index->shortest < 256 ? (int)index->shortest - 1 : 0,
	       sizeof(index->shift));
	for (size_t k = 0; k < words->count && k < 64 && index->shortest >= 3 && index->shortest < 256; k++)
		for (int64_t j = 1; j < index->shortest; j++) {
			uint8_t *shift = &index->shift[block(words->text[k][j - 1], words->text[k][j])];

			if (*shift > index->shortest - 1 - j)
				*shift = (uint8_t)(index->shortest - 1 - j);
		}
}

/* The words not yet `found` that data[p..end) starts with. */
static uint64_t words_at(const uint8_t *data, int64_t p, int64_t end, const struct dmesg_words *words,
			 const struct word_index *index, uint64_t found)
{
	uint64_t here = 0;

	for (uint64_t maybe = index->first[data[p]] & ~found; maybe; maybe &= maybe - 1) {
		int k = __builtin_ctzll(maybe);

		if ((int64_t)words->len[k] <= end - p && memcmp(data + p, words->text[k], words->len[k]) == 0)
			here |= (uint64_t)1 << k;
	}
	return here;
}

/* holds() for words that start with different bytes, all 3 bytes long or more: a window as
 * long as the shortest word moves on by the shift its last two bytes allow (the idea of Wu and
 * Manber's search for many words), most often by several bytes at once. */
static uint64_t holds_skipping(const uint8_t *data, int64_t from, int64_t end, const struct dmesg_words *words,
			       const struct word_index *index, uint64_t group_a, uint64_t group_b)
{
	const int64_t m = index->shortest;
	uint64_t found = 0;

	for (int64_t p = from; p + m <= end;) {
		unsigned shift = index->shift[block(data[p + m - 2], data[p + m - 1])];

		if (shift) {
			p += shift;
			continue;
		}
		found |= words_at(data, p, end, words, index, found);
		if ((found & group_a) && (found & group_b))
			break;
		p++;
	}
	return found;
}

/* Which words data[from..end) holds, looked for until one of group_a and one of group_b are
 * found (with 0 for either: through the whole text).  When every
 * word starts with one byte, memchr jumps to where it is (the words of initcall_debug's
 * levels all start with the "]" of a stamp, one or two to a line); otherwise a byte and the
 * next that start no word are passed over at once (a space or a common letter starts some
 * word of most sets, a pair of bytes far less often). */
static uint64_t holds(const uint8_t *data, int64_t from, int64_t end, const struct dmesg_words *words,
		      const struct word_index *index, uint64_t group_a, uint64_t group_b)
{
	uint64_t found = 0;

	if (index->lead < 0 && index->shortest >= 3 && index->shortest < 256)
		return holds_skipping(data, from, end, words, index, group_a, group_b);
	for (int64_t p = from; p < end; p++) {
		if (index->lead >= 0) {
			const uint8_t *at = memchr(data + p, index->lead, (size_t)(end - p));

			if (!at)
				break;
			p = at - data;
		} else if (p + 1 < end) {
			unsigned pair = data[p] | (unsigned)data[p + 1] << 8;

			if (!(index->pairs[pair >> 6] >> (pair & 63) & 1))
				continue;
		}
		found |= words_at(data, p, end, words, index, found);
		if ((found & group_a) && (found & group_b))
			break;
	}
	return found;
}

void dmesg_holding(const uint8_t *data, size_t count, const int64_t *start, const int64_t *end,
		   const struct dmesg_words *words, uint64_t *masks)
{
	struct word_index index;

	index_words(words, &index);
	for (size_t i = 0; i < count; i++)
		masks[i] = holds(data, start[i], end[i], words, &index, 0, 0);
}

/* Whether data[from..end) starts with one of `starts` (only those that start with its first
 * byte are compared: a million messages against a score of starts each cost more than the
 * rest of the scan). */
static int starts_with(const uint8_t *data, int64_t from, int64_t end, const struct dmesg_words *starts,
		       const struct word_index *start_index)
{
	for (uint64_t maybe = from < end ? start_index->first[data[from]] : 0; maybe; maybe &= maybe - 1) {
		int k = __builtin_ctzll(maybe);

		if ((int64_t)starts->len[k] <= end - from && memcmp(data + from, starts->text[k], starts->len[k]) == 0)
			return 1;
	}
	return 0;
}

/* DMESG_MEANINGFUL when data[from..end) starts with one of `starts` or holds one of the
 * words (bits `meaning` of `all`), plus DMESG_HINTED when it holds one of the hints (bits
 * `hints`): one look through the text for both, which stops once both are known. */
static uint8_t meaning_and_hints(const uint8_t *data, int64_t from, int64_t end, const struct dmesg_words *all,
				 const struct word_index *index, uint64_t meaning, uint64_t hints,
				 const struct dmesg_words *starts, const struct word_index *start_index)
{
	int started = starts_with(data, from, end, starts, start_index);
	uint64_t found;

	if (started && !hints)
		return DMESG_MEANINGFUL;
	found = started ? holds(data, from, end, all, index, hints, hints)
			: holds(data, from, end, all, index, meaning, hints ? hints : meaning);
	return (uint8_t)((started || (found & meaning) ? DMESG_MEANINGFUL : 0) | (found & hints ? DMESG_HINTED : 0));
}

size_t dmesg_name_slots(size_t count)
{
	size_t slots = 16;

	while (slots < 4 * count) /* two names a message at most (a fixup's function and device) */
		slots *= 2;
	return slots;
}

/* A hash of len bytes at p taken 8 at a time (a byte at a time was as long as looking
 * through the messages for their words: a function's text for each of 770,000 lines). */
static uint64_t hash_bytes(const uint8_t *p, int64_t len)
{
	uint64_t hash = (uint64_t)len * 0x9e3779b97f4a7c15ULL, word;
	int64_t k = 0;

	for (; k + 8 <= len; k += 8) {
		memcpy(&word, p + k, 8);
		hash = (hash ^ word) * 0xff51afd7ed558ccdULL;
		hash ^= hash >> 32;
	}
	for (word = 0; k < len; k++) /* (the tail a byte at a time: no store of a variable size to load back) */
		word = word << 8 | p[k];
	hash = (hash ^ word) * 0xff51afd7ed558ccdULL;
	return hash ^ hash >> 29;
}

/* The index of data[at..at+len) in names, added when new. */
static int64_t name_index(const uint8_t *data, int64_t at, int64_t len, struct dmesg_names *names)
{
	uint64_t hash = hash_bytes(data + at, len);
	size_t mask = names->nslots - 1, slot;

	for (slot = hash & mask; names->slots[slot]; slot = (slot + 1) & mask) {
		int64_t i = names->slots[slot] - 1;

		if (names->len[i] == len && memcmp(data + names->at[i], data + at, (size_t)len) == 0)
			return i;
	}
	names->at[names->count] = at;
	names->len[names->count] = len;
	names->slots[slot] = (int64_t)++names->count;
	return (int64_t)names->count - 1;
}

/* A `calling  FUNCTION @ PID` line after a prefix of its own ("pci 0000:00:00.0: calling
 * quirk_x+0x0/0x20 @ 1", a PCI fixup run for a device), whole to its end as at a message's
 * start.  initcall.CALLING reads it so only when no "[" comes before its first "calling  "
 * (a "[" could open a stamp of its own, CALLING's `ts`): then it finds the same function
 * and pid as the at-start expression does. */
static void call_after_prefix(const uint8_t *data, int64_t size, int64_t from, int64_t stop, uint8_t *kind,
			      int64_t *fn, int64_t *pid, struct dmesg_names *names)
{
	const int64_t prefix = (int64_t)strlen("calling  ");
	const uint8_t *word = memmem(data + from, (size_t)(stop - from), "calling  ", (size_t)prefix);
	int64_t at, fn_end;

	if (!word || memchr(data + from, '[', (size_t)(word - data - from)))
		return;
	at = word - data;
	fn_end = stop - at > prefix ? call_fields(data, size, at + prefix, stop, pid) : -1;
	if (fn_end < 0) {
		*pid = 0;
		return;
	}
	*kind |= DMESG_CALL;
	*fn = name_index(data, at + prefix, fn_end - at - prefix, names);
}

static int has(const uint8_t *data, int64_t from, int64_t stop, const char *word)
{
	return memmem(data + from, (size_t)(stop - from), word, strlen(word)) != NULL;
}

/* The count of lowercase hexadecimal digits just before `end`, none before `low`. */
static int64_t hex_before(const uint8_t *data, int64_t end, int64_t low)
{
	int64_t p = end;

	while (p > low && (is_digit(data[p - 1]) || (data[p - 1] >= 'a' && data[p - 1] <= 'f')))
		p--;
	return end - p;
}

static int is_word_byte(uint8_t c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.';
}

/* `DEVICE: FN+0xA/0xB took N usecs` whole to its end (a PCI fixup run for one device:
 * "pci 0000:00:00.0: quirk_x+0x0/0x60 took 6 usecs").  InitcallReader.feed reads it with
 * initcall.FIXUP_TOOK when it holds no word that feed tries first; with its only " took "
 * at the end, FIXUP_TOOK's match is this one: FN a run of word bytes or dots after ": ",
 * DEVICE the run of bytes that are not spaces before it (the text has no other blank than
 * space and tab). */
static void fixup_took(const uint8_t *data, int64_t size, int64_t from, int64_t stop, uint8_t *kind,
		       int64_t *fn, int64_t *device, int64_t *dur, struct dmesg_names *names)
{
	const uint8_t *took = memmem(data + from, (size_t)(stop - from), " took ", 6);
	int64_t at, p, fn_start, device_end, n;
	int digits;

	if (!took || has(data, from, stop, "calling  ") || has(data, from, stop, "initcall ") ||
	    has(data, from, stop, "Calling initcall"))
		return;
	at = took - data;
	if (has(data, at + 1, stop, " took "))
		return;
	digits = digits_before(data, stop - 6, at + 6, 10, &n);
	if (!word_at(data, size, stop - 6, " usecs") || digits < 1 || digits > 10 || stop - 6 - digits != at + 6)
		return;
	p = at - hex_before(data, at, from); /* "+0xA/0xB" before " took " */
	if (p == at || p - 3 < from || !word_at(data, size, p - 3, "/0x"))
		return;
	p -= 3;
	fn_start = p - hex_before(data, p, from);
	if (fn_start == p || fn_start - 3 < from || !word_at(data, size, fn_start - 3, "+0x"))
		return;
	p = fn_start - 3; /* where FN ends */
	fn_start = p;
	while (fn_start > from && is_word_byte(data[fn_start - 1]))
		fn_start--;
	if (fn_start == p || fn_start - 2 < from || !word_at(data, size, fn_start - 2, ": "))
		return;
	device_end = p = fn_start - 2;
	while (p > from && data[p - 1] != ' ' && data[p - 1] != '\t')
		p--;
	if (p == device_end)
		return;
	*kind |= DMESG_FIXUP;
	*fn = name_index(data, fn_start, at - fn_start, names);
	*device = name_index(data, p, device_end - p, names);
	*dur = n * 1000;
}

int dmesg_messages(const uint8_t *data, size_t n, size_t count, const int64_t *offset, const int64_t *end,
		   const struct dmesg_words *words, const struct dmesg_words *starts, const struct dmesg_words *hints,
		   uint8_t *kind, int64_t *fn, int64_t *a, int64_t *b, struct dmesg_names *names)
{
	const int64_t size = (int64_t)n, prefix = (int64_t)strlen("calling  ");
	const uint8_t *text[64];
	size_t len[64];
	struct dmesg_words all = { text, len, words->count + hints->count };
	struct word_index index, start_index;
	uint64_t meaning, hint_bits;

	if (all.count > 64)
		return -1;
	for (size_t k = 0; k < all.count; k++) {
		text[k] = k < words->count ? words->text[k] : hints->text[k - words->count];
		len[k] = k < words->count ? words->len[k] : hints->len[k - words->count];
		if (len[k] == 0)
			return -1; /* (an empty word is in every message: not what a caller means) */
	}
	for (size_t k = 0; k < starts->count; k++)
		if (starts->len[k] == 0 || k == 64)
			return -1;
	meaning = words->count ? ~(uint64_t)0 >> (64 - words->count) : 0;
	hint_bits = all.count ? ~(uint64_t)0 >> (64 - all.count) & ~meaning : 0;
	index_words(&all, &index);
	index_words(starts, &start_index);
	for (size_t i = 0; i < count; i++)
		if (offset[i] < 0 || end[i] > size || offset[i] > end[i])
			return -1;
	for (size_t i = 0; i < count; i++) {
		int64_t from = offset[i], stop = end[i], fn_end = -1;
		uint8_t found;

		kind[i] = DMESG_OTHER;
		fn[i] = -1;
		a[i] = b[i] = 0;
		if (stop - from > prefix && word_at(data, size, from, "calling  ")) {
			fn_end = call_fields(data, size, from + prefix, stop, &a[i]);
			kind[i] = fn_end >= 0 ? DMESG_CALL : DMESG_OTHER;
		} else if (stop - from > prefix && word_at(data, size, from, "initcall ")) {
			fn_end = return_fields(data, size, from + prefix, stop, &a[i], &b[i]);
			kind[i] = fn_end >= 0 ? DMESG_RETURN : DMESG_OTHER;
		}
		if (fn_end >= 0)
			fn[i] = name_index(data, from + prefix, fn_end - from - prefix, names);
		found = meaning_and_hints(data, from, stop, &all, &index, meaning, hint_bits, starts, &start_index);
		if (found & DMESG_MEANINGFUL && kind[i] == DMESG_OTHER)
			call_after_prefix(data, size, from, stop, &kind[i], &fn[i], &a[i], names);
		if (found & DMESG_MEANINGFUL && kind[i] == DMESG_OTHER)
			fixup_took(data, size, from, stop, &kind[i], &fn[i], &a[i], &b[i], names);
		kind[i] |= found;
	}
	return 0;
}

int64_t dmesg_find(const uint8_t *data, size_t n, const uint8_t *needle, size_t len, size_t from, size_t to)
{
	const uint8_t *at;

	to = to < n ? to : n;
	if (!len || from >= to || to - from < len)
		return -1;
	at = memmem(data + from, to - from, needle, len);
	return at ? at - data : -1;
}

/* The end of the run of entries sorted by line that starts at `from` in order[]. */
static size_t run_end(const int64_t *line, const int64_t *order, size_t from, size_t n)
{
	size_t i = from + 1;

	while (i < n && line[order[i - 1]] <= line[order[i]])
		i++;
	return i;
}

/* order[] sorted by line, stably, by merging the runs it already has: the entries come as a
 * few sorted runs (calls, returns; those found in bulk, then those read one by one), so a
 * pass or two merges them.  tmp has room for n entries; the result is in order[]. */
static void sort_by_line(const int64_t *line, int64_t *order, int64_t *tmp, size_t n)
{
	int64_t *from = order, *to = tmp, *swap;

	for (;;) {
		size_t lo = 0, runs = 0;

		while (lo < n) {
			size_t mid = run_end(line, from, lo, n), hi = mid < n ? run_end(line, from, mid, n) : n;
			size_t a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				to[k++] = line[from[b]] < line[from[a]] ? from[b++] : from[a++];
			while (a < mid)
				to[k++] = from[a++];
			while (b < hi)
				to[k++] = from[b++];
			lo = hi;
			runs++;
		}
		swap = from;
		from = to;
		to = swap;
		if (runs <= 1)
			break;
	}
	if (from != order)
		memcpy(order, from, n * sizeof(*order));
}

long dmesg_pair(size_t n, size_t n_calls, const int64_t *line, const int64_t *key, int64_t *answered,
		int64_t *open, int64_t *open_len)
{
	int64_t most = -1, *order, *tmp, *top, *below;
	long stacks = 0;
	size_t written = 0;

	for (size_t i = 0; i < n; i++) {
		if (key[i] < 0)
			return -1;
		most = key[i] > most ? key[i] : most;
	}
	order = malloc((n + 1) * sizeof(*order));
	tmp = malloc((n + 1) * sizeof(*tmp));
	top = malloc(((size_t)most + 2) * sizeof(*top));
	below = malloc((n_calls + 1) * sizeof(*below));
	if (!order || !tmp || !top || !below) {
		stacks = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (int64_t)i;
	sort_by_line(line, order, tmp, n);
	for (int64_t k = 0; k <= most; k++)
		top[k] = -1;
	/* Each function's open calls as a linked stack: top[key], then below[] down to -1. */
	for (size_t i = 0; i < n; i++) {
		int64_t e = order[i], k = key[e];

		if ((size_t)e < n_calls) {
			below[e] = top[k];
			top[k] = e;
		} else {
			answered[(size_t)e - n_calls] = top[k];
			if (top[k] >= 0)
				top[k] = below[top[k]];
		}
	}
	for (int64_t k = 0; k <= most; k++) {
		size_t depth = 0;

		for (int64_t c = top[k]; c >= 0; c = below[c])
			depth++;
		if (!depth)
			continue;
		written += depth;
		for (int64_t c = top[k], at = (int64_t)written - 1; c >= 0; c = below[c])
			open[at--] = c; /* newest last */
		open_len[stacks++] = (int64_t)depth;
	}
out:
	free(order);
	free(tmp);
	free(top);
	free(below);
	return stacks;
}
