// SPDX-License-Identifier: GPL-2.0
/* rtsched plugin: hsf-fp (see docs/rt-formats.md). */
#include "rtsched.h"

RTSCHED_PLUGIN(rts_policy_hsf_fp);
MODULE_DESCRIPTION("rtsched hsf-fp scheduling plugin");
MODULE_LICENSE("GPL");
