// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Configuration files of docs/rt-formats.md.  JSON goes through jansson;
 * TOML is read by a small strict reader of exactly the documented subset
 * (comments, key = integer or "string", [[server]] and [[task]] tables),
 * since Debian ships no C TOML library.  Both feed set_key(), so the
 * rules live in one place.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Larger values overflow the kernel's nanoseconds once scaled. */
#define MAX_VALUE	1000000000000LL

enum section { TOP, SERVER, TASK };

enum key {
	K_PLUGIN, K_UNIT, K_ID, K_NAME, K_SERVER, K_PERIOD, K_BUDGET,
	K_WCET, K_DEADLINE, K_PRIORITY, K_OFFSET, K_JOBS, K_OVERRUN,
	K_RELEASE, K_CPUS, K_ASSIGNMENT, K_CPU, K_OVERHEAD,
};

struct key_spec {
	const char *name;
	enum section section;
	enum key key;
	int is_string;
	int required;
};

static const struct key_spec keys[] = {
	{ "plugin", TOP, K_PLUGIN, 1, 1 },
	{ "unit", TOP, K_UNIT, 1, 0 },
	{ "cpus", TOP, K_CPUS, 0, 0 },		/* partitioned: finish() */
	{ "assignment", TOP, K_ASSIGNMENT, 1, 0 },
	{ "overhead_us", TOP, K_OVERHEAD, 0, 0 },	/* microseconds, any unit */
	{ "id", SERVER, K_ID, 0, 1 },
	{ "name", SERVER, K_NAME, 1, 0 },
	{ "period", SERVER, K_PERIOD, 0, 1 },
	{ "budget", SERVER, K_BUDGET, 0, 1 },
	{ "priority", SERVER, K_PRIORITY, 0, 0 },	/* needed by fp: finish() */
	{ "id", TASK, K_ID, 0, 1 },
	{ "name", TASK, K_NAME, 1, 0 },
	{ "server", TASK, K_SERVER, 0, 0 },
	{ "period", TASK, K_PERIOD, 0, 1 },
	{ "wcet", TASK, K_WCET, 0, 1 },
	{ "deadline", TASK, K_DEADLINE, 0, 0 },
	{ "priority", TASK, K_PRIORITY, 0, 0 },
	{ "offset", TASK, K_OFFSET, 0, 0 },
	{ "jobs", TASK, K_JOBS, 0, 0 },
	{ "overrun", TASK, K_OVERRUN, 1, 0 },
	{ "release", TASK, K_RELEASE, 1, 0 },
	{ "cpu", TASK, K_CPU, 0, 0 },
};

#define NR_KEYS (int)(sizeof(keys) / sizeof(keys[0]))

struct parser {
	struct rt_config *cfg;
	const char *name;
	char where[64];		/* location of the text being read */
	int line;		/* TOML: where is this line, made when needed */
	enum section section;
	unsigned int seen;	/* bit per keys[] index, in this table */
	unsigned int top_seen;
	int unit_ms;
};

const struct rts_policy *rt_policy_named(const char *name)
{
	static const struct rts_policy *const all[] = {
		&rts_policy_fp, &rts_policy_edf,
		&rts_policy_partitioned_fp, &rts_policy_partitioned_edf,
		&rts_policy_global_fp, &rts_policy_global_edf,
		&rts_policy_semi_partitioned_edf,
		&rts_policy_hsf[0][0], &rts_policy_hsf[0][1],
		&rts_policy_hsf[1][0], &rts_policy_hsf[1][1],
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

static int __attribute__((format(printf, 2, 3)))
error_at(const char *where, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rt_fail(EINVAL, "%s: %s", where, msg);
}

/*
 * "FILE:LINE" of the TOML line being read, or where as set.  Made only for
 * an error or a new table: one snprintf per line was a third of rtctl
 * load's parsing in the boot benchmark (bench/rt_boot).
 */
static const char *here(struct parser *p)
{
	if (p->line)
		snprintf(p->where, sizeof(p->where), "%s:%d", p->name, p->line);
	return p->where;
}

static int key_seen(unsigned int seen, enum section section, enum key key)
{
	int i;

	for (i = 0; i < NR_KEYS; i++)
		if (keys[i].section == section && keys[i].key == key)
			return !!(seen & (1U << i));
	return 0;
}

static int set_number(struct parser *p, enum key key, long long v)
{
	struct rtsched_server_args *sv;
	struct rt_config_task *t;

	if (p->section == TOP) {	/* cpus or overhead_us */
		if (key == K_CPUS)
			p->cfg->cpus = (int)v;
		else
			p->cfg->overhead_us = v;
		return 0;
	}
	/* Only the current table's entry exists (the other may be none). */
	if (p->section == SERVER) {
		sv = &p->cfg->server[p->cfg->nr_servers - 1].args;
		switch (key) {
		case K_ID: sv->id = (int)v; break;
		case K_PERIOD: sv->period_us = v; break;
		case K_BUDGET: sv->budget_us = v; break;
		default: sv->prio = (int)v; break;
		}
		return 0;
	}
	t = &p->cfg->task[p->cfg->nr_tasks - 1];
	switch (key) {
	case K_ID: t->args.id = (int)v; break;
	case K_SERVER: t->args.server = (int)v; break;
	case K_PERIOD: t->args.period_us = v; break;
	case K_WCET: t->args.wcet_us = v; break;
	case K_DEADLINE: t->args.deadline_us = v; break;
	case K_PRIORITY: t->args.prio = (int)v; break;
	case K_OFFSET: t->args.offset_us = v; break;
	case K_CPU: t->args.cpu = (int)v; break;
	default: t->jobs = v; break;
	}
	return 0;
}

/* A two-valued string key of a task: the second value sets flag. */
static int task_flag(struct parser *p, const char *key, const char *s,
		     const char *off, const char *on, unsigned int flag)
{
	if (strcmp(s, off) && strcmp(s, on))
		return error_at(here(p), "%s \"%s\": expected \"%s\" or \"%s\"",
				key, s, off, on);
	if (!strcmp(s, on))
		p->cfg->task[p->cfg->nr_tasks - 1].args.flags |= flag;
	return 0;
}

static int set_string(struct parser *p, enum key key, const char *s)
{
	char *name;

	switch (key) {
	case K_PLUGIN:
		if (!rt_policy_named(s))
			return error_at(here(p),
					"plugin \"%s\": expected fp, edf, hsf-fp, hsf-edf, hsf-fp-edf, hsf-edf-fp, partitioned-fp, partitioned-edf, global-fp, global-edf or semi-partitioned-edf",
					s);
		snprintf(p->cfg->plugin, sizeof(p->cfg->plugin), "%s", s);
		return 0;
	case K_UNIT:
		if (strcmp(s, "us") && strcmp(s, "ms"))
			return error_at(here(p),
					"unit \"%s\": expected \"us\" or \"ms\"",
					s);
		p->unit_ms = !strcmp(s, "ms");
		return 0;
	case K_OVERRUN:
		return task_flag(p, "overrun", s, "throttle", "signal",
				 RTSCHED_OVERRUN_SIGNAL);
	case K_RELEASE:
		return task_flag(p, "release", s, "periodic", "sporadic",
				 RTSCHED_SPORADIC);
	case K_ASSIGNMENT:
		if (strcmp(s, "first-fit") && strcmp(s, "worst-fit"))
			return error_at(here(p),
					"assignment \"%s\": expected \"first-fit\" or \"worst-fit\"",
					s);
		p->cfg->worst_fit = !strcmp(s, "worst-fit");
		return 0;
	default:
		name = p->section == SERVER ?
		       p->cfg->server[p->cfg->nr_servers - 1].args.name :
		       p->cfg->task[p->cfg->nr_tasks - 1].args.name;
		if (strlen(s) >= RTSCHED_NAME_LEN)
			return error_at(here(p), "name \"%s\" is longer than 15",
					s);
		strcpy(name, s);
		return 0;
	}
}

/* One key = value of the current table; str is NULL for a number. */
static int set_key(struct parser *p, const char *key, const char *str,
		   long long num)
{
	unsigned int *seen = p->section == TOP ? &p->top_seen : &p->seen;
	int i;

	for (i = 0; i < NR_KEYS; i++)
		if (keys[i].section == p->section && !strcmp(keys[i].name, key))
			break;
	if (i == NR_KEYS)
		return error_at(here(p), "unknown key \"%s\"", key);
	if (*seen & (1U << i))
		return error_at(here(p), "key \"%s\" given twice", key);
	*seen |= 1U << i;
	if (keys[i].is_string != (str != NULL))
		return error_at(here(p), keys[i].is_string ?
				"\"%s\" must be a string" :
				"\"%s\" must be an integer", key);
	if (str)
		return set_string(p, keys[i].key, str);
	if (num < 0 && keys[i].key != K_ID && keys[i].key != K_SERVER &&
	    keys[i].key != K_PRIORITY)
		return error_at(here(p), "\"%s\" must not be negative", key);
	if (num > MAX_VALUE || num < -MAX_VALUE)
		return error_at(here(p), "\"%s\" is too large", key);
	return set_number(p, keys[i].key, num);
}

static int missing_keys(enum section section, unsigned int seen,
			const char *where)
{
	int i;

	for (i = 0; i < NR_KEYS; i++)
		if (keys[i].section == section && keys[i].required &&
		    !(seen & (1U << i)))
			return error_at(where, "missing key \"%s\"",
					keys[i].name);
	return 0;
}

/* Close the current table: required keys, defaults. */
static int end_table(struct parser *p)
{
	struct rt_config_task *t;
	int err;

	if (p->section == TOP)
		return 0;
	err = missing_keys(p->section, p->seen,
			   p->section == SERVER ?
			   p->cfg->server[p->cfg->nr_servers - 1].where :
			   p->cfg->task[p->cfg->nr_tasks - 1].where);
	if (err)
		return err;
	if (p->section == SERVER) {
		/* Priority only matters to fp servers: the plugin, maybe
		 * not read yet (JSON), decides in finish().
		 */
		if (!key_seen(p->seen, SERVER, K_PRIORITY))
			p->cfg->server[p->cfg->nr_servers - 1].args.prio =
				RTS_NONE;
		return 0;
	}
	t = &p->cfg->task[p->cfg->nr_tasks - 1];
	if (!key_seen(p->seen, TASK, K_DEADLINE))
		t->args.deadline_us = t->args.period_us;
	return 0;
}

static int begin_table(struct parser *p, enum section section)
{
	struct rt_config *cfg = p->cfg;
	char *where;
	int err = end_table(p);

	if (err)
		return err;
	if (section == SERVER) {
		if (cfg->nr_servers == RTS_MAX_SERVERS)
			return error_at(here(p), "more than %d servers", RTS_MAX_SERVERS);
		memset(&cfg->server[cfg->nr_servers], 0,
		       sizeof(cfg->server[0]));
		where = cfg->server[cfg->nr_servers++].where;
	} else {
		if (cfg->nr_tasks == RTS_MAX_TASKS)
			return error_at(here(p), "more than %d tasks", RTS_MAX_TASKS);
		memset(&cfg->task[cfg->nr_tasks], 0, sizeof(cfg->task[0]));
		cfg->task[cfg->nr_tasks].args.server = RTSCHED_NO_SERVER;
		cfg->task[cfg->nr_tasks].args.cpu = RTSCHED_ANY_CPU;
		where = cfg->task[cfg->nr_tasks++].where;
	}
	snprintf(where, sizeof(cfg->task[0].where), "%s", here(p));
	p->section = section;
	p->seen = 0;
	return 0;
}

/* Whole-file rules, once every table is read. */
static int finish(struct parser *p)
{
	struct rt_config *cfg = p->cfg;
	const struct rts_policy *policy = rt_policy_named(cfg->plugin);
	int hsf = policy && policy->has_servers;
	int multicore = policy &&
			(policy->per_cpu || policy->global || policy->split);
	unsigned int scale = p->unit_ms ? 1000 : 1;
	const char *why;
	int err, i, j;

	err = end_table(p);
	if (!err)
		err = missing_keys(TOP, p->top_seen, p->name);
	if (err)
		return err;
	if (multicore && !key_seen(p->top_seen, TOP, K_CPUS))
		return error_at(p->name, "missing key \"cpus\"");
	if (!multicore && key_seen(p->top_seen, TOP, K_CPUS))
		return error_at(p->name, "\"cpus\" is for the multicore plugins only");
	if (!policy->per_cpu && key_seen(p->top_seen, TOP, K_ASSIGNMENT))
		return error_at(p->name, "\"assignment\" is for the partitioned plugins only");
	if (multicore && (cfg->cpus < 1 || cfg->cpus > RT_CONFIG_MAX_CPUS))
		return error_at(p->name, "cpus %d: expected 1..%d", cfg->cpus,
				RT_CONFIG_MAX_CPUS);
	if (!multicore)
		cfg->cpus = 1;
	if (cfg->overhead_us > RT_CONFIG_MAX_OVERHEAD_US)
		return error_at(p->name, "overhead_us %lld: expected 0..%d",
				cfg->overhead_us, RT_CONFIG_MAX_OVERHEAD_US);
	if (cfg->nr_servers && !hsf)
		return error_at(cfg->server[0].where,
				"servers need a hierarchical plugin (hsf-*), not \"%s\"",
				cfg->plugin);
	for (i = 0; i < cfg->nr_servers; i++) {
		struct rtsched_server_args *a = &cfg->server[i].args;
		struct rts_server_params sp;

		if (a->prio == RTS_NONE && !policy->servers_by_deadline)
			return error_at(cfg->server[i].where,
					"missing key \"priority\"");
		if (a->prio == RTS_NONE)
			a->prio = 0;

		a->period_us *= scale;
		a->budget_us *= scale;
		rt_server_params(&sp, a);
		if (rts_check_server_values(&sp, &why))
			return error_at(cfg->server[i].where, "%s", why);
		for (j = 0; j < i; j++)
			if (cfg->server[j].args.id == a->id)
				return error_at(cfg->server[i].where,
						"duplicate server id");
	}
	for (i = 0; i < cfg->nr_tasks; i++) {
		struct rtsched_task_args *a = &cfg->task[i].args;
		struct rts_task_params tp;

		a->period_us *= scale;
		a->wcet_us *= scale;
		a->deadline_us *= scale;
		a->offset_us *= scale;
		rt_task_params(&tp, a);
		if (rts_check_task_values(&tp, &why))
			return error_at(cfg->task[i].where, "%s", why);
		if (hsf != (a->server != RTSCHED_NO_SERVER))
			return error_at(cfg->task[i].where, "%s", hsf ?
					"tasks need \"server\" in a hierarchical plugin" :
					"\"server\" is for hierarchical plugins (hsf-*) only");
		if (a->cpu != RTSCHED_ANY_CPU && !policy->per_cpu)
			return error_at(cfg->task[i].where,
					"\"cpu\" is for the partitioned plugins only");
		if (a->cpu != RTSCHED_ANY_CPU && (a->cpu < 0 || a->cpu >= cfg->cpus))
			return error_at(cfg->task[i].where,
					"cpu %d: expected 0..%d", a->cpu,
					cfg->cpus - 1);
		for (j = 0; hsf && j < cfg->nr_servers; j++)
			if (cfg->server[j].args.id == a->server)
				break;
		if (hsf && j == cfg->nr_servers)
			return error_at(cfg->task[i].where, "unknown server");
		for (j = 0; j < i; j++)
			if (cfg->task[j].args.id == a->id)
				return error_at(cfg->task[i].where,
						"duplicate task id");
	}
	return 0;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Only a comment or nothing may follow. */
static int line_end(struct parser *p, const char *s)
{
	s = skip_space(s);
	if (*s && *s != '#')
		return error_at(here(p), "unexpected text \"%s\"", s);
	return 0;
}

static int toml_table(struct parser *p, const char *s)
{
	const char *end = strstr(s, "]]");
	char name[16];
	size_t n;

	if (strncmp(s, "[[", 2) || !end)
		return error_at(here(p), "only [[server]] and [[task]] tables are supported");
	n = end - (s + 2);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, s + 2, n);
	name[n] = '\0';
	if (strcmp(name, "server") && strcmp(name, "task"))
		return error_at(here(p), "unknown table [[%s]]", name);
	if (line_end(p, end + 2))
		return -EINVAL;
	return begin_table(p, !strcmp(name, "server") ? SERVER : TASK);
}

static int toml_string(struct parser *p, const char *s, char *out,
		       size_t size, const char **rest)
{
	size_t n = 0;

	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\') {
			s++;
			if (*s != '"' && *s != '\\')
				return error_at(here(p),
						"unsupported escape in string");
		}
		if (n + 1 < size)
			out[n++] = *s;
	}
	if (*s != '"')
		return error_at(here(p), "unterminated string");
	out[n] = '\0';
	*rest = s + 1;
	return 0;
}

static int toml_integer(struct parser *p, const char *s, long long *out,
			const char **rest)
{
	int neg = *s == '-';
	long long v = 0;
	int digits = 0;

	if (*s == '-' || *s == '+')
		s++;
	for (; isdigit((unsigned char)*s) || (*s == '_' && digits); s++) {
		if (*s == '_')
			continue;
		if (v > MAX_VALUE)
			return error_at(here(p), "integer too large");
		v = v * 10 + (*s - '0');
		digits++;
	}
	if (!digits)
		return error_at(here(p), "expected an integer or a \"string\"");
	*out = neg ? -v : v;
	*rest = s;
	return 0;
}

static int toml_line(struct parser *p, const char *s)
{
	char key[32], str[64];
	const char *start;
	long long num = 0;
	int is_string;
	size_t n;
	int err;

	s = skip_space(s);
	if (!*s || *s == '#')
		return 0;
	if (*s == '[')
		return toml_table(p, s);
	for (start = s; isalnum((unsigned char)*s) || *s == '_' || *s == '-';)
		s++;
	n = s - start;
	if (!n || n >= sizeof(key))
		return error_at(here(p), "expected key = value");
	memcpy(key, start, n);
	key[n] = '\0';
	s = skip_space(s);
	if (*s != '=')
		return error_at(here(p), "expected '=' after \"%s\"", key);
	s = skip_space(s + 1);
	is_string = *s == '"';
	if (is_string)
		err = toml_string(p, s, str, sizeof(str), &s);
	else
		err = toml_integer(p, s, &num, &s);
	if (!err)
		err = line_end(p, s);
	if (!err)
		err = set_key(p, key, is_string ? str : NULL, num);
	return err;
}

static int parse_toml(struct parser *p, const char *text)
{
	char line[512];
	const char *eol;
	int lineno = 0;
	size_t n;
	int err;

	while (*text) {
		eol = strchr(text, '\n');
		n = eol ? (size_t)(eol - text) : strlen(text);
		p->line = ++lineno;
		if (n >= sizeof(line))
			return error_at(here(p), "line too long");
		memcpy(line, text, n);
		line[n] = '\0';
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		err = toml_line(p, line);
		if (err)
			return err;
		text += n + (eol != NULL);
	}
	return 0;
}

static int json_table(struct parser *p, json_t *obj)
{
	const char *key;
	json_t *v;
	int err;

	if (!json_is_object(obj))
		return error_at(here(p), "expected an object");
	json_object_foreach(obj, key, v) {
		if (json_is_string(v))
			err = set_key(p, key, json_string_value(v), 0);
		else if (json_is_integer(v))
			err = set_key(p, key, NULL, json_integer_value(v));
		else
			err = error_at(here(p),
				       "\"%s\" must be an integer or a string",
				       key);
		if (err)
			return err;
	}
	return 0;
}

static int json_tables(struct parser *p, const char *name, json_t *list)
{
	enum section section = !strcmp(name, "server") ? SERVER : TASK;
	size_t i;
	int err;

	if (!json_is_array(list))
		return error_at(p->name, "\"%s\" must be an array", name);
	for (i = 0; i < json_array_size(list); i++) {
		snprintf(p->where, sizeof(p->where), "%s: %s[%zu]", p->name,
			 name, i);
		err = begin_table(p, section);
		if (!err)
			err = json_table(p, json_array_get(list, i));
		if (err)
			return err;
	}
	return 0;
}

static int parse_json(struct parser *p, const char *text)
{
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	const char *key;
	json_t *v;
	int err = 0;

	if (!root)
		return rt_fail(EINVAL, "%s:%d: %s", p->name, jerr.line,
			       jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return error_at(p->name, "expected a JSON object");
	}
	json_object_foreach(root, key, v) {
		snprintf(p->where, sizeof(p->where), "%s", p->name);
		if (!strcmp(key, "server") || !strcmp(key, "task")) {
			err = json_tables(p, key, v);
		} else {
			err = end_table(p);
			p->section = TOP;
			if (err)
				break;
			err = json_is_string(v) ?
			      set_key(p, key, json_string_value(v), 0) :
			      set_key(p, key, NULL, json_is_integer(v) ?
				      json_integer_value(v) : 0);
		}
		if (err)
			break;
	}
	json_decref(root);
	return err;
}

int rt_config_parse(const char *name, const char *text,
		    struct rt_config *cfg)
{
	struct parser p = { .cfg = cfg, .name = name };
	int err;

	/*
	 * The counts and settings only: each server and task is cleared as it
	 * is added.  All 320 of them are 40 kB, which cost rtctl load page
	 * faults and zeroing at boot (bench/rt_boot).
	 */
	memset(cfg, 0, offsetof(struct rt_config, server));
	snprintf(p.where, sizeof(p.where), "%s", name);
	text += strspn(text, " \t\r\n");
	err = *text == '{' ? parse_json(&p, text) : parse_toml(&p, text);
	return err ? err : finish(&p);
}

int rt_config_load(const char *path, struct rt_config *cfg)
{
	FILE *f = fopen(path, "r");
	char *text;
	long size;
	int err;

	if (!f)
		return rt_fail(errno, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = size >= 0 ? malloc(size + 1) : NULL;
	if (!text || fread(text, 1, size, f) != (size_t)size) {
		fclose(f);
		free(text);
		return rt_fail(EIO, "%s: cannot read", path);
	}
	fclose(f);
	text[size] = '\0';
	err = rt_config_parse(path, text, cfg);
	free(text);
	return err;
}
