/* SPDX-License-Identifier: GPL-2.0-or-later */
/* child.c - the case API inside the forked child: every call becomes one JSON line on a pipe. */
#include "run/child.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/result.h"
#include "util/text.h"

/*
 * Events are written as they happen, not at the end, so that samples taken before a crash
 * still reach the parent. A failed write means the parent is gone: nothing to report to.
 */
static void emit(struct case_ctx *ctx, json_t *ev)
{
	char *line;
	size_t len, off = 0;

	if (!ev)
		return;
	line = json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(ev);
	if (!line)
		return;
	len = strlen(line);
	line[len++] = '\n'; /* json_dumps' NUL becomes the line end */
	while (off < len) {
		ssize_t w = write(ctx->fd, line + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(line);
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

static void emit_text(struct case_ctx *ctx, const char *ev, const char *fmt, va_list ap)
{
	char *s = vformat(fmt, ap);
	char *u = s ? text_utf8_clean(s, strlen(s)) : NULL;

	/* JSON carries UTF-8 only: a message with stray bytes keeps them as U+FFFD. */
	if (u)
		emit(ctx, json_pack("{s:s, s:s}", "ev", ev, "msg", u));
	free(u);
	free(s);
}

/* The samples so far, for case_settled(): only where the run may stop sampling early. A
 * sample that cannot be kept (no memory) turns that off for the case: it samples in full. */
static void keep_sample(struct case_ctx *ctx, unsigned int m, double value)
{
	if (!ctx->opts->settled || ctx->opts->samples_set || m >= ctx->inst->def->n_metrics)
		return;
	if (!ctx->partial) {
		ctx->partial = malloc(sizeof(*ctx->partial));
		if (!ctx->partial || case_result_init(ctx->partial, ctx->inst)) {
			free(ctx->partial);
			ctx->partial = NULL;
			return;
		}
	}
	case_result_add_sample(&ctx->partial->metrics[m], value, 0);
}

bool case_settled(struct case_ctx *ctx)
{
	const struct case_result *p = ctx->partial;
	bool any = false;

	if (!p || !ctx->opts->settled || ctx->opts->samples_set)
		return false;
	for (unsigned int m = 0; m < ctx->inst->def->n_metrics; m++) {
		if (p->metrics[m].n && p->metrics[m].n < CASE_MIN_SAMPLES)
			return false;
		any |= p->metrics[m].n > 0;
	}
	return any && ctx->opts->settled(p, ctx->opts->settled_arg);
}

const char *case_param(const struct case_ctx *ctx, const char *name)
{
	return case_params_get(&ctx->inst->params, name);
}

const struct hw_info *case_hw(const struct case_ctx *ctx)
{
	return ctx->hw;
}

const struct run_opts *case_opts(const struct case_ctx *ctx)
{
	return ctx->opts;
}

void case_sample(struct case_ctx *ctx, unsigned int m, double value,
		 const struct measure_span *span)
{
	/* A simulated count is not the wall clock's: no time can be stolen from it. */
	if (ctx->inst->def->counted && ctx->opts->counter == COUNTER_SIMULATED)
		span = NULL;
	emit(ctx, json_pack("{s:s, s:i, s:f, s:b}", "ev", "sample", "m", (int)m, "v", value,
			    "stolen", span && span->steal_ticks > 0));
	keep_sample(ctx, m, value);
}

void case_counter(struct case_ctx *ctx, unsigned int m, const char *counter)
{
	emit(ctx, json_pack("{s:s, s:i, s:s}", "ev", "counter", "m", (int)m, "name", counter));
}

int case_counter_open(struct case_ctx *ctx, struct counter *c)
{
	const struct run_opts *o = ctx->opts;
	const struct case_def *d = ctx->inst->def;
	struct mg_err err = {0};

	if (counter_open(c, o->counter, o->sim_dump, &err)) {
		case_error(ctx, "--counter %s: %s", counter_name(o->counter), err.msg);
		return -1;
	}
	for (unsigned int m = 0; m < d->n_metrics; m++)
		if (!strcmp(d->metrics[m].unit, "cycles") ||
		    (o->counter == COUNTER_SIMULATED && !strcmp(d->metrics[m].unit, "misses")))
			emit(ctx, json_pack("{s:s, s:i, s:s, s:s}", "ev", "counter", "m", (int)m,
					    "name", counter_name(o->counter), "unit",
					    case_metric_unit(d, m, o->counter)));
	return 0;
}

void case_prop(struct case_ctx *ctx, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *s, *u;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	u = s ? text_utf8_clean(s, strlen(s)) : NULL;
	if (u)
		emit(ctx, json_pack("{s:s, s:s, s:s}", "ev", "prop", "name", name, "value", u));
	free(u);
	free(s);
}

void case_say(struct case_ctx *ctx, const char *ev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit_text(ctx, ev, fmt, ap);
	va_end(ap);
}

void child_finish(struct case_ctx *ctx)
{
	if (ctx->partial) {
		case_result_release(ctx->partial);
		free(ctx->partial);
		ctx->partial = NULL;
	}
	emit(ctx, json_pack("{s:s}", "ev", "done"));
}