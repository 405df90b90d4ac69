/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_embedded.c - judge/rules.conf compiled in: `memgate run` needs no file. */
#include "judge/rules.h"
#include "util/embed.h"

EMBED_TEXT(rules_defaults_text, "judge/rules.conf");

const struct rules_file rules_defaults = {"judge/rules.conf", rules_defaults_text, NULL};
