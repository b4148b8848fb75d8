// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched plugin: edf, or partitioned-edf with partitioned=1, global-edf
 * with global=1, semi-partitioned-edf with semi=1 (docs/rt-formats.md).
 */
#define RTSCHED_ONE_CPU rts_policy_edf
#define RTSCHED_PER_CPU rts_policy_partitioned_edf
#define RTSCHED_GLOBAL rts_policy_global_edf
#define RTSCHED_SEMI rts_policy_semi_partitioned_edf
#include "plugin_partitionable.h"

MODULE_DESCRIPTION("rtsched edf scheduling plugin");
MODULE_LICENSE("GPL");
