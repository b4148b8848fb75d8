// SPDX-License-Identifier: GPL-2.0
/* rtsched plugin: edf (see docs/rt-formats.md). */
#include "rtsched.h"

RTSCHED_PLUGIN(rts_policy_edf);
MODULE_DESCRIPTION("rtsched edf scheduling plugin");
MODULE_LICENSE("GPL");
