// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: ib_device_ops.driver_id and RDMA_DRIVER_RXE, by which a
 * virt-DMA device is known to be rxe
 */
#include <rdma/ib_verbs.h>

int kp_conftest(struct ib_device *dev);
int kp_conftest(struct ib_device *dev)
{
	return dev->ops.driver_id == RDMA_DRIVER_RXE;
}
