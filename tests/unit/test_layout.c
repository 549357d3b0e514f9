// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout of both peer_memory_client ABIs (peer_client/peer_mem_abi.h) and
 * of the Ascend HAL's P2P page table (peer_client/ascend_hal_abi.h), as
 * this compiler lays them out: every field's offset and the sizes.  The
 * headers also assert them at compile time; this states them once more in
 * numbers a reader can check against MOFED's, YunScale's and CANN's
 * headers.  Then which page tables the peer client accepts.
 */
#include "kt.h"
#include "../../proc/kp_compat.h"
#include "../../peer_client/peer_mem_abi.h"
#include "../../peer_client/ascend_hal_abi.h"

#define OFF(T, f)	offsetof(struct T, f)
#define YOFF(f)		offsetof(struct peer_memory_client_yunscale, mofed.f)

#define HOFF(f)		offsetof(struct p2p_page_table, f)

static void test_hal_layout(void)
{
	KT_CHECK(sizeof(struct p2p_page_info) == 40, "p2p_page_info size %zu",
		 sizeof(struct p2p_page_info));
	KT_CHECK(offsetof(struct p2p_page_info, pa) == 0, "pa at 0");
	KT_CHECK(offsetof(struct p2p_page_info, reserved) == 8, "reserved at 8");
	KT_CHECK(HOFF(version) == 0, "version at %zu", HOFF(version));
	KT_CHECK(HOFF(page_size) == 8, "page_size at %zu", HOFF(page_size));
	KT_CHECK(sizeof(((struct p2p_page_table *)0)->page_size) == 8,
		 "page_size is a u64");
	KT_CHECK(HOFF(pages_info) == 16, "pages_info at %zu", HOFF(pages_info));
	KT_CHECK(HOFF(page_num) == 24, "page_num at %zu", HOFF(page_num));
	KT_CHECK(HOFF(reserved) == 32, "reserved at %zu", HOFF(reserved));
	KT_CHECK(sizeof(struct p2p_page_table) == 64, "p2p_page_table size %zu",
		 sizeof(struct p2p_page_table));
	KT_CHECK(P2P_GET_PAGE_VERSION == 1, "version 1");
}

static void test_hal_table_ok(void)
{
	static const struct {
		u32 version;
		u64 page_size, page_num, va, len;
		int ok;
		const char *what;
	} t[] = {
		{ 1, 2ull << 20, 3, 0x100000000000ull, 6ull << 20, 1, "3 pages of 2 MiB" },
		{ 1, 4096, 1, 0x1000, 4096, 1, "one 4 KiB page" },
		{ 1, 2ull << 20, 1, 0x100000000000ull, 64, 1, "one 2 MiB page for 64 bytes" },
		{ 1, 2ull << 20, 2, 0x100000000000ull, (3ull << 20) + 1, 1, "3 MiB + 1 in 2 pages" },
		{ 1, 4096, 257, 0x100000000000ull, (1ull << 20) + 1, 1, "1 MiB + 1 in 257 pages" },
		{ 0, 2ull << 20, 3, 0x100000000000ull, 6ull << 20, 0, "version 0" },
		{ 2, 2ull << 20, 3, 0x100000000000ull, 6ull << 20, 0, "version 2" },
		{ 1, 2ull << 20, 2, 0x100000000000ull, 6ull << 20, 0, "a page short" },
		{ 1, 2ull << 20, 4, 0x100000000000ull, 6ull << 20, 0, "a page over" },
		{ 1, 2ull << 20, 2, 0x100000000000ull, 64, 0, "a page over a short length" },
		{ 1, 2ull << 20, 0, 0x100000000000ull, 0, 0, "no pages" },
		{ 1, 2ull << 20, 1, 0x100000000000ull, 0, 0, "a page for no length" },
		{ 1, 3ull << 20, 2, 0x100000000000ull, 6ull << 20, 0, "3 MiB pages" },
		{ 1, 0, 3, 0x100000000000ull, 0, 0, "page size 0" },
		{ 1, 2ull << 20, 3, 0x100000001000ull, 6ull << 20, 0, "va not aligned" },
		{ 1, 1ull << 63, 2, 0, 0, 0, "page_num * page_size wraps to len" },
		{ 1, 1ull << 63, 2, 0, ~0ull, 1, "the top of the range, 2 pages" },
	};
	struct p2p_page_table pt;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		memset(&pt, 0, sizeof(pt));
		pt.version = t[i].version;
		pt.page_size = t[i].page_size;
		pt.page_num = t[i].page_num;
		KT_CHECK(p2p_table_ok(&pt, t[i].va, t[i].len) == t[i].ok,
			 "%s: want %s", t[i].what,
			 t[i].ok ? "accepted" : "refused");
	}
}

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
	test_hal_layout();
	test_hal_table_ok();
	return kt_done();
}
