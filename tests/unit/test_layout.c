// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout of both peer_memory_client ABIs (peer_client/peer_mem_abi.h), as
 * this compiler lays them out: every field's offset and both sizes.  The
 * header also asserts them at compile time; this states them once more in
 * numbers a reader can check against MOFED's and YunScale's headers.
 */
#include "kt.h"
#include "../../proc/kp_compat.h"
#include "../../peer_client/peer_mem_abi.h"

#define OFF(T, f)	offsetof(struct T, f)
#define YOFF(f)		offsetof(struct peer_memory_client_yunscale, mofed.f)

int main(void)
{
	static const struct { const char *f; size_t mofed, yun, want; } rows[] = {
		{ "name", OFF(peer_memory_client_mofed, name),
		  YOFF(name), 0 },
		{ "version", OFF(peer_memory_client_mofed, version),
		  YOFF(version), 64 },
		{ "acquire", OFF(peer_memory_client_mofed, acquire),
		  YOFF(acquire), 80 },
		{ "get_pages", OFF(peer_memory_client_mofed, get_pages),
		  YOFF(get_pages), 88 },
		{ "dma_map", OFF(peer_memory_client_mofed, dma_map),
		  YOFF(dma_map), 96 },
		{ "dma_unmap", OFF(peer_memory_client_mofed, dma_unmap),
		  YOFF(dma_unmap), 104 },
		{ "put_pages", OFF(peer_memory_client_mofed, put_pages),
		  YOFF(put_pages), 112 },
		{ "get_page_size", OFF(peer_memory_client_mofed, get_page_size),
		  YOFF(get_page_size), 120 },
		{ "release", OFF(peer_memory_client_mofed, release),
		  YOFF(release), 128 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		KT_CHECK(rows[i].mofed == rows[i].want, "mofed %s at %zu, want %zu",
			 rows[i].f, rows[i].mofed, rows[i].want);
		KT_CHECK(rows[i].yun == rows[i].want, "yunscale %s at %zu, want %zu",
			 rows[i].f, rows[i].yun, rows[i].want);
	}
	KT_CHECK(OFF(peer_memory_client_yunscale, get_context_private_data) == 136,
		 "get_context_private_data at 136");
	KT_CHECK(OFF(peer_memory_client_yunscale, put_context_private_data) == 144,
		 "put_context_private_data at 144");
	KT_CHECK(sizeof(struct peer_memory_client_mofed) == 136, "mofed size %zu",
		 sizeof(struct peer_memory_client_mofed));
	KT_CHECK(sizeof(struct peer_memory_client_yunscale) == 152,
		 "yunscale size %zu", sizeof(struct peer_memory_client_yunscale));
	KT_CHECK(sizeof(struct peer_memory_client_yunscale) ==
		 sizeof(struct peer_memory_client_mofed) + 2 * sizeof(void *),
		 "152 = 136 + 16");
	KT_CHECK(IB_PEER_MEMORY_NAME_MAX == 64 && IB_PEER_MEMORY_VER_MAX == 16,
		 "name and version lengths");
	return kt_done();
}
