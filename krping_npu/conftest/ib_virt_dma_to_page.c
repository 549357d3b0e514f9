// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conftest: ib_virt_dma_to_page(), by which the RDMA core and its virt-DMA
 * devices (rxe, siw) turn a DMA address into a struct page: memory that
 * has none (NPU memory behind a BAR) cannot be handed to them
 */
#include <rdma/ib_verbs.h>

struct page *kp_conftest(u64 dma);
struct page *kp_conftest(u64 dma)
{
	return ib_virt_dma_to_page(dma);
}
