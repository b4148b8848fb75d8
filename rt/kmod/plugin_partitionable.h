/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole of a plugin module with multicore variants, included by its
 * one source file after it names its policies: RTSCHED_ONE_CPU;
 * RTSCHED_PER_CPU, which partitioned=1 registers instead (one scheduler
 * per real-time CPU, see rtsched's rt_cpus); RTSCHED_GLOBAL, which
 * global=1 registers (one scheduler over all of them); and, if it names
 * one, RTSCHED_SEMI, which semi=1 registers (one scheduler over all of
 * them, each job on the CPU of its current part: C=D splitting).
 */
#ifndef RTSCHED_PLUGIN_PARTITIONABLE_H
#define RTSCHED_PLUGIN_PARTITIONABLE_H

#include <linux/moduleparam.h>

#include "rtsched.h"

static bool partitioned;
module_param(partitioned, bool, 0444);
MODULE_PARM_DESC(partitioned, "one scheduler per real-time CPU");

static bool global;
module_param(global, bool, 0444);
MODULE_PARM_DESC(global, "one scheduler over all real-time CPUs");

#ifdef RTSCHED_SEMI
static bool semi;
module_param(semi, bool, 0444);
MODULE_PARM_DESC(semi, "semi-partitioned: split tasks over the real-time CPUs");
#else
static const bool semi;
#endif

static const struct rts_policy *rtsched_plugin_policy(void)
{
#ifdef RTSCHED_SEMI
	if (semi)
		return &RTSCHED_SEMI;
#endif
	if (global)
		return &RTSCHED_GLOBAL;
	return partitioned ? &RTSCHED_PER_CPU : &RTSCHED_ONE_CPU;
}

static int __init rtsched_plugin_init(void)
{
	if (partitioned + global + semi > 1) {
		pr_err("%s: partitioned=1, global=1 and semi=1 exclude each other\n",
		       KBUILD_MODNAME);
		return -EINVAL;
	}
	return rtsched_register_plugin(rtsched_plugin_policy());
}
module_init(rtsched_plugin_init);

static void __exit rtsched_plugin_exit(void)
{
	rtsched_unregister_plugin(rtsched_plugin_policy());
}
module_exit(rtsched_plugin_exit);

#endif /* RTSCHED_PLUGIN_PARTITIONABLE_H */
