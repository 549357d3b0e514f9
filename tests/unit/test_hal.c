// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_hal.c - npu_peer_mem's asks of the Ascend HAL (p2p_ask(),
 * p2p_table_ok() in peer_client/ascend_hal_abi.h) against a model of the
 * driver's get_pages written here from its source (devmm): va on a page
 * of the memory's own size, else -EOPNOTSUPP, as for an address in none
 * of the caller's heaps; any length, rounded up; a page of nobody's in the
 * range -EINVAL; the caller's next allocation taken along.
 */
#include <errno.h>
#include <string.h>

#include "kt.h"
#include "../../proc/kp_compat.h"
#include "../../peer_client/ascend_hal_abi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define K4	0x1000ull
#define M2	0x200000ull
#define BASE	0x100000000000ull

/* the caller's memory: allocations in pages of one size */
struct model {
	u64 ps;
	struct { u64 va, size; } a[3];
	unsigned int n;
	unsigned int asks;
};

static int model_owns(const struct model *m, u64 va)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (va >= m->a[i].va && va - m->a[i].va < m->a[i].size)
			return 1;
	return 0;
}

/* the driver's hal_kernel_p2p_get_pages, for the caller of @m */
static int model_get(struct model *m, u64 va, u64 len, struct p2p_page_table *t)
{
	u64 i, n;

	m->asks++;
	if (!len || va + len < va)
		return -EINVAL;
	if (!model_owns(m, va) || (va & (m->ps - 1)))
		return -EOPNOTSUPP;
	n = (((len + (va - (va & ~(m->ps - 1)))) + m->ps - 1) & ~(m->ps - 1)) / m->ps;
	for (i = 0; i < n; i++)
		if (!model_owns(m, va + i * m->ps))
			return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->version = P2P_GET_PAGE_VERSION;
	t->page_size = m->ps;
	t->page_num = n;
	return 0;
}

/* the client's npu_hal_get() over the model */
static int client_get(struct model *m, u64 addr, u64 size, u64 *va, u64 *len,
		      struct p2p_page_table *t)
{
	unsigned int try;
	int ret = -EINVAL;

	for (try = 0; p2p_ask(addr, size, try, va, len); try++) {
		ret = model_get(m, *va, *len, t);
		if (ret != -EOPNOTSUPP)
			break;
	}
	return ret;
}

static void check_triple(u64 ps, u64 alloc, u64 off, u64 size, int next)
{
	struct model m = { .ps = ps, .n = 1 };
	struct p2p_page_table t;
	u64 addr = BASE + off, va = 0, len = 0, end;
	int ret, fits;

	m.a[0].va = BASE;
	m.a[0].size = alloc;
	if (next) {
		m.a[1].va = BASE + alloc;
		m.a[1].size = alloc;
		m.n = 2;
	}
	end = BASE + alloc * (next ? 2 : 1);
	fits = addr >= BASE && addr + size <= end;
	ret = client_get(&m, addr, size, &va, &len, &t);
	KT_CHECK(m.asks <= 2, "ps %llu off 0x%llx size %llu: %u asks",
		 (unsigned long long)ps, (unsigned long long)off,
		 (unsigned long long)size, m.asks);
	KT_CHECK(fits ? ret == 0 : ret != 0,
		 "ps %llu off 0x%llx size %llu next %d: ret %d", (unsigned long long)ps,
		 (unsigned long long)off, (unsigned long long)size, next, ret);
	if (ret)
		return;
	KT_CHECK(p2p_table_ok(&t, va, len), "the driver's own table refused: va 0x%llx len %llu pages %llu",
		 (unsigned long long)va, (unsigned long long)len,
		 (unsigned long long)t.page_num);
	/* exactly the pages the registration lies in: no neighbour's */
	KT_CHECK(va == (addr & ~(ps - 1)) &&
		 va + t.page_num * ps == ((addr + size + ps - 1) & ~(ps - 1)),
		 "ps %llu off 0x%llx size %llu: table 0x%llx+%llu pages",
		 (unsigned long long)ps, (unsigned long long)off,
		 (unsigned long long)size, (unsigned long long)va,
		 (unsigned long long)t.page_num);
}

static void test_probe(void)
{
	static const u64 offs[] = { 0, 1, 64, K4 - 1, K4, K4 + 0x801, 0x7000,
				    M2 - K4, M2 - 64, M2, M2 + K4, 3 * M2 - 1 };
	static const u64 sizes[] = { 1, 26, 64, 4095, K4, K4 + 1, 0x10000,
				     M2 - 1, M2, M2 + K4, 3 * M2 + 1, 4 * M2 };
	static const u64 pss[] = { K4, M2 };
	unsigned int i, j, k, next;

	for (k = 0; k < ARRAY_SIZE(pss); k++)
		for (i = 0; i < ARRAY_SIZE(offs); i++)
			for (j = 0; j < ARRAY_SIZE(sizes); j++)
				for (next = 0; next < 2; next++)
					check_triple(pss[k], 4 * M2, offs[i], sizes[j], next);
}

/* the second ask only when it differs from the first */
static void test_ask(void)
{
	u64 va, len;

	KT_CHECK(p2p_ask(BASE + 64, 64, 0, &va, &len) && va == BASE && len == 128,
		 "first ask from the small page, exact end");
	KT_CHECK(!p2p_ask(BASE + 64, 64, 1, &va, &len), "same span: no second ask");
	KT_CHECK(p2p_ask(BASE + K4 + 64, 64, 1, &va, &len) && va == BASE &&
		 len == K4 + 128, "second ask from the huge page");
	KT_CHECK(!p2p_ask(BASE + K4, 64, 2, &va, &len), "never a third");
	KT_CHECK(!p2p_ask(BASE, 0, 0, &va, &len), "no length, no ask");
	KT_CHECK(!p2p_ask(~0ull - 10, 64, 0, &va, &len), "a wrapping range, no ask");
	KT_CHECK(p2p_page_count(BASE + 1, 2 * K4, K4) == 3, "2 pages from an odd start: 3");
	KT_CHECK(p2p_page_count(BASE, 1, M2) == 1, "one byte: one page");
	KT_CHECK(p2p_page_count(BASE, 0, M2) == 0, "none: none");
	KT_CHECK(p2p_page_count(0, ~0ull, 1ull << 63) == 2, "no overflow at the top");
}

int main(void)
{
	test_ask();
	test_probe();
	return kt_done();
}
