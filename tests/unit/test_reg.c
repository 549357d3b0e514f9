// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_reg.c - the registration state machine (peer_client/npu_reg.c):
 * every path the cores and krping_npu take, event by event; every move
 * against the rules written here independently of the table; every
 * state reachable, and none a dead end.
 */
#include <errno.h>
#include <string.h>

#include "kt.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#include "../../peer_client/npu_reg.h"

#define E_GET	NPU_EV_GET
#define E_GOT	NPU_EV_GOT
#define E_GETF	NPU_EV_GET_FAILED
#define E_MAP	NPU_EV_MAP
#define E_UNMAP	NPU_EV_UNMAP
#define E_PUT	NPU_EV_PUT
#define E_FREE	NPU_EV_FREE
#define E_REL	NPU_EV_RELEASE

/* the machine's calls with the test's plain ints */
static int next_of(int s, int ev)
{
	return npu_reg_next((enum npu_reg_state)s, (enum npu_reg_event)ev);
}

static const char *sname(int s)
{
	return npu_reg_state_name((enum npu_reg_state)s);
}

static const char *ename(int ev)
{
	return npu_reg_event_name((enum npu_reg_event)ev);
}

/* A path: events from NEW, the state each leads to; -1 ends it. */
struct path {
	const char *name;
	int ev[10];
	int st[10];
};

#define NEW	NPU_REG_NEW
#define PING	NPU_REG_PINNING
#define PINGF	NPU_REG_PINNING_FREED
#define PIN	NPU_REG_PINNED
#define MAP	NPU_REG_MAPPED
#define UNM	NPU_REG_UNMAPPED
#define FRE	NPU_REG_FREED
#define FREM	NPU_REG_FREED_MAPPED
#define PUT	NPU_REG_PUT

static const struct path paths[] = {
	{ "MOFED 5.x / xsc / krping_npu register and deregister",
	  { E_GET, E_GOT, E_MAP, E_UNMAP, E_PUT, E_REL, -1 },
	  { PING, PIN, MAP, UNM, PUT, PUT } },
	{ "get_pages refused by the HAL",
	  { E_GET, E_GETF, E_REL, -1 },
	  { PING, NEW, NEW } },
	{ "dma_map failed: put, release",
	  { E_GET, E_GOT, E_PUT, E_REL, -1 },
	  { PING, PIN, PUT, PUT } },
	{ "freed while mapped, the core unmaps and puts inside its invalidate",
	  { E_GET, E_GOT, E_MAP, E_FREE, E_UNMAP, E_PUT, E_UNMAP, E_REL, -1 },
	  { PING, PIN, MAP, FREM, FRE, PUT, PUT, PUT } },
	{ "freed while mapped, the core unmaps and puts at deregistration",
	  { E_GET, E_GOT, E_MAP, E_FREE, E_FREE, E_UNMAP, E_PUT, E_REL, -1 },
	  { PING, PIN, MAP, FREM, FREM, FRE, PUT, PUT } },
	{ "freed between get_pages and dma_map: dma_map refused",
	  { E_GET, E_GOT, E_FREE, E_PUT, E_REL, -1 },
	  { PING, PIN, FRE, PUT, PUT } },
	{ "freed after the unmap, before the put",
	  { E_GET, E_GOT, E_MAP, E_UNMAP, E_FREE, E_PUT, E_REL, -1 },
	  { PING, PIN, MAP, UNM, FRE, PUT, PUT } },
	{ "freed before get_pages published its table",
	  { E_GET, E_FREE, E_GOT, E_PUT, E_REL, -1 },
	  { PING, PINGF, FRE, PUT, PUT } },
	{ "freed after the put began: nothing to stop",
	  { E_GET, E_GOT, E_MAP, E_UNMAP, E_PUT, E_FREE, E_REL, -1 },
	  { PING, PIN, MAP, UNM, PUT, PUT, PUT } },
	{ "MOFED 5.5 unmaps twice (invalidate, then dereg)",
	  { E_GET, E_GOT, E_MAP, E_FREE, E_UNMAP, E_UNMAP, E_PUT, E_REL, -1 },
	  { PING, PIN, MAP, FREM, FRE, FRE, PUT, PUT } },
	{ "released without get_pages",
	  { E_REL, -1 },
	  { NEW } },
};

static void test_paths(void)
{
	unsigned int p, i;

	for (p = 0; p < ARRAY_SIZE(paths); p++) {
		int s = NPU_REG_NEW;

		for (i = 0; paths[p].ev[i] >= 0; i++) {
			int next = next_of(s, paths[p].ev[i]);

			KT_CHECK(next == paths[p].st[i],
				 "%s: step %u (%s in %s) gives %d, want %s",
				 paths[p].name, i,
				 ename(paths[p].ev[i]),
				 sname(s), next,
				 sname(paths[p].st[i]));
			if (next < 0)
				break;
			s = next;
		}
	}
}

/*
 * The rules, stated apart from the table: which events a state admits,
 * and how a dma_map of freed memory is refused.
 */
static int held(int s)
{
	return s == PIN || s == MAP || s == UNM || s == FRE || s == FREM;
}

static int freed(int s)
{
	return s == PINGF || s == FRE || s == FREM;
}

static int rule_allows(int s, int ev)
{
	switch (ev) {
	case E_GET:
		return s == NEW;			/* one get_pages */
	case E_GOT:
		return s == PING || s == PINGF;
	case E_GETF:
		return s == PING;	/* a table freed meanwhile was given */
	case E_MAP:
		return s == PIN || s == FRE;		/* FRE: refused */
	case E_UNMAP:
		return held(s) || s == PUT;	/* nothing mapped: nothing */
	case E_PUT:
		return held(s) && s != MAP && s != FREM;	/* unmap first */
	case E_FREE:
		return s != NEW;	/* the HAL frees only what it gave */
	case E_REL:
		return s == NEW || s == PUT;		/* nothing held */
	}
	return 0;
}

static void test_every_move(void)
{
	int s, ev;

	for (s = 0; s < NPU_REG_NSTATES; s++)
		for (ev = 0; ev < NPU_EV_N; ev++) {
			int next = next_of(s, ev);

			if (!rule_allows(s, ev)) {
				KT_CHECK(next == NPU_REG_ILLEGAL,
					 "%s in %s: %d, want illegal",
					 ename(ev),
					 sname(s), next);
				continue;
			}
			if (ev == E_MAP && s == FRE) {
				KT_CHECK(next == -EINVAL,
					 "dma_map of freed memory: %d, want -EINVAL",
					 next);
				continue;
			}
			KT_CHECK(next >= 0 && next < NPU_REG_NSTATES,
				 "%s in %s: %d, want a state",
				 ename(ev), sname(s),
				 next);
			if (next < 0)
				continue;
			/* a free stays freed; a put holds nothing */
			KT_CHECK(!freed(s) || freed(next) || next == PUT,
				 "%s in %s forgets the free (%s)",
				 ename(ev), sname(s),
				 sname(next));
			KT_CHECK(ev != E_PUT || next == PUT,
				 "put_pages in %s leads to %s",
				 sname(s), sname(next));
			KT_CHECK(held(next) == npu_reg_holds_table((enum npu_reg_state)next),
				 "holds_table(%s)", sname(next));
		}
	/* out of range: illegal, and named */
	KT_CHECK(next_of(NPU_REG_NSTATES, 0) == NPU_REG_ILLEGAL, "state range");
	KT_CHECK(next_of(0, NPU_EV_N) == NPU_REG_ILLEGAL, "event range");
	KT_CHECK(!strcmp(sname(NPU_REG_NSTATES), "?"), "state name range");
	KT_CHECK(!strcmp(ename(NPU_EV_N), "?"), "event name range");
}

/* Every state is reached from NEW, and from each one release is reached. */
static void test_reach(void)
{
	int reach[NPU_REG_NSTATES] = { [NPU_REG_NEW] = 1 };
	int done[NPU_REG_NSTATES] = { 0 };
	int changed = 1, s, ev;

	while (changed) {
		changed = 0;
		for (s = 0; s < NPU_REG_NSTATES; s++)
			for (ev = 0; reach[s] && ev < NPU_EV_N; ev++) {
				int next = next_of(s, ev);

				if (next >= 0 && !reach[next])
					reach[next] = changed = 1;
			}
	}
	for (s = 0; s < NPU_REG_NSTATES; s++) {
		KT_CHECK(reach[s], "%s is never reached", sname(s));
		done[s] = next_of(s, E_REL) >= 0;
	}
	changed = 1;
	while (changed) {
		changed = 0;
		for (s = 0; s < NPU_REG_NSTATES; s++)
			for (ev = 0; !done[s] && ev < NPU_EV_N; ev++) {
				int next = next_of(s, ev);

				if (next >= 0 && done[next])
					done[s] = changed = 1;
			}
	}
	for (s = 0; s < NPU_REG_NSTATES; s++)
		KT_CHECK(done[s], "no way from %s to release", sname(s));
}

int main(void)
{
	test_paths();
	test_every_move();
	test_reach();
	return kt_done();
}
