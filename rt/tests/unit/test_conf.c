// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the configuration reader: the shipped examples, TOML and
 * JSON giving the same result, and line-numbered errors for bad input.
 * Usage: test_conf EXAMPLES_DIR
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"
#include "rt_internal.h"
#include "unit.h"

static struct rt_config cfg, other;
static const char *examples;

static int load_example(const char *file, struct rt_config *c)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", examples, file);
	return rt_config_load(path, c);
}

static void test_table3(void)
{
	int i;

	CHECK(load_example("table3.toml", &cfg) == 0);
	CHECK(strcmp(cfg.plugin, "hsf-fp") == 0);
	CHECK(cfg.nr_servers == 3 && cfg.nr_tasks == 4);
	CHECK(cfg.server[0].args.period_us == 12000);
	CHECK(cfg.server[0].args.budget_us == 4000);
	CHECK(cfg.server[1].args.period_us == 20000 &&
	      cfg.server[1].args.prio == 1);
	CHECK(cfg.server[2].args.period_us == 28000 &&
	      cfg.server[2].args.budget_us == 8000);
	CHECK(strcmp(cfg.server[2].args.name, "Server2") == 0);
	CHECK(cfg.task[0].args.deadline_us == 24000);
	CHECK(cfg.task[0].jobs == 50);
	CHECK(cfg.task[3].args.server == 2);
	CHECK(load_example("table3.json", &other) == 0);
	for (i = 0; i < 3; i++)
		CHECK(memcmp(&cfg.server[i].args, &other.server[i].args,
			     sizeof(cfg.server[i].args)) == 0);
	CHECK(cfg.nr_tasks == other.nr_tasks);
	CHECK(memcmp(&cfg.task[0].args, &other.task[0].args,
		     sizeof(cfg.task[0].args)) == 0);
	CHECK(memcmp(&cfg.task[3].args, &other.task[3].args,
		     sizeof(cfg.task[3].args)) == 0);
}

/*
 * Only the counts are cleared before parsing (the entries as they are
 * added): a configuration read over another, or over garbage, is the same
 * as one read into zeroed memory.
 */
static void test_read_over_garbage(void)
{
	int i;

	memset(&other, 0, sizeof(other));
	CHECK(load_example("table3.toml", &other) == 0);
	memset(&cfg, 0xa5, sizeof(cfg));
	CHECK(load_example("table3.toml", &cfg) == 0);
	CHECK(memcmp(&cfg, &other, offsetof(struct rt_config, server)) == 0);
	for (i = 0; i < cfg.nr_servers; i++)
		CHECK(memcmp(&cfg.server[i], &other.server[i],
			     sizeof(cfg.server[i])) == 0);
	for (i = 0; i < cfg.nr_tasks; i++)
		CHECK(memcmp(&cfg.task[i], &other.task[i],
			     sizeof(cfg.task[i])) == 0);
	CHECK(strstr(cfg.task[3].where, "table3.toml:") != NULL);
}

static void test_other_examples(void)
{
	CHECK(load_example("fp.toml", &cfg) == 0);
	CHECK(cfg.nr_tasks == 3 && cfg.task[2].args.server == -1);
	CHECK(load_example("edf.toml", &cfg) == 0);
	CHECK(cfg.task[1].args.wcet_us == 4000);
	CHECK(load_example("partitioned.toml", &cfg) == 0);
	CHECK(cfg.cpus == 2 && !cfg.worst_fit && cfg.task[0].args.cpu == 1 &&
	      cfg.task[1].args.cpu == RTSCHED_ANY_CPU);
	CHECK(load_example("hsf-edf.toml", &cfg) == 0);
	CHECK(strcmp(cfg.plugin, "hsf-edf") == 0 && cfg.nr_servers == 2);
	CHECK(cfg.server[1].args.budget_us == 7000 &&
	      cfg.task[2].args.deadline_us == 50000);
}

/* A server's priority is needed where servers go by priority only. */
static void test_server_priority(void)
{
	const char *edf = "plugin = \"hsf-edf-fp\"\n"
			  "[[server]]\nid = 0\nperiod = 1000\nbudget = 4\n";

	CHECK(rt_config_parse("t.toml", edf, &cfg) == 0);
	CHECK(cfg.server[0].args.prio == 0);
	CHECK(rt_config_parse("t.json",
			      "{\"server\": [{\"id\": 0, \"period\": 1000, \"budget\": 4}],"
			      " \"plugin\": \"hsf-fp-edf\"}", &cfg) == -22);
	CHECK(strcmp(rt_last_error(), "t.json: server[0]: missing key \"priority\"") == 0);
}

static void test_units_and_syntax(void)
{
	const char *text =
		"# comment\n"
		"plugin = \"fp\"   # trailing comment\n"
		"\n"
		"[[task]]\n"
		"  id = 3\n"
		"period = 1_000\r\n"
		"wcet = 250\n"
		"deadline = 900\n"
		"offset = 5\n"
		"overrun = \"signal\"\n"
		"release = \"sporadic\"\n"
		"name = \"a \\\"q\\\"\"\n";

	CHECK(rt_config_parse("t.toml", text, &cfg) == 0);
	CHECK(cfg.task[0].args.period_us == 1000);
	CHECK(cfg.task[0].args.deadline_us == 900);
	CHECK(cfg.task[0].args.offset_us == 5);
	CHECK(strcmp(cfg.task[0].args.name, "a \"q\"") == 0);
	CHECK(cfg.task[0].args.flags ==
	      (RTSCHED_OVERRUN_SIGNAL | RTSCHED_SPORADIC));
}

/*
 * overhead_us, in microseconds whatever the unit: every job is charged it,
 * and a split task's second part once more; the first part executes its
 * C' less the overhead, due C' after the release (rtctl check prints it).
 */
static void test_overhead(void)
{
	char why[200];

	CHECK(load_example("semi.toml", &cfg) == 0);
	CHECK(cfg.overhead_us == 0);
	CHECK(rt_config_admit(&cfg, why, sizeof(why)) == 1);
	CHECK(cfg.task[2].args.split_us == 4000);
	CHECK(cfg.task[2].args.split_deadline_us == 4000);
	CHECK(rt_config_parse("o.toml",
			      "overhead_us = 50\nplugin = \"semi-partitioned-edf\"\n"
			      "unit = \"ms\"\ncpus = 2\n"
			      "[[task]]\nid = 0\nperiod = 10\nwcet = 6\n"
			      "[[task]]\nid = 1\nperiod = 10\nwcet = 6\n"
			      "[[task]]\nid = 2\nperiod = 10\nwcet = 6\n", &cfg) == 0);
	CHECK(cfg.overhead_us == 50);
	CHECK(cfg.task[0].args.wcet_us == 6000);	/* the kernel's wcet */
	CHECK(rt_config_admit(&cfg, why, sizeof(why)) == 1);
	/* CPU 0: 6.05 + C' <= 10, C' = 3.95 ms charged, 3.9 executed. */
	CHECK(cfg.task[2].args.cpu == 0 && cfg.task[2].args.split_cpu == 1);
	CHECK(cfg.task[2].args.split_us == 3900);
	CHECK(cfg.task[2].args.split_deadline_us == 3950);
	/* Charged, a task whose wcet fills its deadline fits no CPU. */
	CHECK(rt_config_parse("o.toml",
			      "overhead_us = 1\nplugin = \"fp\"\n"
			      "[[task]]\nid = 0\nperiod = 1000\nwcet = 1000\n", &cfg) == 0);
	CHECK(rt_config_admit(&cfg, why, sizeof(why)) == 0);
}

/* Each bad input must fail with exactly this message. */
static void expect_error(const char *text, const char *message)
{
	int err = rt_config_parse("bad.toml", text, &cfg);

	CHECK(err == -22);
	if (strcmp(rt_last_error(), message)) {
		printf("  got      \"%s\"\n  expected \"%s\"\n",
		       rt_last_error(), message);
		CHECK(0);
	}
}

#define TASK "[[task]]\nid = 1\nperiod = 1000\nwcet = 2\n"
#define SERVER "[[server]]\nid = 0\nperiod = 1000\nbudget = 4\npriority = 0\n"

static void test_errors(void)
{
	expect_error("plugin = \"fp\"\nfoo = 1\n",
		     "bad.toml:2: unknown key \"foo\"");
	expect_error("plugin = \"rr\"\n",
		     "bad.toml:1: plugin \"rr\": expected fp, edf, hsf-fp, hsf-edf, hsf-fp-edf, hsf-edf-fp, partitioned-fp, partitioned-edf, global-fp, global-edf or semi-partitioned-edf");
	expect_error("unit = \"ms\"\n", "bad.toml: missing key \"plugin\"");
	expect_error("plugin = \"fp\"\nunit = \"s\"\n",
		     "bad.toml:2: unit \"s\": expected \"us\" or \"ms\"");
	expect_error("plugin = \"fp\"\n[[task]]\nid = 1\nperiod = 10\n",
		     "bad.toml:2: missing key \"wcet\"");
	expect_error("plugin = \"fp\"\n" TASK "period = 5\n",
		     "bad.toml:6: key \"period\" given twice");
	expect_error("plugin = \"fp\"\n[[task]]\nid = 1\nperiod = 0\nwcet = 2\n",
		     "bad.toml:2: task period must be > 0");
	expect_error("plugin = \"fp\"\n[[task]]\nid = 1\nperiod = -3\nwcet = 2\n",
		     "bad.toml:4: \"period\" must not be negative");
	expect_error("plugin = \"fp\"\n[[task]]\nid = 1\nperiod = 99\nwcet = 2\n",
		     "bad.toml:2: task period must be >= 100 us");
	expect_error("plugin = \"hsf-fp\"\n[[server]]\nid = 0\nperiod = 1\nbudget = 1\npriority = 0\n",
		     "bad.toml:2: server period must be >= 100 us");
	expect_error("plugin = \"fp\"\n" TASK "release = \"daily\"\n",
		     "bad.toml:6: release \"daily\": expected \"periodic\" or \"sporadic\"");
	expect_error("plugin = \"fp\"\n" TASK "overrun = \"kill\"\n",
		     "bad.toml:6: overrun \"kill\": expected \"throttle\" or \"signal\"");
	expect_error("plugin = \"fp\"\n" TASK "deadline = 1\n",
		     "bad.toml:2: wcet must be > 0 and <= deadline");
	expect_error("plugin = \"fp\"\n" TASK "priority = 100\n",
		     "bad.toml:2: priority out of range 0..99");
	expect_error("plugin = \"fp\"\n" TASK TASK,
		     "bad.toml:6: duplicate task id");
	expect_error("plugin = \"fp\"\n" TASK "server = 0\n",
		     "bad.toml:2: \"server\" is for hierarchical plugins (hsf-*) only");
	expect_error("plugin = \"fp\"\n" SERVER,
		     "bad.toml:2: servers need a hierarchical plugin (hsf-*), not \"fp\"");
	expect_error("plugin = \"hsf-fp\"\n" SERVER "[[server]]\nid = 1\nperiod = 1000\nbudget = 1001\npriority = 1\n",
		     "bad.toml:7: server budget must be > 0 and <= period");
	expect_error("plugin = \"hsf-fp\"\n" SERVER SERVER,
		     "bad.toml:7: duplicate server id");
	expect_error("plugin = \"hsf-fp\"\n" SERVER TASK "server = 5\n",
		     "bad.toml:7: unknown server");
	expect_error("plugin = \"hsf-fp\"\n" SERVER TASK,
		     "bad.toml:7: tasks need \"server\" in a hierarchical plugin");
	expect_error("plugin = \"partitioned-fp\"\n" TASK,
		     "bad.toml: missing key \"cpus\"");
	expect_error("plugin = \"fp\"\ncpus = 2\n" TASK,
		     "bad.toml: \"cpus\" is for the multicore plugins only");
	expect_error("plugin = \"global-fp\"\n" TASK,
		     "bad.toml: missing key \"cpus\"");
	expect_error("plugin = \"global-edf\"\ncpus = 2\nassignment = \"worst-fit\"\n" TASK,
		     "bad.toml: \"assignment\" is for the partitioned plugins only");
	expect_error("plugin = \"global-fp\"\ncpus = 2\n" TASK "cpu = 0\n",
		     "bad.toml:3: \"cpu\" is for the partitioned plugins only");
	expect_error("plugin = \"partitioned-edf\"\ncpus = 2\n" TASK "cpu = 2\n",
		     "bad.toml:3: cpu 2: expected 0..1");
	expect_error("plugin = \"fp\"\n" TASK "cpu = 0\n",
		     "bad.toml:2: \"cpu\" is for the partitioned plugins only");
	expect_error("plugin = \"partitioned-fp\"\ncpus = 2\nassignment = \"best-fit\"\n",
		     "bad.toml:3: assignment \"best-fit\": expected \"first-fit\" or \"worst-fit\"");
	expect_error("plugin = \"fp\"\noverhead_us = 1000001\n" TASK,
		     "bad.toml: overhead_us 1000001: expected 0..1000000");
	expect_error("plugin = \"fp\"\noverhead_us = -1\n" TASK,
		     "bad.toml:2: \"overhead_us\" must not be negative");
	expect_error("plugin = \"fp\"\n[task]\n",
		     "bad.toml:2: only [[server]] and [[task]] tables are supported");
	expect_error("plugin = \"fp\"\n[[job]]\n",
		     "bad.toml:2: unknown table [[job]]");
	expect_error("plugin = fp\n",
		     "bad.toml:1: expected an integer or a \"string\"");
	expect_error("plugin = \"fp\n", "bad.toml:1: unterminated string");
	expect_error("plugin = \"fp\" x\n",
		     "bad.toml:1: unexpected text \"x\"");
	expect_error("plugin \"fp\"\n",
		     "bad.toml:1: expected '=' after \"plugin\"");
	expect_error("plugin = \"fp\"\n[[task]]\nid = \"one\"\n",
		     "bad.toml:3: \"id\" must be an integer");
	expect_error("{\"plugin\": \"fp\", \"task\": [{\"id\": 1, \"period\": 10, \"wcet\": 2, \"color\": 3}]}",
		     "bad.toml: task[0]: unknown key \"color\"");
	expect_error("{\"plugin\": \"fp\",\n \"task\": [}",
		     "bad.toml:2: unexpected token near '}'");
	expect_error("{\"plugin\": \"fp\", \"task\": [{\"id\": 1, \"period\": 10}]}",
		     "bad.toml: task[0]: missing key \"wcet\"");
}

int main(int argc, char **argv)
{
	examples = argc > 1 ? argv[1] : "examples";
	RUN(test_table3);
	RUN(test_read_over_garbage);
	RUN(test_other_examples);
	RUN(test_units_and_syntax);
	RUN(test_server_priority);
	RUN(test_overhead);
	RUN(test_errors);
	return unit_summary();
}
