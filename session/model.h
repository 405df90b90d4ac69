/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model.h - `memgate model`: the A/B procedures' A/A failure rate and power, modelled
 * (judge/model.h), as a table. */
#ifndef MG_SESSION_MODEL_H
#define MG_SESSION_MODEL_H

#include <stddef.h>

#include "judge/model.h"

/**
 * session_model() - the table of every procedure at each of the @n @spreads (none: 2% to 5%),
 * modelled as @mp says. Returns an exit status.
 */
int session_model(const struct model_params *mp, const double *spreads, size_t n);

#endif
