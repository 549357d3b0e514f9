// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: <linux/stdarg.h> (5.15; before it, the compiler's <stdarg.h>) */
#include <linux/stdarg.h>
