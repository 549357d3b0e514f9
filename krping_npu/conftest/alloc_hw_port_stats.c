// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: a port's counters from alloc_hw_port_stats(), named by
 * rdma_stat_desc and freed by rdma_free_hw_stats_struct() (5.14); before,
 * alloc_hw_stats() with plain names, freed by kfree()
 */
#include <rdma/ib_verbs.h>

const char *kp_conftest(struct ib_device *dev);
const char *kp_conftest(struct ib_device *dev)
{
	struct rdma_hw_stats *s = dev->ops.alloc_hw_port_stats(dev, 1);
	const char *name = s->descs[0].name;

	rdma_free_hw_stats_struct(s);
	return name;
}
