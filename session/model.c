/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model.c - `memgate model` from start to end (session/model.h). */
#include "session/model.h"

#include <stdio.h>

#include "session/internal.h"
#include "util/util.h"

int session_model(const struct model_params *given, const double *spreads, size_t n)
{
	static const double default_spreads[] = {0.02, 0.03, 0.04, 0.05};
	struct model_params mp = *given;
	const double *sp = n ? spreads : default_spreads;
	size_t n_sp = n ? n : ARRAY_SIZE(default_spreads);

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
