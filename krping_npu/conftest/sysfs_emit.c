// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: sysfs_emit() (5.10; a stack's compat layer may add it) */
#include <linux/sysfs.h>

int kp_conftest(char *buf);
int kp_conftest(char *buf)
{
	return sysfs_emit(buf, "x\n");
}
