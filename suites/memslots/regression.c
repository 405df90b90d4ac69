/* SPDX-License-Identifier: GPL-2.0-or-later */
/* regression.c - memslots checks: the named regressions of the 2014 review and since. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites/memslots/memslots.h"
#include "util/util.h"

#define REG_CAPACITY 125

static int put(struct memslots *s, int id, uint64_t gfn, uint64_t npages, uint32_t flags,
	       uint64_t uaddr)
{
	struct memslot m = {
	    .id = id, .base_gfn = gfn, .npages = npages, .flags = flags, .userspace_addr = uaddr};

	return memslots_set(s, &m);
}

static int fail_why(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The review bug of v2: a change keeping npages must still copy flags and userspace_addr. */
static int reg_flags_only(struct memslots *s, char *why, size_t len)
{
	const struct memslot *m;

	for (int id = 0; id < 4; id++)
		if (put(s, id, (uint64_t)id * 0x1000, 16u << id, 0, 0x7f0000000000ULL))
			return fail_why(why, len, "setting up slot %d failed", id);
	if (put(s, 2, 0x2000, 64, 1 /* KVM_MEM_LOG_DIRTY_PAGES */, 0x7f1000000000ULL))
		return fail_why(why, len, "the flags-only change of slot 2 was refused");
	m = memslots_get(s, 2);
	if (m->flags != 1 || m->userspace_addr != 0x7f1000000000ULL)
		return fail_why(why, len,
				"after a flags-only change slot 2 has flags %#x and "
				"userspace_addr %#" PRIx64 ", expected 0x1 and 0x7f1000000000 (the "
				"new slot was not copied over the old one)",
				m->flags, m->userspace_addr);
	return 0;
}

static int setup_eight(struct memslots *s, char *why, size_t len)
{
	/* Slot i: 4 (i + 1) pages at gfn 1000 i, so id 7 is the largest and id 0 the smallest. */
	for (int id = 0; id < 8; id++)
		if (put(s, id, (uint64_t)id * 1000, 4u * (unsigned int)(id + 1), 0, 0))
			return fail_why(why, len, "setting up slot %d failed", id);
	return 0;
}

static int after_delete(struct memslots *s, int gone, char *why, size_t len)
{
	if (memslots_check(s, why, (unsigned int)len))
		return -1;
	if (s->used != 7 || memslots_get(s, gone)->npages)
		return fail_why(why, len, "slot %d still there (%u used)", gone, s->used);
	for (int id = 0; id < 8; id++) {
		int want = id == gone ? -1 : id;
		int got = memslots_find(s, (uint64_t)id * 1000 + 1);

		if (got != want)
			return fail_why(why, len, "gfn %d found slot %d, expected %d",
					id * 1000 + 1, got, want);
	}
	return 0;
}

static int reg_delete_largest(struct memslots *s, char *why, size_t len)
{
	if (setup_eight(s, why, len) || put(s, 7, 0, 0, 0, 0))
		return fail_why(why, len, "delete of the largest slot refused");
	return after_delete(s, 7, why, len);
}

static int reg_delete_smallest(struct memslots *s, char *why, size_t len)
{
	if (setup_eight(s, why, len) || put(s, 0, 0, 0, 0, 0))
		return fail_why(why, len, "delete of the smallest slot refused");
	return after_delete(s, 0, why, len);
}

/* A full set refuses what does not fit and stays as it was; a freed id is usable again. */
static int reg_create_full(struct memslots *s, char *why, size_t len)
{
	struct memslot *before = malloc(s->capacity * sizeof(*before));
	int ret = 0;

	if (!before)
		return fail_why(why, len, "out of memory");
	for (unsigned int id = 0; id < s->capacity && !ret; id++)
		if (put(s, (int)id, (uint64_t)id * 16, 8, 0, 0))
			ret = fail_why(why, len, "filling slot %u failed", id);
	memcpy(before, s->slots, s->capacity * sizeof(*before));
	if (!ret && put(s, (int)s->capacity, 1u << 20, 8, 0, 0) != -EINVAL)
		ret = fail_why(why, len, "a create with id %u (past the array) was not refused",
			       s->capacity);
	if (!ret && put(s, 5, 1u << 20, 9, 0, 0) != -EINVAL)
		ret = fail_why(why, len, "a resize of used slot 5 was not refused");
	if (!ret && put(s, 5, 16 * 6, 8, 0, 0) != -EEXIST)
		ret = fail_why(why, len, "moving slot 5 onto slot 6 was not refused");
	if (!ret &&
	    (memcmp(before, s->slots, s->capacity * sizeof(*before)) || s->used != s->capacity))
		ret = fail_why(why, len, "a refused operation changed the full set");
	if (!ret && (put(s, 9, 0, 0, 0, 0) || put(s, 9, 1u << 20, 8, 0, 0) ||
		     memslots_find(s, (1u << 20) + 7) != 9))
		ret = fail_why(why, len, "slot 9 could not be deleted and created again elsewhere");
	if (!ret && memslots_check(s, why, (unsigned int)len))
		ret = -1;
	free(before);
	return ret;
}

/* A move reorders by gfn: every id_to_index entry must follow, and lookups with it. */
static int reg_stale_index(struct memslots *s, char *why, size_t len)
{
	for (int id = 0; id < 4; id++)
		if (put(s, id, (uint64_t)id * 1000, 10, 0, 0))
			return fail_why(why, len, "setting up slot %d failed", id);
	(void)memslots_find(s, 5); /* warm the cache with slot 0 */
	if (put(s, 0, 5000, 10, 0, 0))
		return fail_why(why, len, "moving slot 0 to gfn 5000 was refused");
	if (memslots_check(s, why, (unsigned int)len))
		return -1;
	if (memslots_find(s, 5) != -1 || memslots_find(s, 5005) != 0)
		return fail_why(why, len,
				"after the move gfn 5 finds %d (expected -1), gfn 5005 "
				"finds %d (expected 0)",
				memslots_find(s, 5), memslots_find(s, 5005));
	for (int id = 1; id < 4; id++)
		if (memslots_find(s, (uint64_t)id * 1000) != id)
			return fail_why(why, len, "slot %d lost after the move", id);
	return 0;
}

static int reg_lookup_bounds(struct memslots *s, char *why, size_t len)
{
	static const struct {
		uint64_t gfn;
		int want;
	} probes[] = {
	    {0, -1},	      {99, -1}, {100, 0}, {109, 0},  {110, -1},
	    {199, -1},	      {200, 1}, {299, 1}, {300, -1}, {MEMSLOTS_GFN_LIMIT - 1, -1},
	    {UINT64_MAX, -1},
	};

	if (put(s, 0, 100, 10, 0, 0) || put(s, 1, 200, 100, 0, 0))
		return fail_why(why, len, "setting up the slots failed");
	for (int pass = 0; pass < 2; pass++) { /* the second pass starts with a warm cache */
		for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
			int got = memslots_find(s, probes[i].gfn);

			if (got != probes[i].want)
				return fail_why(why, len,
						"gfn %#" PRIx64 " found slot %d, expected %d",
						probes[i].gfn, got, probes[i].want);
		}
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct memslots *s, char *why, size_t len);
} regressions[] = {
    {"flags_only_change", reg_flags_only},	 {"delete_largest", reg_delete_largest},
    {"delete_smallest", reg_delete_smallest},	 {"create_full", reg_create_full},
    {"stale_index_after_move", reg_stale_index}, {"lookup_bounds", reg_lookup_bounds},
};

unsigned int memslots_case_expand_regressions(const struct hw_info *hw, const struct run_opts *opts,
					      struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(regressions); i++) {
		for (int order = 0; order < 2 && n < max; order++) {
			case_params_add(&out[n], "check", "%s", regressions[i].name);
			case_params_add(&out[n], "order", "%s", memslots_order_name(order));
			n++;
		}
	}
	return n;
}

/* Regression @r replayed on a fresh set of 125 slots updated by @st, looked up by mode @l
 * (linear or binary, without or with the cache). Returns false when the set cannot be made. */
static bool replay(struct case_ctx *ctx, size_t r, enum memslots_order order,
		   const struct strategy *st, unsigned int l)
{
	enum memslots_lookup lk = l < 2 ? MEMSLOTS_LINEAR : MEMSLOTS_BINARY;
	struct memslots s;
	char why[512];

	if (memslots_init(&s, REG_CAPACITY, order, st->update, lk, l % 2)) {
		case_error(ctx, "cannot build a set of %d slots", REG_CAPACITY);
		return false;
	}
	if (regressions[r].fn(&s, why, sizeof(why)))
		case_fail(ctx, "update %s, order %s, lookup %s%s: %s", st->name,
			  memslots_order_name(order), lk == MEMSLOTS_BINARY ? "binary" : "linear",
			  l % 2 ? "+cache" : "", why);
	memslots_release(&s);
	return true;
}

/* Every strategy, with every lookup the order allows, on a fresh set of 125 slots. */
void memslots_case_check_regression(struct case_ctx *ctx)
{
	const char *name = case_param(ctx, "check");
	enum memslots_order order = memslots_case_param_order(ctx);
	struct strategy strat[MEMSLOTS_CASE_MAX_STRATEGIES];
	unsigned int n = memslots_case_strategies(case_opts(ctx), strat),
		     lookups = order == MEMSLOTS_BY_GFN ? 4 : 2;
	size_t r = 0;

	while (r < ARRAY_SIZE(regressions) && strcmp(regressions[r].name, name))
		r++;
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int l = 0; l < lookups; l++)
			if (!replay(ctx, r, order, &strat[i], l))
				return;
}
