/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case.c - the case model's small helpers: parameter sets, names, outcome names, and a suite's
 * tables of figures. */
#include "run/case.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "run/impl_opts.h"
#include "run/result.h"
#include "util/text.h"
#include "util/util.h"

void case_params_add(struct case_params *p, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (p->n == CASE_MAX_PARAMS)
		return;
	snprintf(p->p[p->n].name, sizeof(p->p[p->n].name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(p->p[p->n].value, sizeof(p->p[p->n].value), fmt, ap);
	va_end(ap);
	p->n++;
}

unsigned int case_expand_values(const char *name, const unsigned int *values, size_t n,
				unsigned int long_from, const struct impl_key *impl,
				const struct run_opts *opts, struct case_params *out,
				unsigned int max)
{
	unsigned int made = 0;

	for (size_t i = 0; i < n && made < max; i++) {
		if (long_from && values[i] > long_from && !opts->long_run)
			continue;
		case_params_add(&out[made], name, "%u", values[i]);
		if (impl)
			case_params_add(&out[made], "impl", "%s", impl_get(opts->impl, impl));
		made++;
	}
	return made;
}

const char *case_params_get(const struct case_params *p, const char *name)
{
	for (unsigned int i = 0; i < p->n; i++)
		if (!strcmp(p->p[i].name, name))
			return p->p[i].value;
	return NULL;
}

const char *case_group(const struct case_def *d)
{
	return d->group ? d->group : d->kind == CASE_PERF ? "perf" : "check";
}

char *case_full_name(const struct case_inst *inst, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s.%s", inst->suite->name, case_group(inst->def), inst->name);
	return buf;
}

const char *case_outcome_name(enum case_outcome o)
{
	static const char *const names[] = {"PASS", "SKIP", "FAIL", "ERROR"};

	return (size_t)o < ARRAY_SIZE(names) ? names[o] : "?";
}

uint64_t case_guest_size(const struct hw_info *hw, const struct run_opts *o)
{
	const uint64_t mib = 1ULL << 20, gib = 1ULL << 30;
	uint64_t size = o->size_bytes;

	if (!size) {
		/* min(1 GiB, or 4 GiB with --long, a quarter of what is available): the run must
		 * not push the host into reclaim; 4 GiB is what QEMU's published figures use, and
		 * 1 GiB (512 pages of 2 MiB) already shows the threads scale, in a quarter of
		 * the time; --quick takes 256 MiB. */
		size = (o->long_run ? CASE_SIZE_LONG_MIB
			: o->quick  ? CASE_SIZE_QUICK_MIB
				    : CASE_SIZE_MIB) *
		       mib;
		if (hw->meminfo_available_kib && size > hw->meminfo_available_kib * 1024 / 4)
			size = hw->meminfo_available_kib * 1024 / 4;
	}
	/* Whole 1 GiB pages when it is that large, whole 2 MiB pages otherwise. */
	return size >= gib ? size & ~(gib - 1) : size & ~(2 * mib - 1);
}

char *case_key(const char *full_name, char *buf, size_t len)
{
	const char *p = strstr(full_name, "impl=");
	size_t used;

	/* Only a parameter: after '[' or ','. */
	while (p && p > full_name && p[-1] != '[' && p[-1] != ',')
		p = strstr(p + 1, "impl=");
	if (!p) {
		snprintf(buf, len, "%s", full_name);
		return buf;
	}
	used = (size_t)snprintf(buf, len, "%.*s", (int)(p - full_name), full_name);
	p += strcspn(p, ",]");
	if (*p == ',')
		p++;
	else if (used && used < len && buf[used - 1] == ',')
		buf[--used] = '\0'; /* the last parameter: drop the comma before it */
	if (used < len)
		snprintf(buf + used, len - used, "%s", p);
	/* "name[]" when impl was the only parameter: no brackets at all. */
	used = strlen(buf);
	if (used >= 2 && !strcmp(buf + used - 2, "[]"))
		buf[used - 2] = '\0';
	return buf;
}

bool case_any_matches(const struct case_inst *insts, size_t n, const char *glob)
{
	char full[256];

	for (size_t i = 0; i < n; i++)
		if (text_glob(glob, case_full_name(&insts[i], full, sizeof(full))))
			return true;
	return false;
}

const char *case_metric_unit(const struct case_def *d, unsigned int m, enum counter_kind k)
{
	const char *unit = d->metrics[m].unit;

	return d->counted && !strcmp(unit, "cycles") ? counter_unit(k) : unit;
}

/* @t into @f when one of the @n @results is wanted: its header, rows, published figures. */
static void write_table(FILE *f, const struct summary_table *t, const struct case_result *results,
			size_t n)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (!t->wanted(&results[i]))
			continue;
		if (!any && t->header)
			fputs(t->header, f);
		any = true;
		if (t->row)
			t->row(f, &results[i]);
	}
	if (any && t->write)
		t->write(f, results, n);
	if (any && t->published)
		fputs(t->published, f);
}

char *suite_summary(const struct suite_def *s, const struct case_result *results, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!s->tables || !(f = open_memstream(&buf, &len)))
		return NULL;
	for (const struct summary_table *const *t = s->tables; *t; t++)
		write_table(f, *t, results, n);
	if (fclose(f) || !len) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool suite_is_reference(const struct suite_def *s, const char *name)
{
	for (const char *const *g = s->reference; g && *g; g++)
		if (text_glob(*g, name))
			return true;
	return false;
}
