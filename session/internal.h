/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - inside session/: one run of memgate from start to end, the order of it kept in
 * one place. Plan the cases from the host and the filters, reserve what they need, run them,
 * resample what the gates left undecided, apply the gates, judge against a baseline, and hand
 * one result set to the reporters. `run` calls them all, `list` the plan, and ab, calibrate,
 * compare, vm and merge the parts they share (the rules, the host, the report files, the exit
 * status). The command line sees session.h only.
 */
#ifndef MG_SESSION_INTERNAL_H
#define MG_SESSION_INTERNAL_H

#include "hw/hw.h"
#include "judge/compare.h"
#include "judge/gate.h"
#include "judge/history.h"
#include "judge/rules.h"
#include "reports/report.h"
#include "run/guest.h"
#include "run/qemu.h"
#include "session/session.h"

/* A session: what it found, planned, measured and judged. */
struct session {
	struct session_config *cfg;
	struct rules rules; /* loaded by session_open() */
	struct hw_info hw;  /* this host, or the one of --topology or --host */
	bool hw_loaded;
	struct qemu_bin qemu;	 /* the qemu suite's binary, found by session_plan() */
	struct guest_kit kit;	 /* what the qemu suite boots, found by session_plan() */
	struct case_inst *insts; /* planned by session_plan() */
	size_t n;
	/* after session_run(): the cases' results, the gates' and the baseline's verdicts */
	struct case_result *results;
	struct gate_results gates;
	struct compare_results base;
	struct hist_run *history; /* the baseline's runs, newest first, for the report */
	size_t n_history;
	struct case_result *all; /* results, gates and baseline rows: what is reported */
	size_t n_all;
	int64_t t0; /* when the session began, for the report's time */
};

/**
 * session_open() - begin a session of @cfg in @s: the rules (--rules or the embedded ones),
 * the counter the CPU-bound cases count with, and the host (@cfg's --topology or --host, else
 * this one). Returns 0 (end it with session_close()) or an exit status; nothing to close then.
 */
int session_open(struct session *s, struct session_config *cfg);

/**
 * session_plan() - session_open(), then the cases @cfg selects, planned on the host; the QEMU
 * and the guest kit where a planned case needs them; --cut checked against the plan. Returns
 * 0 (end it with session_close()) or an exit status; nothing to close then.
 */
int session_plan(struct session *s, struct session_config *cfg);

/**
 * session_expand() - the cases @cfg selects, planned on @hw (an all-zero @hw for a child that
 * plans without the host). Returns 0 and a new array in @insts (free it), or an exit status.
 */
int session_expand(const struct session_config *cfg, const struct hw_info *hw,
		   struct case_inst **insts, size_t *n);

/**
 * session_check_reports() - before anything runs: can @cfg's --junit, --json, --csv and
 * --html be written, and are they distinct files? Returns 0 or EXIT_USAGE, having said why.
 */
int session_check_reports(const struct session_config *cfg);

/**
 * session_reserve_pool() - --reserve-hugepages: enough free hugetlb pages for @s's planned
 * cases (the pools are put back on every way out). session_run() then reads the pools again
 * (hw_reread_pools()), so that the suites plan from the pools they will use. Returns 0 or an
 * exit status.
 */
int session_reserve_pool(struct session *s);

/**
 * session_run() - the planned run, reported: the reports checked writable; the pools
 * reserved if asked; every case run (each sampling until its verdicts are settled unless -n
 * was given); the cases of undecided gates sampled again; the gates applied; the perf
 * metrics judged against --baseline; then the console (each case as it ends, the verdicts,
 * each suite's summary) on @out and the report files. A stop signal ends the cases early and
 * skips what is left to judge, never the reports. Returns the run's exit status: 128 + the
 * signal when one stopped it.
 */
int session_run(struct session *s, FILE *out);

/**
 * session_report_init() - a report of the @n @results on @s's host: this memgate's version
 * and commit, the label, the QEMU, the time now (UTC), the host name, and each suite's tables
 * over @results, rendered once for every report (session_report_release() frees them).
 */
void session_report_init(const struct session *s, struct report_run *rep,
			 const struct case_result *results, size_t n);

/** session_report_release() - what session_report_init() rendered for @rep (the suites' tables). */
void session_report_release(struct report_run *rep);

/** session_write_reports() - @cfg's --junit, --json, --csv and --html of @rep; 0 or EXIT_HARNESS.
 */
int session_write_reports(const struct session_config *cfg, const struct report_run *rep);

/** session_status() - the exit status @n results earn: failures and errors first. */
int session_status(const struct case_result *results, size_t n);

/** session_load_rules() - --rules @path, or the embedded rules (@path NULL); bad input is 2. */
int session_load_rules(struct rules *rules, const char *path);

/**
 * session_load_host() - @hw: this host, --topology @spec or the record --host @host_dir (both
 * NULL: this host). Returns 0 or an exit status: bad input is 2, anything else 3.
 */
int session_load_host(struct hw_info *hw, const char *spec, const char *host_dir);

/**
 * session_list() - @s's plan on @out: each case with its kind, doc and metrics (unit, which
 * way is better), then the gates that will judge them; or (@json) the cases as the JSON array
 * `memgate ab` reads of a side. Returns EXIT_PASSED, or EXIT_HARNESS when the JSON could not be
 * made.
 */
int session_list(const struct session *s, bool json, FILE *out);

/** session_history_dir() - a folder of a history, made if missing; a link there is refused. */
int session_history_dir(const char *path);

/**
 * session_report_comparison() - the report of a comparison (ab's, compare's): the console,
 * @ss's JUnit and JSON; the exit status its @n @results earn (session/compare.c).
 */
int session_report_comparison(const struct session *ss, const struct case_result *results,
			      size_t n);

/** session_close() - release what the session holds: rules, host, plan, results, verdicts. */
void session_close(struct session *s);

#endif
