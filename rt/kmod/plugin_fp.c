// SPDX-License-Identifier: GPL-2.0
/* rtsched plugin: fp (see docs/rt-formats.md). */
#include "rtsched.h"

RTSCHED_PLUGIN(rts_policy_fp);
MODULE_DESCRIPTION("rtsched fp scheduling plugin");
MODULE_LICENSE("GPL");
