/* memgate.c - the memgate command line: hw, list, run. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/hw.h"
#include "hw/reserve.h"
#include "reports/report.h"
#include "harness/gate.h"
#include "harness/ab.h"
#include "harness/compare.h"
#include "harness/history.h"
#include "harness/rules.h"
#include "harness/runner.h"
#include "suites/suites.h"
#include "util/text.h"
#include "util/util.h"

#define MEMGATE_VERSION "0.1.0"
/* The source it was built from: the Makefile passes `git describe`, or "unknown". */
#ifndef MEMGATE_COMMIT
#define MEMGATE_COMMIT "unknown"
#endif

/* Exit statuses: the contract with CI, also in --help and the README. */
enum {
	EXIT_PASSED = 0,  /* every case passed or was skipped with a reason */
	EXIT_FAILED = 1,  /* a check or gate failed, or a case crashed or timed out */
	EXIT_USAGE = 2,	  /* bad usage or bad input (options, topology files) */
	EXIT_HARNESS = 3, /* the harness itself failed (fork, pipes, writing reports) */
};

/* Sampling defaults: 15 samples give a median whose bootstrap interval is a few MADs wide;
 * the quick mode keeps 5, enough to see a crash or a gross regression. */
#define DEFAULT_SAMPLES 15
#define DEFAULT_WARMUP 3
#define QUICK_SAMPLES 5
#define QUICK_WARMUP 1
#define DEFAULT_TIMEOUT_S 600
#define MAX_SUITE_ARGS 16
/* Baselines: the newest runs of this host class that a run is judged against. */
#define DEFAULT_BASELINE_RUNS 5

static const char usage_text[] =
    "usage: memgate [--help] [--version] COMMAND [OPTIONS]\n"
    "\n"
    "Regression tests and perf gates for the guest-memory paths of a QEMU/KVM hypervisor.\n"
    "\n"
    "commands:\n"
    "  hw    [--json] [--topology SPEC]\n"
    "        describe the host (or SPEC) the suites plan from\n"
    "  list  [-s SUITE]... [-k GLOB] [--case NAME]... [--impl KEY=VALUE]... [--json]\n"
    "        [--rules FILE] [--topology SPEC]\n"
    "        the cases, with their parameters as this host expands them, and the gates\n"
    "  run   [-s SUITE]... [-k GLOB] [--case NAME]... [--checks] [-n SAMPLES] [--warmup N]\n"
    "        [--quick] [--timeout S] [--seed N] [--junit FILE] [--junit-style jenkins|ant]\n"
    "        [--json FILE] [--label TEXT] [--size SIZE] [--reserve-hugepages]\n"
    "        [--impl KEY=VALUE]... [--rules FILE] [--no-gates]\n"
    "        [--baseline PATH [--baseline-runs N]] [--topology SPEC]\n"
    "        run the cases, each in a forked child with a timeout; judge the gates, and\n"
    "        with --baseline the perf metrics against earlier runs of this host class\n"
    "  ab    --base 'BINARY [OPTIONS]' --head 'BINARY [OPTIONS]' [-s SUITE]... [-k GLOB]\n"
    "        [--rounds N] [--confirm-rounds N] [-n SAMPLES] [--warmup N] [--quick]\n"
    "        [--junit FILE] [--json FILE] [--rules FILE] [--reserve-hugepages] [--size SIZE]\n"
    "        is head slower than base? Every shared perf case, the two builds in turn,\n"
    "        each round a fresh process of each; head's checks run once\n"
    "  compare BASE.json... HEAD.json [--any-host] [--junit FILE] [--json FILE] [--rules FILE]\n"
    "        judge a run against earlier ones (pooled per run) of the same host class\n"
    "  baseline add RESULTS.json DIR\n"
    "        file a run into a history directory, under DIR/HOST_CLASS_HASH/\n"
    "  rules [--rules FILE]\n"
    "        print the rules in effect (the embedded ones unless --rules)\n"
    "\n"
    "options:\n"
    "  -s, --suite SUITE     only this suite (repeatable); default: all\n"
    "  -k, --filter GLOB     only cases whose SUITE.GROUP.NAME[PARAMS] matches GLOB\n"
    "      --case NAME       only the case named exactly NAME (repeatable)\n"
    "      --checks          only the checks, no perf cases\n"
    "  -n, --samples N       samples per metric after warm-up (default 15, quick 5;\n"
    "                        ab: per round, default 3, quick 2)\n"
    "      --warmup N        discarded samples first (default 3, quick 1; ab: 1)\n"
    "      --quick           fewer samples and smaller sizes: a smoke run\n"
    "      --timeout S       seconds per case before it is killed (default 600)\n"
    "      --seed N          seed of the bootstrap and of random workloads (default 1)\n"
    "      --junit FILE      write JUnit XML (Jenkins' dialect unless --junit-style ant)\n"
    "      --json FILE       write every sample and summary as JSON: the unit of history\n"
    "      --label TEXT      a free label stored in the JSON results\n"
    "      --impl KEY=VALUE  the implementation under test (below); the others stay as\n"
    "                        the references the gates compare it with\n"
    "      --rules FILE      thresholds and tolerances (default: the embedded rules)\n"
    "      --no-gates        no in-run gates (what ab asks of each side)\n"
    "      --baseline PATH   a results file, or a directory of them (baseline add)\n"
    "      --baseline-runs N the newest N runs of this host class there (default 5)\n"
    "      --rounds N        ab: rounds of every shared case (default 5, quick 3)\n"
    "      --confirm-rounds N  ab: fresh rounds for flagged metrics (default: --rounds)\n"
    "      --any-host        compare: accept base runs of another host class\n"
    "      --size SIZE       guest memory of the prealloc cases (default: min(4G, a\n"
    "                        quarter of MemAvailable))\n"
    "      --reserve-hugepages  as root, size the hugetlb pools for the planned cases;\n"
    "                        the old size is put back on exit, Ctrl-C included\n"
    "      --topology SPEC   FILE.xml (hwloc XML) or synthetic:\"pack:2 [numa] core:4 pu:2\";\n"
    "                        plans are then checked, not executed\n"
    "\n"
    "exit status:\n"
    "  0  every case, gate and comparison passed (or was skipped, with its reason)\n"
    "  1  a check, gate or comparison failed, or a case crashed or timed out\n"
    "  2  bad usage or bad input (options, topology, rules or results files, a side of\n"
    "     ab that is not a memgate speaking its protocol)\n"
    "  3  the harness itself failed\n"
    "  128+N  interrupted by signal N; the reports hold what was measured\n";

static int print_usage(void)
{
	fputs(usage_text, stdout);
	printf(
	    "\nimplementations under test (--impl KEY=VALUE; the first value is the default):\n");
	impl_opts_describe(stdout);
	return EXIT_PASSED;
}

struct cli {
	const char *suites[MAX_SUITE_ARGS];
	size_t n_suites;
	const char *glob;
	const char *names[MAX_SUITE_ARGS]; /* --case: exact names */
	size_t n_names;
	bool checks_only, no_gates, list_json, any_host;
	const char *rules_path;
	struct rules rules; /* loaded by cli_rules() */
	bool rules_loaded;
	const char *label;
	const char *baseline;
	unsigned long baseline_runs;
	const char *base, *head; /* ab: the sides */
	unsigned long rounds, confirm_rounds;
	bool rounds_set;
	const char *args[MAX_SUITE_ARGS]; /* positional: compare's files */
	int n_args;
	const char *topology;
	const char *junit;
	const char *json_path;
	enum junit_style style;
	bool json_out;
	bool samples_set, warmup_set;
	bool reserve;
	struct impl_opts impl;
	struct run_opts opts;
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "memgate: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'memgate --help'.\n");
	return EXIT_USAGE;
}

/* A whole number in [min, max]; anything else is a usage error naming the option. */
static int parse_ulong(const char *opt, const char *s, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "memgate: %s expects a whole number from %lu to %lu, got '%s'\n",
			opt, min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

enum {
	OPT_JSON = 256,
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
};

static const struct option hw_long[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option list_long[] = {
    {"quick", no_argument, NULL, OPT_QUICK},
    {"size", required_argument, NULL, OPT_SIZE},
    {"json", no_argument, NULL, OPT_JSON},
    {"case", required_argument, NULL, OPT_CASE},
    {"rules", required_argument, NULL, OPT_RULES},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option run_long[] = {
    {"rules", required_argument, NULL, OPT_RULES},
    {"case", required_argument, NULL, OPT_CASE},
    {"checks", no_argument, NULL, OPT_CHECKS},
    {"no-gates", no_argument, NULL, OPT_NO_GATES},
    {"label", required_argument, NULL, OPT_LABEL},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"baseline-runs", required_argument, NULL, OPT_BASELINE_RUNS},
    {"size", required_argument, NULL, OPT_SIZE},
    {"reserve-hugepages", no_argument, NULL, OPT_RESERVE},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"samples", required_argument, NULL, 'n'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"junit-style", required_argument, NULL, OPT_JUNIT_STYLE},
    {"json", required_argument, NULL, OPT_JSON},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option ab_long[] = {
    {"seed", required_argument, NULL, OPT_SEED},
    {"base", required_argument, NULL, OPT_BASE},
    {"head", required_argument, NULL, OPT_HEAD},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"confirm-rounds", required_argument, NULL, OPT_CONFIRM_ROUNDS},
    {"rules", required_argument, NULL, OPT_RULES},
    {"label", required_argument, NULL, OPT_LABEL},
    {"size", required_argument, NULL, OPT_SIZE},
    {"reserve-hugepages", no_argument, NULL, OPT_RESERVE},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"samples", required_argument, NULL, 'n'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"junit-style", required_argument, NULL, OPT_JUNIT_STYLE},
    {"json", required_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option compare_long[] = {
    {"rules", required_argument, NULL, OPT_RULES},
    {"any-host", no_argument, NULL, OPT_ANY_HOST},
    {"seed", required_argument, NULL, OPT_SEED},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"junit-style", required_argument, NULL, OPT_JUNIT_STYLE},
    {"json", required_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option rules_long[] = {
    {"rules", required_argument, NULL, OPT_RULES},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option plain_long[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* A size: a whole number with an optional K, M, G or T (powers of 1024), at least 64M. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'T':
		shift += 10; /* fall through */
	case 'G':
		shift += 10; /* fall through */
	case 'M':
		shift += 10; /* fall through */
	case 'K':
		shift += 10;
		end++;
		break;
	default:
		break;
	}
	if (errno || end == s || *end || s[0] == '-' || v > (1ULL << (62 - shift)) ||
	    (v << shift) < (64ULL << 20)) {
		fprintf(stderr,
			"memgate: --size expects a size of at least 64M, such as 512M or 4G, "
			"got '%s'\n",
			s);
		return -EINVAL;
	}
	*out = v << shift;
	return 0;
}

/* Options that take a value; returns 0, -EINVAL (usage error printed) or 1 (not one of these). */
static int parse_valued(struct cli *c, int opt, const char *arg)
{
	unsigned long v;

	switch (opt) {
	case 'n':
		if (parse_ulong("--samples", arg, 1, 100000, &v))
			return -EINVAL;
		c->opts.samples = (unsigned int)v;
		c->samples_set = true;
		return 0;
	case OPT_WARMUP:
		if (parse_ulong("--warmup", arg, 0, 100000, &v))
			return -EINVAL;
		c->opts.warmup = (unsigned int)v;
		c->warmup_set = true;
		return 0;
	case OPT_TIMEOUT:
		if (parse_ulong("--timeout", arg, 1, 7 * 86400, &v))
			return -EINVAL;
		c->opts.timeout_s = (double)v;
		return 0;
	case OPT_SEED:
		if (parse_ulong("--seed", arg, 0, ULONG_MAX, &v))
			return -EINVAL;
		c->opts.seed = v;
		return 0;
	case OPT_SIZE:
		if (parse_size(arg, &c->opts.size_bytes))
			return -EINVAL;
		return 0;
	case OPT_BASELINE_RUNS:
		return parse_ulong("--baseline-runs", arg, 1, 1000, &c->baseline_runs);
	case OPT_ROUNDS:
		c->rounds_set = true;
		return parse_ulong("--rounds", arg, 2, 1000, &c->rounds);
	case OPT_CONFIRM_ROUNDS:
		return parse_ulong("--confirm-rounds", arg, 2, 1000, &c->confirm_rounds);
	case OPT_JUNIT_STYLE:
		if (strcmp(arg, "jenkins") && strcmp(arg, "ant")) {
			usage_error("--junit-style expects 'jenkins' or 'ant', got '%s'", arg);
			return -EINVAL;
		}
		c->style = strcmp(arg, "ant") ? JUNIT_JENKINS : JUNIT_ANT;
		return 0;
	}
	return 1;
}

static int parse_opt(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 's':
		if (c->n_suites == MAX_SUITE_ARGS) {
			usage_error("at most %s -s options", "16");
			return -EINVAL;
		}
		c->suites[c->n_suites++] = arg;
		return 0;
	case 'k':
		c->glob = arg;
		return 0;
	case OPT_QUICK:
		c->opts.quick = true;
		return 0;
	case OPT_RESERVE:
		c->reserve = true;
		return 0;
	case OPT_JUNIT:
		c->junit = arg;
		return 0;
	case OPT_JSON:
		c->json_out = true;
		c->json_path = arg;
		return 0;
	case OPT_TOPOLOGY:
		c->topology = arg;
		return 0;
	case OPT_RULES:
		c->rules_path = arg;
		return 0;
	case OPT_CASE:
		if (c->n_names == MAX_SUITE_ARGS) {
			usage_error("at most %d --case options", MAX_SUITE_ARGS);
			return -EINVAL;
		}
		c->names[c->n_names++] = arg;
		return 0;
	case OPT_CHECKS:
		c->checks_only = true;
		return 0;
	case OPT_NO_GATES:
		c->no_gates = true;
		return 0;
	case OPT_LABEL:
		c->label = arg;
		return 0;
	case OPT_BASELINE:
		c->baseline = arg;
		return 0;
	case OPT_ANY_HOST:
		c->any_host = true;
		return 0;
	case OPT_BASE:
		c->base = arg;
		return 0;
	case OPT_HEAD:
		c->head = arg;
		return 0;
	case OPT_IMPL: {
		struct mg_err err;

		if (impl_opts_set(&c->impl, arg, &err)) {
			usage_error("%s", err.msg);
			return -EINVAL;
		}
		return 0;
	}
	}
	return parse_valued(c, opt, arg);
}

/* Parse a command's options from its own table: an option of another command is refused. */
static int parse_cli(struct cli *c, int argc, char **argv, const struct option *table,
		     const char *shorts, int max_args)
{
	int opt;

	memset(c, 0, sizeof(*c));
	c->opts.samples = DEFAULT_SAMPLES;
	c->opts.warmup = DEFAULT_WARMUP;
	c->opts.timeout_s = DEFAULT_TIMEOUT_S;
	c->opts.seed = 1;
	c->opts.impl = &c->impl;
	c->baseline_runs = DEFAULT_BASELINE_RUNS;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return EXIT_USAGE; /* getopt has said what was wrong */
		if (opt == OPT_HELP)
			exit(print_usage());
		if (parse_opt(c, opt, optarg))
			return EXIT_USAGE;
	}
	while (optind < argc && c->n_args < max_args)
		c->args[c->n_args++] = argv[optind++];
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (c->opts.quick && !c->samples_set)
		c->opts.samples = QUICK_SAMPLES;
	if (c->opts.quick && !c->warmup_set)
		c->opts.warmup = QUICK_WARMUP;
	return 0;
}

/* Detect the host or load SPEC; bad input is the user's (2), anything else the harness's (3). */
static int load_hw(struct hw_info *hw, const char *spec)
{
	struct mg_err err = {0};

	if (!hw_detect(hw, spec, &err))
		return 0;
	fprintf(stderr, "memgate: %s\n", err.msg);
	return spec ? EXIT_USAGE : EXIT_HARNESS;
}

static int cmd_hw(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	int ret = parse_cli(&c, argc, argv, hw_long, "", 0);

	if (ret || (ret = load_hw(&hw, c.topology)))
		return ret;
	if (c.json_out)
		ret = hw_print_json(&hw, stdout) ? EXIT_HARNESS : EXIT_PASSED;
	else
		hw_print_text(&hw, stdout);
	hw_release(&hw);
	return ret;
}

static int expand(const struct cli *c, const struct hw_info *hw, struct case_inst **insts,
		  size_t *n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct runner_filter f = {.suites = c->suites,
				  .n_suites = c->n_suites,
				  .glob = c->glob,
				  .names = c->names,
				  .n_names = c->n_names,
				  .kinds = c->checks_only ? 1u << CASE_CHECK : 0};
	struct mg_err err = {0};
	int ret = runner_expand(suites, n_suites, hw, &c->opts, &f, insts, n, &err);

	if (ret)
		fprintf(stderr, "memgate: %s\n", err.msg);
	return ret == -ENOENT ? EXIT_USAGE : ret ? EXIT_HARNESS : 0;
}

/* --rules FILE, or the embedded rules; a bad file is bad input (2). */
static int load_rules(struct cli *c)
{
	struct mg_err err = {0};

	if (rules_load(&c->rules, c->rules_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	return 0;
}

/* What list and run share: parse the options, describe the host, expand the cases. */
static int plan(struct cli *c, int argc, char **argv, const struct option *table,
		const char *shorts, struct hw_info *hw, struct case_inst **insts, size_t *n)
{
	int ret = parse_cli(c, argc, argv, table, shorts, 0);

	if (ret || (ret = load_rules(c)))
		return ret;
	if ((ret = load_hw(hw, c->topology))) {
		rules_release(&c->rules);
		return ret;
	}
	ret = expand(c, hw, insts, n);
	if (ret) {
		hw_release(hw);
		rules_release(&c->rules);
		return ret;
	}
	/* A rule that matches nothing is a typo, or a case this host lacks: say so, unless
	 * the selection narrowed the cases on purpose. */
	if (!c->glob && !c->n_names && !c->checks_only)
		rules_warn_unused(&c->rules, *insts, *n, stderr);
	return 0;
}

/* "metric of case-glob", without the glob's escapes. */
static void print_side(const struct gate_side *s)
{
	printf("%s of ", s->metric);
	for (const char *p = s->glob; *p; p++)
		if (*p != '\\')
			putchar(*p);
}

/* The gates of the suites whose cases are listed: they judge those cases after a run. */
static void list_gates(const struct cli *c, const struct case_inst *insts, size_t n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		size_t k = 0;

		while (k < n && insts[k].suite != suites[i])
			k++;
		for (size_t g = 0; k < n && g < c->rules.n_gates; g++) {
			const struct gate_def *gd = &c->rules.gates[g].def;
			char full[256];

			if (strcmp(c->rules.gates[g].suite, suites[i]->name))
				continue;
			snprintf(full, sizeof(full), "%s.gates.%s", suites[i]->name, gd->name);
			if (c->glob && !text_glob(c->glob, full))
				continue;
			printf("%-50s gate  ", full);
			print_side(&gd->a);
			printf(" / ");
			print_side(&gd->b);
			printf(" %s %.3g\n",
			       gd->kind == GATE_NOT_SLOWER ? "not significantly over"
			       : gd->kind == GATE_FASTER   ? "surely under"
							   : "at most",
			       gd->kind == GATE_FASTER ? 1.0 : gd->threshold);
		}
	}
}

static int list_json(const struct case_inst *insts, size_t n);

static int cmd_list(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret = plan(&c, argc, argv, list_long, "s:k:", &hw, &insts, &n);

	if (ret)
		return ret;
	if (c.json_out) {
		ret = list_json(insts, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct case_def *d = insts[i].def;
		char full[256];

		printf("%-50s %-5s %s", case_full_name(&insts[i], full, sizeof(full)),
		       d->kind == CASE_PERF ? "perf" : "check", d->doc);
		for (unsigned int m = 0; m < d->n_metrics; m++)
			printf("%s%s", m ? ", " : " [", d->metrics[m].name);
		if (d->n_metrics)
			printf(" in %s, %s is better]", d->metrics[0].unit,
			       d->metrics[0].better == LOWER_IS_BETTER ? "lower" : "higher");
		putchar('\n');
	}
	list_gates(&c, insts, n);
out:
	rules_release(&c.rules);
	free(insts);
	hw_release(&hw);
	return ret;
}

static int write_reports(const struct cli *c, const struct report_run *rep)
{
	struct mg_err err = {0};
	int ret = 0;

	if (c->junit && report_junit_write(rep, c->style, c->junit, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (c->json_path && report_json_write(rep, c->json_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	return ret;
}

/* The exit status a finished run earns: failures and errors of cases first. */
static int run_status(const struct case_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (results[i].outcome == OUTCOME_FAIL || results[i].outcome == OUTCOME_ERROR)
			return EXIT_FAILED;
	return EXIT_PASSED;
}

/*
 * Sample again the cases behind INCONCLUSIVE gates (@gates->involved), as many samples
 * again each round, and judge anew: a noisy figure gets more data before a verdict, up to
 * GATE_RESAMPLE_ROUNDS rounds. Returns 0, a signal number or -errno as runner_run().
 */
static int resample_inconclusive(const struct rules *rules, const struct case_inst *insts,
				 struct case_result *results, size_t n, const struct hw_info *hw,
				 const struct run_opts *opts, struct gate_results *gates,
				 struct mg_err *err)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	int ret = 0;

	for (int round = 0; !ret && gates->n_involved && round < GATE_RESAMPLE_ROUNDS; round++) {
		size_t k = gates->n_involved;
		struct case_inst *again = calloc(k, sizeof(*again));
		struct case_result *more = calloc(k, sizeof(*more));

		if (!again || !more) {
			free(again);
			free(more);
			return mg_err_set(err, ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < k; i++)
			again[i] = insts[gates->involved[i]];
		if (opts->progress)
			fprintf(stderr, "inconclusive gates: sampling %zu cases again\n", k);
		ret = runner_run(again, k, hw, opts, more, err);
		for (size_t i = 0; i < k; i++) {
			more[i].inst = &insts[gates->involved[i]];
			if (!ret && runner_merge(&results[gates->involved[i]], &more[i], opts))
				ret = mg_err_set(err, ENOMEM, "out of memory");
			case_result_release(&more[i]);
		}
		free(again);
		free(more);
		gates_release(gates);
		if (!ret && gates_evaluate(rules, suites, n_suites, results, n, opts, gates))
			ret = mg_err_set(err, ENOMEM, "out of memory judging the gates");
	}
	return ret;
}

/* Free pages of @page bytes the suites of the planned cases use (their hugepages hooks). */
static uint64_t pages_wanted(const struct hw_info *hw, const struct run_opts *opts,
			     const struct case_inst *insts, size_t n, uint64_t page)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	uint64_t want = 0;

	for (size_t i = 0; i < n_suites; i++) {
		size_t k = 0;

		while (k < n && insts[k].suite != suites[i])
			k++;
		if (k < n && suites[i]->hugepages)
			want += suites[i]->hugepages(hw, opts, page);
	}
	return want;
}

/* --reserve-hugepages: enough free hugetlb pages for the planned cases, restored on exit. */
static int reserve_pool(const struct hw_info *hw, struct run_opts *opts,
			const struct case_inst *insts, size_t n)
{
	uint64_t want, got = 0;
	struct mg_err err = {0};

	if (hw->source != HW_SOURCE_HOST) {
		fprintf(stderr,
			"memgate: --reserve-hugepages with --topology: nothing runs here\n");
		return EXIT_USAGE;
	}
	/* The size is fixed now: after the reservation MemAvailable is smaller, and the cases
	 * must use the size the pools were sized for. */
	opts->size_bytes = case_guest_size(hw, opts);
	want = pages_wanted(hw, opts, insts, n, 1 << 30);
	/*
	 * 1 GiB pages first, while memory is least fragmented (after the 2 MiB pool took 4 GiB
	 * the kernel found 3 of 5 here): worth a try, not a reason to stop. A refusal for want
	 * of root is the same for both pools and reported below.
	 */
	if (want && reserve_hugepages(1 << 30, want, &got, &err) && err.code != EPERM)
		fprintf(stderr, "memgate: no 1 GiB pages for this run (the 1 GiB cases skip): %s\n",
			err.msg);
	else if (want && !err.code)
		fprintf(stderr,
			"memgate: %" PRIu64 " free 1 GiB hugetlb pages for this run; the "
			"pool's size is put back on exit\n",
			got);
	mg_err_clear(&err);
	want = pages_wanted(hw, opts, insts, n, 2 << 20);
	if (!want) {
		fprintf(stderr,
			"memgate: --reserve-hugepages: no planned case uses hugetlb pages\n");
		return 0;
	}
	if (reserve_hugepages(2 << 20, want, &got, &err)) {
		fprintf(stderr, "memgate: --reserve-hugepages: %s\n", err.msg);
		return err.code == EPERM ? EXIT_USAGE : EXIT_HARNESS;
	}
	opts->hugepages_reserved = true;
	fprintf(stderr,
		"memgate: %" PRIu64 " free 2 MiB hugetlb pages for this run; the pool's "
		"size is put back on exit\n",
		got);
	return 0;
}

/* Each suite's own table (figures beside the published ones), after the case lines. */
static void print_summaries(const struct report_run *rep, FILE *out)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		char *text = suites[i]->summary ? suites[i]->summary(rep->results, rep->n) : NULL;

		if (text)
			fprintf(out, "\n%s", text);
		free(text);
	}
}

/* Cases, gates and baseline verdicts, one array for the reports; shallow copies. */
static struct case_result *merge_results(const struct case_result *results, size_t n,
					 const struct gate_results *gates,
					 const struct compare_results *base, size_t *n_all)
{
	struct case_result *all = malloc((n + gates->n + base->n + 1) * sizeof(*all));

	*n_all = 0;
	if (!all)
		return NULL;
	/* An interrupted run has no gates: no array to copy from. */
	if (n)
		memcpy(all, results, n * sizeof(*all));
	if (gates->n)
		memcpy(all + n, gates->results, gates->n * sizeof(*all));
	if (base->n)
		memcpy(all + n + gates->n, base->results, base->n * sizeof(*all));
	*n_all = n + gates->n + base->n;
	return all;
}

/*
 * --baseline PATH: this run's perf metrics against the newest runs of this host class in
 * PATH (a results file or a directory of them). None there: one SKIP saying so.
 */
static int judge_baseline(const struct cli *c, const struct hw_info *hw,
			  const struct case_result *results, size_t n, struct compare_results *out)
{
	struct hist_run *runs = NULL, head;
	struct judged *j = NULL;
	size_t n_runs = 0, nj = 0;
	struct mg_err err = {0};
	struct stat st;
	char context[1024];
	int ret;

	if (stat(c->baseline, &st) == 0 && S_ISREG(st.st_mode)) {
		runs = calloc(1, sizeof(*runs));
		ret = runs ? hist_load(runs, c->baseline, &err) : -ENOMEM;
		n_runs = !ret && !strcmp(runs->host_hash, hw->fingerprint_hash);
		if (!ret && !n_runs)
			hist_release(runs);
	} else {
		ret = hist_dir_runs(c->baseline, hw->fingerprint_hash, c->baseline_runs, &runs,
				    &n_runs, &err);
	}
	if (ret) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		free(runs);
		return ret;
	}
	ret = hist_from_results(&head, results, n, hw);
	if (!ret && n_runs)
		ret = compare_runs(runs, n_runs, &head, &c->rules, c->opts.seed, &j, &nj);
	snprintf(context, sizeof(context),
		 "%zu base runs of host class %s in %s, newest %s (%s, "
		 "kernel %s); this run: kernel %s, glibc %s",
		 n_runs, hw->fingerprint_hash, c->baseline, n_runs ? runs[0].timestamp : "-",
		 n_runs ? runs[0].commit : "-", n_runs ? runs[0].kernel : "-", hw->os_release,
		 hw->glibc);
	if (!ret)
		ret = compare_results_make(j, nj, "baseline", context, out);
	if (!ret && !n_runs)
		fprintf(stderr,
			"memgate: --baseline %s: no run of this host class (%s); the "
			"baseline gates are skipped\n",
			c->baseline, hw->fingerprint_hash);
	hist_release_shared(&head);
	for (size_t i = 0; i < n_runs; i++)
		hist_release(&runs[i]);
	free(runs);
	return ret;
}

static int run_cases(const struct cli *c, const struct hw_info *hw, const struct case_inst *insts,
		     size_t n)
{
	struct case_result *results = calloc(n ? n : 1, sizeof(*results));
	struct gate_results gates = {0};
	struct compare_results base = {0};
	struct case_result *all;
	size_t n_suites, n_all;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct report_run rep = {.hw = hw,
				 .results = results,
				 .n = n,
				 .version = MEMGATE_VERSION,
				 .commit = MEMGATE_COMMIT,
				 .label = c->label};
	struct mg_err err = {0};
	struct run_opts opts = c->opts;
	int64_t t0 = util_now_ns();
	int ret, status = 0;
	time_t now = time(NULL);
	struct tm tm;

	if (!results)
		return EXIT_HARNESS;
	gmtime_r(&now, &tm);
	strftime(rep.timestamp, sizeof(rep.timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(rep.hostname, sizeof(rep.hostname) - 1);
	opts.progress = isatty(STDERR_FILENO);
	ret = runner_run(insts, n, hw, &opts, results, &err);
	/* Gates judge complete runs only: an interrupted one reports its cases alone. */
	if (!ret && !c->no_gates &&
	    gates_evaluate(&c->rules, suites, n_suites, results, n, &opts, &gates))
		ret = mg_err_set(&err, ENOMEM, "out of memory judging the gates");
	if (!ret && !c->no_gates)
		ret = resample_inconclusive(&c->rules, insts, results, n, hw, &opts, &gates, &err);
	if (!ret && c->baseline && judge_baseline(c, hw, results, n, &base))
		status = EXIT_USAGE;
	all = merge_results(results, n, &gates, &base, &n_all);
	if (all) {
		rep.results = all;
		rep.n = n_all;
	}
	rep.time_s = (double)(util_now_ns() - t0) / 1e9;
	/* Whatever happened, what was measured is reported. */
	report_console(&rep, stdout);
	print_summaries(&rep, stdout);
	if (write_reports(c, &rep))
		status = EXIT_HARNESS;
	if (ret < 0) {
		fprintf(stderr, "memgate: harness failure: %s\n", err.msg);
		status = EXIT_HARNESS;
	} else if (ret > 0) {
		fprintf(stderr,
			"memgate: interrupted by signal %d; reports hold what was measured\n", ret);
		status = 128 + ret;
	} else if (!status) {
		status = run_status(rep.results, rep.n);
	}
	for (size_t i = 0; i < n; i++)
		case_result_release(&results[i]);
	/* The pool goes back now; atexit and the signal handlers are the other ways out. */
	reserve_restore();
	gates_release(&gates);
	compare_results_release(&base);
	free(all);
	free(results);
	return status;
}

static int cmd_run(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret = plan(&c, argc, argv, run_long, "s:k:n:", &hw, &insts, &n);

	if (ret)
		return ret;
	if (n == 0) {
		fprintf(stderr, "memgate: no case matches the filters (see `memgate list`)\n");
		ret = EXIT_USAGE;
	}
	/* Reserve, then describe the host again: the suites plan from the pools they will use. */
	if (!ret && c.reserve && !(ret = reserve_pool(&hw, &c.opts, insts, n))) {
		hw_release(&hw);
		ret = load_hw(&hw, NULL);
	}
	if (!ret)
		ret = run_cases(&c, &hw, insts, n);
	rules_release(&c.rules);
	free(insts);
	hw_release(&hw);
	return ret;
}

/* `list --json`: what `memgate ab` reads of a side: names, kinds, suites, metrics. */
static int list_json(const struct case_inst *insts, size_t n)
{
	json_t *arr = json_array();
	int ret;

	for (size_t i = 0; arr && i < n; i++) {
		const struct case_def *d = insts[i].def;
		json_t *metrics = json_array();
		char full[256];

		for (unsigned int m = 0; m < d->n_metrics; m++)
			json_array_append_new(
			    metrics, json_pack("{s:s, s:s, s:s}", "name", d->metrics[m].name,
					       "unit", d->metrics[m].unit, "better",
					       d->metrics[m].better == LOWER_IS_BETTER ? "lower"
										       : "higher"));
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:o}", "name",
						     case_full_name(&insts[i], full, sizeof(full)),
						     "suite", insts[i].suite->name, "kind",
						     d->kind == CASE_PERF ? "perf" : "check",
						     "metrics", metrics));
	}
	ret = arr && !json_dumpf(arr, stdout, JSON_INDENT(1)) ? EXIT_PASSED : EXIT_HARNESS;
	putchar('\n');
	json_decref(arr);
	return ret;
}

static int cmd_rules(int argc, char **argv)
{
	struct cli c;
	int ret = parse_cli(&c, argc, argv, rules_long, "", 0);

	if (ret || (ret = load_rules(&c)))
		return ret;
	printf("# the rules in effect: %s (%zu gates, %zu tolerance rules, alpha %g)\n",
	       c.rules.source, c.rules.n_gates, c.rules.n_tols, c.rules.alpha);
	fputs(c.rules.text, stdout);
	rules_release(&c.rules);
	return EXIT_PASSED;
}

/* The report of a comparison: console, JUnit, JSON; the exit status of its verdicts. */
static int report_comparison(const struct cli *c, const struct hw_info *hw,
			     const struct case_result *results, size_t n, int64_t t0)
{
	struct report_run rep = {.hw = hw,
				 .results = results,
				 .n = n,
				 .version = MEMGATE_VERSION,
				 .commit = MEMGATE_COMMIT,
				 .label = c->label};
	time_t now = time(NULL);
	struct tm tm;
	int status;

	gmtime_r(&now, &tm);
	strftime(rep.timestamp, sizeof(rep.timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(rep.hostname, sizeof(rep.hostname) - 1);
	rep.time_s = (double)(util_now_ns() - t0) / 1e9;
	report_console(&rep, stdout);
	status = write_reports(c, &rep) ? EXIT_HARNESS : run_status(results, n);
	return status;
}

/* A scratch directory for the sides' result files; removed with its files at the end. */
static int make_workdir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/memgate-ab.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -errno;
}

static void remove_workdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[1024];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The options both sides' `list` and `run` get, rebuilt from what was parsed. */
static int ab_common(const struct cli *c, const char **argv, int max, char *numbers, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < c->n_suites && n + 2 < max; i++) {
		argv[n++] = "-s";
		argv[n++] = c->suites[i];
	}
	if (c->glob && n + 2 < max) {
		argv[n++] = "-k";
		argv[n++] = c->glob;
	}
	/* The guest size the pool was reserved for, so that no side sizes it anew. */
	if (c->opts.size_bytes && n + 2 < max) {
		snprintf(numbers, len, "%llu", (unsigned long long)c->opts.size_bytes);
		argv[n++] = "--size";
		argv[n++] = numbers;
	}
	if (c->opts.quick && n + 1 < max)
		argv[n++] = "--quick";
	return n;
}

static int ab_setup(struct cli *c, const struct hw_info *hw, struct ab_side *base,
		    struct ab_side *head, struct ab_opts *o, char *context, size_t len)
{
	struct mg_err err = {0};

	if (!c->base || !c->head)
		return usage_error(
		    "ab needs --base 'BINARY [OPTIONS]' and --head 'BINARY [OPTIONS]'");
	if (ab_side_parse(base, "base", c->base, &err) ||
	    ab_side_parse(head, "head", c->head, &err))
		return usage_error("%s", err.msg);
	/* Defaults: 5 rounds, 5 more for flagged metrics, 3 samples a round; quick: 3, 3, 2. */
	o->rounds = c->rounds_set ? (unsigned int)c->rounds : c->opts.quick ? 3 : 5;
	o->confirm_rounds = c->confirm_rounds ? (unsigned int)c->confirm_rounds : o->rounds;
	o->samples = c->samples_set ? c->opts.samples : c->opts.quick ? 2 : 3;
	o->warmup = c->warmup_set ? c->opts.warmup : 1;
	o->seed = c->opts.seed;
	o->timeout_s = c->opts.timeout_s;
	o->rules = &c->rules;
	o->progress = isatty(STDERR_FILENO);
	snprintf(context, len, "base: %s; head: %s; kernel %s, glibc %s, host class %s", c->base,
		 c->head, hw->os_release, hw->glibc, hw->fingerprint_hash);
	o->context = context;
	return 0;
}

static int cmd_ab(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct ab_side base, head;
	struct ab_opts o = {0};
	struct ab_outcome out;
	struct mg_err err = {0};
	const char *common[4 * MAX_SUITE_ARGS + 8];
	char size[32], context[1024], dir[512];
	struct case_inst *insts = NULL;
	size_t n_insts = 0;
	struct case_result *all;
	int64_t t0 = util_now_ns();
	int ret = parse_cli(&c, argc, argv, ab_long, "s:k:n:", 0);

	if (ret || (ret = load_rules(&c)))
		return ret;
	if ((ret = load_hw(&hw, NULL)))
		goto out_rules;
	if ((ret = ab_setup(&c, &hw, &base, &head, &o, context, sizeof(context))))
		goto out_hw;
	/* One reservation for the whole A/B, sized by this build's suites: the sides use it. */
	if (c.reserve && (ret = expand(&c, &hw, &insts, &n_insts)) == 0) {
		ret = reserve_pool(&hw, &c.opts, insts, n_insts);
		free(insts);
	}
	if (ret)
		goto out_hw;
	o.n_common = ab_common(&c, common, (int)ARRAY_SIZE(common), size, sizeof(size));
	o.common = common;
	if (make_workdir(dir, sizeof(dir))) {
		fprintf(stderr, "memgate: cannot make a scratch directory: %s\n", strerror(errno));
		ret = EXIT_HARNESS;
		goto out_hw;
	}
	o.workdir = dir;
	if (ab_check_protocol(&base, &o, &err) || ab_check_protocol(&head, &o, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_USAGE;
		goto out_dir;
	}
	ret = ab_run(&base, &head, &o, &out, &err);
	if (ret && ret != -EINTR) {
		fprintf(stderr, "memgate: ab: %s\n", err.msg);
		ab_outcome_release(&out);
		ret = err.code == EPROTO || err.code == EINVAL ? EXIT_USAGE : EXIT_HARNESS;
		goto out_dir;
	}
	all = malloc((out.n_extra + out.verdicts.n + 1) * sizeof(*all));
	if (!all) {
		ret = EXIT_HARNESS;
	} else {
		memcpy(all, out.extra, out.n_extra * sizeof(*all));
		memcpy(all + out.n_extra, out.verdicts.results, out.verdicts.n * sizeof(*all));
		ret = report_comparison(&c, &hw, all, out.n_extra + out.verdicts.n, t0);
		fprintf(stderr,
			"memgate: ab: %u cases compared, %zu metrics judged (%u rounds, %u "
			"more for flagged metrics, %u samples a round) in %.0f s\n",
			out.cases_compared, out.verdicts.n, o.rounds, o.confirm_rounds, o.samples,
			(double)(util_now_ns() - t0) / 1e9);
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
out_dir:
	remove_workdir(dir);
out_hw:
	reserve_restore();
	hw_release(&hw);
out_rules:
	rules_release(&c.rules);
	return ret;
}

/* `memgate compare BASE.json... HEAD.json`: judge head against the pooled base runs. */
static int cmd_compare(int argc, char **argv)
{
	struct cli c;
	struct hist_run *runs;
	struct judged *j = NULL;
	struct compare_results res = {0};
	struct hw_info hw;
	struct mg_err err = {0};
	size_t nj = 0;
	char context[1024];
	int64_t t0 = util_now_ns();
	int ret = parse_cli(&c, argc, argv, compare_long, "", MAX_SUITE_ARGS);

	if (ret || (ret = load_rules(&c)))
		return ret;
	if (c.n_args < 2) {
		rules_release(&c.rules);
		return usage_error("compare needs BASE.json [BASE.json...] HEAD.json");
	}
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
	if (!ret && compare_runs(runs, (size_t)c.n_args - 1, &runs[c.n_args - 1], &c.rules,
				 c.opts.seed, &j, &nj))
		ret = EXIT_HARNESS;
	compare_context(&runs[0], &runs[c.n_args - 1], context, sizeof(context));
	if (!ret && compare_results_make(j, nj, "baseline", context, &res))
		ret = EXIT_HARNESS;
	if (!ret && !(ret = load_hw(&hw, NULL))) {
		ret = report_comparison(&c, &hw, res.results, res.n, t0);
		hw_release(&hw);
	}
	compare_results_release(&res);
	for (int i = 0; i < c.n_args; i++)
		hist_release(&runs[i]);
out:
	free(runs);
	rules_release(&c.rules);
	return ret;
}

/* `memgate baseline add RESULTS.json DIR`: file a run under DIR/HOST_HASH/. */
static int cmd_baseline(int argc, char **argv)
{
	struct cli c;
	struct hist_run r;
	struct mg_err err = {0};
	char sub[1024], dst[1200], stamp[32];
	char *text;
	FILE *f;
	int ret = parse_cli(&c, argc, argv, plain_long, "", 3);

	if (ret)
		return ret;
	if (c.n_args != 3 || strcmp(c.args[0], "add"))
		return usage_error("expected: baseline add RESULTS.json DIR");
	if (hist_load(&r, c.args[1], &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	snprintf(stamp, sizeof(stamp), "%s", r.timestamp);
	for (char *p = stamp; *p; p++)
		if (*p == ':')
			*p = '-';
	snprintf(sub, sizeof(sub), "%s/%s", c.args[2], r.host_hash);
	snprintf(dst, sizeof(dst), "%s/%s-%.40s.json", sub, stamp, r.commit);
	ret = (mkdir(c.args[2], 0755) && errno != EEXIST) || (mkdir(sub, 0755) && errno != EEXIST);
	text = ret ? NULL : text_read_file(c.args[1], 1u << 30);
	f = text ? fopen(dst, "wx") : NULL;
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "memgate: baseline add: %s: %s\n", f || text ? dst : c.args[2],
			strerror(errno));
		ret = EXIT_HARNESS;
	} else {
		printf("%s\n", dst);
		fprintf(stderr, "memgate: filed %s (host class %s: %s)\n", c.args[1], r.host_hash,
			r.host_class);
		ret = EXIT_PASSED;
	}
	free(text);
	hist_release(&r);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	/* Reports need a line-buffered stdout to interleave sanely with the children's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!cmd)
		return usage_error(
		    "%s", "missing command: hw, list, run, ab, compare, baseline or rules");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
		return print_usage();
	if (!strcmp(cmd, "--version")) {
		printf("memgate %s\n", MEMGATE_VERSION);
		return EXIT_PASSED;
	}
	if (!strcmp(cmd, "hw"))
		return cmd_hw(argc - 1, argv + 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "ab"))
		return cmd_ab(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "baseline"))
		return cmd_baseline(argc - 1, argv + 1);
	if (!strcmp(cmd, "rules"))
		return cmd_rules(argc - 1, argv + 1);
	/* The A/B protocol: what `memgate ab` asks a side first. */
	if (!strcmp(cmd, "ab-protocol")) {
		puts(AB_PROTOCOL_LINE);
		return EXIT_PASSED;
	}
	return usage_error("unknown command '%s': expected hw, list, run, ab, compare, baseline "
			   "or rules",
			   cmd);
}
