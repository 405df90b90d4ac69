/* cli.h - inside the command line: its options, the parsed command, what the commands share. */
#ifndef MG_CLI_CLI_H
#define MG_CLI_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "run/case.h"
#include "judge/gate.h"
#include "run/impl_opts.h"
#include "judge/rules.h"
#include "hw/hw.h"
#include "run/guest.h"
#include "run/qemu.h"
#include "reports/report.h"

#define MEMGATE_VERSION "0.1.0"
/* The source it was built from: the Makefile passes `git describe`, or "unknown". */
#ifndef MEMGATE_COMMIT
#define MEMGATE_COMMIT "unknown"
#endif

/* Exit statuses: the contract with CI, also in --help and the README. */
enum {
	EXIT_PASSED = 0,  /* every case passed or was skipped with a reason */
	EXIT_FAILED = 1,  /* a check, gate or comparison failed, or a case crashed or timed out */
	EXIT_USAGE = 2,	  /* bad usage or bad input (options, topology, rules, results files) */
	EXIT_HARNESS = 3, /* the harness itself failed (fork, pipes, writing reports) */
};

/* Sampling defaults: 15 samples give a median whose bootstrap interval is a few MADs wide;
 * the quick mode keeps 5, enough to see a crash or a gross regression. */
#define DEFAULT_SAMPLES 15
#define DEFAULT_WARMUP 3
#define QUICK_SAMPLES 5
#define QUICK_WARMUP 1
#define DEFAULT_TIMEOUT_S 600
#define MAX_SUITE_ARGS 32
/* Baselines: the newest runs of this host class that a run is judged against. */
#define DEFAULT_BASELINE_RUNS 5
/* calibrate: 4 A/A runs of 10 rounds, the 40 rounds a metric's noise needs. */
#define CALIB_DEFAULT_RUNS 4
#define CALIB_DEFAULT_ROUNDS 10

/* Long options without a short form. */
enum {
	OPT_JSON = 256,
	OPT_CSV,
	OPT_TOPOLOGY,
	OPT_WARMUP,
	OPT_QUICK,
	OPT_TIMEOUT,
	OPT_SEED,
	OPT_JUNIT,
	OPT_JUNIT_STYLE,
	OPT_HELP,
	OPT_IMPL,
	OPT_SIZE,
	OPT_RESERVE,
	OPT_RULES,
	OPT_CASE,
	OPT_CHECKS,
	OPT_NO_GATES,
	OPT_LABEL,
	OPT_BASELINE,
	OPT_BASELINE_RUNS,
	OPT_ANY_HOST,
	OPT_BASE,
	OPT_HEAD,
	OPT_ROUNDS,
	OPT_CONFIRM_ROUNDS,
	OPT_SHARD,
	OPT_QEMU,
	OPT_LONG,
	OPT_HTML,
	OPT_HOST,
	OPT_RECORD,
	OPT_GUEST,
	OPT_GUEST_EXIT_NS,
	OPT_COUNTER,
	OPT_FD,
	OPT_DEADLINE_NS,
	OPT_DUMP,
	OPT_CALIBRATION,
	OPT_RUNS,
	OPT_GUEST_KERNEL,
	OPT_GUEST_INITRD,
	OPT_QEMU_PRELOAD,
	OPT_CUT,
	OPT_SHAPE,
	OPT_SHAPE_OF,
};

struct cli {
	const char *suites[MAX_SUITE_ARGS];
	size_t n_suites;
	const char *glob;
	const char *names[MAX_SUITE_ARGS]; /* --case: exact names */
	size_t n_names;
	bool checks_only, no_gates, any_host;
	const char *rules_path;
	struct rules rules; /* loaded by cli_load_rules() */
	const char *label;
	const char *baseline;
	const char *calibration; /* ab: a history whose host class folder holds calibration.json */
	unsigned long runs;	 /* calibrate: A/A runs */
	unsigned long baseline_runs;
	const char *base, *head; /* ab: the sides */
	unsigned long rounds, confirm_rounds;
	unsigned long shard, shards; /* --shard I/N, 1-based; 0 shards: none */
	bool rounds_set;
	const char *args[MAX_SUITE_ARGS]; /* positional: compare's files */
	int n_args;
	const char *topology;
	const char *host_dir;	/* --host: a recorded host to plan from */
	const char *record_dir; /* hw --record: where to write this host */
	const char *junit;
	const char *json_path;
	const char *csv_dir;			 /* --csv: a folder, one file per chart */
	const char *html;			 /* --html: a page, its files beside it */
	const char *qemu_path;			 /* --qemu */
	struct qemu_bin qemu;			 /* the qemu suite's binary, found by cli_plan() */
	const char *guest_kernel, *guest_initrd; /* --guest-kernel, --guest-initrd */
	struct guest_kit kit;	  /* what the qemu suite boots, found by cli_plan() */
	const char *qemu_preload; /* --qemu-preload */
	const char *shape;	  /* vm --shape */
	const char *shape_of;	  /* vm --shape-of: a topology whose shape the guest takes */
	enum junit_style style;
	bool json_out;
	bool samples_set, warmup_set, timeout_set;
	bool reserve;
	enum counter_kind counter; /* --counter as given (auto resolves in cli_plan) */
	bool counter_set;
	/* case-exec: the result pipe, the case's deadline, callgrind's dump file */
	unsigned long fd;
	long long deadline_ns;
	const char *dump;
	struct impl_opts impl;
	struct run_opts opts;
};

/* The option tables of the commands (options.c). */
extern const struct option cli_hw_options[], cli_list_options[], cli_run_options[],
    cli_calibrate_options[], cli_case_exec_options[], cli_ab_options[], cli_compare_options[],
    cli_rules_options[], cli_plain_options[], cli_merge_options[], cli_model_options[],
    cli_vm_options[];

/** cli_print_usage() - the usage text and the implementations on stdout; returns EXIT_PASSED. */
int cli_print_usage(void);

/** cli_usage_text() - the usage text --help prints before the implementations. */
const char *cli_usage_text(void);

/** cli_print_man() - memgate(1) in roff on @f, made from the usage text; an exit status. */
int cli_print_man(FILE *f);

/** cli_usage_error() - "memgate: MESSAGE" and a hint on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cli_parse() - the options of a command from its own @table (an option of another command
 * is refused), up to @max_args positional arguments. Returns 0 or an exit status.
 */
int cli_parse(struct cli *c, int argc, char **argv, const struct option *table, const char *shorts,
	      int max_args);

/*
 * A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) between cli_signals_defer() and
 * cli_signals_restore() only sets cli_late_signal: the command finishes its reports and
 * cleans up, then exits 128 + the signal. Code that handles signals itself (the runner, ab)
 * installs its own handlers inside and puts these back.
 */
extern volatile sig_atomic_t cli_late_signal;
void cli_signals_defer(void);
void cli_signals_restore(void);

/**
 * cli_load_hw() - this host, --topology @spec or the record --host @host_dir (both NULL: this
 * host); bad input is 2, anything else 3.
 */
int cli_load_hw(struct hw_info *hw, const char *spec, const char *host_dir);

/** cli_load_rules() - --rules FILE or the embedded rules into @c; a bad file is 2. */
int cli_load_rules(struct cli *c);

/** cli_expand() - the planned cases of @c's selection on @hw. Returns 0 or an exit status. */
int cli_expand(const struct cli *c, const struct hw_info *hw, struct case_inst **insts, size_t *n);

/**
 * cli_resolve_counter() - --counter as this host can count it (auto: instructions, simulated or
 * tsc) into @c->opts.counter. Returns 0, or EXIT_USAGE having said why it cannot.
 */
int cli_resolve_counter(struct cli *c);

/* What list and run plan: the host they describe and the cases expanded on it. */
struct cli_plan {
	struct hw_info hw;
	struct case_inst *insts;
	size_t n;
};

/**
 * cli_plan() - what list and run share: parse, load the rules, describe the host, expand.
 * Returns 0 (release with cli_plan_release()) or an exit status (nothing to release).
 */
int cli_plan(struct cli *c, int argc, char **argv, const struct option *table, const char *shorts,
	     struct cli_plan *p);

/** cli_plan_release() - the rules of @c, and @p's host and cases. */
void cli_plan_release(struct cli *c, struct cli_plan *p);

/**
 * cli_check_reports() - before anything runs: can --junit and --json be written, and are
 * they two files? Returns 0 or EXIT_USAGE, having said why.
 */
int cli_check_reports(const struct cli *c);

/**
 * cli_report_init() - a report of the @n @results on @hw: this memgate's version and commit,
 * @c's label, the time now (UTC) and the host name.
 */
void cli_report_init(struct report_run *rep, const struct cli *c, const struct hw_info *hw,
		     const struct case_result *results, size_t n);

/** cli_write_reports() - --junit, --json and --csv of @rep. Returns 0 or EXIT_HARNESS. */
int cli_write_reports(const struct cli *c, const struct report_run *rep);

/** cli_run_status() - the exit status @n results earn: failures and errors first. */
int cli_run_status(const struct case_result *results, size_t n);

/**
 * cli_reserve_pool() - --reserve-hugepages: enough free hugetlb pages for the planned
 * @insts, put back on every way out. Returns 0 or an exit status.
 */
int cli_reserve_pool(const struct hw_info *hw, struct run_opts *opts, const struct case_inst *insts,
		     size_t n);

/* The commands: each takes its arguments after the command word, returns an exit status. */
int cli_cmd_list(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);
/** cli_cmd_model() - `memgate model`: the A/B procedures' A/A rate and power, modelled. */
int cli_cmd_model(int argc, char **argv);

/** cli_cmd_calibrate() - `memgate calibrate`: this host class's A/A noise, filed in a history. */
int cli_cmd_calibrate(int argc, char **argv);

/** cli_cmd_case_exec() - `memgate case-exec`: one case in this process (see runner.c). */
int cli_cmd_case_exec(int argc, char **argv);
int cli_cmd_rules(int argc, char **argv);
int cli_cmd_ab(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_baseline(int argc, char **argv);
int cli_cmd_merge(int argc, char **argv);
/** cli_cmd_vm() - `memgate vm`: a memgate command inside a NUMA guest, its reports nested. */
int cli_cmd_vm(int argc, char **argv);

#endif
