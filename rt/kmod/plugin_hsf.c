// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched plugin: hierarchical scheduling (see docs/rt-formats.md), one
 * module for the four combinations: servers=fp|edf chooses the servers by
 * priority or by deadline, tasks=fp|edf the tasks inside the active server.
 * The policy registered is named after them: hsf-fp, hsf-edf, hsf-fp-edf
 * or hsf-edf-fp.
 */
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "rtsched.h"

static char *servers = "fp";
module_param(servers, charp, 0444);
MODULE_PARM_DESC(servers, "order of the servers: fp (priority) or edf (deadline)");

static char *tasks = "fp";
module_param(tasks, charp, 0444);
MODULE_PARM_DESC(tasks, "order of the tasks in a server: fp or edf");

static const struct rts_policy *hsf_policy;

/* 0 for fp, 1 for edf, -EINVAL otherwise. */
static int hsf_by_deadline(const char *param, const char *value)
{
	if (!strcmp(value, "fp"))
		return 0;
	if (!strcmp(value, "edf"))
		return 1;
	pr_err("rtsched_hsf: %s=%s: expected fp or edf\n", param, value);
	return -EINVAL;
}

static int __init hsf_init(void)
{
	int by_servers = hsf_by_deadline("servers", servers);
	int by_tasks = hsf_by_deadline("tasks", tasks);

	if (by_servers < 0 || by_tasks < 0)
		return -EINVAL;
	hsf_policy = &rts_policy_hsf[by_servers][by_tasks];
	return rtsched_register_plugin(hsf_policy);
}
module_init(hsf_init);

static void __exit hsf_exit(void)
{
	rtsched_unregister_plugin(hsf_policy);
}
module_exit(hsf_exit);

MODULE_DESCRIPTION("rtsched hierarchical scheduling plugin (fp or edf at either level)");
MODULE_LICENSE("GPL");
