/* suite_memslots.c - the memslot array (seed 002): equivalence checks, cycle costs, gates. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hw/tsc.h"
#include "suites/gate.h"
#include "suites/memslots_oracle.h"
#include "suites/suites.h"

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

struct strategy {
	enum memslots_update update;
	const char *name;
};

/* The strategies a check runs: the references, and the one under test when it differs. */
static unsigned int strategies(const struct run_opts *opts, struct strategy *out)
{
	static const enum memslots_update refs[] = {MEMSLOTS_HEAPSORT, MEMSLOTS_SWAP, MEMSLOTS_SHIFT};
	int impl = memslots_update_parse(impl_get(opts->impl, "memslots.update"));
	unsigned int n = 0;

	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		out[n++] = (struct strategy){refs[i], memslots_update_name(refs[i])};
	if (impl >= 0 && impl != MEMSLOTS_HEAPSORT && impl != MEMSLOTS_SWAP && impl != MEMSLOTS_SHIFT)
		out[n++] = (struct strategy){(enum memslots_update)impl,
					     memslots_update_name((enum memslots_update)impl)};
	return n;
}

static enum memslots_order param_order(struct case_ctx *ctx)
{
	const char *o = case_param(ctx, "order");

	return o && !strcmp(o, "gfn") ? MEMSLOTS_BY_GFN : MEMSLOTS_BY_SIZE;
}

static unsigned int param_uint(struct case_ctx *ctx, const char *name)
{
	const char *v = case_param(ctx, name);

	return v ? (unsigned int)strtoul(v, NULL, 10) : 0;
}

static unsigned int expand_capacity_order(const struct hw_info *hw, const struct run_opts *opts,
					  struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	(void)opts;
	for (size_t i = 0; i < sizeof(check_capacities) / sizeof(check_capacities[0]); i++) {
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
	bool near_full;		/* start from a loaded set with 8 free ids, else from empty */
	unsigned int ops;
};

/* Compare one slot and the lookups around it, in every lookup mode the order allows. */
static int compare_slot(struct memslots *s, const struct oracle *o, int id, bool lookups, char *why,
			size_t len)
{
	const struct memslot *got = memslots_get(s, id), *want = &o->by_id[id];
	uint64_t probes[5];
	int expect[5];
	unsigned int modes = s->order == MEMSLOTS_BY_GFN ? 4 : 2;

	if (memcmp(got, want, sizeof(*got))) {
		snprintf(why, len, "slot %d: gfn %#" PRIx64 "+%" PRIu64 " flags %#x, expected gfn %#"
			 PRIx64 "+%" PRIu64 " flags %#x", id, got->base_gfn, got->npages, got->flags,
			 want->base_gfn, want->npages, want->flags);
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
	for (unsigned int m = 0; m < modes; m++) {
		s->lookup = m < 2 ? MEMSLOTS_LINEAR : MEMSLOTS_BINARY;
		s->cache = m % 2;
		for (int k = 0; k < 5; k++) {
			int a = memslots_find(s, probes[k]), b = expect[k];

			if (a != b) {
				snprintf(why, len, "lookup of gfn %#" PRIx64 " (%s%s) found slot %d, "
					 "expected %d", probes[k], m < 2 ? "linear" : "binary",
					 m % 2 ? "+cache" : "", a, b);
				return -1;
			}
		}
	}
	return 0;
}

static int compare_state(struct memslots *s, const struct oracle *o, struct stats_rng *pick,
			 bool contents, unsigned int sweep, char *why, size_t len)
{
	/* Lookups around a few random slots after every op: fewer as the O(n) scans grow. */
	unsigned int probed = s->capacity <= 512 ? 8 : 4096 / s->capacity;

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
	for (unsigned int id = 0; sweep && id < s->capacity; id += s->capacity / sweep)
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
		if (a != b || compare_state(&s, &o, &pick, (k + 1) % full_every == 0 || k + 1 == q->ops,
					    k + 1 < q->ops ? 0
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

static void check_equivalence(struct case_ctx *ctx)
{
	const struct run_opts *opts = case_opts(ctx);
	struct strategy strat[8];
	unsigned int n = strategies(opts, strat), cap = param_uint(ctx, "capacity");
	enum memslots_order order = param_order(ctx);

	for (unsigned int i = 0; i < n; i++) {
		for (int near_full = 0; near_full < 2; near_full++) {
			/* The seed names the sequence: same capacity, order and --seed, same ops. */
			struct seq q = {.seed = opts->seed * 1000003 + cap * 2 + order * 7 + near_full,
					.capacity = cap, .order = order, .strategy = &strat[i],
					.near_full = near_full,
					.ops = seq_ops(cap, strat[i].update, opts->quick)};

			check_sequence(ctx, &q);
		}
	}
}

/* ---- named regression checks ------------------------------------------------------------ */

#define REG_CAPACITY 125

static int put(struct memslots *s, int id, uint64_t gfn, uint64_t npages, uint32_t flags,
	       uint64_t uaddr)
{
	struct memslot m = {.id = id, .base_gfn = gfn, .npages = npages, .flags = flags,
			    .userspace_addr = uaddr};

	return memslots_set(s, &m);
}

static int fail_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

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
		return fail_why(why, len, "after a flags-only change slot 2 has flags %#x and "
			       "userspace_addr %#" PRIx64 ", expected 0x1 and 0x7f1000000000 (the "
			       "new slot was not copied over the old one)", m->flags, m->userspace_addr);
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
			return fail_why(why, len, "gfn %d found slot %d, expected %d", id * 1000 + 1,
					got, want);
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
	if (!ret && (memcmp(before, s->slots, s->capacity * sizeof(*before)) || s->used != s->capacity))
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
	(void)memslots_find(s, 5);	/* warm the cache with slot 0 */
	if (put(s, 0, 5000, 10, 0, 0))
		return fail_why(why, len, "moving slot 0 to gfn 5000 was refused");
	if (memslots_check(s, why, (unsigned int)len))
		return -1;
	if (memslots_find(s, 5) != -1 || memslots_find(s, 5005) != 0)
		return fail_why(why, len, "after the move gfn 5 finds %d (expected -1), gfn 5005 "
			       "finds %d (expected 0)", memslots_find(s, 5), memslots_find(s, 5005));
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
		{0, -1}, {99, -1}, {100, 0}, {109, 0}, {110, -1}, {199, -1}, {200, 1}, {299, 1},
		{300, -1}, {MEMSLOTS_GFN_LIMIT - 1, -1}, {UINT64_MAX, -1},
	};

	if (put(s, 0, 100, 10, 0, 0) || put(s, 1, 200, 100, 0, 0))
		return fail_why(why, len, "setting up the slots failed");
	for (int pass = 0; pass < 2; pass++) {	/* the second pass starts with a warm cache */
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			int got = memslots_find(s, probes[i].gfn);

			if (got != probes[i].want)
				return fail_why(why, len, "gfn %#" PRIx64 " found slot %d, expected %d",
						probes[i].gfn, got, probes[i].want);
		}
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct memslots *s, char *why, size_t len);
} regressions[] = {
	{"flags_only_change", reg_flags_only},
	{"delete_largest", reg_delete_largest},
	{"delete_smallest", reg_delete_smallest},
	{"create_full", reg_create_full},
	{"stale_index_after_move", reg_stale_index},
	{"lookup_bounds", reg_lookup_bounds},
};

static unsigned int expand_regressions(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	(void)opts;
	for (size_t i = 0; i < sizeof(regressions) / sizeof(regressions[0]); i++) {
		for (int order = 0; order < 2 && n < max; order++) {
			case_params_add(&out[n], "check", "%s", regressions[i].name);
			case_params_add(&out[n], "order", "%s", memslots_order_name(order));
			n++;
		}
	}
	return n;
}

/* Every strategy, with every lookup the order allows, on a fresh set of 125 slots. */
static void check_regression(struct case_ctx *ctx)
{
	const char *name = case_param(ctx, "check");
	enum memslots_order order = param_order(ctx);
	struct strategy strat[8];
	unsigned int n = strategies(case_opts(ctx), strat), lookups = order == MEMSLOTS_BY_GFN ? 4 : 2;
	size_t r = 0;

	while (r < sizeof(regressions) / sizeof(regressions[0]) && strcmp(regressions[r].name, name))
		r++;
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int l = 0; l < lookups; l++) {
			enum memslots_lookup lk = l < 2 ? MEMSLOTS_LINEAR : MEMSLOTS_BINARY;
			struct memslots s;
			char why[512];

			if (memslots_init(&s, REG_CAPACITY, order, strat[i].update, lk, l % 2)) {
				case_error(ctx, "cannot build a set of %d slots", REG_CAPACITY);
				return;
			}
			if (regressions[r].fn(&s, why, sizeof(why)))
				case_fail(ctx, "update %s, order %s, lookup %s%s: %s", strat[i].name,
					  memslots_order_name(order), lk == MEMSLOTS_BINARY ? "binary"
											     : "linear",
					  l % 2 ? "+cache" : "", why);
			memslots_release(&s);
		}
	}
}

/* ---- perf: update cost ----------------------------------------------------------------- */

/* 128: the published run (125 user + 3 private slots, 128 inserts); then 509, 4096, 32,764. */
static const unsigned int perf_capacities[] = {128, 509, 4096, 32764};

/*
 * One case per workload and capacity runs the implementation under test and the two
 * references in turn, sample by sample: the vCPUs' speed drifts by tens of percent
 * between runs here (swap at 509 slots measured 4,620 and 5,863 cycles in two runs), and
 * only interleaving keeps a 1.3x difference honest. Metric STRATEGY.STAT.
 */
enum { U_IMPL, U_HEAPSORT, U_SWAP, U_STRATEGIES };
enum { M_UPD_MAX, M_UPD_MEDIAN, M_UPD_P99, M_UPD_STATS };

static const struct metric_def update_metrics[U_STRATEGIES * M_UPD_STATS] = {
	{"impl.update_max", "cycles", LOWER_IS_BETTER},
	{"impl.update_median", "cycles", LOWER_IS_BETTER},
	{"impl.update_p99", "cycles", LOWER_IS_BETTER},
	{"heapsort.update_max", "cycles", LOWER_IS_BETTER},
	{"heapsort.update_median", "cycles", LOWER_IS_BETTER},
	{"heapsort.update_p99", "cycles", LOWER_IS_BETTER},
	{"swap.update_max", "cycles", LOWER_IS_BETTER},
	{"swap.update_median", "cycles", LOWER_IS_BETTER},
	{"swap.update_p99", "cycles", LOWER_IS_BETTER},
};

/* Linear growth, judged within one case too: the impl at 509 and 4096 slots in turn. */
#define GROWTH_SMALL 509
#define GROWTH_LARGE 4096
static const struct metric_def growth_metrics[] = {
	{"update_median.509", "cycles", LOWER_IS_BETTER},
	{"update_median.4096", "cycles", LOWER_IS_BETTER},
};

/*
 * Updates timed per sample: the published 128, or fewer for heap sort at the large sizes,
 * where one update costs milliseconds (n log n compares and byte-wise swaps of 32 bytes).
 */
static unsigned int measured_ops(unsigned int capacity, enum memslots_update u)
{
	unsigned int k = u != MEMSLOTS_HEAPSORT || capacity <= 509 ? 128 : capacity <= 4096 ? 16 : 4;

	return k < capacity ? k : capacity;
}

static unsigned int expand_update(const struct hw_info *hw, const struct run_opts *opts,
				  struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	for (size_t i = 0; i < sizeof(perf_capacities) / sizeof(perf_capacities[0]) && n < max;
	     i++, n++) {
		case_params_add(&out[n], "capacity", "%u", perf_capacities[i]);
		case_params_add(&out[n], "impl", "%s", impl_get(opts->impl, "memslots.update"));
	}
	return n;
}

static unsigned int expand_growth(const struct hw_info *hw, const struct run_opts *opts,
				  struct case_params *out, unsigned int max)
{
	(void)hw;
	if (!max)
		return 0;
	case_params_add(&out[0], "impl", "%s", impl_get(opts->impl, "memslots.update"));
	return 1;
}

static enum memslots_update param_update(struct case_ctx *ctx)
{
	int u = memslots_update_parse(case_param(ctx, "impl"));

	return u < 0 ? MEMSLOTS_SHIFT : (enum memslots_update)u;
}

/* Slot j of the growing workload: j + 1 pages right after slot j - 1, so every new slot is
 * the largest and the highest: it travels the whole array in either order. */
static struct memslot growing_slot(unsigned int j)
{
	return (struct memslot){.id = (int32_t)j, .npages = j + 1,
				.base_gfn = (uint64_t)j * (j + 1) / 2,
				.userspace_addr = 0x7f0000000000ULL + (uint64_t)j * (j + 1) * 2048};
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Per-sample figures of @k per-op cycle counts into metrics @base + max, median, p99. */
static void record_ops(struct case_ctx *ctx, unsigned int base, double *cyc, unsigned int k,
		       const struct measure_span *span)
{
	double sorted[128];

	memcpy(sorted, cyc, k * sizeof(*cyc));
	qsort(sorted, k, sizeof(*sorted), cmp_double);
	case_sample(ctx, base + M_UPD_MAX, sorted[k - 1], span);
	case_sample(ctx, base + M_UPD_MEDIAN, stats_quantile_sorted(sorted, k, 0.5), span);
	case_sample(ctx, base + M_UPD_P99, stats_quantile_sorted(sorted, k, 0.99), span);
}

/*
 * Each timed update runs REPLAYS times from the same state and counts its cheapest run: a
 * timer interrupt or a vCPU preemption lands in one replay, not in all of them, so the max
 * over a sample stays the update's own cost (the 2014 profile "discarded spikes" by hand).
 */
#define REPLAYS 3

/* What one sample replays: a set loaded in one go, then k updates to time one by one. */
struct workload {
	struct memslot *initial;
	unsigned int n_initial;
	struct memslot ops[128];
	unsigned int k;
};

static_assert(sizeof(((struct workload *)0)->ops) / sizeof(struct memslot) >= 128,
	      "measured_ops() returns at most 128");

/* Growing: capacity - k slots of growing size loaded, then the last k created. */
static int make_growing(unsigned int cap, unsigned int k, struct workload *w)
{
	w->initial = malloc(cap * sizeof(*w->initial));
	if (!w->initial)
		return -ENOMEM;
	w->n_initial = cap - k;
	w->k = k;
	for (unsigned int j = 0; j < cap; j++) {
		if (j < w->n_initial)
			w->initial[j] = growing_slot(j);
		else
			w->ops[j - w->n_initial] = growing_slot(j);
	}
	return 0;
}

/* Random: half the ids loaded, one every 1024 gfns; then k random updates the oracle accepts. */
static int make_random(unsigned int cap, unsigned int k, uint64_t seed, struct workload *w)
{
	struct stats_rng rng;
	struct oracle o;
	enum op_kind kind;

	w->initial = malloc(cap * sizeof(*w->initial));
	if (!w->initial || oracle_init(&o, cap))
		return -ENOMEM;
	stats_rng_seed(&rng, seed);
	w->n_initial = cap / 2;
	for (unsigned int i = 0; i < w->n_initial; i++)
		w->initial[i] = (struct memslot){.id = (int32_t)(i * 2 + stats_rng_below(&rng, 2)),
						 .base_gfn = (uint64_t)i * 1024,
						 .npages = 1 + stats_rng_below(&rng, 512)};
	oracle_load(&o, w->initial, w->n_initial);
	for (w->k = 0; w->k < k;) {
		/* The generator also proposes refused ops; only accepted ones are kept. */
		oracle_random_op(&o, &rng, 50, &w->ops[w->k], &kind);
		if (!oracle_set(&o, &w->ops[w->k]))
			w->k++;
	}
	oracle_release(&o);
	return 0;
}

/* Time each update of @w, the cheapest of REPLAYS runs, into @cyc. */
static int replay(const struct workload *w, unsigned int cap, enum memslots_update u, double *cyc,
		  struct measure_span *span)
{
	struct memslots s;
	int ret = memslots_init(&s, cap, MEMSLOTS_BY_SIZE, u, MEMSLOTS_LINEAR, false);

	measure_span_begin(span);
	for (int r = 0; !ret && r < REPLAYS; r++) {
		ret = memslots_load(&s, w->initial, w->n_initial);
		for (unsigned int j = 0; !ret && j < w->k; j++) {
			uint64_t t0;

			ret = memslots_validate(&s, &w->ops[j]);
			t0 = tsc_begin();
			memslots_apply(&s, &w->ops[j]);
			t0 = tsc_end() - t0;
			if (r == 0 || (double)t0 < cyc[j])
				cyc[j] = (double)t0;
		}
	}
	measure_span_end(span);
	memslots_release(&s);
	return ret;
}

/*
 * One sample of a workload: build it, replay it, and unless @base is negative (warm-up)
 * record the max, median and p99 of its updates into metrics @base onwards.
 */
static int update_sample(struct case_ctx *ctx, bool growing, unsigned int cap,
			 enum memslots_update u, uint64_t seed, int base)
{
	struct workload w = {0};
	struct measure_span span;
	double cyc[128];
	unsigned int k = measured_ops(cap, u);
	int ret = growing ? make_growing(cap, k, &w) : make_random(cap, k, seed, &w);

	if (!ret)
		ret = replay(&w, cap, u, cyc, &span);
	if (!ret && base >= 0)
		record_ops(ctx, (unsigned int)base, cyc, w.k, &span);
	free(w.initial);
	return ret;
}

/* The implementation under test, heap sort and swap in turn, sample by sample. */
static void perf_update(struct case_ctx *ctx, bool growing)
{
	const struct run_opts *o = case_opts(ctx);
	unsigned int cap = param_uint(ctx, "capacity");
	const enum memslots_update strat[U_STRATEGIES] = {param_update(ctx), MEMSLOTS_HEAPSORT,
							  MEMSLOTS_SWAP};

	for (unsigned int m = 0; m < U_STRATEGIES * M_UPD_STATS; m++)
		case_counter(ctx, m, "tsc");
	for (unsigned int s = 0; s < U_STRATEGIES; s++)
		case_prop(ctx, update_metrics[s * M_UPD_STATS].name, "%u updates timed a sample",
			  measured_ops(cap, strat[s]));
	for (unsigned int i = 0; i < o->warmup + o->samples; i++) {
		for (unsigned int j = 0; j < U_STRATEGIES; j++) {
			/* Rotate the order, so that no strategy always runs first. */
			unsigned int s = (i + j) % U_STRATEGIES;
			int ret = update_sample(ctx, growing, cap, strat[s], o->seed + i,
						i < o->warmup ? -1 : (int)(s * M_UPD_STATS));

			if (ret) {
				case_error(ctx, "%s workload at %u slots: %s",
					   growing ? "growing" : "random", cap, strerror(-ret));
				return;
			}
		}
	}
}

static void perf_update_growing(struct case_ctx *ctx)
{
	perf_update(ctx, true);
}

static void perf_update_random(struct case_ctx *ctx)
{
	perf_update(ctx, false);
}

/* The median update of the growing workload at 509 and at 4096 slots, in turn. */
static void perf_growth(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const unsigned int caps[2] = {GROWTH_SMALL, GROWTH_LARGE};
	enum memslots_update u = param_update(ctx);

	case_counter(ctx, 0, "tsc");
	case_counter(ctx, 1, "tsc");
	for (unsigned int i = 0; i < o->warmup + o->samples; i++) {
		for (unsigned int j = 0; j < 2; j++) {
			unsigned int c = (i + j) % 2;
			struct workload w = {0};
			struct measure_span span;
			double cyc[128];
			int ret = make_growing(caps[c], measured_ops(caps[c], u), &w);

			if (!ret)
				ret = replay(&w, caps[c], u, cyc, &span);
			free(w.initial);
			if (ret) {
				case_error(ctx, "growing workload at %u slots: %s", caps[c],
					   strerror(-ret));
				return;
			}
			if (i < o->warmup)
				continue;
			case_sample(ctx, c, stats_median(cyc, w.k), &span);
		}
	}
}

/* ---- perf: lookup cost ----------------------------------------------------------------- */

/* 117 slots: where the published comparison was made (binary 180, linear 460 cycles). */
static const unsigned int lookup_capacities[] = {117, 509, 4096, 32764};

/*
 * One case per capacity times the implementation under test and both references, batch
 * after batch in the same process: the vCPUs' speed drifts by tens of percent between
 * runs here, and only interleaving keeps the comparison fair. Metric MODE.DIST.
 */
enum { L_IMPL, L_LINEAR, L_BINARY, L_MODES };
enum { D_HIT_UNIFORM, D_HIT_SKEWED, D_MISS, D_DISTS };

static const struct metric_def lookup_metrics[L_MODES * D_DISTS] = {
	{"impl.hit_uniform", "cycles", LOWER_IS_BETTER},
	{"impl.hit_skewed", "cycles", LOWER_IS_BETTER},
	{"impl.miss", "cycles", LOWER_IS_BETTER},
	{"linear.hit_uniform", "cycles", LOWER_IS_BETTER},
	{"linear.hit_skewed", "cycles", LOWER_IS_BETTER},
	{"linear.miss", "cycles", LOWER_IS_BETTER},
	{"binary.hit_uniform", "cycles", LOWER_IS_BETTER},
	{"binary.hit_skewed", "cycles", LOWER_IS_BETTER},
	{"binary.miss", "cycles", LOWER_IS_BETTER},
};

/* Lookups per timed batch: the two fenced TSC reads around it cost ~0.1 cycle a lookup. */
#define LOOKUP_BATCH 1024
/* A booting guest hits its RAM and a few ROM and MMIO slots: 90% of hits on 3 slots. */
#define HOT_SLOTS 3
#define HOT_SHARE 90

static unsigned int expand_lookup(const struct hw_info *hw, const struct run_opts *opts,
				  struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)hw;
	for (size_t i = 0; i < sizeof(lookup_capacities) / sizeof(lookup_capacities[0]) && n < max;
	     i++, n++) {
		case_params_add(&out[n], "capacity", "%u", lookup_capacities[i]);
		case_params_add(&out[n], "impl", "%s", impl_get(opts->impl, "memslots.lookup"));
	}
	return n;
}

struct lookup_set {
	struct memslots s;
	struct memslot *slots;			/* what was loaded, to draw probes from */
	struct stats_rng rng;
	uint64_t probes[D_DISTS][LOOKUP_BATCH];
};

/*
 * Fresh probes for every sample: the same 1024 gfns batch after batch would let the branch
 * predictor learn the binary search's path, which no guest's accesses allow.
 */
static void lookup_probes(struct lookup_set *ls)
{
	unsigned int cap = ls->s.capacity;

	for (unsigned int k = 0; k < LOOKUP_BATCH; k++) {
		const struct memslot *u = &ls->slots[stats_rng_below(&ls->rng, cap)];
		const struct memslot *h =
			stats_rng_below(&ls->rng, 100) < HOT_SHARE
				? &ls->slots[stats_rng_below(&ls->rng, HOT_SLOTS) * (cap / HOT_SLOTS)]
				: u;

		ls->probes[D_HIT_UNIFORM][k] = u->base_gfn + stats_rng_below(&ls->rng, u->npages);
		ls->probes[D_HIT_SKEWED][k] = h->base_gfn + stats_rng_below(&ls->rng, h->npages);
		/* The first free gfn after a slot: always in a gap. */
		ls->probes[D_MISS][k] = u->base_gfn + u->npages;
	}
}

/* @cap slots in gfn order, 1-512 pages each, 1-64 free gfns between. */
static int lookup_setup(struct lookup_set *ls, unsigned int cap, uint64_t seed)
{
	uint64_t gfn = 0;
	int ret;

	ls->slots = malloc(cap * sizeof(*ls->slots));
	if (!ls->slots)
		return -ENOMEM;
	ret = memslots_init(&ls->s, cap, MEMSLOTS_BY_GFN, MEMSLOTS_SHIFT, MEMSLOTS_LINEAR, false);
	stats_rng_seed(&ls->rng, seed);
	for (unsigned int i = 0; i < cap; i++) {
		ls->slots[i] = (struct memslot){.id = (int32_t)i, .base_gfn = gfn,
						.npages = 1 + stats_rng_below(&ls->rng, 512)};
		gfn += ls->slots[i].npages + 1 + stats_rng_below(&ls->rng, 64);
	}
	return ret ? ret : memslots_load(&ls->s, ls->slots, cap);
}

/* Point the one set at a lookup mode: "linear", "binary", either with "+cache". */
static void lookup_mode(struct memslots *s, const char *mode)
{
	s->lookup = strncmp(mode, "binary", 6) ? MEMSLOTS_LINEAR : MEMSLOTS_BINARY;
	s->cache = strstr(mode, "+cache") != NULL;
	s->last_used = -1;
}

/* Written after each batch so that the lookups cannot be optimised away. */
static volatile int lookup_sink;

static double time_batch(struct memslots *s, const uint64_t *probes, struct measure_span *span)
{
	uint64_t t0;
	int acc = 0;

	measure_span_begin(span);
	t0 = tsc_begin();
	for (unsigned int k = 0; k < LOOKUP_BATCH; k++)
		acc += memslots_find(s, probes[k]);
	t0 = tsc_end() - t0;
	measure_span_end(span);
	lookup_sink = acc;
	return (double)t0 / LOOKUP_BATCH;
}

static void perf_lookup(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const char *modes[L_MODES] = {case_param(ctx, "impl"), "linear", "binary"};
	struct lookup_set *ls = calloc(1, sizeof(*ls));

	if (!ls || lookup_setup(ls, param_uint(ctx, "capacity"), o->seed)) {
		case_error(ctx, "cannot build a set of %u slots", param_uint(ctx, "capacity"));
		goto out;
	}
	for (unsigned int m = 0; m < L_MODES * D_DISTS; m++)
		case_counter(ctx, m, "tsc");
	for (unsigned int i = 0; i < o->warmup + o->samples; i++) {
		lookup_probes(ls);
		/* Rotate which mode goes first, so none always runs right after a new probe set. */
		for (unsigned int j = 0; j < L_MODES; j++) {
			unsigned int mode = (i + j) % L_MODES;

			lookup_mode(&ls->s, modes[mode]);
			for (unsigned int d = 0; d < D_DISTS; d++) {
				struct measure_span span;
				double c = time_batch(&ls->s, ls->probes[d], &span);

				if (i >= o->warmup)
					case_sample(ctx, mode * D_DISTS + d, c, &span);
			}
		}
	}
	memslots_release(&ls->s);
out:
	if (ls)
		free(ls->slots);
	free(ls);
}

/* ---- the suite ----------------------------------------------------------------------------- */

/* Indices into the table below, for the summary. */
enum { C_EQUIVALENCE, C_REGRESSION, C_GROWING, C_RANDOM, C_GROWTH, C_FIND };

static const struct case_def memslots_cases[] = {
	{.name = "equivalence", .group = "check", .kind = CASE_CHECK,
	 .doc = "seeded random operations: every strategy and lookup agrees with a plain oracle",
	 .expand = expand_capacity_order, .run = check_equivalence},
	{.name = "regression", .group = "check", .kind = CASE_CHECK,
	 .doc = "named regressions (the review's flags-only change, deletes, full set, ...)",
	 .expand = expand_regressions, .run = check_regression},
	{.name = "growing", .group = "update", .kind = CASE_PERF, .needs = NEEDS_HOST,
	 .doc = "cycles per update, creates of growing size (the published worst case)",
	 .metrics = update_metrics, .n_metrics = U_STRATEGIES * M_UPD_STATS, .expand = expand_update,
	 .run = perf_update_growing},
	{.name = "random", .group = "update", .kind = CASE_PERF, .needs = NEEDS_HOST,
	 .doc = "cycles per update, random creates, deletes, moves and flag changes",
	 .metrics = update_metrics, .n_metrics = U_STRATEGIES * M_UPD_STATS, .expand = expand_update,
	 .run = perf_update_random},
	{.name = "growth", .group = "update", .kind = CASE_PERF, .needs = NEEDS_HOST,
	 .doc = "median update of the growing workload at 509 and 4096 slots, in turn",
	 .metrics = growth_metrics, .n_metrics = 2, .expand = expand_growth, .run = perf_growth},
	{.name = "find", .group = "lookup", .kind = CASE_PERF, .needs = NEEDS_HOST,
	 .doc = "cycles per gfn lookup: uniform hits, skewed hits, misses",
	 .metrics = lookup_metrics, .n_metrics = L_MODES * D_DISTS, .expand = expand_lookup, .run = perf_lookup},
};

#define GROWING(cap) "memslots.update.growing\\[capacity=" #cap ",*"
#define GROWTH "memslots.update.growth\\[*"
#define FIND(cap) "memslots.lookup.find\\[capacity=" #cap ",*"

/* Published 2014 (seed 002), 128 inserts of growing size: heap sort max 249,747 cycles, v1
 * swap 15,654 (~5,900 reprofiled without spikes), v2 shift ~2,500: 1/100 of heap sort. A
 * bound of 1/20 leaves room for another machine and still fails anything sort-like. */
#define WHY_HEAPSORT "the update that replaced the heap sort must cost at most 1/20 of it " \
		     "(published 2014: ~2,500 vs 249,747 cycles max, 1/100)"
#define WHY_SWAP "v2 shifts neighbours instead of swapping them: one copy a step, not three " \
		 "(published 2014: ~2,500 vs ~5,900 cycles max)"
#define WHY_LINEAR "an O(n) update grows with the array: 4096/509 = 8x, with 1.5x headroom " \
		   "for caches; heap sort's n log n would still pass, the ratio gates catch it"
#define WHY_BINARY_117 "at 117 slots, on the booting guest's pattern (90% of hits on 3 slots): "  \
		       "uniform hits are a coin toss on this machine (linear 126-239, binary 138-164 "  \
		       "cycles over 12 runs), so the published 180 vs 460 is gated from 509 slots up"
#define WHY_BINARY "binary search beats the linear scan from 117 slots (published December " \
		   "2014: 180 vs 460 cycles average at 117 slots)"

static const struct gate_def memslots_gates[] = {
	{.name = "impl_vs_heapsort[capacity=128]", .kind = GATE_RATIO_AT_MOST,
	 .a = {GROWING(128), "impl.update_max"}, .b = {GROWING(128), "heapsort.update_max"},
	 .threshold = 0.05, .why = WHY_HEAPSORT, .paired = true},
	{.name = "impl_vs_heapsort[capacity=509]", .kind = GATE_RATIO_AT_MOST,
	 .a = {GROWING(509), "impl.update_max"}, .b = {GROWING(509), "heapsort.update_max"},
	 .threshold = 0.05, .why = WHY_HEAPSORT, .paired = true},
	{.name = "impl_vs_swap[capacity=128]", .kind = GATE_NOT_SLOWER,
	 .a = {GROWING(128), "impl.update_median"}, .b = {GROWING(128), "swap.update_median"},
	 .threshold = 1.0, .why = WHY_SWAP, .paired = true},
	{.name = "impl_vs_swap[capacity=509]", .kind = GATE_NOT_SLOWER,
	 .a = {GROWING(509), "impl.update_median"}, .b = {GROWING(509), "swap.update_median"},
	 .threshold = 1.0, .why = WHY_SWAP, .paired = true},
	{.name = "impl_linear_growth[4096/509]", .kind = GATE_RATIO_AT_MOST,
	 .a = {GROWTH, "update_median.4096"}, .b = {GROWTH, "update_median.509"},
	 .threshold = 8 * 1.5, .why = WHY_LINEAR, .paired = true},
	{.name = "lookup_vs_linear[capacity=117,skewed]", .kind = GATE_FASTER, .paired = true,
	 .a = {FIND(117), "impl.hit_skewed"}, .b = {FIND(117), "linear.hit_skewed"},
	 .threshold = 1.0, .why = WHY_BINARY_117},
	{.name = "lookup_vs_linear[capacity=509]", .kind = GATE_FASTER, .paired = true,
	 .a = {FIND(509), "impl.hit_uniform"}, .b = {FIND(509), "linear.hit_uniform"},
	 .threshold = 1.0, .why = WHY_BINARY},
	{.name = "lookup_vs_linear[capacity=4096]", .kind = GATE_FASTER, .paired = true,
	 .a = {FIND(4096), "impl.hit_uniform"}, .b = {FIND(4096), "linear.hit_uniform"},
	 .threshold = 1.0, .why = WHY_BINARY},
	{.name = "lookup_vs_linear[capacity=32764]", .kind = GATE_FASTER, .paired = true,
	 .a = {FIND(32764), "impl.hit_uniform"}, .b = {FIND(32764), "linear.hit_uniform"},
	 .threshold = 1.0, .why = WHY_BINARY},
};

static void print_figure(FILE *f, const struct case_result *r, unsigned int m, int width)
{
	if (r->metrics && r->metrics[m].n)
		fprintf(f, " %*.0f", width, r->metrics[m].sum.median);
	else
		fprintf(f, " %*s", width, case_outcome_name(r->outcome));
}

static void summary_updates(FILE *f, const struct case_result *results, size_t n)
{
	static const char *const role[U_STRATEGIES] = {"impl", "ref", "ref"};

	fprintf(f, "memslots: cycles per update (TSC; per sample the max, median and p99 of its "
		   "timed updates, the three strategies in turn; the median of the samples)\n");
	fprintf(f, "%-9s %9s %-13s %-5s %10s %10s %10s\n", "workload", "capacity", "strategy",
		"role", "max", "median", "p99");
	for (size_t i = 0; i < n; i++) {
		const struct case_inst *in = results[i].inst;

		if (in->def != &memslots_cases[C_GROWING] && in->def != &memslots_cases[C_RANDOM])
			continue;
		for (unsigned int s = 0; s < U_STRATEGIES; s++) {
			fprintf(f, "%-9s %9s %-13s %-5s", in->def->name, case_params_get(&in->params, "capacity"),
				s == U_HEAPSORT ? "heapsort" : s == U_SWAP ? "swap"
								  : case_params_get(&in->params, "impl"),
				role[s]);
			for (unsigned int m = 0; m < M_UPD_STATS; m++)
				print_figure(f, &results[i], s * M_UPD_STATS + m, 10);
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct metric_result *m = results[i].metrics;

		if (results[i].inst->def == &memslots_cases[C_GROWTH] && m[0].n && m[1].n)
			fprintf(f, "growth of %s, growing workload: median %.0f at %d slots, %.0f at "
				   "%d: %.2fx for %.2fx the slots\n",
				case_params_get(&results[i].inst->params, "impl"), m[0].sum.median, GROWTH_SMALL,
				m[1].sum.median, GROWTH_LARGE, m[1].sum.median / m[0].sum.median,
				(double)GROWTH_LARGE / GROWTH_SMALL);
	}
	fprintf(f, "published 2014 (seed 002), 128 inserts of growing size, kernel, core cycles:\n"
		   "  heapsort max 249,747 (min 52,536); swap (v1) max 15,654 (~5,900 reprofiled "
		   "without spikes); shift (v2) max ~2,500\n");
}

static void summary_lookups(FILE *f, const struct case_result *results, size_t n)
{
	static const char *const role[L_MODES] = {"impl", "ref", "ref"};

	fprintf(f, "\nmemslots: cycles per gfn lookup (TSC; batches of %d, the three lookups in "
		   "turn; median of the batches)\n", LOOKUP_BATCH);
	fprintf(f, "%9s %-13s %-5s %12s %12s %12s\n", "capacity", "lookup", "role", "hit_uniform",
		"hit_skewed", "miss");
	for (size_t i = 0; i < n; i++) {
		const struct case_inst *in = results[i].inst;

		if (in->def != &memslots_cases[C_FIND])
			continue;
		for (unsigned int mode = 0; mode < L_MODES; mode++) {
			fprintf(f, "%9s %-13s %-5s", case_params_get(&in->params, "capacity"),
				mode == L_LINEAR ? "linear" : mode == L_BINARY ? "binary"
								   : case_params_get(&in->params, "impl"),
				role[mode]);
			for (unsigned int d = 0; d < D_DISTS; d++)
				print_figure(f, &results[i], mode * D_DISTS + d, 12);
			fputc('\n', f);
		}
	}
	fprintf(f, "published December 2014, 117 slots: binary search 180, linear 460 cycles "
		   "average\n");
}

/* The tables of the memslots figures, with the published ones beside them. */
static char *memslots_summary(const struct case_result *results, size_t n)
{
	char *buf = NULL;
	size_t len = 0, perf = 0;
	FILE *f;

	for (size_t i = 0; i < n; i++)
		perf += results[i].inst->suite == &suite_memslots &&
			results[i].inst->def->kind == CASE_PERF && results[i].outcome == OUTCOME_PASS;
	if (!perf || !(f = open_memstream(&buf, &len)))
		return NULL;
	summary_updates(f, results, n);
	summary_lookups(f, results, n);
	fclose(f);
	return buf;
}

const struct suite_def suite_memslots = {
	.name = "memslots",
	.doc = "KVM's memslot array: sorted updates (heap sort, swap, shift) and lookups",
	.cases = memslots_cases,
	.n_cases = sizeof(memslots_cases) / sizeof(memslots_cases[0]),
	.gates = memslots_gates,
	.n_gates = sizeof(memslots_gates) / sizeof(memslots_gates[0]),
	.summary = memslots_summary,
};
