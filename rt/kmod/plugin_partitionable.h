/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole of a plugin module with a partitioned variant, included by its
 * one source file after it names both policies: RTSCHED_ONE_CPU, and
 * RTSCHED_PER_CPU, which partitioned=1 registers instead (one scheduler
 * per real-time CPU, see rtsched's rt_cpus).
 */
#ifndef RTSCHED_PLUGIN_PARTITIONABLE_H
#define RTSCHED_PLUGIN_PARTITIONABLE_H

#include <linux/moduleparam.h>

#include "rtsched.h"

static bool partitioned;
module_param(partitioned, bool, 0444);
MODULE_PARM_DESC(partitioned, "one scheduler per real-time CPU");

static const struct rts_policy *rtsched_plugin_policy(void)
{
	return partitioned ? &RTSCHED_PER_CPU : &RTSCHED_ONE_CPU;
}

static int __init rtsched_plugin_init(void)
{
	return rtsched_register_plugin(rtsched_plugin_policy());
}
module_init(rtsched_plugin_init);

static void __exit rtsched_plugin_exit(void)
{
	rtsched_unregister_plugin(rtsched_plugin_policy());
}
module_exit(rtsched_plugin_exit);

#endif /* RTSCHED_PLUGIN_PARTITIONABLE_H */
