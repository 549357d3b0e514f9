// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: counters named by struct rdma_stat_desc, some disabled, the
 * struct freed by rdma_free_hw_stats_struct() (5.16); before, plain names
 * and kfree()
 */
#include <rdma/ib_verbs.h>

const char *kp_conftest(struct rdma_hw_stats *s);
const char *kp_conftest(struct rdma_hw_stats *s)
{
	const char *name = test_bit(0, s->is_disabled) ? NULL :
			   s->descs[0].name;

	rdma_free_hw_stats_struct(s);
	return name;
}
