/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c - every command's options in one table each: the parser, `--help`, memgate(1) and
 * the bash completion are all made from the tables below, so none of them can forget an
 * option the others know. The model is git's parse-options (OPT_* entries, a usage made
 * from them) and QEMU's qemu-options.hx (one source for the parser, -help and the manual).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- what an option does with its argument ------------------------------------------------ */

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
		cli_usage_error("%s expects a whole number from %lu to %lu, got '%s'", opt, min,
				max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A fraction in (0, @max]: "0.05". */
static int parse_fraction(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > max) {
		cli_usage_error("%s expects a fraction above 0 and at most %g (0.05 is 5%%), "
				"got '%s'",
				opt, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int set_samples(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 1, HIST_MAX_SAMPLES, &v))
		return -EINVAL;
	c->cfg.opts.samples = (unsigned int)v;
	c->cfg.samples_set = true;
	return 0;
}

static int set_warmup(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 0, 100000, &v))
		return -EINVAL;
	c->cfg.opts.warmup = (unsigned int)v;
	c->cfg.opts.warmup_set = true;
	return 0;
}

static int set_timeout(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 1, 7 * 86400, &v))
		return -EINVAL;
	c->cfg.opts.timeout_s = (double)v;
	c->cfg.timeout_set = true;
	return 0;
}

static int set_seed(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 0, ULONG_MAX, &v))
		return -EINVAL;
	c->cfg.opts.seed = v;
	c->model.params.seed = v;
	return 0;
}

/* A size: a whole number with an optional K, M, G or T (powers of 1024), at least 64M. */
static int set_size(struct cli *c, const char *opt, const char *arg)
{
	uint64_t v;

	if (session_size(arg, &v)) {
		cli_usage_error("%s expects a size from 64M to 1024T, such as 512M or 4G, got '%s'",
				opt, arg);
		return -EINVAL;
	}
	c->cfg.opts.size_bytes = v;
	return 0;
}

/* The index of @arg among the @n words of @names, or -1. */
static int choice(const char *const *names, size_t n, const char *arg)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], arg))
			return (int)i;
	return -1;
}

static int set_guest(struct cli *c, const char *opt, const char *arg)
{
	static const char *const names[] = {"auto", "kvm", "modelled"};
	int g = choice(names, ARRAY_SIZE(names), arg);

	if (g < 0) {
		cli_usage_error("%s expects auto, kvm or modelled, got '%s'", opt, arg);
		return -EINVAL;
	}
	c->cfg.opts.guest = (enum run_guest)g;
	return 0;
}

static int set_counter(struct cli *c, const char *opt, const char *arg)
{
	if (counter_parse(arg, &c->cfg.counter) < 0) {
		cli_usage_error("%s expects tsc, instructions, simulated or auto, got '%s'", opt,
				arg);
		return -EINVAL;
	}
	c->cfg.counter_set = true;
	return 0;
}

static int set_cut(struct cli *c, const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *end;
	double bound = eq ? strtod(eq + 1, &end) : 0;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(c->cfg.opts.cut_metric) ||
	    end == eq + 1 || *end || !(bound > 0 && bound < 1e15)) {
		cli_usage_error("%s expects METRIC=VALUE, VALUE a positive number, got '%s'", opt,
				arg);
		return -EINVAL;
	}
	snprintf(c->cfg.opts.cut_metric, sizeof(c->cfg.opts.cut_metric), "%.*s", (int)(eq - arg),
		 arg);
	c->cfg.opts.cut_value = bound;
	return 0;
}

static int set_guest_exit_ns(struct cli *c, const char *opt, const char *arg)
{
	return parse_ulong(opt, arg, 1, 1000000000, &c->cfg.opts.guest_exit_ns);
}

static int set_deadline_ns(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 0, LLONG_MAX, &v))
		return -EINVAL;
	c->exec.deadline_ns = (long long)v;
	return 0;
}

/* --shard I/N: shard I (1 to N) of N (1 to 1000). */
static int set_shard(struct cli *c, const char *opt, const char *arg)
{
	char *end;
	unsigned long i, n;

	errno = 0;
	i = isdigit((unsigned char)arg[0]) ? strtoul(arg, &end, 10) : 0;
	if (i && *end == '/' && isdigit((unsigned char)end[1])) {
		n = strtoul(end + 1, &end, 10);
		if (!errno && !*end && n >= 1 && n <= 1000 && i <= n) {
			c->cfg.shard = i;
			c->cfg.shards = n;
			return 0;
		}
	}
	cli_usage_error("%s expects I/N with 1 <= I <= N <= 1000, got '%s'", opt, arg);
	return -EINVAL;
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

static int set_rounds(struct cli *c, const char *opt, const char *arg)
{
	c->ab.rounds_set = true;
	return parse_even(opt, arg, &c->ab.rounds);
}

static int set_confirm_rounds(struct cli *c, const char *opt, const char *arg)
{
	return parse_even(opt, arg, &c->ab.confirm_rounds);
}

static int set_junit_style(struct cli *c, const char *opt, const char *arg)
{
	if (strcmp(arg, "jenkins") && strcmp(arg, "ant")) {
		cli_usage_error("%s expects 'jenkins' or 'ant', got '%s'", opt, arg);
		return -EINVAL;
	}
	c->cfg.style = strcmp(arg, "ant") ? JUNIT_JENKINS : JUNIT_ANT;
	return 0;
}

static int set_impl(struct cli *c, const char *opt, const char *arg)
{
	struct mg_err err;

	(void)opt;
	if (session_impl_set(&c->cfg.impl, arg, &err)) {
		cli_usage_error("%s", err.msg);
		return -EINVAL;
	}
	return 0;
}

/* model's numbers: what the modelled runs look like. */
static int set_model_metrics(struct cli *c, const char *opt, const char *arg)
{
	unsigned long v;

	if (parse_ulong(opt, arg, 1, 10000, &v))
		return -EINVAL;
	c->model.params.metrics = v;
	return 0;
}

static int set_model_spread(struct cli *c, const char *opt, const char *arg)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	c->model.n_spreads = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (c->model.n_spreads == ARRAY_SIZE(c->model.spreads)) {
			cli_usage_error("%s: at most %zu spreads", opt,
					ARRAY_SIZE(c->model.spreads));
			return -EINVAL;
		}
		if (parse_fraction(opt, t, 1, &c->model.spreads[c->model.n_spreads++]))
			return -EINVAL;
	}
	if (!c->model.n_spreads) {
		cli_usage_error("%s expects fractions separated by commas, got '%s'", opt, arg);
		return -EINVAL;
	}
	return 0;
}

static int set_model_tolerance(struct cli *c, const char *opt, const char *arg)
{
	return parse_fraction(opt, arg, 1, &c->model.params.tolerance);
}

static int set_model_slowdown(struct cli *c, const char *opt, const char *arg)
{
	return parse_fraction(opt, arg, 10, &c->model.params.slowdown);
}

/* ---- the entries ------------------------------------------------------------------------- */

/*
 * The entries' makers. Their arguments are initialiser values and, for FIELD(), the name of a
 * member of struct cli for offsetof(), which parentheses would not let compile: hence no
 * parentheses, and clang-tidy told so.
 */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define FIELD(f) offsetof(struct cli, f)
/* A command's own struct in struct cli: test_options holds its options to it and cfg. */
#define OWN(m) .own_at = FIELD(m), .own_size = sizeof(((struct cli *)0)->m)
/* FIELD(f), and a build that fails unless f is a T: an option writes only the type it parses. */
#define TYPED(f, T)                                                                                \
	(FIELD(f) +                                                                                \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((struct cli *)0)->f), T) ? 1     \
											   : -1]))
/* A flag: sets a bool of struct cli. */
#define O_FLAG(n, s, f, h)                                                                         \
	{                                                                                          \
		.name = n, .short_name = s, .help = h, .kind = CO_FLAG, .field = TYPED(f, bool)    \
	}
/* Its argument kept as it is, in a const char * of struct cli. */
#define O_STR(n, s, a, f, h)                                                                       \
	{                                                                                          \
		.name = n, .short_name = s, .arg = a, .help = h, .kind = CO_STRING,                \
		.field = TYPED(f, const char *)                                                    \
	}
/* Its argument added to a list of struct cli (MAX_SUITE_ARGS at most), with its count. */
#define O_LIST(n, s, a, f, cnt, h)                                                                 \
	{                                                                                          \
		.name = n, .short_name = s, .arg = a, .help = h, .kind = CO_LIST,                  \
		.field = TYPED(f, const char *[MAX_SUITE_ARGS]), .count = TYPED(cnt, size_t),      \
		.repeat = true                                                                     \
	}
/* A whole number from lo to hi in an unsigned long of struct cli. */
#define O_ULONG(n, a, f, lo, hi, h)                                                                \
	{                                                                                          \
		.name = n, .arg = a, .help = h, .kind = CO_ULONG,                                  \
		.field = TYPED(f, unsigned long), .min = lo, .max = hi                             \
	}
/* A whole number from lo to hi in an unsigned int of struct cli. */
#define O_UINT(n, a, f, lo, hi, h)                                                                 \
	{                                                                                          \
		.name = n, .arg = a, .help = h, .kind = CO_UINT, .field = TYPED(f, unsigned int),  \
		.min = lo, .max = hi                                                               \
	}
/* Parsed by its own function; O_CALLS may be given again (--impl). */
#define O_CALL(n, s, a, fn, h)                                                                     \
	{                                                                                          \
		.name = n, .short_name = s, .arg = a, .help = h, .kind = CO_CALL, .set = fn        \
	}
#define O_CALLS(n, s, a, fn, h)                                                                    \
	{                                                                                          \
		.name = n, .short_name = s, .arg = a, .help = h, .kind = CO_CALL, .set = fn,       \
		.repeat = true                                                                     \
	}
/* An option the command needs: shown without brackets. */
#define O_NEED(n, a, f, h)                                                                         \
	{                                                                                          \
		.name = n, .arg = a, .help = h, .kind = CO_STRING,                                 \
		.field = TYPED(f, const char *), .required = true                                  \
	}
/* NOLINTEND(bugprone-macro-parentheses) */
/* Every option, once (options.def): opt_ID for each. */
#define OPT(id, ...) static const struct cli_opt opt_##id = __VA_ARGS__;
#include "cli/options.def"
#undef OPT

/* Each command's options, in the order of its --help. */
static const struct cli_opt *const hw_opts[] = {
    &opt_JSON_HW, &opt_TOPOLOGY, &opt_HOST, &opt_RECORD, &opt_HELP, NULL,
};

static const struct cli_opt *const list_opts[] = {
    &opt_SUITE,	       &opt_FILTER,	  &opt_CASE, &opt_SHARD,   &opt_IMPL,
    &opt_JSON_LIST,    &opt_QUICK,	  &opt_LONG, &opt_SIZE,	   &opt_RULES,
    &opt_TOPOLOGY,     &opt_HOST,	  &opt_QEMU, &opt_COUNTER, &opt_GUEST_KERNEL,
    &opt_GUEST_INITRD, &opt_QEMU_PRELOAD, &opt_HELP, NULL,
};

static const struct cli_opt *const run_opts[] = {
    &opt_SUITE,
    &opt_FILTER,
    &opt_CASE,
    &opt_CHECKS,
    &opt_SHARD,
    &opt_SAMPLES_RUN,
    &opt_WARMUP_RUN,
    &opt_QUICK,
    &opt_LONG,
    &opt_TIMEOUT_RUN,
    &opt_SEED,
    &opt_JUNIT,
    &opt_JUNIT_STYLE,
    &opt_JSON,
    &opt_CSV,
    &opt_HTML,
    &opt_LABEL,
    &opt_SIZE,
    &opt_RESERVE,
    &opt_IMPL,
    &opt_RULES,
    &opt_NO_GATES,
    &opt_BASELINE,
    &opt_BASELINE_RUNS,
    &opt_TOPOLOGY,
    &opt_HOST,
    &opt_QEMU,
    &opt_GUEST_RUN,
    &opt_GUEST_EXIT_NS_RUN,
    &opt_COUNTER,
    &opt_GUEST_KERNEL,
    &opt_GUEST_INITRD,
    &opt_QEMU_PRELOAD,
    &opt_CUT,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const ab_opts[] = {
    &opt_BASE,
    &opt_HEAD,
    &opt_SUITE,
    &opt_FILTER,
    &opt_SHARD,
    &opt_ROUNDS_AB,
    &opt_CONFIRM_ROUNDS_AB,
    &opt_SAMPLES_AB,
    &opt_WARMUP_AB,
    &opt_QUICK,
    &opt_LONG,
    &opt_TIMEOUT_AB,
    &opt_SEED,
    &opt_JUNIT,
    &opt_JUNIT_STYLE,
    &opt_JSON,
    &opt_HTML,
    &opt_LABEL,
    &opt_RULES,
    &opt_RESERVE,
    &opt_SIZE,
    &opt_COUNTER,
    &opt_CALIBRATION,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const bisect_opts[] = {
    &opt_SIDE_OF,    &opt_COMMITS,    &opt_STATE,     &opt_FROM_AB, &opt_METRIC,
    &opt_MAX_ROUNDS, &opt_SAMPLES_AB, &opt_WARMUP_AB, &opt_QUICK,   &opt_LONG,
    &opt_TIMEOUT_AB, &opt_SEED,	      &opt_REPORT,    &opt_JUNIT,   &opt_JUNIT_STYLE,
    &opt_JSON,	     &opt_HTML,	      &opt_LABEL,     &opt_RULES,   &opt_SIZE,
    &opt_COUNTER,    &opt_NO_VERIFY,  &opt_HELP,      NULL,
};

static const struct cli_opt *const calibrate_opts[] = {
    &opt_HISTORY,
    &opt_RUNS_CALIBRATE,
    &opt_ROUNDS_CALIBRATE,
    &opt_SUITE,
    &opt_FILTER,
    &opt_SAMPLES_AB,
    &opt_WARMUP_AB,
    &opt_QUICK,
    &opt_LONG,
    &opt_TIMEOUT_CALIBRATE,
    &opt_SEED,
    &opt_RULES,
    &opt_SIZE,
    &opt_RESERVE,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const model_opts[] = {
    &opt_METRICS,
    &opt_SPREAD,
    &opt_TOLERANCE,
    &opt_SLOWDOWN,
    &opt_RUNS_MODEL,
    &opt_ROUNDS_MODEL,
    &opt_CONFIRM_ROUNDS_MODEL,
    &opt_SEED,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const compare_opts[] = {
    &opt_ANY_HOST, &opt_RULES, &opt_SEED, &opt_JUNIT, &opt_JUNIT_STYLE,
    &opt_JSON,	   &opt_HTML,  &opt_HELP, NULL,
};

static const struct cli_opt *const merge_opts[] = {
    &opt_JSON_MERGE,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const vm_opts[] = {
    &opt_KERNEL_VM,    &opt_MODULES_VM,	  &opt_SHAPE,	     &opt_SHAPE_OF, &opt_GUEST_CPU_VM,
    &opt_NO_ICOUNT_VM, &opt_TIMEOUT_VM,	  &opt_DRY_RUN_VM,   &opt_JSON,	    &opt_JUNIT,
    &opt_QEMU,	       &opt_GUEST_KERNEL, &opt_GUEST_INITRD, &opt_HELP,	    NULL,
};

static const struct cli_opt *const rules_opts[] = {
    &opt_RULES,
    &opt_HELP,
    NULL,
};

static const struct cli_opt *const plain_opts[] = {
    &opt_HELP,
    NULL,
};

/* Internal: what a counted case's child hands itself under callgrind (runner.c). */
/* Internal: what a counted case's child hands itself under callgrind (runner.c). */
static const struct cli_opt *const case_exec_opts[] = {
    &opt_FD,
    &opt_DEADLINE_NS,
    &opt_DUMP,
    &opt_CASE,
    &opt_IMPL,
    &opt_SIZE,
    &opt_GUEST_CASE_EXEC,
    &opt_GUEST_EXIT_NS_CASE_EXEC,
    &opt_SAMPLES_CASE_EXEC,
    &opt_WARMUP_CASE_EXEC,
    &opt_SEED,
    &opt_QUICK,
    &opt_LONG,
    NULL,
};

const struct cli_command cli_commands[] = {
    {
	.name = "hw",
	.summary = "describe the host (or SPEC, or the record DIR) the suites plan from",
	.opts = hw_opts,
	OWN(hw),
	.run = cli_cmd_hw,
    },
    {
	.name = "list",
	.summary = "the cases, with their parameters as this host expands them, and the gates",
	.opts = list_opts,
	OWN(list),
	.run = cli_cmd_list,
    },
    {
	.name = "run",
	.summary = "run the cases, each in a forked child with a timeout; judge the gates, and\n"
		   "with --baseline the perf metrics against earlier runs of this host class",
	.opts = run_opts,
	.run = cli_cmd_run,
    },
    {
	.name = "ab",
	.summary = "is head slower than base? Every shared perf case, the two builds in turn,\n"
		   "each round a fresh process of each; head's checks run once",
	.opts = ab_opts,
	OWN(ab),
	.run = cli_cmd_ab,
    },
    {
	.name = "bisect",
	.summary = "the first commit of a range on which a regression appears, per metric:\n"
		   "each commit the search asks for built by --side-of and measured as ab\n"
		   "measures a side, rounds until it is told good or bad (else unknown); the\n"
		   "first bad commit checked by an ab against its parent",
	.opts = bisect_opts,
	OWN(bisect),
	.run = cli_cmd_bisect,
    },
    {
	.name = "calibrate",
	.summary =
	    "this build against itself, K A/A runs of N rounds (default 4 of 10): each\n"
	    "metric's noise on this host class, filed as DIR/HOST_CLASS_HASH/calibration.json\n"
	    "(the two before it kept: verdicts take each metric's upper median of the three)",
	.opts = calibrate_opts,
	OWN(ab),
	.run = cli_cmd_calibrate,
    },
    {
	.name = "model",
	.summary = "the A/B procedures on modelled lognormal rounds: A/A failures and power",
	.opts = model_opts,
	OWN(model),
	.run = cli_cmd_model,
    },
    {
	.name = "compare",
	.args = "BASE.json... HEAD.json",
	.summary = "judge a run against earlier ones (pooled per run) of the same host class",
	.opts = compare_opts,
	OWN(compare),
	.max_args = MAX_SUITE_ARGS,
	.run = cli_cmd_compare,
    },
    {
	.name = "merge",
	.args = "SHARD.json...",
	.summary = "the results of a run's shards (--shard I/N) as one results file",
	.opts = merge_opts,
	.max_args = MAX_SUITE_ARGS,
	.run = cli_cmd_merge,
    },
    {
	.name = "vm",
	.args = "[--] COMMAND [OPTIONS]",
	.summary =
	    "a memgate command (this build) inside a QEMU guest of SHAPE, or of a kernel of\n"
	    "yours with KVM in it (--kernel), KVM's where it boots the kit, else TCG's (with\n"
	    "icount for a kernel: its figures count instructions); a run's reports come back\n"
	    "with its suites named guest[SHAPE].SUITE or guest[kernel=VERSION].SUITE (under\n"
	    "TCG its gates are off: timing is not the host's)",
	.opts = vm_opts,
	OWN(vm),
	.max_args = MAX_SUITE_ARGS,
	.stop_at_arg = true,
	.run = cli_cmd_vm,
    },
    {
	.name = "baseline",
	.args = "add RESULTS.json DIR",
	.summary = "file a run into a history directory, under DIR/HOST_CLASS_HASH/",
	.opts = plain_opts,
	.max_args = 3,
	.run = cli_cmd_baseline,
    },
    {
	.name = "rules",
	.summary = "print the rules in effect (the embedded ones unless --rules)",
	.opts = rules_opts,
	.run = cli_cmd_rules,
    },
    {
	.name = "man",
	.summary = "memgate(1) in roff, as make builds it for make install",
	.opts = plain_opts,
	.run = cli_cmd_man,
    },
    {
	.name = "completion",
	.summary = "the bash completion of memgate, as make install installs it",
	.opts = plain_opts,
	.run = cli_cmd_completion,
    },
    /* memgate's own: a counted case under callgrind, and ab's first question of a side */
    {
	.name = "case-exec",
	.summary = "one counted case in this process (the runner's)",
	.opts = case_exec_opts,
	OWN(exec),
	.hidden = true,
	.run = cli_cmd_case_exec,
    },
    {
	.name = "ab-protocol",
	.summary = "the A/B protocol this memgate speaks (ab's first question)",
	.opts = run_opts,
	.hidden = true,
	.run = cli_cmd_ab_protocol,
    },
    {0},
};

const struct cli_command *cli_command(const char *name)
{
	for (const struct cli_command *k = cli_commands; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* ---- the parser -------------------------------------------------------------------------- */

/* The command whose options are being parsed: usage errors point at its --help. */
static const char *current;

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "memgate: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (current)
		fprintf(stderr, "\nTry 'memgate %s --help'.\n", current);
	else
		fprintf(stderr, "\nTry 'memgate --help'.\n");
	return EXIT_USAGE;
}

/* @arg added to @o's list in @c (MAX_SUITE_ARGS at most). Returns 0 or -EINVAL, said. */
static int add_to_list(struct cli *c, const struct cli_opt *o, const char *name, const char *arg)
{
	size_t *n = (size_t *)((char *)c + o->count);

	if (*n == MAX_SUITE_ARGS) {
		cli_usage_error("at most %d %s options", MAX_SUITE_ARGS, name);
		return -EINVAL;
	}
	((const char **)((char *)c + o->field))[(*n)++] = arg;
	return 0;
}

/* What @o does with @arg (NULL for a flag). Returns 0 or -EINVAL, the usage error said. */
static int apply(struct cli *c, const struct cli_opt *o, const char *arg)
{
	char name[64];
	char *base = (char *)c + o->field;

	snprintf(name, sizeof(name), "--%s", o->name);
	switch (o->kind) {
	case CO_FLAG:
		*(bool *)base = true;
		return 0;
	case CO_STRING:
		*(const char **)base = arg;
		return 0;
	case CO_LIST:
		return add_to_list(c, o, name, arg);
	case CO_ULONG:
		return parse_ulong(name, arg, o->min, o->max, (unsigned long *)base);
	case CO_UINT: {
		unsigned long v;

		if (parse_ulong(name, arg, o->min, o->max, &v))
			return -EINVAL;
		*(unsigned int *)base = (unsigned int)v;
		return 0;
	}
	case CO_CALL:
		return o->set(c, name, arg);
	}
	return -EINVAL;
}

/* getopt_long's view of @opts: val is 256 + the entry's index; shorts as "s:k:n:h". */
static size_t getopt_tables(const struct cli_opt *const *opts, bool stop_at_arg,
			    struct option *longs, char *shorts, size_t shorts_len)
{
	size_t n = 0, k = 0;

	/* '+': stop at the first argument (vm's command); ':': a missing argument is ':'. */
	if (stop_at_arg)
		shorts[k++] = '+';
	shorts[k++] = ':';
	for (; opts[n]; n++) {
		const struct cli_opt *o = opts[n];

		longs[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
					   256 + (int)n};
		if (o->short_name && k + 3 < shorts_len) {
			shorts[k++] = o->short_name;
			if (o->arg)
				shorts[k++] = ':';
		}
	}
	longs[n] = (struct option){0};
	shorts[k] = '\0';
	return n;
}

int cli_parse(struct cli *c, int argc, char **argv, const char *command)
{
	const struct cli_command *cmd = cli_command(command);
	struct option longs[64];
	char shorts[64];
	size_t n;
	int opt;

	memset(c, 0, sizeof(*c));
	c->cfg.opts.samples = DEFAULT_SAMPLES;
	c->cfg.opts.warmup = DEFAULT_WARMUP;
	c->cfg.opts.timeout_s = DEFAULT_TIMEOUT_S;
	c->cfg.opts.seed = 1;
	c->cfg.opts.impl = &c->cfg.impl;
	c->cfg.baseline_runs = DEFAULT_BASELINE_RUNS;
	c->ab.runs = CALIB_DEFAULT_RUNS;
	c->model.params = model_params_default();
	c->cfg.version = MEMGATE_VERSION;
	c->cfg.commit = MEMGATE_COMMIT;
	current = command;
	if (!cmd)
		return cli_usage_error("no command '%s'", command);
	n = getopt_tables(cmd->opts, cmd->stop_at_arg, longs, shorts, sizeof(shorts));
	if (n >= ARRAY_SIZE(longs))
		return EXIT_HARNESS;
	/* 0, not 1: glibc then forgets a half-read "-nabc" of an earlier parse as well. */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct cli_opt *o = NULL;

		if (opt >= 256 && (size_t)(opt - 256) < n) {
			o = cmd->opts[opt - 256];
		} else {
			for (size_t i = 0; i < n && !o; i++)
				if (cmd->opts[i]->short_name && cmd->opts[i]->short_name == opt)
					o = cmd->opts[i];
		}
		if (opt == ':')
			return cli_usage_error("%s: option '%s' requires an argument", command,
					       argv[optind - 1]);
		if (!o)
			return cli_usage_error("%s: unrecognized option '%s'", command,
					       argv[optind - 1]);
		if (apply(c, o, optarg))
			return EXIT_USAGE;
		if (c->help) {
			cli_print_help(cmd, stdout);
			return EXIT_HELP;
		}
	}
	while (optind < argc && c->n_args < cmd->max_args)
		c->args[c->n_args++] = argv[optind++];
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	c->cfg.opts.samples_set = c->cfg.samples_set;
	if (c->cfg.opts.quick && !c->cfg.samples_set)
		c->cfg.opts.samples = QUICK_SAMPLES;
	if (c->cfg.opts.quick && !c->cfg.opts.warmup_set)
		c->cfg.opts.warmup = QUICK_WARMUP;
	return 0;
}
