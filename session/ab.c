/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.c - `memgate ab` from start to end, and the A/B job it shares with calibrate.c. */
#include "session/ab.h"
#include "session/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/reserve.h"
#include "judge/calibration.h"
#include "session/ab_job.h"
#include "session/compare.h"
#include "suites/suites.h"
#include "util/proc.h"
#include "util/tmpdir.h"
#include "util/util.h"

/* The options both sides' `list` and `run` get, rebuilt from what was parsed. */
static int ab_common(const struct session_config *cfg, const char **argv, int max, char *numbers,
		     size_t len, char *shard)
{
	int n = 0;

	for (size_t i = 0; i < cfg->n_suites && n + 2 < max; i++) {
		argv[n++] = "-s";
		argv[n++] = cfg->suites[i];
	}
	if (cfg->glob && n + 2 < max) {
		argv[n++] = "-k";
		argv[n++] = cfg->glob;
	}
	/* The guest size the pool was reserved for, so that no side sizes it anew. */
	if (cfg->opts.size_bytes && n + 2 < max) {
		snprintf(numbers, len, "%llu", (unsigned long long)cfg->opts.size_bytes);
		argv[n++] = "--size";
		argv[n++] = numbers;
	}
	if (cfg->opts.quick && n + 1 < max)
		argv[n++] = "--quick";
	if (cfg->opts.long_run && n + 1 < max)
		argv[n++] = "--long";
	/* Resolved once here, so that both sides count alike (auto would resolve on each). */
	if (cfg->counter_set && n + 2 < max) {
		argv[n++] = "--counter";
		argv[n++] = counter_name(cfg->opts.counter);
	}
	if (cfg->shards && n + 2 < max) {
		snprintf(shard, 32, "%lu/%lu", cfg->shard, cfg->shards);
		argv[n++] = "--shard";
		argv[n++] = shard;
	}
	return n;
}

/* The QEMU a side's --qemu names (the one on PATH without it), as its version says. */
static void side_qemu(const struct ab_side *side, char *buf, size_t len)
{
	const char *path, *preload;
	struct qemu_bin q;
	struct mg_err err = {0};

	ab_side_qemu(side, &path, &preload);
	if (qemu_find(&q, *path ? path : NULL, &err) || !q.path[0])
		snprintf(buf, len, "%s QEMU %.100s: %.120s", side->role, *path ? path : "on PATH",
			 err.msg[0] ? err.msg : q.why);
	else
		snprintf(buf, len, "%s QEMU %.200s", side->role, q.version);
}

/* "base QEMU 7.2.22 (...), head QEMU 10.0.2 (...)" into @buf. */
static void side_qemus(const struct ab_side *base, const struct ab_side *head, char *buf,
		       size_t len)
{
	char b[256], h[256];

	side_qemu(base, b, sizeof(b));
	side_qemu(head, h, sizeof(h));
	snprintf(buf, len, "%s, %s", b, h);
}

/* "kvm: ref.*; qemu: ref.*, memset.ms, qemu_over_ref": each suite's reference arms (its
 * suite_def.reference), into @buf. */
static void reference_arms(char *buf, size_t len)
{
	size_t n, used = 0;
	const struct suite_def *const *suites = suites_all(&n);

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *const *g = suites[i]->reference;

		if (!g || !*g)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "",
					 suites[i]->name, *g);
		while (*++g && used < len)
			used += (size_t)snprintf(buf + used, len - used, ", %s", *g);
	}
}

int ab_job_setup(const struct session_config *cfg, const struct session_ab *c, struct ab_job *j)
{
	const struct hw_info *hw = &j->ss.hw;
	struct ab_opts *o = &j->o;
	struct mg_err err = {0};

	if (ab_side_parse(&j->base, "base", c->base, &err) ||
	    ab_side_parse(&j->head, "head", c->head, &err))
		return session_usage_error("%s", err.msg);
	/* Defaults: 6 rounds, 10 more for undecided metrics, 3 samples a round; quick: 4, 6, 2. An
	 * even number, so that each side runs first in half of them. */
	o->rounds = c->rounds_set ? (unsigned int)c->rounds : cfg->opts.quick ? 4 : 6;
	o->confirm_rounds = c->confirm_rounds ? (unsigned int)c->confirm_rounds
			    : cfg->opts.quick ? 6
					      : 10;
	o->samples = cfg->samples_set ? cfg->opts.samples : cfg->opts.quick ? 2 : 3;
	o->warmup = cfg->opts.warmup_set ? cfg->opts.warmup : 1;
	o->seed = cfg->opts.seed;
	o->timeout_s = cfg->opts.timeout_s;
	o->timeout_given = cfg->timeout_set;
	o->rules = &j->ss.rules;
	o->qemu_only = ab_sides_differ_in_qemu_only(&j->base, &j->head);
	snprintf(j->context, sizeof(j->context),
		 "base: %s; head: %s; kernel %s, glibc %s, host class %s", c->base, c->head,
		 hw->os_release, hw->glibc, hw->fingerprint_hash);
	if (o->qemu_only) {
		char arms[256];

		reference_arms(arms, sizeof(arms));
		side_qemus(&j->base, &j->head, j->qemus, sizeof(j->qemus));
		snprintf(j->context + strlen(j->context), sizeof(j->context) - strlen(j->context),
			 "; %s", j->qemus);
		fprintf(stderr,
			"memgate: ab: the sides differ in their QEMU only (%s): the suites' "
			"reference arms (%s) are shown, not judged\n",
			j->qemus, arms);
	}
	o->context = j->context;
	return 0;
}

/* One pool reservation for the whole A/B, sized by this build's suites (the sides use it). */
int ab_job_start(struct session_config *cfg, struct ab_job *j)
{
	struct session *ss = &j->ss;
	struct mg_err err = {0};
	int ret = 0;

	if (cfg->reserve && !(ret = session_expand(cfg, &ss->hw, &ss->insts, &ss->n)))
		ret = session_reserve_pool(ss);
	if (ret)
		return ret;
	j->o.n_common = ab_common(cfg, j->common, (int)ARRAY_SIZE(j->common), j->size,
				  sizeof(j->size), j->shard);
	j->o.common = j->common;
	proc_stops_defer();
	if ((ret = tmpdir_make(j->dir, sizeof(j->dir), "ab"))) {
		fprintf(stderr, "memgate: ab: cannot make its working folder in %s ($TMPDIR): %s\n",
			tmpdir_base(), strerror(-ret));
		j->dir[0] = '\0';
		proc_stops_resume();
		return EXIT_HARNESS;
	}
	j->o.workdir = j->dir;
	if (ab_check_protocol(&j->base, &j->o, &err) || ab_check_protocol(&j->head, &j->o, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

/* The scratch folder, the stop signals, the pools, the session. */
int ab_job_end(struct ab_job *j, int ret)
{
	if (j->dir[0]) {
		tmpdir_remove(j->dir);
		proc_stops_resume();
		if (proc_stop && ret < 128) {
			fprintf(stderr, "memgate: interrupted by signal %d\n", proc_stop);
			ret = 128 + proc_stop;
		}
	}
	reserve_restore();
	session_close(&j->ss);
	return ret;
}

/*
 * An A/B that compared no perf case says so and never passes: 3 when a guest side did not run
 * the cases (its boot's status, with its console's end), 2 when the selection holds no perf
 * case on either side (a typo in -k, say), 1 when the sides share none that ran.
 */
static int ab_nothing_compared(const struct ab_outcome *out, int ret)
{
	if (out->cases_compared || out->interrupted)
		return ret;
	if (out->boots_failed) {
		fprintf(stderr, "memgate: ab: nothing measured: %s\n", out->boot_error);
		return EXIT_HARNESS;
	}
	if (!out->perf_listed[0] && !out->perf_listed[1]) {
		fprintf(stderr,
			"memgate: ab: no perf case matches the selection (see `memgate list`): "
			"nothing to compare\n");
		return EXIT_USAGE;
	}
	fprintf(stderr,
		"memgate: ab: nothing compared: base lists %zu perf cases, head %zu, and no case "
		"was measured on both sides\n",
		out->perf_listed[0], out->perf_listed[1]);
	return ret > EXIT_FAILED ? ret : EXIT_FAILED;
}

/*
 * --calibration DIR: this host class's noise from DIR/HASH/calibration.json, or none (said,
 * and the rules' tolerances with each run's own spread apply). A file that is there but bad
 * is bad input.
 */
static int load_calibration(const struct session_ab *c, const struct hw_info *hw,
			    struct calibration *calib)
{
	struct mg_err err = {0};
	int ret;

	if (!c->history)
		return 0;
	ret = calib_load(calib, c->history, hw->fingerprint_hash, &err);
	if (ret == -ENOENT) {
		fprintf(stderr,
			"memgate: ab: no calibration of host class %s in %s (memgate calibrate): "
			"the rules' tolerances and each run's own spread apply\n",
			hw->fingerprint_hash, c->history);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	if (calib->files == 1)
		fprintf(stderr,
			"memgate: ab: calibration of this host class: %s (%s, %u A/A runs of %u "
			"rounds, %zu metrics)\n",
			calib->path, calib->made, calib->runs, calib->rounds, calib->n);
	else
		fprintf(
		    stderr,
		    "memgate: ab: calibrations of this host class: %s and the %u before it (%s; "
		    "%zu metrics): each metric's sd and width are the upper median of theirs\n",
		    calib->path, calib->files - 1, calib->when, calib->n);
	return 0;
}

/* The rounds' results as one report: head's checks and one-sided cases, then the verdicts;
 * how long it took on stderr. Returns the comparison's exit status. */
static int ab_report(struct ab_job *j, const struct ab_outcome *out)
{
	size_t n = out->extra.n + out->verdicts.rows.n;
	struct case_result *all = malloc((n + 1) * sizeof(*all));
	int ret;

	if (!all)
		return EXIT_HARNESS;
	memcpy(all, out->extra.results, out->extra.n * sizeof(*all));
	memcpy(all + out->extra.n, out->verdicts.rows.results, out->verdicts.rows.n * sizeof(*all));
	ret = session_report_comparison(&j->ss, all, n);
	free(all);
	if (j->o.guests)
		fprintf(stderr,
			"memgate: ab: %u cases compared, %zu metrics judged (each round a boot of "
			"each side's guest running every case, %u samples a case; 2 rounds under "
			"icount, else %u) in %.0f s\n",
			out->cases_compared, out->verdicts.rows.n, j->o.samples, j->o.rounds,
			(double)(util_now_ns() - j->ss.t0) / 1e9);
	else
		fprintf(
		    stderr,
		    "memgate: ab: %u cases compared, %zu metrics judged (%u rounds, %u more for "
		    "undecided metrics, %u samples a round; a simulated case: 2 rounds of 1 "
		    "sample) in %.0f s\n",
		    out->cases_compared, out->verdicts.rows.n, j->o.rounds, j->o.confirm_rounds,
		    j->o.samples, (double)(util_now_ns() - j->ss.t0) / 1e9);
	ret = ab_nothing_compared(out, ret);
	if (out->interrupted) {
		fprintf(stderr,
			"memgate: interrupted by signal %d; the report holds the cases judged so "
			"far\n",
			out->interrupted);
		ret = 128 + out->interrupted;
	}
	return ret;
}

/* The rounds of @j, judged and reported; the exit status. */
static int ab_rounds(struct ab_job *j)
{
	struct ab_outcome out;
	struct mg_err err = {0};
	int ret = ab_run(&j->base, &j->head, &j->o, &out, &err);

	if (ret && ret != -EINTR) {
		fprintf(stderr, "memgate: ab: %s\n", err.msg);
		ab_outcome_release(&out);
		/* A side that crashed or failed is a failed comparison; one refusing its
		 * options, or not a memgate, is bad usage. */
		return err.code == EPROTO || err.code == EINVAL ? EXIT_USAGE
		       : err.code == ECHILD			? EXIT_FAILED
								: EXIT_HARNESS;
	}
	ret = ab_report(j, &out);
	ab_outcome_release(&out);
	return ret;
}

int session_ab(struct session_config *cfg, const struct session_ab *ab)
{
	struct ab_job j = {0};
	struct calibration calib = {0};
	int ret;

	if ((ret = session_check_reports(cfg)) || (ret = session_open(&j.ss, cfg)))
		return ret;
	if ((ret = ab_job_setup(cfg, ab, &j)) || (ret = load_calibration(ab, &j.ss.hw, &calib)))
		goto out;
	j.o.calib = calib.n ? &calib : NULL;
	if ((ret = ab_job_start(cfg, &j)) || proc_stop)
		goto out;
	if (j.base.vm != j.head.vm) {
		ret = session_usage_error(
		    "ab: --%s is a guest (memgate vm ...) and --%s is not: give both "
		    "sides a guest, or neither",
		    j.base.vm ? "base" : "head", j.base.vm ? "head" : "base");
		goto out;
	}
	j.o.guests = j.base.vm;
	ret = ab_rounds(&j);
out:
	calib_release(&calib);
	return ab_job_end(&j, ret);
}

const char *session_ab_protocol(void)
{
	return AB_PROTOCOL_LINE;
}
