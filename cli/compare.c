/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare.c - `memgate ab`, `compare`, `baseline add` and `rules`: a commit against its parent. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "judge/ab.h"
#include "judge/compare.h"
#include "judge/history.h"
#include "hw/reserve.h"
#include "util/file.h"
#include "util/text.h"
#include "util/tmpdir.h"
#include "util/util.h"

int cli_cmd_rules(int argc, char **argv)
{
	struct cli c;
	struct rules rules;
	int ret = cli_parse(&c, argc, argv, "rules");

	if (ret || (ret = session_load_rules(&rules, c.cfg.rules_path)))
		return ret;
	printf("# the rules in effect: %s (%zu gates, %zu tolerance rules, alpha %g)\n",
	       rules.source, rules.n_gates, rules.n_tols, rules.alpha);
	fputs(rules.text, stdout);
	rules_release(&rules);
	return EXIT_PASSED;
}

/* The report of a comparison: console, JUnit, JSON; the exit status of its verdicts. */
static int report_comparison(const struct session *ss, const struct case_result *results, size_t n)
{
	struct report_run rep;
	int ret;

	session_report_init(ss, &rep, results, n);
	rep.time_s = (double)(util_now_ns() - ss->t0) / 1e9;
	report_console(&rep, 0, stdout);
	ret = session_write_reports(ss->cfg, &rep) ? EXIT_HARNESS : session_status(results, n);
	session_report_release(&rep);
	return ret;
}

/* A scratch directory for the sides' result files; removed with its files at the end. */
/* The options both sides' `list` and `run` get, rebuilt from what was parsed. */
static int ab_common(const struct cli *c, const char **argv, int max, char *numbers, size_t len,
		     char *shard)
{
	int n = 0;

	for (size_t i = 0; i < c->cfg.n_suites && n + 2 < max; i++) {
		argv[n++] = "-s";
		argv[n++] = c->cfg.suites[i];
	}
	if (c->cfg.glob && n + 2 < max) {
		argv[n++] = "-k";
		argv[n++] = c->cfg.glob;
	}
	/* The guest size the pool was reserved for, so that no side sizes it anew. */
	if (c->cfg.opts.size_bytes && n + 2 < max) {
		snprintf(numbers, len, "%llu", (unsigned long long)c->cfg.opts.size_bytes);
		argv[n++] = "--size";
		argv[n++] = numbers;
	}
	if (c->cfg.opts.quick && n + 1 < max)
		argv[n++] = "--quick";
	if (c->cfg.opts.long_run && n + 1 < max)
		argv[n++] = "--long";
	/* Resolved once here, so that both sides count alike (auto would resolve on each). */
	if (c->cfg.counter_set && n + 2 < max) {
		argv[n++] = "--counter";
		argv[n++] = counter_name(c->cfg.opts.counter);
	}
	if (c->cfg.shards && n + 2 < max) {
		snprintf(shard, 32, "%lu/%lu", c->cfg.shard, c->cfg.shards);
		argv[n++] = "--shard";
		argv[n++] = shard;
	}
	return n;
}

/* An A/B of two builds under way (ab, calibrate): its session, its sides and their options,
 * and what every side is run with: the options they share and the scratch folder. */
struct ab_job {
	struct session ss;
	struct ab_side base, head;
	struct ab_opts o;
	char context[1024], qemus[520];
	const char *common[4 * MAX_SUITE_ARGS + 8];
	char size[32], shard[32], dir[512];
};

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

/* The sides and the rounds of @c, on @j's host and rules. Returns 0 or an exit status. */
static int ab_setup(struct cli *c, struct ab_job *j)
{
	const struct hw_info *hw = &j->ss.hw;
	struct ab_opts *o = &j->o;
	struct mg_err err = {0};

	if (!c->base || !c->head)
		return cli_usage_error(
		    "ab needs --base 'BINARY [OPTIONS]' and --head 'BINARY [OPTIONS]'");
	if (ab_side_parse(&j->base, "base", c->base, &err) ||
	    ab_side_parse(&j->head, "head", c->head, &err))
		return cli_usage_error("%s", err.msg);
	/* Defaults: 6 rounds, 10 more for undecided metrics, 3 samples a round; quick: 4, 6, 2. An
	 * even number, so that each side runs first in half of them. */
	o->rounds = c->rounds_set ? (unsigned int)c->rounds : c->cfg.opts.quick ? 4 : 6;
	o->confirm_rounds = c->confirm_rounds	? (unsigned int)c->confirm_rounds
			    : c->cfg.opts.quick ? 6
						: 10;
	o->samples = c->cfg.samples_set ? c->cfg.opts.samples : c->cfg.opts.quick ? 2 : 3;
	o->warmup = c->warmup_set ? c->cfg.opts.warmup : 1;
	o->seed = c->cfg.opts.seed;
	o->timeout_s = c->cfg.opts.timeout_s;
	o->timeout_given = c->timeout_set;
	o->rules = &j->ss.rules;
	o->qemu_only = ab_sides_differ_in_qemu_only(&j->base, &j->head);
	snprintf(j->context, sizeof(j->context),
		 "base: %s; head: %s; kernel %s, glibc %s, host class %s", c->base, c->head,
		 hw->os_release, hw->glibc, hw->fingerprint_hash);
	if (o->qemu_only) {
		side_qemus(&j->base, &j->head, j->qemus, sizeof(j->qemus));
		snprintf(j->context + strlen(j->context), sizeof(j->context) - strlen(j->context),
			 "; %s", j->qemus);
		fprintf(
		    stderr,
		    "memgate: ab: the sides differ in their QEMU only (%s): the qemu suite's "
		    "reference figures (ref.*, memset.ms, qemu_over_ref) are shown, not judged\n",
		    j->qemus);
	}
	o->context = j->context;
	return 0;
}

/*
 * What ab and calibrate do before their first round: one pool reservation for the whole A/B,
 * sized by this build's suites (the sides use it); the options every side gets; the scratch
 * folder, from which on a stop signal waits for the reports and the clean-up; and each side
 * asked the protocol. Returns 0 or an exit status; ab_job_end() undoes what was done.
 */
static int ab_start(struct cli *c, struct ab_job *j)
{
	struct session *ss = &j->ss;
	struct mg_err err = {0};
	int ret = 0;

	if (c->cfg.reserve && !(ret = session_expand(&c->cfg, &ss->hw, &ss->insts, &ss->n)))
		ret = session_reserve_pool(ss);
	if (ret)
		return ret;
	j->o.n_common =
	    ab_common(c, j->common, (int)ARRAY_SIZE(j->common), j->size, sizeof(j->size), j->shard);
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

/* The end of @j, however it went: the scratch folder, the stop signals, the pools, the
 * session. A stop signal that came meanwhile turns @ret into 128 + it. Returns the status. */
static int ab_job_end(struct ab_job *j, int ret)
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
static int load_calibration(const struct cli *c, const struct hw_info *hw,
			    struct calibration *calib)
{
	struct mg_err err = {0};
	int ret;

	if (!c->calibration)
		return 0;
	ret = calib_load(calib, c->calibration, hw->fingerprint_hash, &err);
	if (ret == -ENOENT) {
		fprintf(stderr,
			"memgate: ab: no calibration of host class %s in %s (memgate calibrate): "
			"the rules' tolerances and each run's own spread apply\n",
			hw->fingerprint_hash, c->calibration);
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

int cli_cmd_ab(int argc, char **argv)
{
	struct cli c;
	struct ab_job j = {0};
	struct calibration calib = {0};
	struct ab_outcome out;
	struct mg_err err = {0};
	struct case_result *all;
	int ret = cli_parse(&c, argc, argv, "ab");

	if (ret || (ret = session_check_reports(&c.cfg)) || (ret = session_open(&j.ss, &c.cfg)))
		return ret;
	if ((ret = ab_setup(&c, &j)) || (ret = load_calibration(&c, &j.ss.hw, &calib)))
		goto out;
	j.o.calib = calib.n ? &calib : NULL;
	if ((ret = ab_start(&c, &j)) || proc_stop)
		goto out;
	if (j.base.vm != j.head.vm) {
		ret = cli_usage_error("ab: --%s is a guest (memgate vm ...) and --%s is not: give "
				      "both sides a guest, or neither",
				      j.base.vm ? "base" : "head", j.base.vm ? "head" : "base");
		goto out;
	}
	j.o.guests = j.base.vm;
	ret = ab_run(&j.base, &j.head, &j.o, &out, &err);
	if (ret && ret != -EINTR) {
		fprintf(stderr, "memgate: ab: %s\n", err.msg);
		ab_outcome_release(&out);
		/* A side that crashed or failed is a failed comparison; one refusing its
		 * options, or not a memgate, is bad usage. */
		ret = err.code == EPROTO || err.code == EINVAL ? EXIT_USAGE
		      : err.code == ECHILD		       ? EXIT_FAILED
							       : EXIT_HARNESS;
		goto out;
	}
	all = malloc((out.extra.n + out.verdicts.rows.n + 1) * sizeof(*all));
	if (!all) {
		ret = EXIT_HARNESS;
	} else {
		memcpy(all, out.extra.results, out.extra.n * sizeof(*all));
		memcpy(all + out.extra.n, out.verdicts.rows.results,
		       out.verdicts.rows.n * sizeof(*all));
		ret = report_comparison(&j.ss, all, out.extra.n + out.verdicts.rows.n);
		if (j.o.guests)
			fprintf(stderr,
				"memgate: ab: %u cases compared, %zu metrics judged (each round a "
				"boot of each side's guest running every case, %u samples a case; "
				"2 rounds under icount, else %u) in %.0f s\n",
				out.cases_compared, out.verdicts.rows.n, j.o.samples, j.o.rounds,
				(double)(util_now_ns() - j.ss.t0) / 1e9);
		else
			fprintf(stderr,
				"memgate: ab: %u cases compared, %zu metrics judged (%u rounds, %u "
				"more for undecided metrics, %u samples a round; a simulated case: "
				"2 rounds of 1 sample) in %.0f s\n",
				out.cases_compared, out.verdicts.rows.n, j.o.rounds,
				j.o.confirm_rounds, j.o.samples,
				(double)(util_now_ns() - j.ss.t0) / 1e9);
		ret = ab_nothing_compared(&out, ret);
		if (out.interrupted) {
			fprintf(stderr,
				"memgate: interrupted by signal %d; the report holds the "
				"cases judged so far\n",
				out.interrupted);
			ret = 128 + out.interrupted;
		}
	}
	free(all);
	ab_outcome_release(&out);
out:
	calib_release(&calib);
	return ab_job_end(&j, ret);
}

/* `memgate compare BASE.json... HEAD.json`: judge head against the pooled base runs. */
int cli_cmd_compare(int argc, char **argv)
{
	struct cli c;
	struct hist_run *runs;
	struct judged *j = NULL;
	struct compare_results res = {0};
	struct session ss;
	struct mg_err err = {0};
	size_t nj = 0;
	char context[1024];
	int ret = cli_parse(&c, argc, argv, "compare");

	if (ret)
		return ret;
	if (c.n_args < 2)
		return cli_usage_error("compare needs BASE.json [BASE.json...] HEAD.json");
	if ((ret = session_check_reports(&c.cfg)) || (ret = session_open(&ss, &c.cfg)))
		return ret;
	runs = calloc((size_t)c.n_args, sizeof(*runs));
	for (int i = 0; runs && !ret && i < c.n_args; i++)
		if (hist_load(&runs[i], c.args[i], &err)) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
			for (int k = 0; k < i; k++)
				hist_release(&runs[k]);
		}
	if (!runs)
		ret = EXIT_HARNESS;
	if (ret)
		goto out;
	for (int i = 0; !ret && !c.any_host && i + 1 < c.n_args; i++)
		if (strcmp(runs[i].host_hash, runs[c.n_args - 1].host_hash)) {
			fprintf(
			    stderr,
			    "memgate: %s is of host class %s (%s), %s of %s (%s): runs of "
			    "another host class are no baseline (--any-host to compare anyway)\n",
			    c.args[i], runs[i].host_hash, runs[i].host_class, c.args[c.n_args - 1],
			    runs[c.n_args - 1].host_hash, runs[c.n_args - 1].host_class);
			ret = EXIT_USAGE;
		}
	if (!ret && compare_runs(runs, (size_t)c.n_args - 1, &runs[c.n_args - 1], &ss.rules,
				 c.cfg.opts.seed, &j, &nj))
		ret = EXIT_HARNESS;
	compare_context(&runs[0], &runs[c.n_args - 1], context, sizeof(context));
	if (!ret && compare_results_make(j, nj, "baseline", context, &res))
		ret = EXIT_HARNESS;
	if (!ret)
		ret = report_comparison(&ss, res.rows.results, res.rows.n);
	/* No metric of head met one of the base runs': a comparison of nothing never passes. */
	if (!ret && !nj) {
		fprintf(
		    stderr,
		    "memgate: compare: nothing compared: no perf case that passed in %s has a "
		    "metric that passed in the base runs (case names, outcomes and host classes "
		    "decide what is compared)\n",
		    c.args[c.n_args - 1]);
		ret = EXIT_FAILED;
	}
	compare_results_release(&res);
	for (int i = 0; i < c.n_args; i++)
		hist_release(&runs[i]);
out:
	free(runs);
	session_close(&ss);
	return ret;
}

/* A host class hash as memgate writes it: 16 lowercase hex digits, so a path of one folder. */
static bool hash_ok(const char *h)
{
	size_t n = strspn(h, "0123456789abcdef");

	return n == 16 && !h[n];
}

/* @s with anything but [A-Za-z0-9._-] made '_', at most @len - 1 bytes, into @buf. */
static char *file_word(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++)
		buf[i] = isalnum((unsigned char)s[i]) || strchr("._-", s[i]) ? s[i] : '_';
	buf[i] = '\0';
	return buf;
}

/* A folder of the history, made if missing; a link there is refused. */
static int history_dir(const char *path)
{
	struct stat st;

	return util_make_dir(path, 0755, &st);
}

/*
 * @text as @dst, whole or not at all: a temporary beside it, then a link to the new name,
 * which fails rather than replace a run already filed. Returns 0 or -errno.
 */
static int file_whole(const char *text, const char *dst, struct mg_err *err)
{
	struct file_out rf;
	int ret = file_out_create(&rf, dst, err);

	if (ret)
		return ret;
	rf.failed = fputs(text, rf.f) == EOF;
	if (fflush(rf.f) || rf.failed || ferror(rf.f)) {
		ret = -(errno ? errno : EIO);
	} else if (link(rf.tmp, dst)) {
		ret = -errno;
	}
	fclose(rf.f);
	unlink(rf.tmp);
	if (ret)
		return mg_err_set(err, -ret, "%s: %s", dst,
				  ret == -EEXIST ? "filed already" : strerror(-ret));
	return 0;
}

/* `memgate baseline add RESULTS.json DIR`: file a run under DIR/HOST_HASH/. */
int cli_cmd_baseline(int argc, char **argv)
{
	struct cli c;
	struct hist_run r;
	struct mg_err err = {0};
	char sub[1024], dst[1200], stamp[32], commit[48];
	const char *bad;
	char *text = NULL;
	int ret = cli_parse(&c, argc, argv, "baseline");

	if (ret)
		return ret;
	if (c.n_args != 3 || strcmp(c.args[0], "add"))
		return cli_usage_error("expected: baseline add RESULTS.json DIR");
	if (hist_load(&r, c.args[1], &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	/* What names the file comes from the file: nothing in it may lead out of DIR. */
	if (!hash_ok(r.host_hash)) {
		fprintf(stderr, "memgate: %s: host_class.hash \"%.40s\" is not 16 hex digits\n",
			c.args[1], r.host_hash);
		ret = EXIT_USAGE;
		goto out;
	}
	file_word(r.timestamp, stamp, sizeof(stamp));
	file_word(r.commit, commit, sizeof(commit));
	snprintf(sub, sizeof(sub), "%s/%s", c.args[2], r.host_hash);
	snprintf(dst, sizeof(dst), "%s/%s-%s.json", sub, stamp, commit);
	bad = (ret = history_dir(c.args[2])) ? c.args[2] : (ret = history_dir(sub)) ? sub : NULL;
	if (bad) {
		/* Name the folder that failed, the history's or its host class's. */
		fprintf(stderr, "memgate: baseline add: %s: %s\n", bad, util_make_dir_error(ret));
		ret = ret == -ENOTDIR ? EXIT_USAGE : EXIT_HARNESS;
		goto out;
	}
	text = text_read_input(c.args[1], HIST_MAX_BYTES, NULL, &err);
	if (!text || file_whole(text, dst, &err)) {
		fprintf(stderr, "memgate: baseline add: %s\n", err.msg);
		/* The same run filed twice is the input's doing; a failed write the harness's. */
		ret = text && err.code == EEXIST ? EXIT_USAGE : EXIT_HARNESS;
		goto out;
	}
	printf("%s\n", dst);
	fprintf(stderr, "memgate: filed %s (host class %s: %s)\n", c.args[1], r.host_hash,
		r.host_class);
	ret = EXIT_PASSED;
out:
	free(text);
	hist_release(&r);
	return ret;
}

/* Feed one A/A run's rounds to the accumulators: every metric both sides measured. */
static int calib_take(const struct ab_outcome *out, struct calib_acc **acc, size_t *n_acc)
{
	for (size_t i = 0; i < out->verdicts.rows.n; i++) {
		const struct judged *j = &out->verdicts.judged[i];

		if (j->n_v &&
		    calib_add(acc, n_acc, j->case_name, j->metric, j->unit,
			      j->better == HIGHER_IS_BETTER, j->base_v, j->head_v, j->n_v))
			return -ENOMEM;
	}
	return 0;
}

/* The widest metrics, for the console: what this host class's noise is made of. */
static void calib_print(const struct calib_acc *acc, size_t n_acc)
{
	size_t shown = 0;
	bool *done = calloc(n_acc + 1, sizeof(*done));

	printf("%-72s %7s %8s %8s\n", "metric (the widest first)", "rounds", "sd", "width");
	while (done && shown < n_acc && shown < 25) {
		size_t best = n_acc;

		for (size_t i = 0; i < n_acc; i++)
			if (!done[i] && (best == n_acc || calib_noise(&acc[i]).width >
							      calib_noise(&acc[best]).width))
				best = i;
		done[best] = true;
		printf("%-72.72s %7zu %7.2f%% %7.2f%%\n", acc[best].key, acc[best].n,
		       100 * calib_noise(&acc[best]).sd, 100 * calib_noise(&acc[best]).width);
		shown++;
	}
	free(done);
}

/* A new calibration against the ones before it: how many metrics moved far from them. */
struct calib_change {
	unsigned int files;	       /* calibrations before it */
	size_t both, noisier, quieter; /* metrics in both; more than twice, less than half */
};

/*
 * The @n_acc metrics of a new calibration against the upper median of the ones already in the
 * history @dir: a noisy (or unusually quiet) hour shows as many metrics far from it.
 */
static struct calib_change calib_against_last(const struct calib_acc *acc, size_t n_acc,
					      const char *dir, const char *host_hash)
{
	struct calib_change d = {0};
	struct calibration c;
	struct mg_err err = {0};

	if (calib_load(&c, dir, host_hash, &err))
		return d;
	d.files = c.files;
	for (size_t i = 0; i < n_acc; i++) {
		const struct verdict_noise *was = calib_find_key(&c, acc[i].key);
		struct verdict_noise now = calib_noise(&acc[i]);

		if (!was || was->rounds < CALIB_MIN_ROUNDS || now.rounds < CALIB_MIN_ROUNDS)
			continue;
		d.both++;
		d.noisier += now.sd > 2 * was->sd;
		d.quieter += 2 * now.sd < was->sd;
	}
	calib_release(&c);
	return d;
}

int cli_cmd_calibrate(int argc, char **argv)
{
	struct cli c;
	struct ab_job j = {0};
	struct ab_opts *o = &j.o;
	struct mg_err err = {0};
	char self[4096], spec[4200], who[160];
	struct calib_change d;
	struct calib_acc *acc = NULL;
	size_t n_acc = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int ret = cli_parse(&c, argc, argv, "calibrate");

	if (ret || (ret = session_open(&j.ss, &c.cfg)))
		return ret;
	if (!c.calibration) {
		ret = cli_usage_error("calibrate needs --history DIR: where the baselines of this "
				      "host class are kept");
		goto out_hw;
	}
	/* The history is checked before the runs, not after the half hour they take. */
	if ((ret = history_dir(c.calibration))) {
		fprintf(stderr, "memgate: calibrate: --history %s: %s\n", c.calibration,
			util_make_dir_error(ret));
		ret = ret == -ENOTDIR ? EXIT_USAGE : EXIT_HARNESS;
		goto out_hw;
	}
	if (len <= 0) {
		fprintf(stderr, "memgate: calibrate: which binary is this: %s\n", strerror(errno));
		ret = EXIT_HARNESS;
		goto out_hw;
	}
	self[len] = '\0';
	/* This build against itself: quoted, so that a path with blanks stays one word. */
	snprintf(spec, sizeof(spec), "'%s'", self);
	c.base = c.head = spec;
	if ((ret = ab_setup(&c, &j)))
		goto out_hw;
	/* Rounds of one look: no second look is taken, every round is noise to measure. */
	o->rounds = c.rounds_set ? (unsigned int)c.rounds : CALIB_DEFAULT_ROUNDS;
	o->confirm_rounds = 0;
	if ((ret = ab_start(&c, &j)))
		goto out_hw;
	for (unsigned long r = 0; r < c.runs && !proc_stop; r++) {
		struct ab_outcome out;
		int64_t t0 = util_now_ns();

		o->seed = c.cfg.opts.seed + r * 1000;
		ret = ab_run(&j.base, &j.head, o, &out, &err);
		if (ret) {
			fprintf(stderr, "memgate: calibrate: run %lu: %s\n", r + 1,
				ret == -EINTR ? "interrupted" : err.msg);
			ab_outcome_release(&out);
			ret = ret == -EINTR ? 128 + (out.interrupted ? out.interrupted : SIGINT)
					    : EXIT_HARNESS;
			goto out_hw;
		}
		ret = calib_take(&out, &acc, &n_acc) ? EXIT_HARNESS : 0;
		fprintf(stderr,
			"memgate: calibrate: A/A run %lu of %lu: %zu metrics, %u rounds, %.0f s\n",
			r + 1, c.runs, out.verdicts.rows.n, o->rounds,
			(double)(util_now_ns() - t0) / 1e9);
		ab_outcome_release(&out);
		if (ret)
			goto out_hw;
	}
	if (proc_stop) {
		ret = 128 + proc_stop;
		goto out_hw;
	}
	if (!n_acc) {
		fprintf(stderr, "memgate: calibrate: no perf case was measured: nothing to file\n");
		ret = EXIT_FAILED;
		goto out_hw;
	}
	d = calib_against_last(acc, n_acc, c.calibration, j.ss.hw.fingerprint_hash);
	snprintf(who, sizeof(who), "memgate %s (%s)", MEMGATE_VERSION, MEMGATE_COMMIT);
	if (calib_save(acc, n_acc, c.calibration, j.ss.hw.fingerprint_hash, j.ss.hw.fingerprint,
		       who, (unsigned int)c.runs, o->rounds, &err)) {
		fprintf(stderr, "memgate: calibrate: %s\n", err.msg);
		ret = EXIT_HARNESS;
		goto out_hw;
	}
	calib_print(acc, n_acc);
	printf("%s/%s/%s: %zu metrics, %lu A/A runs of %u rounds (host class %s)\n", c.calibration,
	       j.ss.hw.fingerprint_hash, CALIB_FILE, n_acc, c.runs, o->rounds, j.ss.hw.fingerprint);
	if (d.both)
		printf(
		    "against the %u calibration%s before it: %zu of %zu metrics more than twice as "
		    "noisy a round, %zu less than half; verdicts take each metric's upper median "
		    "of the last %d\n",
		    d.files, d.files > 1 ? "s" : "", d.noisier, d.both, d.quieter, CALIB_KEEP);
	ret = EXIT_PASSED;
out_hw:
	calib_acc_release(acc, n_acc);
	return ab_job_end(&j, ret);
}
