/* options.c - the command line's words: usage, option tables, number and size parsing, and
 * memgate(1), made from the usage text. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "run/impl_opts.h"
#include "util/text.h"
#include "util/util.h"

static const char usage_text[] =
    "usage: memgate [--help] [--version] COMMAND [OPTIONS]\n"
    "\n"
    "Regression tests and perf gates for the guest-memory paths of a QEMU/KVM hypervisor.\n"
    "\n"
    "commands:\n"
    "  hw    [--json] [--topology SPEC | --host DIR] [--record DIR]\n"
    "        describe the host (or SPEC, or the record DIR) the suites plan from;\n"
    "        --record DIR writes what memgate reads of this host into DIR\n"
    "  list  [-s SUITE]... [-k GLOB] [--case NAME]... [--shard I/N] [--impl KEY=VALUE]... "
    "[--json]\n"
    "        [--rules FILE] [--topology SPEC | --host DIR] [--qemu PATH] [--counter C]\n"
    "        [--guest-kernel FILE] [--guest-initrd FILE] [--qemu-preload LIB]\n"
    "        the cases, with their parameters as this host expands them, and the gates\n"
    "  run   [-s SUITE]... [-k GLOB] [--case NAME]... [--checks] [-n SAMPLES] [--warmup N]\n"
    "        [--quick] [--long] [--timeout S] [--seed N] [--junit FILE] [--junit-style "
    "jenkins|ant]\n"
    "        [--json FILE] [--csv DIR] [--html FILE] [--label TEXT] [--size SIZE]\n"
    "        [--reserve-hugepages] [--impl KEY=VALUE]... [--rules FILE] [--no-gates]\n"
    "        [--baseline PATH [--baseline-runs N]] [--topology SPEC | --host DIR]\n"
    "        [--qemu PATH] [--guest auto|kvm|modelled] [--guest-exit-ns NS] [--counter C]\n"
    "        [--guest-kernel FILE] [--guest-initrd FILE] [--qemu-preload LIB]\n"
    "        [--cut METRIC=VALUE]\n"
    "        run the cases, each in a forked child with a timeout; judge the gates, and\n"
    "        with --baseline the perf metrics against earlier runs of this host class\n"
    "  ab    --base 'BINARY [OPTIONS]' --head 'BINARY [OPTIONS]' [-s SUITE]... [-k GLOB]\n"
    "        [--rounds N] [--confirm-rounds N] [-n SAMPLES] [--warmup N] [--quick] [--long]\n"
    "        [--junit FILE] [--json FILE] [--rules FILE] [--reserve-hugepages] [--size SIZE]\n"
    "        [--counter C] [--calibration DIR] [--html FILE]\n"
    "        is head slower than base? Every shared perf case, the two builds in turn,\n"
    "        each round a fresh process of each; head's checks run once\n"
    "  calibrate --history DIR [--runs K] [--rounds N] [-s SUITE]... [-k GLOB] [--quick]\n"
    "        [--reserve-hugepages] [--size SIZE]\n"
    "        this build against itself, K A/A runs of N rounds (default 4 of 10): each\n"
    "        metric's noise on this host class, filed as DIR/HOST_CLASS_HASH/calibration.json\n"
    "        (the two before it kept: verdicts take each metric's upper median of the three)\n"
    "  model [--metrics M] [--spread S,...] [--tolerance T] [--slowdown D] [--runs R]\n"
    "        [--rounds N] [--confirm-rounds N] [--seed N]\n"
    "        the A/B procedures on modelled lognormal rounds: A/A failures and power\n"
    "  compare BASE.json... HEAD.json [--any-host] [--junit FILE] [--json FILE] [--html FILE]\n"
    "        [--rules FILE]\n"
    "        judge a run against earlier ones (pooled per run) of the same host class\n"
    "  merge SHARD.json... --json FILE\n"
    "        the results of a run's shards (--shard I/N) as one results file\n"
    "  vm    [--shape SHAPE | --shape-of SPEC] [--timeout S] [--json FILE] [--junit FILE]\n"
    "        [--qemu PATH]"
    " [--guest-kernel FILE] [--guest-initrd FILE] [--] COMMAND [OPTIONS]\n"
    "        a memgate command (this build) inside a QEMU guest of SHAPE, KVM's where it\n"
    "        boots the kit, else TCG's; a run's reports come back with its suites named\n"
    "        guest[SHAPE].SUITE (under TCG its gates are off: timing is not the host's)\n"
    "  baseline add RESULTS.json DIR\n"
    "        file a run into a history directory, under DIR/HOST_CLASS_HASH/\n"
    "  rules [--rules FILE]\n"
    "        print the rules in effect (the embedded ones unless --rules)\n"
    "  man   memgate(1) in roff, as make builds it for make install\n"
    "\n"
    "options:\n"
    "  -s, --suite SUITE     only this suite (repeatable); default: all\n"
    "  -k, --filter GLOB     only cases whose SUITE.GROUP.NAME[PARAMS] matches GLOB\n"
    "      --case NAME       only the case named exactly NAME (repeatable)\n"
    "      --checks          only the checks, no perf cases\n"
    "      --shard I/N       shard I of N: each case definition in one shard, its gates with it\n"
    "  -n, --samples N       samples per metric after warm-up (default 15, quick 5;\n"
    "                        ab: per round, default 3, quick 2)\n"
    "      --warmup N        discarded samples first (default 3, quick 1; ab: 1)\n"
    "      --quick           fewer samples and smaller sizes: a smoke run\n"
    "      --long            the long cases too: 4 GiB guests (the published figures' size;\n"
    "                        default 1 GiB) and the 200-disk boot\n"
    "      --timeout S       seconds per case before it is killed (default 600); vm: the\n"
    "                        whole guest, boot to poweroff (default 3600)\n"
    "      --seed N          seed of the bootstrap and of random workloads (default 1)\n"
    "      --junit FILE      write JUnit XML (Jenkins' dialect unless --junit-style ant)\n"
    "      --json FILE       write every sample and summary as JSON: the unit of history\n"
    "      --csv DIR         run: each suite's medians per unit as DIR/SUITE-UNIT.csv, for\n"
    "                        Jenkins' Plot plugin (a row of labels, a row of values)\n"
    "      --html FILE       a page to look at: each perf metric's samples and each verdict\n"
    "                        drawn, with its files in FILE's NAME-files/ (run, ab, compare)\n"
    "      --label TEXT      a free label stored in the JSON results\n"
    "      --impl KEY=VALUE  the implementation under test (below); the others stay as\n"
    "                        the references the gates compare it with\n"
    "      --rules FILE      thresholds and tolerances (default: the embedded rules)\n"
    "      --no-gates        no in-run gates (what ab asks of each side)\n"
    "      --baseline PATH   a results file, or a directory of them (baseline add)\n"
    "      --baseline-runs N the newest N runs of this host class there (default 5)\n"
    "      --rounds N        ab: rounds of every shared case, even (default 6, quick 4);\n"
    "                        calibrate: rounds of each A/A run (default 10)\n"
    "      --confirm-rounds N  ab: more rounds for metrics the first look left undecided,\n"
    "                        even (default 10, quick 6)\n"
    "      --calibration DIR ab: this host class's noise from `memgate calibrate --history\n"
    "                        DIR` (without it: the rules' tolerances, each run's own spread)\n"
    "      --history DIR     calibrate: the history (baseline add) to file the noise in\n"
    "      --runs K          calibrate: A/A runs (default 4)\n"
    "      --any-host        compare: accept base runs of another host class\n"
    "      --qemu PATH       the QEMU the qemu suite launches (default: qemu-system-x86_64\n"
    "                        on PATH; none there: its cases SKIP saying so)\n"
    "      --guest-kernel FILE, --guest-initrd FILE  what the qemu suite's boot cases\n"
    "                        boot (default: the kit `make` builds, build/guest/)\n"
    "      --qemu-preload LIB  LD_PRELOAD for the QEMU those boots run (a fixture that\n"
    "                        makes a regression, as a side of ab)\n"
    "      --cut METRIC=VALUE  stop a sample of METRIC once it passes VALUE (its unit) and\n"
    "                        count it at VALUE, where the case can (list --json:\n"
    "                        cut_metric); ab gives head the rules' cut x base's median\n"
    "      --size SIZE       guest memory of the prealloc cases (default: min(4G, a\n"
    "                        quarter of MemAvailable))\n"
    "      --reserve-hugepages  as root, size the hugetlb pools for the planned cases;\n"
    "                        the old size is put back on exit, Ctrl-C included\n"
    "      --topology SPEC   FILE.xml (hwloc XML) or synthetic:\"pack:2 [numa] core:4 pu:2\";\n"
    "                        plans are then checked, not executed\n"
    "      --guest MODE      the vCPU of the rcu boot: auto (KVM's where /dev/kvm is\n"
    "                        usable, else modelled), kvm, or modelled\n"
    "      --guest-exit-ns NS  a modelled exit's round trip (default 2000)\n"
    "      --counter C       what the CPU-bound cases (memslots, the rcu read side and\n"
    "                        queue) count: tsc (cycles, the default), instructions (the\n"
    "                        PMU, user space), simulated (instructions, D1 and LL misses\n"
    "                        under valgrind's callgrind), auto (instructions where the\n"
    "                        PMU counts, else simulated); the other cases stay on clocks\n"
    "      --shape SHAPE     vm: sockets=S,nodes=N,cpus=C,mem=SIZE, each optional (default\n"
    "                        sockets=2,nodes=2,cpus=2,mem=2G; nodes and cpus follow sockets)\n"
    "      --shape-of SPEC   vm: the sockets and nodes of a topology (FILE.xml or synthetic:,\n"
    "                        as --topology), with the fewest CPUs and a GiB a node at most\n"
    "      --host DIR        plan from a host recorded by `memgate hw --record DIR` (its\n"
    "                        topology, CPUID and kernel facts); as with --topology\n"
    "\n"
    "exit status:\n"
    "  0  every case, gate and comparison passed (or was skipped, with its reason)\n"
    "  1  a check, gate or comparison failed, or a case crashed or timed out\n"
    "     (an ab verdict that is UNSTABLE, undecided or noisier than calibrated, is a\n"
    "     JUnit failure of type unstable, which Jenkins shows yellow, and exits 0)\n"
    "  2  bad usage or bad input (options, topology, rules or results files, a side of\n"
    "     ab that is not a memgate speaking its protocol)\n"
    "  3  the harness itself failed\n"
    "  128+N  interrupted by signal N; the reports hold what was measured\n";

int cli_print_usage(void)
{
	fputs(usage_text, stdout);
	printf(
	    "\nimplementations under test (--impl KEY=VALUE; the first value is the default):\n");
	impl_opts_describe(stdout);
	return EXIT_PASSED;
}

int cli_usage_error(const char *fmt, ...)
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
	/* Digits only: strtoul would take " -1" as 2^64 - 1. */
	if (errno || !isdigit((unsigned char)s[0]) || *end || v < min || v > max) {
		fprintf(stderr, "memgate: %s expects a whole number from %lu to %lu, got '%s'\n",
			opt, min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* What run and ab share: the selection, the sampling and the reports. */
// clang-format off
#define SAMPLED_RUN_OPTIONS \
	{"suite", required_argument, NULL, 's'}, \
	{"filter", required_argument, NULL, 'k'}, \
	{"samples", required_argument, NULL, 'n'}, \
	{"warmup", required_argument, NULL, OPT_WARMUP}, \
	{"quick", no_argument, NULL, OPT_QUICK}, \
	{"long", no_argument, NULL, OPT_LONG}, \
	{"timeout", required_argument, NULL, OPT_TIMEOUT}, \
	{"seed", required_argument, NULL, OPT_SEED}, \
	{"junit", required_argument, NULL, OPT_JUNIT}, \
	{"junit-style", required_argument, NULL, OPT_JUNIT_STYLE}, \
	{"json", required_argument, NULL, OPT_JSON}, \
	{"html", required_argument, NULL, OPT_HTML}
// clang-format on

const struct option cli_hw_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"host", required_argument, NULL, OPT_HOST},
    {"record", required_argument, NULL, OPT_RECORD},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_list_options[] = {
    {"shard", required_argument, NULL, OPT_SHARD},
    {"qemu", required_argument, NULL, OPT_QEMU},
    {"guest-kernel", required_argument, NULL, OPT_GUEST_KERNEL},
    {"guest-initrd", required_argument, NULL, OPT_GUEST_INITRD},
    {"qemu-preload", required_argument, NULL, OPT_QEMU_PRELOAD},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"long", no_argument, NULL, OPT_LONG},
    {"size", required_argument, NULL, OPT_SIZE},
    {"json", no_argument, NULL, OPT_JSON},
    {"case", required_argument, NULL, OPT_CASE},
    {"rules", required_argument, NULL, OPT_RULES},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"suite", required_argument, NULL, 's'},
    {"counter", required_argument, NULL, OPT_COUNTER},
    {"filter", required_argument, NULL, 'k'},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"host", required_argument, NULL, OPT_HOST},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_run_options[] = {
    {"shard", required_argument, NULL, OPT_SHARD},
    {"qemu", required_argument, NULL, OPT_QEMU},
    {"guest-kernel", required_argument, NULL, OPT_GUEST_KERNEL},
    {"guest-initrd", required_argument, NULL, OPT_GUEST_INITRD},
    {"qemu-preload", required_argument, NULL, OPT_QEMU_PRELOAD},
    {"cut", required_argument, NULL, OPT_CUT},
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
    SAMPLED_RUN_OPTIONS,
    {"guest", required_argument, NULL, OPT_GUEST},
    {"guest-exit-ns", required_argument, NULL, OPT_GUEST_EXIT_NS},
    {"counter", required_argument, NULL, OPT_COUNTER},
    {"csv", required_argument, NULL, OPT_CSV},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"host", required_argument, NULL, OPT_HOST},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_calibrate_options[] = {
    {"history", required_argument, NULL, OPT_CALIBRATION},
    {"runs", required_argument, NULL, OPT_RUNS},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"samples", required_argument, NULL, 'n'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"long", no_argument, NULL, OPT_LONG},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"rules", required_argument, NULL, OPT_RULES},
    {"size", required_argument, NULL, OPT_SIZE},
    {"reserve-hugepages", no_argument, NULL, OPT_RESERVE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Internal: what a counted case's child hands itself under callgrind (runner.c). */
const struct option cli_case_exec_options[] = {
    {"fd", required_argument, NULL, OPT_FD},
    {"deadline-ns", required_argument, NULL, OPT_DEADLINE_NS},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"case", required_argument, NULL, OPT_CASE},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"size", required_argument, NULL, OPT_SIZE},
    {"guest", required_argument, NULL, OPT_GUEST},
    {"guest-exit-ns", required_argument, NULL, OPT_GUEST_EXIT_NS},
    {"samples", required_argument, NULL, 'n'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"seed", required_argument, NULL, OPT_SEED},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"long", no_argument, NULL, OPT_LONG},
    {NULL, 0, NULL, 0},
};

const struct option cli_ab_options[] = {
    {"shard", required_argument, NULL, OPT_SHARD},
    {"base", required_argument, NULL, OPT_BASE},
    {"head", required_argument, NULL, OPT_HEAD},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"confirm-rounds", required_argument, NULL, OPT_CONFIRM_ROUNDS},
    {"counter", required_argument, NULL, OPT_COUNTER},
    {"calibration", required_argument, NULL, OPT_CALIBRATION},
    {"rules", required_argument, NULL, OPT_RULES},
    {"label", required_argument, NULL, OPT_LABEL},
    {"size", required_argument, NULL, OPT_SIZE},
    {"reserve-hugepages", no_argument, NULL, OPT_RESERVE},
    SAMPLED_RUN_OPTIONS,
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_merge_options[] = {
    {"json", required_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_compare_options[] = {
    {"rules", required_argument, NULL, OPT_RULES},
    {"any-host", no_argument, NULL, OPT_ANY_HOST},
    {"seed", required_argument, NULL, OPT_SEED},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"junit-style", required_argument, NULL, OPT_JUNIT_STYLE},
    {"json", required_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_vm_options[] = {
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"shape-of", required_argument, NULL, OPT_SHAPE_OF},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"qemu", required_argument, NULL, OPT_QEMU},
    {"guest-kernel", required_argument, NULL, OPT_GUEST_KERNEL},
    {"guest-initrd", required_argument, NULL, OPT_GUEST_INITRD},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_rules_options[] = {
    {"rules", required_argument, NULL, OPT_RULES},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option cli_plain_options[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Guest sizes --size takes: a thread's 64 MiB at least; 1 PiB, past any host, at most. */
#define SIZE_MIN_BYTES (64ULL << 20)
#define SIZE_MAX_BYTES (1ULL << 50)

/* A size: a whole number with an optional K, M, G or T (powers of 1024), at least 64M. */
static int parse_size(const char *s, uint64_t *out)
{
	uint64_t v;

	if (text_size(s, &v) || v > SIZE_MAX_BYTES || v < SIZE_MIN_BYTES) {
		fprintf(stderr,
			"memgate: --size expects a size from 64M to 1024T, such as 512M or 4G, "
			"got '%s'\n",
			s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Rounds of ab: an even number from 2 to 1000, so that each side runs first in half. */
static int parse_even(const char *opt, const char *s, unsigned long *out)
{
	if (parse_ulong(opt, s, 2, 1000, out))
		return -EINVAL;
	if (*out % 2) {
		cli_usage_error("%s expects an even number (each side runs first in half the "
				"rounds), got %lu",
				opt, *out);
		return -EINVAL;
	}
	return 0;
}

/* --shard I/N: shard I (1 to N) of N (1 to 1000). */
static int parse_shard(const char *s, unsigned long *shard, unsigned long *shards)
{
	char *end;
	unsigned long i, n;

	errno = 0;
	i = isdigit((unsigned char)s[0]) ? strtoul(s, &end, 10) : 0;
	if (i && *end == '/' && isdigit((unsigned char)end[1])) {
		n = strtoul(end + 1, &end, 10);
		if (!errno && !*end && n >= 1 && n <= 1000 && i <= n) {
			*shard = i;
			*shards = n;
			return 0;
		}
	}
	fprintf(stderr, "memgate: --shard expects I/N with 1 <= I <= N <= 1000, got '%s'\n", s);
	return -EINVAL;
}

/* Options that take a value; returns 0, -EINVAL (usage error printed) or 1 (not one of these). */
static int parse_valued(struct cli *c, int opt, const char *arg)
{
	unsigned long v;

	switch (opt) {
	case 'n':
		if (parse_ulong("--samples", arg, 1, HIST_MAX_SAMPLES, &v))
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
		c->timeout_set = true;
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
	case OPT_GUEST: {
		static const char *const names[] = {"auto", "kvm", "modelled"};
		int g = text_index(names, ARRAY_SIZE(names), arg);

		if (g < 0) {
			cli_usage_error("--guest expects auto, kvm or modelled, got '%s'", arg);
			return -EINVAL;
		}
		c->opts.guest = (enum run_guest)g;
		return 0;
	}
	case OPT_COUNTER:
		if (counter_parse(arg, &c->counter) < 0) {
			cli_usage_error(
			    "--counter expects tsc, instructions, simulated or auto, got "
			    "'%s'",
			    arg);
			return -EINVAL;
		}
		c->counter_set = true;
		return 0;
	case OPT_CUT: {
		const char *eq = strchr(arg, '=');
		char *end;
		double bound = eq ? strtod(eq + 1, &end) : 0;

		if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(c->opts.cut_metric) ||
		    end == eq + 1 || *end || !(bound > 0 && bound < 1e15)) {
			cli_usage_error(
			    "--cut expects METRIC=VALUE, VALUE a positive number, got '%s'", arg);
			return -EINVAL;
		}
		snprintf(c->opts.cut_metric, sizeof(c->opts.cut_metric), "%.*s", (int)(eq - arg),
			 arg);
		c->opts.cut_value = bound;
		return 0;
	}
	case OPT_GUEST_EXIT_NS:
		if (parse_ulong("--guest-exit-ns", arg, 1, 1000000000, &v))
			return -EINVAL;
		c->opts.guest_exit_ns = v;
		return 0;
	case OPT_FD:
		return parse_ulong("--fd", arg, 0, INT_MAX, &c->fd);
	case OPT_DEADLINE_NS:
		if (parse_ulong("--deadline-ns", arg, 0, LLONG_MAX, &v))
			return -EINVAL;
		c->deadline_ns = (long long)v;
		return 0;
	case OPT_DUMP:
		c->dump = arg;
		return 0;
	case OPT_SHARD:
		return parse_shard(arg, &c->shard, &c->shards);
	case OPT_BASELINE_RUNS:
		return parse_ulong("--baseline-runs", arg, 1, 1000, &c->baseline_runs);
	case OPT_ROUNDS:
		c->rounds_set = true;
		return parse_even("--rounds", arg, &c->rounds);
	case OPT_CONFIRM_ROUNDS:
		return parse_even("--confirm-rounds", arg, &c->confirm_rounds);
	case OPT_CALIBRATION:
		c->calibration = arg;
		return 0;
	case OPT_RUNS:
		return parse_ulong("--runs", arg, 2, 1000, &c->runs);
	case OPT_JUNIT_STYLE:
		if (strcmp(arg, "jenkins") && strcmp(arg, "ant")) {
			cli_usage_error("--junit-style expects 'jenkins' or 'ant', got '%s'", arg);
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
			cli_usage_error("at most %s -s options", "16");
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
	case OPT_LONG:
		c->opts.long_run = true;
		return 0;
	case OPT_RESERVE:
		c->reserve = true;
		return 0;
	case OPT_JUNIT:
		c->junit = arg;
		return 0;
	case OPT_CSV:
		c->csv_dir = arg;
		return 0;
	case OPT_HTML:
		c->html = arg;
		return 0;
	case OPT_QEMU:
		c->qemu_path = arg;
		return 0;
	case OPT_GUEST_KERNEL:
		c->guest_kernel = arg;
		return 0;
	case OPT_GUEST_INITRD:
		c->guest_initrd = arg;
		return 0;
	case OPT_QEMU_PRELOAD:
		c->qemu_preload = arg;
		return 0;
	case OPT_SHAPE:
		c->shape = arg;
		return 0;
	case OPT_SHAPE_OF:
		c->shape_of = arg;
		return 0;
	case OPT_JSON:
		c->json_out = true;
		c->json_path = arg;
		return 0;
	case OPT_TOPOLOGY:
		c->topology = arg;
		return 0;
	case OPT_HOST:
		c->host_dir = arg;
		return 0;
	case OPT_RECORD:
		c->record_dir = arg;
		return 0;
	case OPT_RULES:
		c->rules_path = arg;
		return 0;
	case OPT_CASE:
		if (c->n_names == MAX_SUITE_ARGS) {
			cli_usage_error("at most %d --case options", MAX_SUITE_ARGS);
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
			cli_usage_error("%s", err.msg);
			return -EINVAL;
		}
		return 0;
	}
	}
	return parse_valued(c, opt, arg);
}

/* Parse a command's options from its own table: an option of another command is refused. */
int cli_parse(struct cli *c, int argc, char **argv, const struct option *table, const char *shorts,
	      int max_args)
{
	int opt;

	memset(c, 0, sizeof(*c));
	c->opts.samples = DEFAULT_SAMPLES;
	c->opts.warmup = DEFAULT_WARMUP;
	c->opts.timeout_s = DEFAULT_TIMEOUT_S;
	c->opts.seed = 1;
	c->opts.impl = &c->impl;
	c->baseline_runs = DEFAULT_BASELINE_RUNS;
	c->runs = CALIB_DEFAULT_RUNS;
	/* 0, not 1: glibc then forgets a half-read "-nabc" of an earlier parse as well. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return EXIT_USAGE; /* getopt has said what was wrong */
		if (opt == OPT_HELP)
			exit(cli_print_usage());
		if (parse_opt(c, opt, optarg))
			return EXIT_USAGE;
	}
	while (optind < argc && c->n_args < max_args)
		c->args[c->n_args++] = argv[optind++];
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	c->opts.samples_set = c->samples_set;
	c->opts.warmup_set = c->warmup_set;
	if (c->opts.quick && !c->samples_set)
		c->opts.samples = QUICK_SAMPLES;
	if (c->opts.quick && !c->warmup_set)
		c->opts.warmup = QUICK_WARMUP;
	return 0;
}

const char *cli_usage_text(void)
{
	return usage_text;
}

/* One line of the usage text as roff: backslashes and hyphens escaped, a leading dot or
 * quote kept from being read as a request. */
static void roff_line(FILE *f, const char *s, size_t len)
{
	if (len && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
	fputc('\n', f);
}

/* The implementations --impl chooses among, as --help lists them after the usage text. */
static int man_implementations(FILE *f)
{
	char *text = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&text, &size);

	if (!m)
		return -1;
	impl_opts_describe(m);
	if (fclose(m)) {
		free(text);
		return -1;
	}
	fputs(".SH IMPLEMENTATIONS UNDER TEST\n"
	      "Chosen with \\-\\-impl KEY=VALUE; the first value is the default.\n"
	      ".nf\n",
	      f);
	for (const char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		roff_line(f, p, (size_t)(nl - p));
		if (!*nl)
			break;
	}
	fputs(".fi\n", f);
	free(text);
	return 0;
}

int cli_print_man(FILE *f)
{
	const char *p = usage_text, *nl;
	bool in_section = false;

	fprintf(f,
		".\\\" memgate(1), generated by `memgate man` from its --help text\n"
		".TH MEMGATE 1 \"\" \"memgate %s\" \"User Commands\"\n"
		".SH NAME\n"
		"memgate \\- regression tests and perf gates for the guest-memory paths of a "
		"QEMU/KVM hypervisor\n",
		MEMGATE_COMMIT);
	/* The usage line is the synopsis; every "heading:" line a section whose lines are kept
	 * as they are laid out (their columns are the point); blank lines end a section. */
	for (; *p; p = nl + 1) {
		size_t len;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		len = (size_t)(nl - p);
		if (!strncmp(p, "usage: ", 7)) {
			fputs(".SH SYNOPSIS\n.nf\n", f);
			roff_line(f, p + 7, len - 7);
			fputs(".fi\n.SH DESCRIPTION\n", f);
		} else if (len && p[len - 1] == ':' && p[0] != ' ') {
			fputs(in_section ? ".fi\n.SH " : ".SH ", f);
			for (size_t i = 0; i + 1 < len; i++)
				fputc(toupper((unsigned char)p[i]), f);
			fputs("\n.nf\n", f);
			in_section = true;
		} else if (!len) {
			if (!in_section)
				continue;
			fputs(".fi\n", f);
			in_section = false;
		} else {
			if (!in_section && p[0] == ' ') {
				fputs(".nf\n", f);
				in_section = true;
			}
			roff_line(f, p, len);
		}
		if (!*nl)
			break;
	}
	if (in_section)
		fputs(".fi\n", f);
	if (man_implementations(f))
		return EXIT_HARNESS;
	fputs(".SH FILES\n"
	      ".TP\n.I /run/memgate/hugetlb.lock\n"
	      "the host-wide lock memgate takes before it changes a hugetlb pool\n"
	      ".TP\n.I /run/memgate/reservations/PID\n"
	      "what a running memgate added to a pool, taken back by the next one if it was "
	      "killed\n"
	      ".TP\n.I PREFIX/share/memgate/rules.conf\n"
	      "the default rules (built into the binary too); a copy edited and passed with "
	      "\\-\\-rules replaces them\n"
	      ".SH SEE ALSO\n"
	      ".BR qemu-system-x86_64 (1),\n"
	      ".BR valgrind (1),\n"
	      ".BR perf_event_open (2)\n",
	      f);
	return ferror(f) ? EXIT_HARNESS : EXIT_PASSED;
}
