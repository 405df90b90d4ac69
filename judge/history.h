/* SPDX-License-Identifier: GPL-2.0-or-later */
/* history.h - results files read back: the unit of history, baselines and A/B rounds. */
#ifndef MG_JUDGE_HISTORY_H
#define MG_JUDGE_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "run/case.h"
#include "run/result.h"
#include "util/err.h"

/* The results format memgate writes (`--json`) and reads back. */
#define HISTORY_FORMAT 1
/* Samples of one metric a results file may hold: what `run -n` allows. */
#define HIST_MAX_SAMPLES 10000
/* A results file of the longest run is tens of MiB; a larger one is not memgate's. */
#define HIST_MAX_BYTES (256u << 20)

struct hist_metric {
	const char *name, *unit;
	enum metric_better better;
	bool reference; /* one of its suite's reference arms (suite_def.reference) */
	double *v;	/* the samples, in the order taken */
	size_t n;
};

struct hist_case {
	char full_name[256]; /* "suite.group.name[params]" */
	const char *suite, *group, *name, *kind, *outcome, *message;
	double time_s;
	struct hist_metric *metrics;
	size_t n_metrics;
};

/* One run: where and how it was measured, and every sample of every case. */
struct hist_run {
	char path[512];
	json_t *root; /* owns the strings below */
	const char *host_class, *host_hash;
	const char *kernel, *glibc, *qemu; /* "" when the run did not say */
	const char *version, *commit, *label, *timestamp;
	struct hist_case *cases;
	size_t n_cases;
};

/**
 * hist_load() - read the results file @path. Returns 0, or -errno with @err saying what is
 * wrong: not readable, not JSON (with the line), not memgate results, a format this memgate
 * does not read (-EPROTO). On failure @r holds nothing to release.
 */
int hist_load(struct hist_run *r, const char *path, struct mg_err *err);

/** hist_parse() - the same from @len bytes of @text, named @name in messages. */
int hist_parse(struct hist_run *r, const char *text, size_t len, const char *name,
	       struct mg_err *err);

/** hist_release() - free what hist_load() made. */
void hist_release(struct hist_run *r);

/** hist_case() - the case of @r that is @full_name (case_key(): whatever its impl), or NULL. */
const struct hist_case *hist_case(const struct hist_run *r, const char *full_name);

/**
 * hist_plain_suite() - a guest's suite without its prefix: "guest[kernel=6.1.0-28-cloud-amd64].kvm"
 * is "kvm"; a suite of the host is itself.
 */
const char *hist_plain_suite(const char *suite);

/** hist_guest_key() - the key of case @hc as a run on the host would give it, into @buf. */
const char *hist_guest_key(const struct hist_case *hc, char *buf, size_t len);

/**
 * hist_guest_case() - the case of @r whose key, a guest's prefix dropped, is @key's
 * (case_key()): the case of a run on the host or in a guest (memgate vm) alike; NULL if none.
 */
const struct hist_case *hist_guest_case(const struct hist_run *r, const char *key);

/** hist_vm_prop() - @r's guest property @name (memgate vm's "vm" object), "" when none. */
const char *hist_vm_prop(const struct hist_run *r, const char *name);

/** hist_metric() - the metric named @name of @c, or NULL. */
const struct hist_metric *hist_metric(const struct hist_case *c, const char *name);

/**
 * hist_from_results() - the @n results of this run as a run of history, for comparing it
 * with baselines before it is written: samples are shared with @res, not copied (release
 * @r with hist_release_shared() before them). Returns 0 or -ENOMEM; on failure release it
 * all the same.
 */
int hist_from_results(struct hist_run *r, const struct case_result *res, size_t n,
		      const struct hw_info *hw);

/** hist_release_shared() - free what hist_from_results() made (not the samples). */
void hist_release_shared(struct hist_run *r);

/**
 * hist_dir_runs() - the results files in @dir (and its subfolders, one level: `baseline add`
 * files runs under DIR/HOST_HASH/) whose host class hash is @host_hash, newest first (by
 * their timestamp), at most @max of them, loaded into @runs (release each, free the array).
 * Unreadable files are skipped with a warning on stderr. Returns 0 or -errno with @err.
 */
int hist_dir_runs(const char *dir, const char *host_hash, size_t max, struct hist_run **runs,
		  size_t *n, struct mg_err *err);

#endif
