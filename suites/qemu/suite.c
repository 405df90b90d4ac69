/* SPDX-License-Identifier: GPL-2.0-or-later */
/* suite.c - the qemu suite: a real QEMU's -mem-prealloc start-up beside the reference
 * preallocation on the same pages (the 2017 parallel-prealloc and 2025 thread-cap threads are about
 * QEMU's own code), and the 60-disk boot of the 2017 malloc_trim thread on a real QEMU and kernel
 * (boot.c). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mntent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/result.h"
#include "run/sampling.h"
#include "hw/measure.h"
#include "run/qemu.h"
#include "impl/prealloc.h"
#include "suites/pages.h"
#include "suites/qemu/check.h"
#include "suites/qemu/boot.h"
#include "suites/suites.h"

#include "util/embed.h"
#include "util/stats.h"
#include "util/util.h"

/* Its gates and tolerances (rules.conf beside this file), compiled in. */
EMBED_TEXT(suite_qemu_rules, "suites/qemu/rules.conf");

/* A launch that takes longer than this is broken, not slow (4 GiB takes ~0.5 s here). */
#define LAUNCH_TIMEOUT_S 120
/* Pages asked beyond the free pool by the running-out check. */
#define OVERSHOOT_PAGES 8
/* The backend QEMU preallocates on one node in the NUMA check: 16,384 base pages. */
#define NUMA_PREALLOC_BYTES (64ULL << 20)

/*
 * The backends a management layer gives QEMU, each with the reference's page kind: QEMU
 * madvises its anonymous RAM MADV_HUGEPAGE (so THP where the host allows it); a hugetlbfs
 * file mapped without share=on is a private hugetlb mapping; 1 GiB memfd pages fault as the
 * anonymous 1 GiB ones do.
 */
enum backend { B_RAM, B_MEMFD_2M, B_MEMFD_1G, B_FILE_2M, B_BACKENDS };

static const struct {
	const char *name;
	int kind;	    /* the reference's pages */
	const char *object; /* -object, before size and prealloc */
} backends[B_BACKENDS] = {
    [B_RAM] = {"ram", K_THP, "memory-backend-ram,id=m0"},
    [B_MEMFD_2M] = {"memfd-hugetlb-2m", K_MEMFD_2M,
		    "memory-backend-memfd,id=m0,hugetlb=on,hugetlbsize=2M"},
    [B_MEMFD_1G] = {"memfd-hugetlb-1g", K_HUGE_1G,
		    "memory-backend-memfd,id=m0,hugetlb=on,hugetlbsize=1G"},
    [B_FILE_2M] = {"file-hugetlbfs-2m", K_HUGE_2M, "memory-backend-file,id=m0,mem-path="},
};

static int backend_of(struct case_ctx *ctx)
{
	const char *name = case_param(ctx, "backend");

	for (int b = 0; name && b < B_BACKENDS; b++)
		if (!strcmp(backends[b].name, name))
			return b;
	case_error(ctx, "no QEMU backend named \"%s\"", name ? name : "");
	return -1;
}

/* The reference's page kind: THP for QEMU's RAM when the host has it, else 4 KiB pages. */
static int ref_kind(const struct hw_info *hw, int b)
{
	return b == B_RAM && !kind_offered(hw, K_THP) ? K_ANON : backends[b].kind;
}

/*
 * Guest memory per backend: as the prealloc suite's start-up case, which bounds the bimodal
 * THP and 4 KiB first touches to 1 GiB and gives each thread whole 1 GiB pages; and 1 GiB at
 * least, --quick and --size too. A launch's prealloc is timed as the difference of two ~70 ms
 * launches: at 256 MiB the preallocation is 7 to 15 ms, inside their noise, and its threads
 * live less than the 2 ms the thread poll takes (both QEMU 7.2 and 10.0 then showed one thread
 * of two, and times faster than writing the memory); at 1 GiB it is 30 to 90 ms.
 */
static size_t qemu_size(const struct hw_info *hw, const struct run_opts *o, int b)
{
	uint64_t size = case_guest_size(hw, o);

	if (size < GIB)
		size = GIB;
	if (!kinds[ref_kind(hw, b)].hugetlb && size > GIB)
		size = GIB;
	if (b == B_MEMFD_1G) {
		uint64_t pus = hw->n_pus ? hw->n_pus : 1, pages = (size + GIB - 1) / GIB;

		size = (pages + pus - 1) / pus * pus * GIB;
	}
	return (size_t)size;
}

static unsigned int expand_backends(const struct hw_info *hw, const struct run_opts *opts,
				    struct case_params *out, unsigned int max)
{
	unsigned int n = 0;

	(void)opts;
	for (int b = 0; b < B_BACKENDS && n < max; b++)
		if (kind_offered(hw, backends[b].kind) || b == B_RAM)
			case_params_add(&out[n++], "backend", "%s", backends[b].name);
	return n;
}

/* --reserve-hugepages: the largest guest of the 2 MiB backends, and of the 1 GiB one. */
static uint64_t qemu_hugepages(const struct hw_info *hw, const struct run_opts *o, uint64_t page)
{
	if (page == 2 * MIB || page == GIB)
		return qemu_size(hw, o, page == GIB ? B_MEMFD_1G : B_MEMFD_2M) / page;
	return 0;
}

/* ---- hugetlbfs ----------------------------------------------------------------------------- */

/* A hugetlbfs mount of 2 MiB pages (its pagesize option, or the default size) into @dir. */
static bool find_hugetlbfs(const struct hw_info *hw, char *dir, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while (!found && (m = getmntent(f))) {
		const char *ps = hasmntopt(m, "pagesize");

		if (strcmp(m->mnt_type, "hugetlbfs") || access(m->mnt_dir, W_OK))
			continue;
		found =
		    ps ? !strncmp(ps, "pagesize=2M", 11) : hw->default_hugepage_bytes == 2 * MIB;
		if (found)
			snprintf(dir, len, "%s", m->mnt_dir);
	}
	endmntent(f);
	return found;
}

/*
 * No hugetlbfs mounted: as root, mount one in a mount namespace of this case's process alone
 * (QEMU inherits it; both end with the case). Returns 0, or -errno with @why.
 */
static int private_hugetlbfs(char *dir, size_t len, char *why, size_t why_len)
{
	if (geteuid() != 0) {
		snprintf(why, why_len,
			 "no hugetlbfs of 2 MiB pages is mounted: mount one (mount -t hugetlbfs -o "
			 "pagesize=2M none /dev/hugepages), or run as root and memgate mounts one "
			 "in a private mount namespace");
		return -EPERM;
	}
	/*
	 * Over /mnt, seen only in this namespace: nothing is made outside it, so nothing is left
	 * behind whenever the case ends (a folder of its own in /tmp was, after a kill).
	 */
	struct stat st;
	bool mnt = !lstat("/mnt", &st) && S_ISDIR(st.st_mode);

	snprintf(dir, len, mnt ? "/mnt" : "/tmp/memgate-hugetlbfs-XXXXXX");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    (!mnt && !mkdtemp(dir)) || mount("memgate", dir, "hugetlbfs", 0, "pagesize=2M")) {
		int e = errno;

		snprintf(why, why_len, "cannot mount a hugetlbfs in a private namespace: %s",
			 strerror(e));
		return -e;
	}
	return 0;
}

/* ---- the perf case ------------------------------------------------------------------------- */

/*
 * Arms, in turn each round: QEMU without prealloc (its start-up, subtracted from the others),
 * QEMU preallocating with 1 thread, with every PU, and at QEMU's cap of 16 where the host
 * has more; the reference on the same pages with 1 thread and every PU, then memset over
 * the faulted memory (the host's limit).
 */
enum { A_STARTUP, A_QEMU_T1, A_QEMU_TALL, A_QEMU_TCAP, A_REF_T1, A_REF_TALL, A_ARMS };

enum {
	M_STARTUP_MS,
	M_QEMU_T1_MS,
	M_QEMU_TALL_MS,
	M_QEMU_TCAP_MS,
	M_QEMU_T1_THREADS,
	M_QEMU_TALL_THREADS,
	M_QEMU_TCAP_THREADS,
	M_QEMU_SPEEDUP,
	M_REF_T1_MS,
	M_REF_TALL_MS,
	M_REF_SPEEDUP,
	M_QEMU_OVER_REF,
	M_MEMSET_MS,
	M_QEMU_T1_CPU_MS,
	M_QEMU_TALL_CPU_MS,
	M_QEMU_TCAP_CPU_MS,
	M_QEMU_T1_LAUNCH_MS,
	M_QEMU_TALL_LAUNCH_MS,
	M_QEMU_TCAP_LAUNCH_MS,
	M_METRICS,
};

static const struct metric_def qemu_metrics[M_METRICS] = {
    [M_STARTUP_MS] = {"qemu.startup_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_T1_MS] = {"qemu.t1.ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TALL_MS] = {"qemu.tall.ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TCAP_MS] = {"qemu.tcap.ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_T1_THREADS] = {"qemu.t1.threads", "threads", HIGHER_IS_BETTER},
    [M_QEMU_TALL_THREADS] = {"qemu.tall.threads", "threads", HIGHER_IS_BETTER},
    [M_QEMU_TCAP_THREADS] = {"qemu.tcap.threads", "threads", HIGHER_IS_BETTER},
    [M_QEMU_SPEEDUP] = {"qemu.speedup", "x", HIGHER_IS_BETTER},
    [M_REF_T1_MS] = {"ref.t1.ms", "ms", LOWER_IS_BETTER},
    [M_REF_TALL_MS] = {"ref.tall.ms", "ms", LOWER_IS_BETTER},
    [M_REF_SPEEDUP] = {"ref.speedup", "x", HIGHER_IS_BETTER},
    [M_QEMU_OVER_REF] = {"qemu_over_ref", "x", LOWER_IS_BETTER},
    [M_MEMSET_MS] = {"memset.ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_T1_CPU_MS] = {"qemu.t1.cpu_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TALL_CPU_MS] = {"qemu.tall.cpu_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TCAP_CPU_MS] = {"qemu.tcap.cpu_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_T1_LAUNCH_MS] = {"qemu.t1.launch_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TALL_LAUNCH_MS] = {"qemu.tall.launch_ms", "ms", LOWER_IS_BETTER},
    [M_QEMU_TCAP_LAUNCH_MS] = {"qemu.tcap.launch_ms", "ms", LOWER_IS_BETTER},
};

struct qemu_case {
	struct case_ctx *ctx;
	const struct qemu_bin *qemu;
	int backend, kind;
	size_t size;
	unsigned int threads[A_ARMS]; /* asked of each arm (0: the arm does not run) */
	char mem_path[128];	      /* B_FILE_2M: the hugetlbfs directory */
	double ms[A_ARMS];	      /* this round's wall times */
	double fill[A_ARMS];	      /* this round's preallocation, from QEMU's resident memory
				       * (qemu_fill_ms(); < 0: not resident at QMP's greeting) */
	double cpu[A_ARMS];	      /* this round's CPU times of QEMU, all its threads */
	unsigned int seen[A_ARMS];    /* this round's most threads of QEMU */
	double memset_ms;	      /* this round's write of the same memory; 0: none */
	/* Per measured round of each QEMU arm, for check_figures(): the threads seen, its CPU
	 * over its fill (threads at work), its fill over the round's write of the memory, and
	 * the rounds whose backend was not resident at the greeting. */
	struct qemu_figures fig[A_ARMS];
};

/* One launch of QEMU for arm @a: 0, or -errno with the case already FAIL or ERROR. */
static int launch(struct qemu_case *qc, unsigned int a)
{
	char object[512];
	struct qemu_launch l;
	struct mg_err err;
	int ret;

	snprintf(object, sizeof(object), "%s%s,size=%zuM", backends[qc->backend].object,
		 qc->backend == B_FILE_2M ? qc->mem_path : "", qc->size >> 20);
	if (a != A_STARTUP)
		snprintf(object + strlen(object), sizeof(object) - strlen(object),
			 ",prealloc=on,prealloc-threads=%u", qc->threads[a]);
	ret = qemu_launch(qc->qemu, object, LAUNCH_TIMEOUT_S, &l, &err);
	if (ret) {
		case_log(qc->ctx, "%s -object %s", qc->qemu->path, object);
		/* A hugetlb pool that ran dry under QEMU is what to reserve, not a QEMU bug. */
		if (ret == -EIO && kinds[qc->kind].hugetlb &&
		    pool_free(qc->kind) < qc->size / kinds[qc->kind].page)
			case_fail(qc->ctx, "%s (the %s pool ran out under QEMU: reserve %zu pages)",
				  err.msg, kinds[qc->kind].name, qc->size / kinds[qc->kind].page);
		else if (ret == -EIO)
			case_fail(qc->ctx, "%s", err.msg);
		else
			case_error(qc->ctx, "%s", err.msg);
		return ret;
	}
	qc->ms[a] = l.wall_ms;
	qc->fill[a] = a == A_STARTUP ? 0 : qemu_fill_ms(&l, qc->size);
	qc->cpu[a] = l.cpu_ms;
	qc->seen[a] = l.max_touch;
	return 0;
}

/* One run of the reference on fresh pages of the same kind: 0 or -errno (case told). */
static int reference(struct qemu_case *qc, unsigned int a, bool measured)
{
	const struct hw_info *hw = case_hw(qc->ctx);
	struct prealloc_opts po = {.method = PREALLOC_POPULATE,
				   .requested = qc->threads[a],
				   .cap = PREALLOC_MAX_THREADS,
				   .host_pus = hw->n_pus,
				   .topo = hw->topo,
				   .bind = hw->can_bind};
	struct prealloc_report rep;
	struct measure_span span;
	struct mapping m;
	struct mg_err err;
	int ret = map_kind(qc->kind, qc->size, 0, &m);

	if (ret) {
		case_error(qc->ctx, "mapping %zu MiB of %s: %s", qc->size >> 20,
			   kinds[qc->kind].name, strerror(-ret));
		return ret;
	}
	struct prealloc_region r = {m.addr, qc->size, kinds[qc->kind].page, -1};

	measure_span_begin(&span);
	ret = prealloc_one(&r, &po, &rep, &err);
	measure_span_end(&span);
	qc->ms[a] = (double)span.wall_ns / 1e6;
	if (ret) {
		case_error(qc->ctx, "the reference on %s: %s", kinds[qc->kind].name, err.msg);
	} else if (measured && a == A_REF_TALL) {
		/* The limit: writing the memory now mapped, as many threads, the second pass. */
		parallel_memset(m.addr, qc->size, rep.threads);
		measure_span_begin(&span);
		parallel_memset(m.addr, qc->size, rep.threads);
		measure_span_end(&span);
		qc->memset_ms = (double)span.wall_ns / 1e6;
		case_sample(qc->ctx, M_MEMSET_MS, qc->memset_ms, &span);
	}
	unmap_kind(&m);
	return ret;
}

static int qemu_sample(void *arg, unsigned int a, unsigned int round, bool measured)
{
	struct qemu_case *qc = arg;

	(void)round;
	if (!qc->threads[a] && a != A_STARTUP)
		return 0;
	return a >= A_REF_T1 ? reference(qc, a, measured) : launch(qc, a);
}

/*
 * QEMU's preallocation is the time its backend took to become resident (qemu_fill_ms()), read
 * as it starts: right whatever else QEMU does meanwhile, and whether or not it overlaps the
 * preallocation with other start-up work (10.0 can, for backends given a prealloc-context and
 * where MADV_POPULATE_WRITE exists). The launch less the same round's launch without it, the
 * start-up a user sees it add, is beside it; so are its threads and its CPU time.
 */
static int qemu_round_end(void *arg, unsigned int round, bool measured)
{
	static const unsigned int ms_of[] = {[A_QEMU_T1] = M_QEMU_T1_MS,
					     [A_QEMU_TALL] = M_QEMU_TALL_MS,
					     [A_QEMU_TCAP] = M_QEMU_TCAP_MS};
	static const unsigned int launch_of[] = {[A_QEMU_T1] = M_QEMU_T1_LAUNCH_MS,
						 [A_QEMU_TALL] = M_QEMU_TALL_LAUNCH_MS,
						 [A_QEMU_TCAP] = M_QEMU_TCAP_LAUNCH_MS};
	static const unsigned int threads_of[] = {[A_QEMU_T1] = M_QEMU_T1_THREADS,
						  [A_QEMU_TALL] = M_QEMU_TALL_THREADS,
						  [A_QEMU_TCAP] = M_QEMU_TCAP_THREADS};
	static const unsigned int cpu_of[] = {[A_QEMU_T1] = M_QEMU_T1_CPU_MS,
					      [A_QEMU_TALL] = M_QEMU_TALL_CPU_MS,
					      [A_QEMU_TCAP] = M_QEMU_TCAP_CPU_MS};
	struct qemu_case *qc = arg;

	(void)round;
	if (!measured)
		return 0;
	case_sample(qc->ctx, M_STARTUP_MS, qc->ms[A_STARTUP], NULL);
	for (unsigned int a = A_QEMU_T1; a <= A_QEMU_TCAP; a++) {
		double cpu, seen, launch;

		if (!qc->threads[a])
			continue;
		/* A backend not resident by the greeting has no preallocation time: its arm's
		 * figures are the check's at the end, not samples. */
		if (qc->fill[a] >= 0)
			case_sample(qc->ctx, ms_of[a], qc->fill[a], NULL);
		launch = qc->ms[a] - qc->ms[A_STARTUP];
		case_sample(qc->ctx, launch_of[a], launch > 0 ? launch : 0, NULL);
		/* The threads that preallocated: its touch_pages threads, or its main thread when
		 * it started none (QEMU 7.2 and 10.0 populate there when asked for one thread). */
		seen = qc->seen[a] ? qc->seen[a] : 1;
		case_sample(qc->ctx, threads_of[a], seen, NULL);
		/* The CPU its preallocation took, all threads: the launch's less the one's without.
		 */
		cpu = qc->cpu[a] - qc->cpu[A_STARTUP];
		case_sample(qc->ctx, cpu_of[a], cpu > 0 ? cpu : 0, NULL);
		qemu_figures_add(&qc->fig[a], seen, qc->fill[a], cpu, qc->memset_ms);
	}
	case_sample(qc->ctx, M_REF_T1_MS, qc->ms[A_REF_T1], NULL);
	if (qc->threads[A_QEMU_TALL]) {
		case_sample(qc->ctx, M_REF_TALL_MS, qc->ms[A_REF_TALL], NULL);
		if (qc->fill[A_QEMU_TALL] > 0 && qc->fill[A_QEMU_T1] > 0) {
			case_sample(qc->ctx, M_QEMU_SPEEDUP,
				    qc->fill[A_QEMU_T1] / qc->fill[A_QEMU_TALL], NULL);
			case_sample(qc->ctx, M_QEMU_OVER_REF,
				    qc->fill[A_QEMU_TALL] / qc->ms[A_REF_TALL], NULL);
		}
		case_sample(qc->ctx, M_REF_SPEEDUP, qc->ms[A_REF_T1] / qc->ms[A_REF_TALL], NULL);
	}
	qc->memset_ms = 0;
	return 0;
}

/* Figures that cannot be true are an ERROR of the measurement naming the QEMU and what was
 * seen (qemu_figures_check()), never a PASS. */
static void check_figures(struct qemu_case *qc)
{
	static const char *const arm_name[] = {
	    [A_QEMU_T1] = "1-thread", [A_QEMU_TALL] = "all-PU", [A_QEMU_TCAP] = "capped"};
	const struct hw_info *hw = case_hw(qc->ctx);
	char why[400];

	for (unsigned int a = A_QEMU_T1; a <= A_QEMU_TCAP; a++) {
		unsigned int want;

		if (!qc->threads[a])
			continue;
		want = prealloc_threads(qc->size, kinds[qc->kind].page, qc->threads[a],
					hw->n_pus ? hw->n_pus : 1, PREALLOC_CAP_QEMU);
		if (qemu_figures_check(&qc->fig[a], want, qc->size >> 20, why, sizeof(why))) {
			case_error(qc->ctx, "QEMU %s, the %s arm: %s", qc->qemu->version,
				   arm_name[a], why);
			return;
		}
	}
}

static void perf_prealloc(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	/* Static: its per-round figures are a few tens of KiB, more than a stack should hold. */
	static struct qemu_case qc;

	qc = (struct qemu_case){.ctx = ctx, .qemu = o->qemu, .backend = backend_of(ctx)};
	struct case_arms arms = {.n = A_ARMS,
				 .warmup = o->warmup,
				 .samples = o->samples,
				 .sample = qemu_sample,
				 .round_end = qemu_round_end,
				 .arg = &qc,
				 .ctx = ctx};
	unsigned int pus = hw->n_pus ? hw->n_pus : 1;
	char why[256];

	if (qc.backend < 0)
		return;
	qc.kind = ref_kind(hw, qc.backend);
	qc.size = qemu_size(hw, o, qc.backend);
	qc.threads[A_QEMU_T1] = qc.threads[A_REF_T1] = 1;
	if (pus > 1)
		qc.threads[A_QEMU_TALL] = qc.threads[A_REF_TALL] = pus;
	if (pus > PREALLOC_CAP_QEMU)
		qc.threads[A_QEMU_TCAP] = PREALLOC_CAP_QEMU;
	if (kinds[qc.kind].hugetlb && pool_short(ctx, qc.kind, qc.size / kinds[qc.kind].page))
		return;
	if (qc.backend == B_FILE_2M && !find_hugetlbfs(hw, qc.mem_path, sizeof(qc.mem_path))) {
		if (private_hugetlbfs(qc.mem_path, sizeof(qc.mem_path), why, sizeof(why))) {
			case_skip(ctx, "%s", why);
			return;
		}
		case_log(ctx, "hugetlbfs mounted at %s in a private mount namespace", qc.mem_path);
	}
	for (unsigned int m = 0; m < M_METRICS; m++)
		case_counter(ctx, m,
			     m == M_QEMU_T1_THREADS || m == M_QEMU_TALL_THREADS ||
				     m == M_QEMU_TCAP_THREADS
				 ? "task-names"
				 : "clock");
	case_prop(ctx, "qemu.path", "%s", qc.qemu->path);
	case_prop(ctx, "qemu.version", "%s", qc.qemu->version);
	case_prop(ctx, "size_mib", "%zu", qc.size >> 20);
	case_prop(ctx, "reference_pages", "%s", kinds[qc.kind].name);
	if (!case_interleave(&arms))
		check_figures(&qc);
	if (qc.backend == B_FILE_2M && !strncmp(qc.mem_path, "/tmp/memgate-hugetlbfs-", 23) &&
	    !umount(qc.mem_path))
		rmdir(qc.mem_path);
}

/* ---- the running-out check ---------------------------------------------------------------- */

/*
 * QEMU asked to preallocate more 2 MiB pages than the pool has free: it must say so and exit,
 * not crash or hang, and leave nothing running (qemu_launch() reaps it). The pool is read,
 * never resized: the guest is sized past what is free now.
 */
static void check_running_out(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	uint64_t free_pages = pool_free(K_MEMFD_2M);
	char object[256];
	struct qemu_launch l;
	struct mg_err err;
	int ret;

	snprintf(object, sizeof(object), "%s,size=%" PRIu64 "M,prealloc=on,prealloc-threads=%u",
		 backends[B_MEMFD_2M].object, (free_pages + OVERSHOOT_PAGES) * 2,
		 case_hw(ctx)->n_pus ? case_hw(ctx)->n_pus : 1);
	ret = qemu_launch(o->qemu, object, LAUNCH_TIMEOUT_S, &l, &err);
	case_log(ctx, "%s -object %s", o->qemu->path, object);
	case_prop(ctx, "qemu.version", "%s", o->qemu->version);
	if (l.output[0])
		case_log(ctx, "QEMU said: %s", l.output);
	if (ret == -ETIMEDOUT)
		case_fail(ctx, "%s", err.msg);
	else if (!ret)
		case_fail(ctx,
			  "QEMU started with %" PRIu64 " pages of 2 MiB preallocated while the "
			  "pool had %" PRIu64 " free",
			  free_pages + OVERSHOOT_PAGES, free_pages);
	else if (ret != -EIO)
		case_error(ctx, "%s", err.msg);
	else if (WIFSIGNALED(l.status))
		case_fail(ctx, "QEMU died of signal %d instead of reporting the shortage",
			  WTERMSIG(l.status));
	else if (!l.output[0])
		case_fail(ctx, "QEMU exited %d without a word on stderr", WEXITSTATUS(l.status));
}

/* Pages of @line (a numa_maps line) on node N (its "N<node>=" count), and on others. */
static void pages_by_node(const char *line, int node, unsigned long long *on,
			  unsigned long long *off)
{
	*on = *off = 0;
	for (const char *p = line; (p = strstr(p, " N")); p++) {
		int n;
		unsigned long long count;

		if (sscanf(p, " N%d=%llu", &n, &count) != 2)
			continue;
		if (n == node)
			*on += count;
		else
			*off += count;
	}
}

/*
 * QEMU's own NUMA-aware prealloc (7.2+): a backend bound to the last node (host-nodes,
 * policy=bind) preallocated by threads of a thread-context with that node's affinity
 * (prealloc-context): at QMP's greeting every page of it is on that node (numa_maps).
 */
static void check_numa_prealloc(struct case_ctx *ctx)
{
	const struct run_opts *o = case_opts(ctx);
	const struct hw_info *hw = case_hw(ctx);
	char context[96], backend[256];
	const char *objects[] = {context, backend, NULL};
	unsigned long long on, off;
	struct qemu_launch l;
	struct mg_err err = {0};
	hwloc_obj_t node;
	const char *bound;
	int ret;

	if (hw->n_numa < 2 || !hw->topo) {
		case_skip(ctx,
			  "one NUMA node here: `memgate vm -- run -s qemu -k '*numa*'` runs this "
			  "in a two-node guest, with QEMU packed into it");
		return;
	}
	node = hwloc_get_obj_by_type(hw->topo, HWLOC_OBJ_NUMANODE, hw->n_numa - 1);
	snprintf(context, sizeof(context), "thread-context,id=tc1,node-affinity=%u",
		 node->os_index);
	snprintf(backend, sizeof(backend),
		 "memory-backend-ram,id=m1,size=%lluM,prealloc=on,prealloc-threads=%u,"
		 "prealloc-context=tc1,host-nodes=%u,policy=bind",
		 (unsigned long long)(NUMA_PREALLOC_BYTES >> 20), hw->n_pus ? hw->n_pus : 1,
		 node->os_index);
	case_log(ctx, "%s -object %s -object %s", o->qemu->path, context, backend);
	case_prop(ctx, "qemu.version", "%s", o->qemu->version);
	ret = qemu_launch_placed(o->qemu, objects, LAUNCH_TIMEOUT_S, &l, &err);
	if (ret == -EIO && strstr(l.output, "thread-context")) {
		case_skip(ctx, "QEMU %s has no thread-context objects (7.2 and later): %s",
			  o->qemu->version, l.output);
		return;
	}
	if (ret) {
		case_error(ctx, "%s", err.msg);
		return;
	}
	bound = strstr(l.placement, "bind:");
	if (!bound) {
		case_fail(ctx, "no bound mapping in QEMU's numa_maps at its greeting: %.300s",
			  l.placement[0] ? l.placement : "(none)");
		return;
	}
	pages_by_node(bound, (int)node->os_index, &on, &off);
	case_log(ctx, "numa_maps: %.300s", bound);
	case_prop(ctx, "node_pages", "%llu", on);
	if (off || on * 4096 < NUMA_PREALLOC_BYTES)
		case_fail(ctx,
			  "QEMU's backend bound to node %u: %llu pages there and %llu on other "
			  "nodes, of %llu",
			  node->os_index, on, off,
			  (unsigned long long)(NUMA_PREALLOC_BYTES / 4096));
}

static unsigned int expand_running_out(const struct hw_info *hw, const struct run_opts *opts,
				       struct case_params *out, unsigned int max)
{
	(void)opts;
	(void)out;
	return max && kind_offered(hw, K_MEMFD_2M) ? 1 : 0;
}

/* ---- the suite ----------------------------------------------------------------------------- */

enum { C_RUNNING_OUT, C_NUMA_PREALLOC, C_PREALLOC, C_BOOT };

static const struct case_def qemu_cases[] = {
    [C_RUNNING_OUT] = {.name = "running_out",
		       .kind = CASE_CHECK,
		       .needs = NEEDS_HOST | NEEDS_QEMU,
		       .doc =
			   "QEMU asked for more hugetlb pages than are free: it says so and exits",
		       .expand = expand_running_out,
		       .run = check_running_out},
    [C_NUMA_PREALLOC] = {.name = "numa_prealloc",
			 .kind = CASE_CHECK,
			 .needs = NEEDS_HOST | NEEDS_QEMU,
			 .doc = "QEMU's backend bound to a node, preallocated by a thread-context "
				"there: every page on that node (numa_maps)",
			 .run = check_numa_prealloc},
    [C_PREALLOC] = {.name = "prealloc",
		    .kind = CASE_PERF,
		    .needs = NEEDS_HOST | NEEDS_QEMU,
		    .doc = "QEMU's -mem-prealloc time per backend and thread count, beside the "
			   "reference on the same pages",
		    CASE_METRICS(qemu_metrics),
		    .expand = expand_backends,
		    .run = perf_prealloc},
    [C_BOOT] = {.name = "boot",
		.kind = CASE_PERF,
		.needs = NEEDS_HOST | NEEDS_QEMU,
		.doc =
		    "a real QEMU boots the guest kit with N disks, each its own virtio-scsi-pci: "
		    "time to init and to every disk, QEMU's heap (KVM, else TCG)",
		CASE_METRICS(qemu_boot_metrics),
		.ab_samples = 1,
		/* A 60-disk round is four TCG boots (~40 s): 6 rounds and at most 4 more keep the
		 * qemu suite's ab of two QEMUs within 10 minutes here (docs/gating.md). */
		.ab_confirm_rounds = 4,
		.cut_metric = "boot.disks_ms",
		.expand = qemu_boot_expand,
		.run = qemu_boot_run},
};

/* A property of @r, "" when it has none. */
static const char *prop(const struct case_result *r, const char *name)
{
	const char *v = case_result_prop(r, name);

	return v ? v : "";
}

/* One row: time, GiB/s, share of memset, the most threads preallocating at once. */
static void summary_row(FILE *f, const char *label, const struct metric_result *ms,
			const struct metric_result *threads, double gib, double limit)
{
	double rate;

	if (!ms || ms->sum.median <= 0)
		return;
	rate = gib / (ms->sum.median / 1e3);
	fprintf(f, "  %-16s %8.1f ms %6.2f GiB/s %5.1f%% of memset", label, ms->sum.median, rate,
		limit > 0 ? 100 * rate / limit : 0);
	if (threads)
		fprintf(f, "  (%.0f preallocating at once)", threads->sum.median);
	fputc('\n', f);
}

static void summary_case(FILE *f, const struct case_result *r)
{
	const struct metric_result *mm = case_result_sampled(r, M_MEMSET_MS), *m;
	double gib = atof(prop(r, "size_mib")) / 1024,
	       limit = mm ? gib / (mm->sum.median / 1e3) : 0;

	fprintf(f, "%s, %.2f GiB, QEMU %s (start-up without prealloc %.1f ms; memset %.1f GiB/s)\n",
		r->inst->name, gib, prop(r, "qemu.version"), case_result_median(r, M_STARTUP_MS),
		limit);
	summary_row(f, "qemu 1 thread", case_result_sampled(r, M_QEMU_T1_MS),
		    case_result_sampled(r, M_QEMU_T1_THREADS), gib, limit);
	summary_row(f, "qemu all PUs", case_result_sampled(r, M_QEMU_TALL_MS),
		    case_result_sampled(r, M_QEMU_TALL_THREADS), gib, limit);
	summary_row(f, "qemu cap (16)", case_result_sampled(r, M_QEMU_TCAP_MS),
		    case_result_sampled(r, M_QEMU_TCAP_THREADS), gib, limit);
	summary_row(f, "ref 1 thread", case_result_sampled(r, M_REF_T1_MS), NULL, gib, limit);
	summary_row(f, "ref all PUs", case_result_sampled(r, M_REF_TALL_MS), NULL, gib, limit);
	if ((m = case_result_sampled(r, M_QEMU_SPEEDUP)) && case_result_sampled(r, M_REF_SPEEDUP))
		fprintf(f, "  speedup over 1 thread: qemu %.2fx, ref %.2fx; qemu/ref %.2fx\n",
			m->sum.median, case_result_median(r, M_REF_SPEEDUP),
			case_result_median(r, M_QEMU_OVER_REF));
}
static bool qemu_wanted(const struct case_result *r)
{
	return r->inst->def == &qemu_cases[C_PREALLOC] && case_result_sampled(r, M_QEMU_T1_MS);
}

static const struct summary_table qemu_table = {
    .header = "qemu: -mem-prealloc time (the backend's fill, from QEMU's resident memory), "
	      "medians, beside the reference on the same pages\n",
    .published = "published (2017 parallel-prealloc thread): 4 TB of 2 MiB pages, 1 thread "
		 "54m12s, 16 threads 1m59s; 2025 thread-cap thread: 7.5 TB, 16 threads "
		 "2m42s, 32 threads 1m19s\n",
    .wanted = qemu_wanted,
    .row = summary_case};

const struct suite_def suite_qemu = {
    .name = "qemu",
    .doc = "a QEMU binary's -mem-prealloc start-up per backend and thread count, beside the "
	   "reference",
    SUITE_CASES(qemu_cases),
    .tables = (const struct summary_table *const[]){&qemu_table, &qemu_boot_table, NULL},
    .hugepages = qemu_hugepages,
    /* memgate's own preallocation beside QEMU's, and the ratio of the two. */
    .reference = (const char *const[]){"ref.*", "memset.ms", "qemu_over_ref", NULL},
    .rules = suite_qemu_rules,
    .rules_file = "suites/qemu/rules.conf",
};
