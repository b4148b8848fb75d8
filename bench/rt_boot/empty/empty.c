// SPDX-License-Identifier: GPL-2.0
/*
 * The yardstick of bench/rt_boot: a module that does nothing.  Its
 * functions are not __init/__exit on purpose: a module whose code is all in
 * init sections took 5-12 ms to load in the guest instead of 0.7 ms, which
 * would flatter every comparison with it.
 */
#include <linux/module.h>

static int empty_init(void)
{
	return 0;
}
module_init(empty_init);

static void empty_exit(void)
{
}
module_exit(empty_exit);

MODULE_DESCRIPTION("empty module: the cost of loading any module");
MODULE_LICENSE("GPL");
