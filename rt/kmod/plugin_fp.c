// SPDX-License-Identifier: GPL-2.0
/* rtsched plugin: fp (see docs/rt-formats.md). */
#include "rtsched.h"

RTSCHED_PLUGIN(rts_policy_fp, "rtsched fp scheduling plugin");
