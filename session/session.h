/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.h - what the command line asks of memgate, and the jobs that do it: it fills a
 * struct session_config from its options and calls one of these (or of session/ab.h,
 * compare.h, vm.h, model.h), each a job from start to end. What a job is made of (the host,
 * the rules, the plan, the runs, the verdicts, the reports) is session/internal.h's, below the
 * command line's view.
 *
 * Every function that can fail prints "memgate: what went wrong" on stderr and returns an exit
 * status: the contract with CI below.
 */
#ifndef MG_SESSION_SESSION_H
#define MG_SESSION_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/report.h"
#include "run/case.h"
#include "run/impl_opts.h"

/* Exit statuses: the contract with CI, also in --help and the README. */
enum {
	EXIT_PASSED = 0,  /* every case passed or was skipped with a reason */
	EXIT_FAILED = 1,  /* a check, gate or comparison failed, or a case crashed or timed out */
	EXIT_USAGE = 2,	  /* bad usage or bad input (options, topology, rules, results files) */
	EXIT_HARNESS = 3, /* the harness itself failed (fork, pipes, writing reports) */
};

#define MAX_SUITE_ARGS 32

/* What a session is asked to do: the options of `run` that reach past the command line. */
struct session_config {
	/* which cases */
	const char *suites[MAX_SUITE_ARGS]; /* -s: suite names; none: all */
	size_t n_suites;
	const char *glob;		   /* -k */
	const char *names[MAX_SUITE_ARGS]; /* --case: exact names */
	size_t n_names;
	bool checks_only;	     /* --checks */
	unsigned long shard, shards; /* --shard I/N, 1-based; 0 shards: none */
	/* planned from: this host, --topology SPEC or the record --host DIR */
	const char *topology, *host_dir;
	/* how they run */
	struct impl_opts impl;	   /* --impl; opts.impl points here */
	struct run_opts opts;	   /* samples, warm-up, timeout, seed, size, counter, guest, cut */
	bool samples_set;	   /* -n given: every case takes that many, none settles early */
	bool timeout_set;	   /* --timeout given (ab: each side's case; vm: the guest's run) */
	enum counter_kind counter; /* --counter as given; session_open() resolves opts.counter */
	bool counter_set;
	bool reserve;		  /* --reserve-hugepages */
	const char *qemu_path;	  /* --qemu */
	const char *guest_kernel; /* --guest-kernel */
	const char *guest_initrd; /* --guest-initrd */
	const char *qemu_preload; /* --qemu-preload */
	/* how they are judged */
	const char *rules_path; /* --rules; NULL: the embedded rules */
	bool no_gates;		/* --no-gates */
	const char *baseline;	/* --baseline: a results file or a history directory */
	unsigned long baseline_runs;
	/* where the reports go */
	const char *junit, *json_path, *csv_dir, *html;
	enum junit_style style;
	const char *label;
	/* who runs it: memgate's version and the commit it was built from */
	const char *version, *commit;
};

/** session_run_cases() - `memgate run`: @cfg's cases planned on the host, run and reported. */
int session_run_cases(struct session_config *cfg);

/** session_list_cases() - `memgate list`: @cfg's plan as text, or (@json) as ab reads it. */
int session_list_cases(struct session_config *cfg, bool json);

/**
 * session_hw() - `memgate hw`: @cfg's host (this one, --topology or --host) described as text,
 * as JSON (@json), or recorded in @record_dir. Returns an exit status.
 */
int session_hw(const struct session_config *cfg, const char *record_dir, bool json);

/**
 * session_case_exec() - `memgate case-exec`: the one case @cfg names, run in this process as
 * the runner's child under callgrind would (@fd its results, @dump callgrind's file).
 */
int session_case_exec(struct session_config *cfg, int fd, long long deadline_ns, const char *dump);

/**
 * session_merge() - `memgate merge`: the @n_files shards' results as one, into @cfg's --json.
 * Returns an exit status: 2 when the shards are not of one run.
 */
int session_merge(const struct session_config *cfg, const char *const *files, int n_files);

/**
 * session_recover() - at memgate's start: the hugetlb pages a killed memgate reserved, taken
 * back while their pool still reads as it left it (hw/reserve.h); what was done, on @out.
 * Returns how many were put back.
 */
int session_recover(FILE *out);

/**
 * session_usage_error() - "memgate: MESSAGE" on stderr, for bad input found past the command
 * line's checks; returns EXIT_USAGE.
 */
int session_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * session_impl_set() - --impl @assignment ("KEY=VALUE") into @o, checked against every
 * suite's keys. Returns 0, or -EINVAL with @err saying what the key takes.
 */
int session_impl_set(struct impl_opts *o, const char *assignment, struct mg_err *err);

/** session_impl_describe() - every suite's --impl keys on @out: values, what each picks. */
void session_impl_describe(FILE *out);

/* The guest sizes --size takes: a thread's 64 MiB at least; 1 PiB, past any host, at most. */
#define SESSION_SIZE_MIN (64ULL << 20)
#define SESSION_SIZE_MAX (1ULL << 50)

/**
 * session_size() - @arg ("512M", "4G": K, M, G and T are powers of 1024) as the bytes of
 * guest memory the prealloc cases take. Returns 0, or -EINVAL: no size, or out of range.
 */
int session_size(const char *arg, uint64_t *bytes);

/** session_rules() - `memgate rules`: the rules in effect (@path, else the embedded), as text. */
int session_rules(const char *path);

/** session_suites() - every suite, in run order (the names -s takes and completion offers). */
const struct suite_def *const *session_suites(size_t *n);

#endif
