/* kvm.c - the kvm suite: the host kernel's KVM_SET_USER_MEMORY_REGION, timed per operation as
 * tools/testing/selftests/kvm/memslot_perf_test.c exercises it, beside the 2014 array. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "run/result.h"
#include "run/sampling.h"
#include "hw/tsc.h"
#include "impl/memslots.h"
#include "suites/suites.h"
#include "suites/summary.h"
#include "util/stats.h"
#include "util/util.h"

/*
 * Slots of 2 MiB, one anonymous mapping behind them all, reserved and never touched: the
 * smallest slot the kernel can map with one large page, so its per-slot arrays (large-page
 * info, the dirty bitmap when logging) are those of a real guest's slot, and 32,764 of them
 * are 64 GiB of address space and no memory. Guest physical addresses start at 4 GiB.
 */
#define SLOT_BYTES (2ULL << 20)
#define GPA_BASE (4ULL << 30)
/* Operations timed per kind and round besides the inserts: deletes, moves, flag changes. */
#define OPS 256

static const unsigned int slot_counts[] = {125, 509, 4096};

/* ---- a VM to set memslots on --------------------------------------------------------------- */

struct vm {
	int kvm, fd;
	char *mem;	/* behind the slots */
	size_t mem_len; /* slots * SLOT_BYTES */
};

static int vm_open(struct vm *v, unsigned int slots, struct mg_err *err)
{
	v->mem_len = (size_t)slots * SLOT_BYTES;
	v->fd = -1;
	v->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (v->kvm < 0)
		return mg_err_set(err, errno, "/dev/kvm: %s", strerror(errno));
	v->mem = mmap(NULL, v->mem_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v->mem == MAP_FAILED) {
		int e = errno;

		close(v->kvm);
		v->kvm = -1;
		return mg_err_set(err, e, "mmap of %zu MiB: %s", v->mem_len >> 20, strerror(e));
	}
	return 0;
}

static void vm_close(struct vm *v)
{
	if (v->fd >= 0)
		close(v->fd);
	munmap(v->mem, v->mem_len);
	close(v->kvm);
}

/* A fresh VM, the previous one (and all its slots) gone. */
static int vm_fresh(struct vm *v, struct mg_err *err)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = ioctl(v->kvm, KVM_CREATE_VM, 0);
	if (v->fd < 0)
		return mg_err_set(err, errno, "KVM_CREATE_VM: %s", strerror(errno));
	return 0;
}

/* ---- the operation sequence, on the kernel and on the reference ---------------------------- */

enum op { O_INSERT, O_FLAGS, O_MOVE, O_DELETE_NEWEST, O_DELETE_OLDEST, O_KINDS };

static const char *const op_names[O_KINDS] = {"insert", "flags", "move", "delete_newest",
					      "delete_oldest"};

/* Slot @id where the sequence puts it: at its place, or moved past all slots. */
static struct memslot slot_at(unsigned int id, unsigned int slots, bool moved, uint32_t flags,
			      const struct vm *v)
{
	uint64_t gpa = GPA_BASE + (uint64_t)(moved ? slots : id) * SLOT_BYTES;

	return (struct memslot){.id = (int32_t)id,
				.base_gfn = gpa >> 12,
				.npages = SLOT_BYTES >> 12,
				.userspace_addr = (uintptr_t)(v->mem + (size_t)id * SLOT_BYTES),
				.flags = flags};
}

/* Cycles of each timed operation of one round, per kind. */
struct round_ops {
	double *cyc[O_KINDS];
	unsigned int n[O_KINDS];
};

/* One side of the comparison: sets @s (a deletion when npages is 0) and says how it went. */
struct side {
	struct vm *vm;	      /* the kernel's, or NULL */
	struct memslots *ref; /* the reference's, or NULL */
};

static int side_set(struct side *sd, const struct memslot *s, double *cycles)
{
	uint64_t t0;
	int ret;

	if (sd->vm) {
		struct kvm_userspace_memory_region r = {.slot = (uint32_t)s->id,
							.flags = s->flags,
							.guest_phys_addr = s->base_gfn << 12,
							.memory_size = s->npages << 12,
							.userspace_addr = s->userspace_addr};

		t0 = tsc_begin();
		ret = ioctl(sd->vm->fd, KVM_SET_USER_MEMORY_REGION, &r) ? -errno : 0;
		t0 = tsc_end() - t0;
	} else {
		t0 = tsc_begin();
		ret = memslots_set(sd->ref, s);
		t0 = tsc_end() - t0;
	}
	if (cycles)
		*cycles = (double)t0;
	return ret;
}

static void record(struct round_ops *ro, enum op o, double c)
{
	ro->cyc[o][ro->n[o]++] = c;
}

/* Set slot @id at its place (or, with @delete, remove it), timed into @ro's @o unless @ro is
 * NULL. */
static int step(struct side *sd, const struct vm *v, unsigned int slots, unsigned int id,
		bool delete, struct round_ops *ro, enum op o, char *what, size_t what_len)
{
	struct memslot s = slot_at(id, slots, false, 0, v);
	double c;
	int ret;

	if (delete)
		s.npages = 0;
	ret = side_set(sd, &s, &c);
	if (!ret && ro && o != O_KINDS)
		record(ro, o, c);
	snprintf(what, what_len, "%s slot %u", delete ? "deleting" : "inserting", id);
	return ret;
}

/* Ops of each kind timed in a round at @slots slots. */
static unsigned int ops_at(unsigned int slots)
{
	return slots < OPS ? slots : OPS;
}

/*
 * Before the first round: the slots the rounds start from, the oldest slots - k, put in
 * untimed (the kernel's one by one, the reference's sorted in one go).
 */
static int prepare(struct side *sd, const struct vm *v, unsigned int slots, char *what,
		   size_t what_len)
{
	unsigned int base = slots - ops_at(slots);
	struct memslot *all;
	int ret = 0;

	if (sd->vm) {
		for (unsigned int id = 0; !ret && id < base; id++)
			ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
		return ret;
	}
	if (!base)
		return 0;
	all = malloc(base * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (unsigned int id = 0; id < base; id++)
		all[id] = slot_at(id, slots, false, 0, v);
	snprintf(what, what_len, "loading %u slots", base);
	ret = memslots_load(sd->ref, all, base);
	free(all);
	return ret;
}

/*
 * A round, from and back to the prepared slots (the oldest slots - k, k = min(slots, OPS)):
 * the k newest inserted, growing the set to @slots; dirty logging on and off on k/2 slots
 * spread over it; k/2 of them moved past the others and back; the k newest deleted, newest
 * first, and put back; the k oldest deleted, oldest first, and put back; the k newest
 * deleted again. Returns 0, or the -errno of the operation that failed, named in @what.
 */
static int run_round(struct side *sd, const struct vm *v, unsigned int slots, struct round_ops *ro,
		     char *what, size_t what_len)
{
	unsigned int k = ops_at(slots), base = slots - k, spread;
	double c;
	int ret = 0;

	if (!slots)
		return -EINVAL;
	spread = slots / (k / 2 ? k / 2 : 1);
	memset(ro->n, 0, sizeof(ro->n));
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, false, ro, O_INSERT, what, what_len);
	for (unsigned int j = 0; !ret && j < k / 2; j++) {
		unsigned int id = j * spread < slots ? j * spread : slots - 1;

		for (int on = 1; !ret && on >= 0; on--) {
			struct memslot s =
			    slot_at(id, slots, false, on ? KVM_MEM_LOG_DIRTY_PAGES : 0, v);

			if (!(ret = side_set(sd, &s, &c)))
				record(ro, O_FLAGS, c);
			snprintf(what, what_len, "dirty logging %s on slot %u", on ? "on" : "off",
				 id);
		}
		for (int away = 1; !ret && away >= 0; away--) {
			struct memslot s = slot_at(id, slots, away, 0, v);

			if (!(ret = side_set(sd, &s, &c)))
				record(ro, O_MOVE, c);
			snprintf(what, what_len, "moving slot %u", id);
		}
	}
	for (unsigned int j = 0; !ret && j < k; j++)
		ret = step(sd, v, slots, slots - 1 - j, true, ro, O_DELETE_NEWEST, what, what_len);
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
	for (unsigned int id = 0; !ret && id < k; id++)
		ret = step(sd, v, slots, id, true, ro, O_DELETE_OLDEST, what, what_len);
	for (unsigned int id = 0; !ret && id < k; id++)
		ret = step(sd, v, slots, id, false, NULL, O_KINDS, what, what_len);
	for (unsigned int id = base; !ret && id < slots; id++)
		ret = step(sd, v, slots, id, true, NULL, O_KINDS, what, what_len);
	return ret;
}

/* ---- the memslots case --------------------------------------------------------------------- */

enum { ARM_KVM, ARM_REF, ARMS };
enum { ST_MEDIAN, ST_P99, STATS };
#define METRIC(arm, op, st) (((arm)*O_KINDS + (op)) * STATS + (st))
#define M_MEMSLOTS (ARMS * O_KINDS * STATS)

/* In METRIC()'s order: arm, then operation (enum op), then statistic. */
// clang-format off
#define OP_METRICS(arm, op) \
	{arm "." op ".median", "cycles", LOWER_IS_BETTER}, \
	{arm "." op ".p99", "cycles", LOWER_IS_BETTER}
#define ARM_METRICS(arm) \
	OP_METRICS(arm, "insert"), OP_METRICS(arm, "flags"), OP_METRICS(arm, "move"), \
	OP_METRICS(arm, "delete_newest"), OP_METRICS(arm, "delete_oldest")
// clang-format on

static const struct metric_def memslots_metrics[] = {ARM_METRICS("kvm"), ARM_METRICS("ref")};

static_assert(ARRAY_SIZE(memslots_metrics) == M_MEMSLOTS, "a metric per arm, operation, statistic");
static_assert(STATS == 2 && O_KINDS == 5,
	      "OP_METRICS and ARM_METRICS name each statistic and operation");

struct memslots_case {
	struct case_ctx *ctx;
	unsigned int slots;
	struct vm vm;
	struct memslots ref;
	bool have_ref;
	struct round_ops ro;
};

static void record_round(struct memslots_case *mc, unsigned int arm)
{
	for (unsigned int o = 0; o < O_KINDS; o++) {
		double *x = mc->ro.cyc[o];
		unsigned int n = mc->ro.n[o];

		if (!n)
			continue;
		qsort(x, n, sizeof(*x), util_cmp_double);
		case_sample(mc->ctx, METRIC(arm, o, ST_MEDIAN), stats_quantile_sorted(x, n, 0.5),
			    NULL);
		case_sample(mc->ctx, METRIC(arm, o, ST_P99), stats_quantile_sorted(x, n, 0.99),
			    NULL);
	}
}

static int memslots_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct memslots_case *mc = arg;
	struct side sd = {.vm = arm == ARM_KVM ? &mc->vm : NULL, .ref = &mc->ref};
	char what[64] = "";
	int ret;

	(void)round;
	if (arm == ARM_REF && !mc->have_ref)
		return 0;
	ret = run_round(&sd, &mc->vm, mc->slots, &mc->ro, what, sizeof(what));
	if (ret) {
		case_error(mc->ctx, "%s (%s): %s",
			   arm == ARM_KVM ? "KVM_SET_USER_MEMORY_REGION" : "the reference", what,
			   strerror(-ret));
		return ret;
	}
	if (measured)
		record_round(mc, arm);
	return 0;
}

/*
 * Pin the case to the lowest PU it may run on: unpinned ioctl timings are up to 5x noisier
 * here, and the PU matters: on this VM an insert pinned to PU 1 took 80 us against 7 us on
 * PU 0, every time, so the PU is fixed rather than wherever the case happened to start.
 * Returns the PU, or -1 (logged) when pinning failed. @second (may be NULL) gets the next PU
 * the process was allowed before it was pinned, or -1 when there is none.
 */
static int pin_first(struct case_ctx *ctx, int *second)
{
	cpu_set_t allowed, one;
	int first = -1;

	if (second)
		*second = -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		case_log(ctx, "not pinned: %s", strerror(errno));
		return -1;
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed))
			continue;
		if (first >= 0) {
			if (second)
				*second = c;
			break;
		}
		first = c;
	}
	CPU_ZERO(&one);
	if (first >= 0)
		CPU_SET(first, &one);
	if (first < 0 || sched_setaffinity(0, sizeof(one), &one)) {
		case_log(ctx, "not pinned: %s", first < 0 ? "no allowed PU" : strerror(errno));
		return -1;
	}
	case_prop(ctx, "pinned_pu", "%d", first);
	return first;
}

/* Both sides at the slots the rounds start from. Returns 0 or -errno, @what saying where. */
static int prepare_sides(struct memslots_case *mc, char *what, size_t what_len)
{
	struct side kernel = {.vm = &mc->vm}, ref = {.ref = &mc->ref};
	int ret = prepare(&kernel, &mc->vm, mc->slots, what, what_len);

	return ret || !mc->have_ref ? ret : prepare(&ref, &mc->vm, mc->slots, what, what_len);
}

/* Which KVM this is: kvm_intel, kvm_amd or kvm_pvm (see hw.h). */
static void prop_kvm_module(struct case_ctx *ctx)
{
	const char *mod = case_hw(ctx)->kvm_module;

	case_prop(ctx, "kvm_module", "%s", mod[0] ? mod : "unknown");
}

static void perf_memslots(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct memslots_case mc = {.ctx = ctx,
				   .slots = (unsigned int)atoi(case_param(ctx, "slots"))};
	struct case_arms arms = {.n = ARMS,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = memslots_sample,
				 .arg = &mc};
	struct mg_err err;
	char what[64] = "";
	int ret;

	if (!mc.slots || (int)mc.slots > case_hw(ctx)->kvm_max_memslots) {
		case_error(ctx, "%u slots: this KVM takes 1 to %d", mc.slots,
			   case_hw(ctx)->kvm_max_memslots);
		return;
	}
	for (unsigned int k = 0; k < O_KINDS; k++) {
		mc.ro.cyc[k] = malloc(sizeof(double) * OPS);
		if (!mc.ro.cyc[k]) {
			case_error(ctx, "out of memory");
			goto out;
		}
	}
	/* One past the slots: where the moved slot goes. */
	if ((ret = vm_open(&mc.vm, mc.slots + 1, &err)) || (ret = vm_fresh(&mc.vm, &err))) {
		if (ret == -EACCES || ret == -ENOENT)
			case_skip(ctx, "%s", err.msg);
		else
			case_error(ctx, "%s", err.msg);
		if (mc.vm.kvm >= 0)
			vm_close(&mc.vm);
		goto out;
	}
	/* The 2014 array holds 32,764 slots at most: beyond, the kernel runs alone. */
	mc.have_ref = !memslots_init(&mc.ref, mc.slots, MEMSLOTS_BY_GFN, MEMSLOTS_SHIFT,
				     MEMSLOTS_BINARY, true);
	if (!mc.have_ref)
		case_log(ctx, "no reference beside the kernel: the 2014 array takes 32,764 slots");
	for (unsigned int m = 0; m < M_MEMSLOTS; m++)
		case_counter(ctx, m, "tsc");
	case_prop(ctx, "tsc_mhz", "%.3f", case_hw(ctx)->tsc_hz / 1e6);
	prop_kvm_module(ctx);
	case_prop(ctx, "kvm_cap_nr_memslots", "%d", case_hw(ctx)->kvm_max_memslots);
	case_prop(ctx, "slot_mib", "%llu", SLOT_BYTES >> 20);
	case_prop(ctx, "ops_per_kind", "%u", ops_at(mc.slots));
	pin_first(ctx, NULL);
	if (!(ret = prepare_sides(&mc, what, sizeof(what))))
		case_interleave(&arms);
	else
		case_error(ctx, "preparing %u slots (%s): %s", mc.slots, what, strerror(-ret));
	if (mc.have_ref)
		memslots_release(&mc.ref);
	vm_close(&mc.vm);
out:
	for (unsigned int k = 0; k < O_KINDS; k++)
		free(mc.ro.cyc[k]);
}

static unsigned int expand_slots(const struct hw_info *hw, const struct run_opts *opts,
				 struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)opts;
	for (size_t i = 0; i < ARRAY_SIZE(slot_counts) && n < max; i++)
		if (hw->kvm != HW_PROBE_YES || (int)slot_counts[i] <= hw->kvm_max_memslots)
			case_params_add(&out[n++], "slots", "%u", slot_counts[i]);
	/* The host's own limit, asked of KVM_CHECK_EXTENSION, never assumed. */
	if (hw->kvm == HW_PROBE_YES && hw->kvm_max_memslots > 4096 && n < max)
		case_params_add(&out[n++], "slots", "%d", hw->kvm_max_memslots);
	return n;
}

/* ---- a running vCPU while slots come and go ------------------------------------------------ */

/*
 * The guest: 16-bit real mode, code at 0, data in the segment at 64 KiB: it increments one
 * byte in each of 15 pages, then a 32-bit pass counter in the 16th, forever, without exits.
 *   mov ax, 0x1000; mov ds, ax
 *   top: xor bx, bx
 *   next: inc byte [bx]; add bx, 0x1000; cmp bx, 0xf000; jb next
 *   inc dword [0xfff0]; jmp top
 */
static const uint8_t busy_code[] = {0xb8, 0x00, 0x10, 0x8e, 0xd8, 0x31, 0xdb, 0xfe, 0x07,
				    0x81, 0xc3, 0x00, 0x10, 0x81, 0xfb, 0x00, 0xf0, 0x72,
				    0xf4, 0x66, 0xff, 0x06, 0xf0, 0xff, 0xeb, 0xeb};
#define GUEST_BYTES (128u << 10)
#define PAGES_PER_PASS 15
#define COUNTER_OFFSET (0x10000 + 0xfff0)
/* Slots added and removed while the guest runs, per round, and the idle window. */
#define BUSY_SLOTS 256
#define IDLE_WINDOW_NS 50000000

struct busy_guest {
	int vcpu;
	struct kvm_run *run;
	long run_size;
	char *mem;
	pthread_t thread;
	atomic_bool stop;
	int cpu; /* the PU the vCPU thread is bound to, -1: any */
	int error;
	unsigned int exit_reason; /* with error EPROTO */
};

static void kick(int sig)
{
	(void)sig;
}

static void *vcpu_main(void *arg)
{
	struct busy_guest *g = arg;

	if (g->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!atomic_load(&g->stop)) {
		/* The guest never exits by itself: a return that is not a signal's is a broken
		 * guest (exit_reason says how). */
		if (!ioctl(g->vcpu, KVM_RUN, 0)) {
			g->exit_reason = g->run->exit_reason;
			g->error = EPROTO;
			break;
		}
		if (errno != EINTR) {
			g->error = errno;
			break;
		}
	}
	return NULL;
}

static void vcpu_failed(struct case_ctx *ctx, const struct busy_guest *g)
{
	if (g->error == EPROTO)
		case_error(ctx, "the guest left KVM_RUN with exit reason %u: it should never exit",
			   g->exit_reason);
	else
		case_error(ctx, "KVM_RUN of the busy guest: %s", strerror(g->error));
}

static uint32_t passes(const struct busy_guest *g)
{
	return atomic_load_explicit((_Atomic uint32_t *)(void *)(g->mem + COUNTER_OFFSET),
				    memory_order_relaxed);
}

enum {
	M_IDLE_RATE,
	M_BUSY_RATE,
	M_BUSY_OVER_IDLE,
	M_BUSY_INSERT_MEDIAN,
	M_BUSY_INSERT_P99,
	M_BUSY_DELETE_MEDIAN,
	M_BUSY_DELETE_P99,
	M_BUSY,
};

static const struct metric_def busy_metrics[M_BUSY] = {
    [M_IDLE_RATE] = {"guest.idle_accesses_per_s", "accesses/s", HIGHER_IS_BETTER},
    [M_BUSY_RATE] = {"guest.busy_accesses_per_s", "accesses/s", HIGHER_IS_BETTER},
    [M_BUSY_OVER_IDLE] = {"guest.busy_over_idle", "x", HIGHER_IS_BETTER},
    [M_BUSY_INSERT_MEDIAN] = {"kvm.insert.median", "cycles", LOWER_IS_BETTER},
    [M_BUSY_INSERT_P99] = {"kvm.insert.p99", "cycles", LOWER_IS_BETTER},
    [M_BUSY_DELETE_MEDIAN] = {"kvm.delete.median", "cycles", LOWER_IS_BETTER},
    [M_BUSY_DELETE_P99] = {"kvm.delete.p99", "cycles", LOWER_IS_BETTER},
};

struct busy_case {
	struct case_ctx *ctx;
	struct vm vm;
	struct busy_guest g;
	double idle_rate;
	double cyc[2][BUSY_SLOTS];
};

/* Guest accesses per second over a span of @ns that started at @p0 passes. */
static double rate(const struct busy_guest *g, uint32_t p0, int64_t ns)
{
	return (double)(uint32_t)(passes(g) - p0) * PAGES_PER_PASS / ((double)ns / 1e9);
}

static int busy_sample(void *arg, unsigned int arm, unsigned int round, bool measured)
{
	struct busy_case *bc = arg;
	struct timespec idle = {0, IDLE_WINDOW_NS};
	int64_t t0 = util_now_ns();
	uint32_t p0 = passes(&bc->g);
	int ret = 0;

	(void)round;
	if (bc->g.error) {
		vcpu_failed(bc->ctx, &bc->g);
		return -bc->g.error;
	}
	if (arm == 0) {
		/* The guest alone: this thread waits out the window, the vCPU works. */
		while (nanosleep(&idle, &idle) && errno == EINTR)
			;
		bc->idle_rate = rate(&bc->g, p0, util_now_ns() - t0);
		if (measured)
			case_sample(bc->ctx, M_IDLE_RATE, bc->idle_rate, NULL);
		return 0;
	}
	struct side sd = {.vm = &bc->vm};

	for (unsigned int j = 0; !ret && j < BUSY_SLOTS; j++) {
		struct memslot s = slot_at(j, BUSY_SLOTS, false, 0, &bc->vm);

		ret = side_set(&sd, &s, &bc->cyc[0][j]);
	}
	for (unsigned int j = 0; !ret && j < BUSY_SLOTS; j++) {
		struct memslot s = slot_at(j, BUSY_SLOTS, false, 0, &bc->vm);

		s.npages = 0;
		ret = side_set(&sd, &s, &bc->cyc[1][j]);
	}
	if (ret) {
		case_error(bc->ctx, "KVM_SET_USER_MEMORY_REGION with a running vCPU: %s",
			   strerror(-ret));
		return ret;
	}
	if (measured) {
		double r = rate(&bc->g, p0, util_now_ns() - t0);

		case_sample(bc->ctx, M_BUSY_RATE, r, NULL);
		if (bc->idle_rate > 0)
			case_sample(bc->ctx, M_BUSY_OVER_IDLE, r / bc->idle_rate, NULL);
		for (int d = 0; d < 2; d++) {
			qsort(bc->cyc[d], BUSY_SLOTS, sizeof(double), util_cmp_double);
			case_sample(bc->ctx, d ? M_BUSY_DELETE_MEDIAN : M_BUSY_INSERT_MEDIAN,
				    stats_quantile_sorted(bc->cyc[d], BUSY_SLOTS, 0.5), NULL);
			case_sample(bc->ctx, d ? M_BUSY_DELETE_P99 : M_BUSY_INSERT_P99,
				    stats_quantile_sorted(bc->cyc[d], BUSY_SLOTS, 0.99), NULL);
		}
	}
	return 0;
}

/* The guest's memory at gpa 0 (slot BUSY_SLOTS, past the ones that come and go), its vCPU. */
static int busy_open(struct busy_case *bc, struct mg_err *err)
{
	struct kvm_userspace_memory_region region = {.slot = BUSY_SLOTS,
						     .memory_size = GUEST_BYTES};
	struct kvm_sregs sregs;
	struct kvm_regs regs = {.rip = 0, .rflags = 2};
	struct busy_guest *g = &bc->g;

	g->vcpu = -1;
	g->run = MAP_FAILED;
	g->mem = mmap(NULL, GUEST_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->mem == MAP_FAILED)
		return mg_err_set(err, errno, "mmap of the guest: %s", strerror(errno));
	memcpy(g->mem, busy_code, sizeof(busy_code));
	region.userspace_addr = (uintptr_t)g->mem;
	if (ioctl(bc->vm.fd, KVM_SET_USER_MEMORY_REGION, &region))
		return mg_err_set(err, errno, "the guest's slot: %s", strerror(errno));
	g->vcpu = ioctl(bc->vm.fd, KVM_CREATE_VCPU, 0);
	g->run_size = ioctl(bc->vm.kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (g->vcpu < 0 || g->run_size <= 0)
		return mg_err_set(err, errno, "KVM_CREATE_VCPU: %s", strerror(errno));
	g->run = mmap(NULL, (size_t)g->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, g->vcpu, 0);
	if (g->run == MAP_FAILED)
		return mg_err_set(err, errno, "mmap of kvm_run: %s", strerror(errno));
	if (ioctl(g->vcpu, KVM_GET_SREGS, &sregs))
		return mg_err_set(err, errno, "KVM_GET_SREGS: %s", strerror(errno));
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(g->vcpu, KVM_SET_SREGS, &sregs) || ioctl(g->vcpu, KVM_SET_REGS, &regs))
		return mg_err_set(err, errno, "setting the vCPU's registers: %s", strerror(errno));
	return 0;
}

static void busy_stop(struct busy_guest *g)
{
	atomic_store(&g->stop, true);
	g->run->immediate_exit = 1;
	/* The signal may land before KVM_RUN: immediate_exit then stops the next one. */
	for (;;) {
		struct timespec until;

		pthread_kill(g->thread, SIGUSR1);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 10000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (!pthread_timedjoin_np(g->thread, NULL, &until))
			return;
	}
}

static void perf_busy(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	struct busy_case *bc = calloc(1, sizeof(*bc));
	struct case_arms arms = {
	    .n = 2, .warmup = o->warmup, .samples = o->samples, .sample = busy_sample};
	struct sigaction sa = {.sa_handler = kick};
	int ret;
	struct mg_err err;

	if (!bc) {
		case_error(ctx, "out of memory");
		return;
	}
	arms.arg = bc;
	bc->ctx = ctx;
	if ((ret = vm_open(&bc->vm, BUSY_SLOTS, &err)) || (ret = vm_fresh(&bc->vm, &err)) ||
	    (ret = busy_open(bc, &err))) {
		if (ret == -EACCES || ret == -ENOENT)
			case_skip(ctx, "%s", err.msg);
		else
			case_error(ctx, "%s", err.msg);
		goto out;
	}
	/* This thread on the first PU, the vCPU on another allowed one where there is one. */
	pin_first(ctx, &bc->g.cpu);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) ||
	    (ret = pthread_create(&bc->g.thread, NULL, vcpu_main, &bc->g))) {
		case_error(ctx, "cannot start the vCPU thread: %s", strerror(ret ? ret : errno));
		goto out;
	}
	for (unsigned int m = 0; m < M_BUSY; m++)
		case_counter(ctx, m, m < M_BUSY_INSERT_MEDIAN ? "clock" : "tsc");
	case_prop(ctx, "tsc_mhz", "%.3f", case_hw(ctx)->tsc_hz / 1e6);
	prop_kvm_module(ctx);
	case_prop(ctx, "slots_per_round", "%d", BUSY_SLOTS);
	case_prop(ctx, "guest_pages_touched", "%d", PAGES_PER_PASS);
	case_prop(ctx, "vcpu_pu", "%d", bc->g.cpu);
	case_interleave(&arms);
	busy_stop(&bc->g);
	if (bc->g.error)
		vcpu_failed(ctx, &bc->g);
out:
	if (bc->g.run && bc->g.run != MAP_FAILED)
		munmap(bc->g.run, (size_t)bc->g.run_size);
	if (bc->g.vcpu > 0)
		close(bc->g.vcpu);
	if (bc->g.mem && bc->g.mem != MAP_FAILED)
		munmap(bc->g.mem, GUEST_BYTES);
	if (bc->vm.kvm > 0)
		vm_close(&bc->vm);
	free(bc);
}

/* ---- the suite ----------------------------------------------------------------------------- */

enum { C_MEMSLOTS, C_BUSY };

static const struct case_def kvm_cases[] = {
    [C_MEMSLOTS] = {.name = "memslots",
		    .group = "perf",
		    .kind = CASE_PERF,
		    .needs = NEEDS_HOST | NEEDS_KVM,
		    .doc = "KVM_SET_USER_MEMORY_REGION per operation (insert, flags, move, "
			   "deletes), beside the 2014 array",
		    .metrics = memslots_metrics,
		    .n_metrics = M_MEMSLOTS,
		    .expand = expand_slots,
		    .run = perf_memslots},
    [C_BUSY] = {.name = "busy_guest",
		.group = "perf",
		.kind = CASE_PERF,
		.needs = NEEDS_HOST | NEEDS_KVM,
		.doc = "a vCPU touching its memory while 256 slots come and go: its accesses/s "
		       "and the ioctls' cycles",
		.metrics = busy_metrics,
		.n_metrics = M_BUSY,
		.run = perf_busy},
};

static void summary_memslots(FILE *f, const struct case_result *r, double mhz)
{
	fprintf(f, "%s\n  %-14s %10s %10s %10s %10s %8s\n", r->inst->name, "operation", "kernel us",
		"p99 us", "ref us", "ref p99", "kern/ref");
	for (unsigned int o = 0; o < O_KINDS; o++) {
		const struct metric_result *k = case_result_sampled(r,
								    METRIC(ARM_KVM, o, ST_MEDIAN)),
					   *kp = case_result_sampled(r, METRIC(ARM_KVM, o, ST_P99)),
					   *rf = case_result_sampled(r,
								     METRIC(ARM_REF, o, ST_MEDIAN)),
					   *rp = case_result_sampled(r, METRIC(ARM_REF, o, ST_P99));

		if (!k || !kp)
			continue;
		fprintf(f, "  %-14s %10.2f %10.2f", op_names[o], k->sum.median / mhz,
			kp->sum.median / mhz);
		if (rf && rp)
			fprintf(f, " %10.3f %10.3f %7.2fx", rf->sum.median / mhz,
				rp->sum.median / mhz, k->sum.median / rf->sum.median);
		fputc('\n', f);
	}
}
/* The TSC rate the case measured its cycles at, 0 when it did not say. */
static double tsc_mhz(const struct case_result *r)
{
	const char *v = case_result_prop(r, "tsc_mhz");

	return v ? atof(v) : 0;
}

static bool kvm_wanted(const struct case_result *r)
{
	return r->inst->suite == &suite_kvm && case_result_sampled(r, 0) && tsc_mhz(r) > 0;
}

static void kvm_row(FILE *f, const struct case_result *r)
{
	double mhz = tsc_mhz(r);

	if (r->inst->def == &kvm_cases[C_MEMSLOTS]) {
		summary_memslots(f, r, mhz);
		return;
	}
	fprintf(f,
		"%s: guest %.3g accesses/s alone, %.3g while slots change (%.2fx); insert %.2f "
		"us, delete %.2f us (medians)\n",
		r->inst->name, case_result_median(r, M_IDLE_RATE),
		case_result_median(r, M_BUSY_RATE), case_result_median(r, M_BUSY_OVER_IDLE),
		case_result_median(r, M_BUSY_INSERT_MEDIAN) / mhz,
		case_result_median(r, M_BUSY_DELETE_MEDIAN) / mhz);
}

static char *kvm_summary(const struct case_result *results, size_t n)
{
	static const struct summary_table table = {.wanted = kvm_wanted, .row = kvm_row};

	return summary_write(&table, results, n);
}

const struct suite_def suite_kvm = {
    .name = "kvm",
    .doc = "the host kernel's memslot ioctls per operation and slot count, beside the 2014 "
	   "array; a running vCPU meanwhile",
    .cases = kvm_cases,
    .n_cases = ARRAY_SIZE(kvm_cases),
    .summary = kvm_summary,
};
