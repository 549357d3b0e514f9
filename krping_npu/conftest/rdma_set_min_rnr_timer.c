// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: rdma_set_min_rnr_timer() (5.13): the RNR NAK timer of a
 * connection's QP, applied by the CM when it moves the QP to RTR
 */
#include <rdma/rdma_cm.h>

int kp_conftest(struct rdma_cm_id *id);
int kp_conftest(struct rdma_cm_id *id)
{
	return rdma_set_min_rnr_timer(id, IB_RNR_TIMER_000_64);
}
