/* model.c - `memgate model`: the A/B procedures on modelled rounds, their A/A rate and power. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "judge/model.h"
#include "util/util.h"

#define MODEL_MAX_SPREADS 16

/* A fraction in (0, @max]: "0.05". */
static int fraction(const char *opt, const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > max) {
		cli_usage_error(
		    "%s expects a fraction above 0 and at most %g (0.05 is 5%%), got '%s'", opt,
		    max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "0.02,0.03": the per-side spreads to model. */
static int spreads(const char *s, double *out, size_t *n)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == MODEL_MAX_SPREADS) {
			cli_usage_error("--spread: at most %d spreads", MODEL_MAX_SPREADS);
			return -EINVAL;
		}
		if (fraction("--spread", t, 1, &out[(*n)++]))
			return -EINVAL;
	}
	return *n ? 0 : -EINVAL;
}

const struct option cli_model_options[] = {
    {"metrics", required_argument, NULL, 'm'},
    {"spread", required_argument, NULL, 's'},
    {"tolerance", required_argument, NULL, 't'},
    {"slowdown", required_argument, NULL, 'd'},
    {"runs", required_argument, NULL, 'r'},
    {"rounds", required_argument, NULL, 'R'},
    {"confirm-rounds", required_argument, NULL, 'c'},
    {"seed", required_argument, NULL, 'S'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A whole number option in [lo, hi]. */
static int whole(const char *opt, const char *s, unsigned long lo, unsigned long hi,
		 unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *out < lo || *out > hi || s[0] == '-') {
		cli_usage_error("%s expects a whole number from %lu to %lu, got '%s'", opt, lo, hi,
				s);
		return -EINVAL;
	}
	return 0;
}

int cli_cmd_model(int argc, char **argv)
{
	struct model_params mp = model_params_default();
	double sp[MODEL_MAX_SPREADS] = {0.02, 0.03, 0.04, 0.05};
	size_t n_sp = 4;
	unsigned long v;
	int opt, bad = 0;

	optind = 0;
	while (!bad && (opt = getopt_long(argc, argv, "", cli_model_options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			bad = whole("--metrics", optarg, 1, 10000, &v);
			mp.metrics = v;
			break;
		case 's':
			bad = spreads(optarg, sp, &n_sp);
			break;
		case 't':
			bad = fraction("--tolerance", optarg, 1, &mp.tolerance);
			break;
		case 'd':
			bad = fraction("--slowdown", optarg, 10, &mp.slowdown);
			break;
		case 'r':
			bad = whole("--runs", optarg, 10, 100000, &v);
			mp.runs = (unsigned int)v;
			break;
		case 'R':
			bad = whole("--rounds", optarg, 2, 32, &v);
			mp.rounds = (unsigned int)v;
			break;
		case 'c':
			bad = whole("--confirm-rounds", optarg, 2, 32, &v);
			mp.more_rounds = (unsigned int)v;
			break;
		case 'S':
			bad = whole("--seed", optarg, 0, ~0UL, &v);
			mp.seed = v;
			break;
		case 'h':
			return cli_print_usage();
		default:
			return EXIT_USAGE;
		}
	}
	if (bad)
		return EXIT_USAGE;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	printf("memgate model: %zu gated metrics a run, lognormal rounds, tolerance %.3g%%, alpha "
	       "%.3g; %u A/A runs and %u with one metric %.3g%% slower, per spread and "
	       "procedure; new procedures: %u rounds, %u more when undecided\n",
	       mp.metrics, 100 * mp.tolerance, mp.alpha, mp.runs, mp.runs, 100 * mp.slowdown,
	       mp.rounds, mp.more_rounds);
	printf("%-8s %-52s %10s %10s %10s %8s\n", "spread", "procedure", "A/A failed", "A/A unst.",
	       "caught", "rounds");
	for (size_t s = 0; s < n_sp; s++) {
		mp.spread = sp[s];
		for (int p = 0; p < MODEL_PROCEDURES; p++) {
			struct model_rates r;

			if (model_run(&mp, (enum model_procedure)p, &r))
				return EXIT_HARNESS;
			printf("%6.3g%%  %-52s %9.1f%% %9.1f%% %9.1f%% %8.1f\n", 100 * sp[s],
			       model_procedure_name((enum model_procedure)p), 100 * r.aa_failed,
			       100 * r.aa_unstable, 100 * r.caught, r.mean_rounds);
		}
	}
	return EXIT_PASSED;
}
