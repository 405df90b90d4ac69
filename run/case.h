/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case.h - cases are data: suites are tables of case definitions, expanded over the host. */
#ifndef MG_RUN_CASE_H
#define MG_RUN_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/counter.h"
#include "hw/hw.h"
#include "hw/measure.h"
#include "run/guest.h"
#include "run/qemu.h"
#include "run/impl_opts.h"
#include "util/stats.h"
#include "util/util.h"

enum case_kind {
	CASE_CHECK, /* a property that holds or not */
	CASE_PERF,  /* figures sampled and summarised */
	CASE_GATE,  /* a verdict on figures of perf cases, made after they ran */
};

/* The four outcomes, as JUnit has them: pass, failure, error, skipped. */
enum case_outcome {
	OUTCOME_PASS,
	OUTCOME_SKIP,  /* a capability is missing; the reason says which */
	OUTCOME_FAIL,  /* the property under test is false */
	OUTCOME_ERROR, /* the environment or the harness broke: crash, timeout, no result */
};

enum metric_better {
	LOWER_IS_BETTER,
	HIGHER_IS_BETTER,
};

struct metric_def {
	const char *name; /* "update_cycles" */
	const char *unit; /* "cycles", "ms", "GiB/s", "KiB" */
	enum metric_better better;
};

/* Capabilities a case needs; missing ones make it SKIP with the reason, before it runs. */
enum case_needs {
	NEEDS_HOST = 1u << 0, /* runs on this machine: not with a loaded topology */
	NEEDS_KVM = 1u << 1,  /* a usable /dev/kvm */
	NEEDS_ROOT = 1u << 2,
	NEEDS_QEMU = 1u << 3, /* a QEMU binary: --qemu, or one on PATH */
};

#define CASE_MAX_PARAMS 6
#define CASE_MAX_INSTANCES 64 /* per case definition, after expansion */
/* The fewest samples a metric is judged on when a case stops sampling early (run_opts.settled):
 * the bootstrap interval the verdicts rest on works from 5 up, as --quick takes. */
#define CASE_MIN_SAMPLES 5

struct case_param {
	char name[24];
	char value[40];
};

struct case_params {
	struct case_param p[CASE_MAX_PARAMS];
	unsigned int n;
};

struct case_ctx;
struct case_result;
struct run_opts;

/*
 * A case's parameter matrix, built from the host: fills at most @max sets of @out and returns
 * how many. A suite declares its expanders with it (case_expand_fn NAME;), so that each
 * definition is checked against this one signature.
 */
typedef unsigned int case_expand_fn(const struct hw_info *hw, const struct run_opts *opts,
				    struct case_params *out, unsigned int max);

struct case_def {
	const char *name;
	/* the JUnit classname is memgate.SUITE.GROUP; NULL: the kind's, "check" or "perf" */
	const char *group;
	enum case_kind kind;
	unsigned int needs; /* enum case_needs bits */
	const char *doc;    /* one line for `memgate list` */
	const struct metric_def *metrics;
	unsigned int n_metrics;
	/* CPU-bound: its "cycles" metrics are counted with --counter (tsc, instructions or
	 * simulated), and under simulated it runs under callgrind, planned without the host:
	 * its expand() must not read @hw. */
	bool counted;
	/* ab: the samples a side takes a round (0: ab's -n), with no warm-up: where a sample is
	 * a whole guest boot, the rounds are the replicates. */
	unsigned int ab_samples;
	/* ab: at most this many more rounds after an undecided first look (0: ab's
	 * --confirm-rounds), even: where a round is two guest boots a side under TCG. */
	unsigned int ab_confirm_rounds;
	/* A metric whose sample the case can stop at a bound (run --cut METRIC=VALUE), counting it
	 * at the bound; ab gives head's side the rules' cut x base's median (NULL: none). */
	const char *cut_metric;
	/* The parameter matrix (NULL: one instance without parameters). */
	case_expand_fn *expand;
	/* Runs in a forked child; reports through the case_*() calls below. */
	void (*run)(struct case_ctx *ctx);
};

/*
 * A table of a suite's figures beside the published ones, printed after its cases (console,
 * JUnit system-out): its header, a row for each wanted result (or, with @write, what that
 * writes of all of them), the published figures. No wanted result: no table.
 */
struct summary_table {
	const char *header;    /* the first line(s), or NULL */
	const char *published; /* the last line(s): the published figures, or NULL */
	/* which results have a row (a perf case of the suite that measured something) */
	bool (*wanted)(const struct case_result *r);
	void (*row)(FILE *f, const struct case_result *r);
	/* instead of rows, the table's body from every result (NULL: rows) */
	void (*write)(FILE *f, const struct case_result *results, size_t n);
};

/* A suite's cases in its suite_def, likewise. */
#define SUITE_CASES(a) .cases = (a), .n_cases = ARRAY_SIZE(a)

/* A case's metrics in its case_def: the array and its length, which then cannot disagree. */
#define CASE_METRICS(a) .metrics = (a), .n_metrics = ARRAY_SIZE(a)

struct suite_def {
	const char *name;
	const char *doc;
	const struct case_def *cases;
	unsigned int n_cases;
	/* Its tables of figures, NULL-ended (NULL: none); suite_summary() writes them. */
	const struct summary_table *const *tables;
	/* --reserve-hugepages: how many free pages of @page bytes its cases use (NULL: none). */
	uint64_t (*hugepages)(const struct hw_info *hw, const struct run_opts *opts, uint64_t page);
	/*
	 * Its reference arms: globs of the metrics that measure memgate's own program beside the
	 * code under test (NULL-ended; NULL: none). When two builds differ only in the QEMU or the
	 * kernel they run, these are the same program on both sides: `ab` shows them as context.
	 */
	const char *const *reference;
	/* Its --impl keys, NULL-ended (NULL: none): what a run may choose of its implementation. */
	const struct impl_key *const *impl_keys;
	/*
	 * Its rules: the text of suites/NAME/rules.conf compiled in (EMBED_TEXT) and that file's
	 * name, NULL: none. Its gates, and which of its figures are gated at what tolerance.
	 */
	const char *rules, *rules_file;
};

/* One case with one parameter set: what the runner forks for. */
struct case_inst {
	const struct suite_def *suite;
	const struct case_def *def;
	struct case_params params;
	char name[192]; /* "name[k=v,k=v]" */
};

/* The vCPU behind the boot model's config-space accesses (--guest). */
enum run_guest {
	RUN_GUEST_AUTO,	    /* KVM's where /dev/kvm is usable, else modelled */
	RUN_GUEST_KVM,	    /* a real KVM guest; its cases SKIP without /dev/kvm */
	RUN_GUEST_MODELLED, /* modelled exits, also where KVM exists */
};

struct run_opts {
	unsigned int samples;	      /* per metric, after warm-up */
	unsigned int warmup;	      /* discarded samples before the measured ones */
	bool quick;		      /* smaller sizes and fewer samples: a smoke run */
	bool long_run;		      /* --long: 4 GiB guests and the 200-disk boot too */
	double timeout_s;	      /* per case */
	uint64_t seed;		      /* bootstrap and workload randomness */
	bool progress;		      /* "case k of N" lines on stderr */
	const struct impl_opts *impl; /* implementations under test (NULL: defaults) */
	uint64_t size_bytes;	      /* guest memory for the prealloc cases; 0: the default */
	bool hugepages_reserved;      /* --reserve-hugepages was given and succeeded */
	const struct qemu_bin *qemu;  /* the qemu suite's QEMU (NULL or an empty path: none) */
	const struct guest_kit *kit;  /* what its boot cases boot (NULL or no kernel: none) */
	const char *qemu_preload;     /* --qemu-preload: LD_PRELOAD for the QEMU it boots */
	char cut_metric[48];	      /* --cut: a sample of this metric stops at cut_value */
	double cut_value;	      /* in the metric's unit; 0: no cut */
	enum run_guest guest;	      /* --guest */
	uint64_t guest_exit_ns;	      /* --guest-exit-ns: a modelled exit; 0: GUEST_MODEL_EXIT_NS */
	enum counter_kind counter;    /* --counter, resolved: what counted cases count with */
	bool samples_set, warmup_set; /* -n, --warmup given: else a simulated count takes 1, 0 */
	const char *sim_dump;	      /* under callgrind: its --callgrind-out-file (simulated) */
	/* Where set (`run` with its default sample count and its gates): called in a case's child
	 * after each round once every metric sampled has CASE_MIN_SAMPLES samples; true when the
	 * samples so far settle every verdict they feed, and the case stops sampling there.
	 * NULL: every case takes its -n samples. */
	bool (*settled)(const struct case_result *partial, void *arg);
	void *settled_arg;
	/* Called in the parent as each case's result is final (NULL: nothing): the console line. */
	void (*on_result)(const struct case_result *r, void *arg);
	void *on_result_arg;
};

/* The guest memory the cases that model a guest take without --size, as --help says it: in MiB,
 * for the text; case_guest_size() takes at most a quarter of MemAvailable. */
#define CASE_SIZE_MIB 1024
#define CASE_SIZE_LONG_MIB 4096
#define CASE_SIZE_QUICK_MIB 256
#define CASE_STR_(x) #x
#define CASE_STR(x) CASE_STR_(x)

/**
 * case_guest_size() - bytes of guest memory the cases that model a guest use: --size, or
 * min(1 GiB (4 GiB with --long, 256 MiB quick), a quarter of MemAvailable), in whole 1 GiB pages
 * from 1 GiB up and whole 2 MiB pages below.
 */
uint64_t case_guest_size(const struct hw_info *hw, const struct run_opts *o);

/* Parameter sets: built by a case's expand(), read by its run() and by reports. */

/** case_params_add() - append @name = printf(@fmt, ...) to @p; nothing when @p is full. */
void case_params_add(struct case_params *p, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * case_expand_values() - an instance per value of the @n @values (parameter @name), those
 * above @long_from only with --long (0: all), each with parameter "impl" from --impl
 * @impl unless that is NULL. Into @out, at most @max; returns how many.
 */
unsigned int case_expand_values(const char *name, const unsigned int *values, size_t n,
				unsigned int long_from, const struct impl_key *impl,
				const struct run_opts *opts, struct case_params *out,
				unsigned int max);

/** case_params_get() - the value of parameter @name in @p, or NULL when it has none. */
const char *case_params_get(const struct case_params *p, const char *name);

/* The child's side: what a case's run() may call. */

/** case_param() - the value of parameter @name, or NULL when the instance has none. */
const char *case_param(const struct case_ctx *ctx, const char *name);

/** case_hw() - the host description the run was planned from. */
const struct hw_info *case_hw(const struct case_ctx *ctx);

/** case_opts() - the run's options (samples, warm-up, quick, seed). */
const struct run_opts *case_opts(const struct case_ctx *ctx);

/**
 * case_sample() - record one sample of metric @m (an index into the case's metrics). When
 * @span is not NULL its steal time marks the sample as taken while the VM lost a CPU.
 */
void case_sample(struct case_ctx *ctx, unsigned int m, double value,
		 const struct measure_span *span);

/** case_counter() - say which counter metric @m was measured with ("tsc", "clock", ...). */
void case_counter(struct case_ctx *ctx, unsigned int m, const char *counter);

/**
 * case_metric_unit() - the unit metric @m of @d is reported in when counted with @k: a counted
 * case's "cycles" metrics are "instructions" under the instruction counters.
 */
const char *case_metric_unit(const struct case_def *d, unsigned int m, enum counter_kind k);

/**
 * case_counter_open() - the run's counter (--counter) for a counted case, into @c: its name
 * and unit go with every "cycles" metric of the case. Returns 0, or -1 after case_error().
 */
int case_counter_open(struct case_ctx *ctx, struct counter *c);

/** case_prop() - a named figure or fact for the report's properties. */
void case_prop(struct case_ctx *ctx, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * case_say() - text event @ev ("log", "warn", "fail", "skip" or "error") of the case: what
 * the five calls below send.
 */
void case_say(struct case_ctx *ctx, const char *ev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** case_log() - a line for the case's output in the report. */
#define case_log(ctx, ...) case_say(ctx, "log", __VA_ARGS__)

/**
 * case_warn() - a fact of the host that a reader should know and that the code under test does
 * not control (CPUID under a hypervisor, a CPU libcpuid does not know): a WARN line on the
 * console, in the case's output (JUnit system-out) and a "warning" property. Never fails.
 */
#define case_warn(ctx, ...) case_say(ctx, "warn", __VA_ARGS__)

/** case_fail() - the property under test is false; the message states figure and bound. */
#define case_fail(ctx, ...) case_say(ctx, "fail", __VA_ARGS__)

/** case_skip() - a capability is missing; the message is the reason. */
#define case_skip(ctx, ...) case_say(ctx, "skip", __VA_ARGS__)

/** case_error() - the environment broke (a syscall failed that should not). */
#define case_error(ctx, ...) case_say(ctx, "error", __VA_ARGS__)

/** case_outcome_name() - "PASS", "SKIP", "FAIL", "ERROR". */
const char *case_outcome_name(enum case_outcome o);

/**
 * case_key() - the identity of a case across builds and runs: its full name without the
 * `impl` parameter, which names the implementation under test and so differs between the
 * two sides of an A/B, or between a run and its baselines, by design. Returns @buf.
 */
char *case_key(const char *full_name, char *buf, size_t len);

/** suite_is_reference() - is metric @name one of @s's reference arms (suite_def.reference)? */
bool suite_is_reference(const struct suite_def *s, const char *name);

/**
 * suite_summary() - @s's tables over the @n @results, one after another, as one text (the
 * caller frees it); NULL when none has a row, or memory is short: then nothing is printed.
 */
char *suite_summary(const struct suite_def *s, const struct case_result *results, size_t n);

/** case_group() - @d's group: its own, else "check" or "perf" as its kind. */
const char *case_group(const struct case_def *d);

/** case_full_name() - "suite.group.name[params]" of @inst into @buf; returns @buf. */
char *case_full_name(const struct case_inst *inst, char *buf, size_t len);

/** case_any_matches() - does the full name of one of the @n instances match @glob? */
bool case_any_matches(const struct case_inst *insts, size_t n, const char *glob);

#endif
