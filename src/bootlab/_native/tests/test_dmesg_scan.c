/* dmesg_scan.c under ASan/UBSan: lines and stamps, initcall fields, near misses, the
 * words, function texts kept once, and texts that end mid-word. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmesg_scan.h"

static int failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                \
		}                                                                  \
	} while (0)

static void test_count_lines(void)
{
	CHECK(dmesg_count_lines((const uint8_t *)"", 0) == 1);
	CHECK(dmesg_count_lines((const uint8_t *)"a\nb", 3) == 2);
	CHECK(dmesg_count_lines((const uint8_t *)"a\r\nb\n", 5) == 2);
	CHECK(dmesg_count_lines((const uint8_t *)"a\tb\n", 4) == 1);
	CHECK(dmesg_count_lines((const uint8_t *)"a\rb\n", 4) == -1);
	CHECK(dmesg_count_lines((const uint8_t *)"a\r", 2) == -1);
	CHECK(dmesg_count_lines((const uint8_t *)"\x1b[0m\n", 5) == -1);
	CHECK(dmesg_count_lines((const uint8_t *)"\xc3\xa9\n", 3) == -1);
	CHECK(dmesg_count_lines((const uint8_t *)"\x7f\n", 2) == -1);
}

/* Texts of several 64-byte blocks (counted a block at a time): LFs in every block, a CRLF
 * across two blocks, a bad byte or a lone CR at a block's last byte or in the tail after the
 * last whole block.  Each text is an exact-size copy, for ASan. */
static long count_copy(const char *text, size_t n)
{
	uint8_t *copy = malloc(n);
	long lines;

	memcpy(copy, text, n);
	lines = dmesg_count_lines(copy, n);
	free(copy);
	return lines;
}

static void test_count_lines_blocks(void)
{
	char text[200];

	memset(text, 'x', sizeof(text));
	for (size_t i = 9; i < sizeof(text); i += 10)
		text[i] = '\n'; /* 20 lines */
	CHECK(count_copy(text, sizeof(text)) == 20);
	CHECK(count_copy(text, 195) == 20); /* the last line without its LF */
	text[63] = '\r';
	text[64] = '\n';
	CHECK(count_copy(text, sizeof(text)) == 21);
	text[64] = 'x';
	CHECK(count_copy(text, sizeof(text)) == -1); /* a lone CR ending a block */
	text[64] = '\n';
	text[127] = '\x1b';
	CHECK(count_copy(text, sizeof(text)) == -1);
	text[127] = '\t';
	CHECK(count_copy(text, sizeof(text)) == 21);
	text[198] = '\x80'; /* in the tail after the last whole block */
	CHECK(count_copy(text, sizeof(text)) == -1);
	text[198] = 'x';
	text[199] = '\r'; /* a CR as the text's last byte */
	CHECK(count_copy(text, sizeof(text)) == -1);
}

static void test_lines(void)
{
	/* an exact-size copy, so that ASan sees any read past the text's end */
	static const char source[] = "[    1.000002] one\r\n[12345.678901] \n[ 1 2 .000000] x\n[    1.00000x] y\nshort";
	size_t n = strlen(source);
	uint8_t *text = malloc(n);
	int64_t start[5], end[5], nbytes[5], t[5];

	memcpy(text, source, n);
	CHECK(dmesg_count_lines(text, n) == 5);
	dmesg_lines(text, n, 5, start, end, nbytes, t);
	CHECK(start[0] == 0 && end[0] == 18 && nbytes[0] == 20 && t[0] == 1000002000);
	CHECK(start[1] == 20 && end[1] == 35 && t[1] == 12345678901000);
	CHECK(t[2] == 1020000000000); /* the padding is read as zeros, as the numpy path reads it */
	CHECK(t[3] == DMESG_NO_TIME);
	CHECK(end[4] == (int64_t)n && nbytes[4] == 5 && t[4] == DMESG_NO_TIME);
	free(text);
}

struct scanned {
	uint8_t kind;
	int64_t fn, a, b;
	char name[64], device[64]; /* (the device: a fixup's, in a) */
};

/* One message alone in an exact-size buffer. */
static struct scanned scan(const char *message)
{
	static const char *const word_text[] = { "calling  ", "initcall ", " took " };
	static const size_t word_len[] = { 9, 9, 6 };
	/* (starts are looked up by their first byte: two share one) */
	static const char *const start_text[] = { "Run ", "Linux version", "Reading " };
	static const size_t start_len[] = { 4, 13, 8 };
	const struct dmesg_words words = { (const uint8_t *const *)word_text, word_len, 3 };
	const struct dmesg_words starts = { (const uint8_t *const *)start_text, start_len, 3 };
	/* (a hint that starts as a word does: they are looked for together) */
	static const char *const hint_text[] = { "READY", "Run  level", "login:" };
	static const size_t hint_len[] = { 5, 10, 6 };
	const struct dmesg_words hints = { (const uint8_t *const *)hint_text, hint_len, 3 };
	size_t n = strlen(message);
	uint8_t *text = malloc(n ? n : 1);
	int64_t offset = 0, end = (int64_t)n, at[2] = { 0 }, len[2] = { 0 }, slots[16] = { 0 };
	struct dmesg_names names = { at, len, 0, slots, dmesg_name_slots(1) };
	struct scanned out = { 0 };

	memcpy(text, message, n);
	CHECK(dmesg_messages(text, n, 1, &offset, &end, &words, &starts, &hints, &out.kind, &out.fn, &out.a, &out.b,
			     &names) == 0);
	if (out.fn >= 0 && len[out.fn] < (int64_t)sizeof(out.name))
		memcpy(out.name, text + at[out.fn], (size_t)len[out.fn]);
	if (out.kind & DMESG_FIXUP && len[out.a] < (int64_t)sizeof(out.device))
		memcpy(out.device, text + at[out.a], (size_t)len[out.a]);
	free(text);
	return out;
}

static void test_messages(void)
{
	struct scanned s = scan("calling  vivid_init+0x0/0x10 [vivid] @ 123");

	CHECK(s.kind == (DMESG_CALL | DMESG_MEANINGFUL) && s.a == 123 && strcmp(s.name, "vivid_init+0x0/0x10 [vivid]") == 0);
	s = scan("initcall a_init+0x0/0x2c returned -19 after 5 usecs");
	CHECK(s.kind == (DMESG_RETURN | DMESG_MEANINGFUL) && s.a == -19 && s.b == 5000 && strcmp(s.name, "a_init+0x0/0x2c") == 0);
	s = scan("initcall b_init returned after 7 msecs");
	CHECK(s.kind == (DMESG_RETURN | DMESG_MEANINGFUL) && s.a == DMESG_NO_RET_CODE && s.b == 7000000);
	CHECK(scan("calling  a_init @ 01").kind == DMESG_MEANINGFUL);             /* a leading zero */
	CHECK(scan("calling  a_init @ 12345678901").kind == DMESG_MEANINGFUL);    /* eleven digits */
	CHECK(scan("calling   @ 1").kind == DMESG_MEANINGFUL);                    /* no function */
	CHECK(scan("calling  @ 1").kind == DMESG_MEANINGFUL);
	CHECK(scan("initcall x returned 0 after 5 secs").kind == DMESG_MEANINGFUL);
	CHECK(scan("initcall returned 0 after 5 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("initcall x returned - after 5 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("initcall ").kind == DMESG_MEANINGFUL);
	CHECK(scan("calling").kind == DMESG_OTHER);
	CHECK(scan("usecs").kind == DMESG_OTHER);
	CHECK(scan("").kind == DMESG_OTHER);
	CHECK(scan("quirk_x+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("Run /init as init process").kind == DMESG_MEANINGFUL);
	CHECK(scan("a Run /init").kind == DMESG_OTHER);
	CHECK(scan("Reading x").kind == DMESG_MEANINGFUL); /* the second start of its first byte */
	CHECK(scan("Linux version 6.1").kind == DMESG_MEANINGFUL);
	CHECK(scan("Readin").kind == DMESG_OTHER); /* a start cut by the message's end */
	CHECK(scan("Linux").kind == DMESG_OTHER);
	CHECK(scan("plain message").kind == DMESG_OTHER && scan("plain message").fn == -1);
	s = scan("pci 0000:00:00.0: calling  quirk_x+0x0/0x20 @ 1");
	CHECK(s.kind == (DMESG_CALL | DMESG_MEANINGFUL) && s.a == 1 && strcmp(s.name, "quirk_x+0x0/0x20") == 0);
	s = scan("[ 1.5] calling  x @ 1"); /* a "[" before: perhaps a stamp of its own */
	CHECK(s.kind == DMESG_MEANINGFUL && s.fn == -1);
	s = scan("dev: calling  x @ 1 more"); /* not whole to its end */
	CHECK(s.kind == DMESG_MEANINGFUL && s.fn == -1 && s.a == 0);
	CHECK(scan("dev: calling  ").kind == DMESG_MEANINGFUL);
	CHECK(scan("dev: calling  x @ 01").kind == DMESG_MEANINGFUL);
	s = scan("pci 0000:00:00.0: quirk_x.y+0x0/0x60 took 06 usecs");
	CHECK(s.kind == (DMESG_FIXUP | DMESG_MEANINGFUL) && s.b == 6000 && strcmp(s.name, "quirk_x.y+0x0/0x60") == 0 &&
	      strcmp(s.device, "0000:00:00.0") == 0);
	CHECK(scan("a\tb: f+0x1/0xa took 1 usecs").kind == (DMESG_FIXUP | DMESG_MEANINGFUL));
	/* near misses: left to FIXUP_TOOK in Python */
	CHECK(scan(": f+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);         /* no device */
	CHECK(scan("d:  f+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);       /* no function */
	CHECK(scan("d: f-g+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);      /* not a word */
	CHECK(scan("d: f+0x0/0x6G took 6 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("d: f+0x/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("d: f0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("d: f+0x0/0x60 took 6 usecs!").kind == DMESG_MEANINGFUL);       /* not whole to its end */
	CHECK(scan("d: f+0x0/0x60 took  usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("d: f+0x0/0x60 took 12345678901 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan("d: f+0x0/0x1 took 2 took 6 usecs").kind == DMESG_MEANINGFUL);  /* two of " took " */
	CHECK(scan("initcall d: f+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL); /* read as a return first */
	CHECK(scan("+0x0/0x60 took 6 usecs").kind == DMESG_MEANINGFUL);
	CHECK(scan(" took 6 usecs").kind == DMESG_MEANINGFUL);
}

/* The hints are looked for in the same look as the words: in any message, whatever else
 * it is, through its whole text. */
static void test_messages_hinted(void)
{
	struct scanned s = scan("calling  READY_init @ 7");

	CHECK(s.kind == (DMESG_CALL | DMESG_MEANINGFUL | DMESG_HINTED) && s.a == 7 && strcmp(s.name, "READY_init") == 0);
	s = scan("initcall x returned 0 after 5 usecs login:");
	CHECK(s.kind == (DMESG_MEANINGFUL | DMESG_HINTED) && s.fn == -1); /* not whole to its end: not a return */
	CHECK(scan("app READY").kind == DMESG_HINTED);
	CHECK(scan("app READ").kind == DMESG_OTHER); /* a hint cut by the message's end */
	CHECK(scan("Run /init, then READY").kind == (DMESG_MEANINGFUL | DMESG_HINTED)); /* a start, a hint after */
	CHECK(scan("Run  level 3").kind == (DMESG_MEANINGFUL | DMESG_HINTED));
	CHECK(scan("READY, then calling  x @ 1 more").kind == (DMESG_MEANINGFUL | DMESG_HINTED)); /* a word after */
	CHECK(scan("x login: calling  y @ 2").kind == (DMESG_CALL | DMESG_MEANINGFUL | DMESG_HINTED));
	s = scan("pci 0000:00:00.0: READY+0x0/0x60 took 6 usecs");
	CHECK(s.kind == (DMESG_FIXUP | DMESG_MEANINGFUL | DMESG_HINTED) && s.b == 6000);
}

/* More than 64 words and hints together: refused. */
static void test_messages_too_many_words(void)
{
	static const char source[] = "x";
	const uint8_t *text[40];
	size_t len[40];
	const struct dmesg_words none = { NULL, NULL, 0 }, forty = { text, len, 40 };
	int64_t offset = 0, end = 1, fn, a, b, at[2], nlen[2], slots[16] = { 0 };
	struct dmesg_names names = { at, nlen, 0, slots, dmesg_name_slots(1) };
	uint8_t kind;

	for (int k = 0; k < 40; k++) {
		text[k] = (const uint8_t *)"w";
		len[k] = 1;
	}
	CHECK(dmesg_messages((const uint8_t *)source, 1, 1, &offset, &end, &forty, &none, &forty, &kind, &fn, &a, &b,
			     &names) == -1);
	CHECK(dmesg_messages((const uint8_t *)source, 1, 1, &offset, &end, &forty, &none, &none, &kind, &fn, &a, &b,
			     &names) == 0);
}

static void test_names_kept_once(void)
{
	static const char source[] = "calling  f @ 1\ninitcall f returned 0 after 1 usecs\ncalling  g @ 1\n";
	const struct dmesg_words none = { NULL, NULL, 0 };
	int64_t offset[3] = { 0, 15, 51 }, end[3] = { 14, 50, 65 }, fn[3], a[3], b[3];
	int64_t at[6], len[6], slots[16] = { 0 };
	struct dmesg_names names = { at, len, 0, slots, dmesg_name_slots(3) };
	uint8_t kind[3];

	CHECK(dmesg_messages((const uint8_t *)source, strlen(source), 3, offset, end, &none, &none, &none, kind, fn, a, b,
			     &names) == 0);
	CHECK(kind[0] == DMESG_CALL && kind[1] == DMESG_RETURN && kind[2] == DMESG_CALL);
	CHECK(fn[0] == 0 && fn[1] == 0 && fn[2] == 1 && names.count == 2);
	end[2] = 67; /* past the text: nothing read */
	CHECK(dmesg_messages((const uint8_t *)source, strlen(source), 3, offset, end, &none, &none, &none, kind, fn, a, b,
			     &names) == -1);
}

static void test_holding(void)
{
	static const char *const word_text[] = { "] a", "] b", "bc" };
	static const size_t word_len[] = { 3, 3, 2 };
	const struct dmesg_words words = { (const uint8_t *const *)word_text, word_len, 3 };
	const char *line = "[1] bc [2] a";
	const int64_t start[4] = { 0, 0, 5, 0 }, end[4] = { 12, 11, 12, 0 };
	uint64_t masks[4];
	uint8_t *text = malloc(12);

	memcpy(text, line, 12);
	dmesg_holding(text, 4, start, end, &words, masks);
	CHECK(masks[0] == 7);
	CHECK(masks[1] == 6); /* "] a" cut by the end */
	CHECK(masks[2] == 1);
	CHECK(masks[3] == 0);
	free(text);
}

/* Words that all start with one byte (memchr finds where to look): the same masks as a
 * look at every byte would give, a word cut by a line's end and a lead byte that starts
 * none of them included. */
static void test_holding_one_lead_byte(void)
{
	static const char *const word_text[] = { "] calling  ", "] probe of ", "]" };
	static const size_t word_len[] = { 11, 11, 1 };
	const struct dmesg_words words = { (const uint8_t *const *)word_text, word_len, 2 }, bracket = {
		(const uint8_t *const *)word_text + 2, word_len + 2, 1 };
	const char *line = "[1] x ] probe of a [2] calling  f";
	const size_t n = strlen(line);
	const int64_t start[5] = { 0, 0, 19, 3, 33 }, end[5] = { 33, 31, 33, 18, 33 };
	uint64_t masks[5];
	uint8_t *text = malloc(n);

	memcpy(text, line, n);
	dmesg_holding(text, 5, start, end, &words, masks);
	CHECK(masks[0] == 3);
	CHECK(masks[1] == 2); /* "] calling  " cut by the end */
	CHECK(masks[2] == 1);
	CHECK(masks[3] == 2);
	CHECK(masks[4] == 0);
	dmesg_holding(text, 5, start, end, &bracket, masks);
	CHECK(masks[0] == 1 && masks[3] == 1 && masks[4] == 0);
	free(text);
}

/* Words of different first bytes (a pair of bytes that starts none of them is passed over):
 * a one-byte word is found anywhere, its line's last byte included, and a word is not
 * taken for another that starts with the same byte. */
static void test_holding_pairs_of_bytes(void)
{
	static const char *const word_text[] = { " login", "x", "lo", " l" };
	static const size_t word_len[] = { 6, 1, 2, 2 };
	const struct dmesg_words words = { (const uint8_t *const *)word_text, word_len, 4 };
	const char *line = "a log in  lx";
	const size_t n = strlen(line);
	const int64_t start[4] = { 0, 11, 0, 1 }, end[4] = { 12, 12, 11, 3 };
	uint64_t masks[4];
	uint8_t *text = malloc(n);

	memcpy(text, line, n);
	dmesg_holding(text, 4, start, end, &words, masks);
	CHECK(masks[0] == (2 | 4 | 8));
	CHECK(masks[1] == 2); /* "x", the last byte */
	CHECK(masks[2] == (4 | 8));
	CHECK(masks[3] == 8); /* " l" alone: neither " login" nor "lo" */
	free(text);
}

/* Calls 0..4 and returns 5..9 given as runs out of line order (calls first, as the bulk
 * reader gives them): function 0 alternates, function 1 nests (call, call, return, return),
 * function 2 returns twice without a call, function 3 opens
 * twice and is left open; two entries on one line keep their entry order. */
static void test_pair(void)
{
	/*                      calls: 0   1   2   3   4   returns: 5   6   7   8   9 */
	const int64_t line[] = { 1, 3, 4, 8, 9, 2, 5, 6, 7, 7 };
	const int64_t key[] = { 0, 1, 1, 3, 3, 0, 1, 1, 2, 2 };
	int64_t answered[5], open[5], open_len[5];
	long stacks = dmesg_pair(10, 5, line, key, answered, open, open_len);

	CHECK(stacks == 1);
	CHECK(answered[0] == 0);
	CHECK(answered[1] == 2 && answered[2] == 1); /* the newest call first */
	CHECK(answered[3] == -1 && answered[4] == -1);
	CHECK(open_len[0] == 2 && open[0] == 3 && open[1] == 4); /* oldest first */

	const int64_t negative[] = { 0, -1 };
	CHECK(dmesg_pair(2, 1, line, negative, answered, open, open_len) == -1);
	CHECK(dmesg_pair(0, 0, line, key, answered, open, open_len) == 0);
}

/* A call after its return on the same line is not its answer; a second function's stack is
 * written after the first's. */
static void test_pair_same_line(void)
{
	const int64_t line[] = { 4, 2, 4, 1 };
	const int64_t key[] = { 5, 0, 5, 5 };
	int64_t answered[2], open[2], open_len[2];

	/* entry 3 (a return of function 5, line 1) comes before every call; entry 2 (a return on
	 * line 4 after call 0 on line 4) answers it */
	CHECK(dmesg_pair(4, 2, line, key, answered, open, open_len) == 1);
	CHECK(answered[0] == 0 && answered[1] == -1);
	CHECK(open_len[0] == 1 && open[0] == 1);
}

/* Words of 3 bytes or more that start with different bytes: the window skips; a word at a
 * line's start, at its end, across the window's last pair, overlapping another, a long word
 * among short ones, and a pair (block()) shared by two different pairs of bytes. */
static void test_holding_skipping(void)
{
	static const char *const word_text[] = { "took", "login:", "abc", "ogi", "\x61\x7f\x21" };
	static const size_t word_len[] = { 4, 6, 3, 3, 3 };
	const struct dmesg_words words = { (const uint8_t *const *)word_text, word_len, 5 };
	const char *line = "abc, it took a login: t?an abx ogi"; /* ("?a": the block of "\x7f!") */
	const size_t n = strlen(line);
	const int64_t start[6] = { 0, 5, 10, 14, 26, 31 }, end[6] = { 34, 11, 13, 21, 34, 34 };
	uint64_t masks[6];
	uint8_t *text = malloc(n);

	memcpy(text, line, n);
	dmesg_holding(text, 6, start, end, &words, masks);
	CHECK(masks[0] == (1 | 2 | 4 | 8));
	CHECK(masks[1] == 0);  /* "it too": cut */
	CHECK(masks[2] == 0);  /* "ok " */
	CHECK(masks[3] == 2 + 8);  /* " login:" (and "ogi" inside it) */
	CHECK(masks[4] == 8);  /* "abx ogi": "ogi" at the end */
	CHECK(masks[5] == 8);
	free(text);
}

/* Within the bounds only, the needle wholly inside them. */
static void test_find(void)
{
	const char *line = "ab Linux version x";
	const size_t n = strlen(line);
	uint8_t *text = malloc(n);
	const uint8_t *needle = (const uint8_t *)"Linux version ";

	memcpy(text, line, n);
	CHECK(dmesg_find(text, n, needle, 14, 0, n) == 3);
	CHECK(dmesg_find(text, n, needle, 14, 3, 17) == 3);
	CHECK(dmesg_find(text, n, needle, 14, 3, 16) == -1); /* cut by the end */
	CHECK(dmesg_find(text, n, needle, 14, 4, n) == -1);
	CHECK(dmesg_find(text, n, (const uint8_t *)"x", 1, 8, 1000) == 17); /* an end past the text */
	CHECK(dmesg_find(text, n, (const uint8_t *)"x", 1, n, n) == -1);
	CHECK(dmesg_find(text, n, needle, 0, 0, n) == -1);
	free(text);
}

int main(void)
{
	test_find();
	test_holding_skipping();
	test_pair();
	test_pair_same_line();
	test_holding();
	test_holding_one_lead_byte();
	test_holding_pairs_of_bytes();
	test_count_lines();
	test_count_lines_blocks();
	test_lines();
	test_messages();
	test_messages_hinted();
	test_messages_too_many_words();
	test_names_kept_once();
	if (failures)
		return 1;
	printf("test_dmesg_scan: ok\n");
	return 0;
}
