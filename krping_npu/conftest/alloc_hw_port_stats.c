// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: a port's counters from alloc_hw_port_stats() (5.14); before,
 * alloc_hw_stats(), port 0 the device's
 */
#include <rdma/ib_verbs.h>

struct rdma_hw_stats *kp_conftest(struct ib_device *dev);
struct rdma_hw_stats *kp_conftest(struct ib_device *dev)
{
	return dev->ops.alloc_hw_port_stats(dev, 1);
}
