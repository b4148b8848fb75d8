// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched plugin: fp, or partitioned-fp with partitioned=1, or global-fp
 * with global=1 (docs/rt-formats.md).
 */
#define RTSCHED_ONE_CPU rts_policy_fp
#define RTSCHED_PER_CPU rts_policy_partitioned_fp
#define RTSCHED_GLOBAL rts_policy_global_fp
#include "plugin_partitionable.h"

MODULE_DESCRIPTION("rtsched fp scheduling plugin");
MODULE_LICENSE("GPL");
