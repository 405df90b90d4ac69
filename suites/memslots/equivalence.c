/* SPDX-License-Identifier: GPL-2.0-or-later */
/* equivalence.c - memslots checks: seeded random operations against the plain oracle. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites/memslots/memslots.h"
#include "suites/memslots/oracle.h"
#include "util/util.h"

/* Capacities: 125 and 509 user slots (KVM before and after November 2014), 4096, and
 * 32,764, today's KVM_CAP_NR_MEMSLOTS. */
static const unsigned int check_capacities[] = {125, 509, 4096, 32764};

/* Each sequence is this many operations; heap sort at the large sizes costs milliseconds an
 * operation, so it gets fewer (the algorithm is the same at every size). */
#define SEQ_OPS 3000
#define SEQ_OPS_HEAPSORT_4096 300
#define SEQ_OPS_HEAPSORT_32764 40
/* Above this capacity the whole state is compared every FULL_EVERY ops, not after each. */
#define FULL_CHECK_CAPACITY 509
#define FULL_EVERY 64
/* At the end of a sequence, lookups around every slot up to this many slots, 256 above. */
#define SWEEP_ALL_UP_TO 4096
#define SWEEP_LARGE 256

unsigned int memslots_case_expand_capacity_order(const struct hw_info *hw,
						 const struct run_opts *opts,
						 struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(check_capacities); i++) {
		for (int order = 0; order < 2 && n + 1 < max; order++) {
			case_params_add(&out[n], "capacity", "%u", check_capacities[i]);
			case_params_add(&out[n], "order", "%s", memslots_order_name(order));
			n++;
		}
	}
	return n;
}

/* ---- equivalence with the oracle ------------------------------------------------------- */

struct seq {
	uint64_t seed;
	unsigned int capacity;
	enum memslots_order order;
	const struct strategy *strategy;
	bool near_full; /* start from a loaded set with 8 free ids, else from empty */
	unsigned int ops;
};

/* The 5 @probes looked up in mode @m (linear or binary, without or with the cache): @expect? */
static int compare_lookups(struct memslots *s, unsigned int m, const uint64_t *probes,
			   const int *expect, char *why, size_t len)
{
	s->lookup = m < 2 ? MEMSLOTS_LINEAR : MEMSLOTS_BINARY;
	s->cache = m % 2;
	for (int k = 0; k < 5; k++) {
		int a = memslots_find(s, probes[k]), b = expect[k];

		if (a != b) {
			snprintf(why, len,
				 "lookup of gfn %#" PRIx64 " (%s%s) found slot %d, expected %d",
				 probes[k], m < 2 ? "linear" : "binary", m % 2 ? "+cache" : "", a,
				 b);
			return -1;
		}
	}
	return 0;
}

/* Compare one slot and the lookups around it, in every lookup mode the order allows. */
static int compare_slot(struct memslots *s, const struct oracle *o, int id, bool lookups, char *why,
			size_t len)
{
	const struct memslot *got = memslots_get(s, id), *want = &o->by_id[id];
	uint64_t probes[5];
	int expect[5];
	unsigned int modes = s->order == MEMSLOTS_BY_GFN ? 4 : 2;

	if (memcmp(got, want, sizeof(*got))) {
		snprintf(why, len,
			 "slot %d: gfn %#" PRIx64 "+%" PRIu64 " flags %#x, expected gfn %#" PRIx64
			 "+%" PRIu64 " flags %#x",
			 id, got->base_gfn, got->npages, got->flags, want->base_gfn, want->npages,
			 want->flags);
		return -1;
	}
	if (!want->npages || !lookups)
		return 0;
	/* First, middle and last page, and the pages just outside: gaps or neighbours. */
	probes[0] = want->base_gfn;
	probes[1] = want->base_gfn + want->npages / 2;
	probes[2] = want->base_gfn + want->npages - 1;
	probes[3] = want->base_gfn ? want->base_gfn - 1 : want->base_gfn + want->npages;
	probes[4] = want->base_gfn + want->npages;
	for (int k = 0; k < 5; k++)
		expect[k] = oracle_find(o, probes[k]);
	for (unsigned int m = 0; m < modes; m++)
		if (compare_lookups(s, m, probes, expect, why, len))
			return -1;
	return 0;
}

static int compare_state(struct memslots *s, const struct oracle *o, struct stats_rng *pick,
			 bool contents, unsigned int sweep, char *why, size_t len)
{
	/* Lookups around a few random slots after every op: fewer as the O(n) scans grow. */
	unsigned int probed = s->capacity <= 512 ? 8 : 4096 / s->capacity, step;

	if (memslots_check(s, why, (unsigned int)len))
		return -1;
	if (s->used != o->used) {
		snprintf(why, len, "%u slots in use, expected %u", s->used, o->used);
		return -1;
	}
	for (unsigned int id = 0; contents && id < s->capacity; id++)
		if (compare_slot(s, o, (int)id, false, why, len))
			return -1;
	for (unsigned int k = 0; k < probed && o->used; k++)
		if (compare_slot(s, o, o->used_ids[stats_rng_below(pick, o->used)], true, why, len))
			return -1;
	/* A sweep: lookups around @sweep slots spread over all the ids. */
	step = !sweep ? 0 : s->capacity > sweep ? s->capacity / sweep : 1;
	for (unsigned int id = 0; step && id < s->capacity; id += step)
		if (compare_slot(s, o, (int)id, true, why, len))
			return -1;
	return 0;
}

/* What a sequence did, to show in the report that it covered what it should. */
struct seq_stats {
	unsigned int accepted[OP_KINDS], refused[OP_KINDS];
	unsigned int max_used;
	bool reached_full, reached_empty;
};

/* Capacity - 8 slots, one every 1024 gfns in a shuffled order of ids: a set nearly full. */
static int load_near_full(struct memslots *s, struct oracle *o, struct stats_rng *rng)
{
	unsigned int n = s->capacity > 8 ? s->capacity - 8 : 0;
	struct memslot *arr = calloc(s->capacity, sizeof(*arr));
	int ret;

	if (!arr)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->capacity; i++)
		arr[i].id = (int32_t)i;
	for (unsigned int i = s->capacity - 1; i > 0; i--) {
		unsigned int j = (unsigned int)stats_rng_below(rng, i + 1);
		int32_t t = arr[i].id;

		arr[i].id = arr[j].id;
		arr[j].id = t;
	}
	for (unsigned int i = 0; i < n; i++) {
		arr[i].base_gfn = (uint64_t)i * 1024;
		arr[i].npages = 1 + stats_rng_below(rng, 512);
		arr[i].userspace_addr = 0x7f0000000000ULL + arr[i].base_gfn * 4096;
	}
	ret = memslots_load(s, arr, n);
	oracle_load(o, arr, n);
	free(arr);
	return ret;
}

/* Share of creates: fill up, churn, drain; from near full, try to fill then drain a little. */
static unsigned int fill_for(const struct seq *q, unsigned int k)
{
	unsigned int third = q->ops / 3;

	if (q->near_full)
		return k < q->ops / 2 ? 70 : 30;
	return k < third ? 85 : k < 2 * third ? 50 : 10;
}

/*
 * Apply @q's operations to the strategy and the oracle side by side, comparing after each.
 * Returns the index of the first operation after which they differ, -1 when none, or -2
 * when the set could not be built. The whole state is compared every @full_every ops.
 */
static long run_sequence(const struct seq *q, unsigned int full_every, struct seq_stats *st,
			 struct memslot *op, enum op_kind *kind, char *why, size_t len)
{
	struct memslots s;
	struct oracle o;
	struct stats_rng rng, pick;
	long failed = -1;

	memset(st, 0, sizeof(*st));
	if (memslots_init(&s, q->capacity, q->order, q->strategy->update, MEMSLOTS_LINEAR, false))
		return -2;
	if (oracle_init(&o, q->capacity)) {
		memslots_release(&s);
		return -2;
	}
	stats_rng_seed(&rng, q->seed);
	stats_rng_seed(&pick, ~q->seed);
	if (q->near_full && load_near_full(&s, &o, &rng))
		failed = -2;
	for (unsigned int k = 0; failed == -1 && k < q->ops; k++) {
		int a, b;

		oracle_random_op(&o, &rng, fill_for(q, k), op, kind);
		a = memslots_set(&s, op);
		b = oracle_set(&o, op);
		if (a != b)
			snprintf(why, len, "returned %d (%s), expected %d (%s)", a, strerror(-a), b,
				 strerror(-b));
		if (a != b ||
		    compare_state(&s, &o, &pick, (k + 1) % full_every == 0 || k + 1 == q->ops,
				  k + 1 < q->ops		   ? 0
				  : q->capacity <= SWEEP_ALL_UP_TO ? q->capacity
								   : SWEEP_LARGE,
				  why, len))
			failed = k;
		if (b)
			st->refused[*kind]++;
		else
			st->accepted[*kind]++;
		st->max_used = o.used > st->max_used ? o.used : st->max_used;
		st->reached_full |= o.used == q->capacity;
		st->reached_empty |= k > 0 && o.used == 0;
	}
	memslots_release(&s);
	oracle_release(&o);
	return failed;
}

static unsigned int seq_ops(unsigned int capacity, enum memslots_update u, bool quick)
{
	unsigned int ops = SEQ_OPS;

	if (u == MEMSLOTS_HEAPSORT && capacity > 4096)
		ops = SEQ_OPS_HEAPSORT_32764;
	else if (u == MEMSLOTS_HEAPSORT && capacity > FULL_CHECK_CAPACITY)
		ops = SEQ_OPS_HEAPSORT_4096;
	return quick ? (ops + 3) / 4 : ops;
}

static void log_coverage(struct case_ctx *ctx, const struct seq *q, const struct seq_stats *st)
{
	unsigned int acc = 0, ref = 0;

	for (int k = 0; k < OP_KINDS; k++) {
		acc += st->accepted[k];
		ref += st->refused[k];
	}
	case_log(ctx,
		 "%-12s %s start, seed %" PRIu64 ": %u ops, %u accepted (%u create, %u delete, "
		 "%u move, %u change), %u refused (%u create, %u resize, %u bad id, %u overflow); "
		 "up to %u slots used%s%s",
		 q->strategy->name, q->near_full ? "near-full" : "empty", q->seed, q->ops, acc,
		 st->accepted[OP_CREATE], st->accepted[OP_DELETE], st->accepted[OP_MOVE],
		 st->accepted[OP_CHANGE], ref, st->refused[OP_CREATE], st->refused[OP_RESIZE],
		 st->refused[OP_BAD_ID], st->refused[OP_OVERFLOW], st->max_used,
		 st->reached_full ? ", full reached" : "", st->reached_empty ? ", emptied" : "");
}

/* One sequence: on a difference, replay it comparing everything after every op, so the
 * report names the shortest prefix that fails. */
static void check_sequence(struct case_ctx *ctx, const struct seq *q)
{
	struct seq_stats st;
	struct memslot op;
	enum op_kind kind = OP_CREATE;
	char why[512];
	unsigned int every = q->capacity > FULL_CHECK_CAPACITY ? FULL_EVERY : 1;
	long k = run_sequence(q, every, &st, &op, &kind, why, sizeof(why));

	if (k == -2) {
		case_error(ctx, "cannot build a set of %u slots: out of memory", q->capacity);
		return;
	}
	if (k >= 0 && every > 1) {
		struct seq shorter = *q;

		shorter.ops = (unsigned int)k + 1;
		k = run_sequence(&shorter, 1, &st, &op, &kind, why, sizeof(why));
	}
	if (k < 0) {
		log_coverage(ctx, q, &st);
		return;
	}
	case_fail(ctx,
		  "update %s, order %s, capacity %u, %s start, seed %" PRIu64 ": after op %ld "
		  "(%s id %d gfn %#" PRIx64 "+%" PRIu64 " flags %#x) %s; shortest failing prefix: "
		  "%ld ops",
		  q->strategy->name, memslots_order_name(q->order), q->capacity,
		  q->near_full ? "near-full" : "empty", q->seed, k, oracle_op_name(kind), op.id,
		  op.base_gfn, op.npages, op.flags, why, k + 1);
}

void memslots_case_check_equivalence(struct case_ctx *ctx)
{
	const struct run_opts *opts = case_opts(ctx);
	struct strategy strat[MEMSLOTS_CASE_MAX_STRATEGIES];
	unsigned int n = memslots_case_strategies(opts, strat),
		     cap = memslots_case_param_uint(ctx, "capacity");
	enum memslots_order order = memslots_case_param_order(ctx);

	for (unsigned int i = 0; i < n; i++) {
		for (int near_full = 0; near_full < 2; near_full++) {
			/* The seed names the sequence: same capacity, order and --seed, same ops.
			 */
			struct seq q = {.seed =
					    opts->seed * 1000003 + cap * 2 + order * 7 + near_full,
					.capacity = cap,
					.order = order,
					.strategy = &strat[i],
					.near_full = near_full,
					.ops = seq_ops(cap, strat[i].update, opts->quick)};

			check_sequence(ctx, &q);
		}
	}
}
