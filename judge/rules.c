/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.c - parse the rules file with libconfig: gates and tolerances, checked line by line. */
#include "judge/rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/text.h"
#include "util/util.h"

/* The largest file read as rules: far more than any rules file needs. */
#define RULES_MAX_BYTES (1u << 20)

static const char *const kind_names[] = {
    [GATE_RATIO_AT_MOST] = "ratio_at_most",
    [GATE_NOT_SLOWER] = "not_slower",
    [GATE_AT_LEAST] = "at_least",
    [GATE_FASTER] = "faster",
};

const char *rules_gate_kind_name(enum gate_kind k)
{
	return (size_t)k < ARRAY_SIZE(kind_names) ? kind_names[k] : "?";
}

/* "FILE:LINE: message" for setting @s (line 0: the file alone). Returns -EINVAL. */
__attribute__((format(printf, 4, 5))) static int
bad(const struct rules *r, const config_setting_t *s, struct mg_err *err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s && config_setting_source_line(s))
		return mg_err_set(err, EINVAL, "%s:%u: %s", r->source,
				  config_setting_source_line(s), msg);
	return mg_err_set(err, EINVAL, "%s: %s", r->source, msg);
}

/* Every member of group @g is one of @known; anything else is a typo worth an error. */
static int only_known(const struct rules *r, const config_setting_t *g, const char *const *known,
		      size_t n, const char *what, struct mg_err *err)
{
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned int)i);
		const char *name = config_setting_name(m);
		char list[256] = "";

		if (text_index(known, n, name) >= 0)
			continue;
		for (size_t k = 0; k < n; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 k ? ", " : "", known[k]);
		return bad(r, m, err, "unknown setting '%s' in %s (expected %s)", name ? name : "?",
			   what, list);
	}
	return 0;
}

/* A string member @name of @g: @def when absent; an error when it is not a string. */
static int get_string(const struct rules *r, const config_setting_t *g, const char *name,
		      const char *def, const char **out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def;
	if (!s)
		return def ? 0 : bad(r, g, err, "'%s' is missing", name);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad(r, s, err, "'%s' expects a string in double quotes", name);
	*out = config_setting_get_string(s);
	return 0;
}

/* A number member @name of @g within [@lo, @hi]; @def (may be < @lo: "not set") when absent. */
static int get_number(const struct rules *r, const config_setting_t *g, const char *name,
		      double def, double lo, double hi, double *out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def;
	if (!s)
		return 0;
	if (!config_setting_is_number(s))
		return bad(r, s, err, "'%s' expects a number from %g to %g", name, lo, hi);
	*out = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
							   : (double)config_setting_get_int64(s);
	if (!(*out >= lo && *out <= hi))
		return bad(r, s, err, "'%s' expects a number from %g to %g, got %g", name, lo, hi,
			   *out);
	return 0;
}

/* A boolean member @name of @g as 1 or 0; @def when absent. */
static int get_bool(const struct rules *r, const config_setting_t *g, const char *name, int def,
		    int *out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def;
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return bad(r, s, err, "'%s' expects true or false", name);
	*out = config_setting_get_bool(s);
	return 0;
}

/* A gate side: { case = GLOB; metric = NAME; }. */
static int parse_side(const struct rules *r, const config_setting_t *g, const char *name,
		      struct gate_side *side, struct mg_err *err)
{
	static const char *const known[] = {"case", "metric"};
	const config_setting_t *s = config_setting_get_member(g, name);

	if (!s || !config_setting_is_group(s))
		return bad(r, s ? s : g, err,
			   "'%s' expects a group { case = \"GLOB\"; metric = "
			   "\"NAME\"; }",
			   name);
	return only_known(r, s, known, ARRAY_SIZE(known), name, err) ||
	       get_string(r, s, "case", NULL, &side->glob, err) ||
	       get_string(r, s, "metric", NULL, &side->metric, err);
}

static int parse_gate(const struct rules *r, const config_setting_t *g, struct rules_gate *out,
		      struct mg_err *err)
{
	static const char *const known[] = {"suite", "name",	  "kind",   "a",
					    "b",     "threshold", "paired", "why"};
	const char *kind;
	int paired, k;

	if (!config_setting_is_group(g))
		return bad(r, g, err, "a gate is a group { suite = ...; name = ...; ... }");
	if (only_known(r, g, known, ARRAY_SIZE(known), "a gate", err) ||
	    get_string(r, g, "suite", NULL, &out->suite, err) ||
	    get_string(r, g, "name", NULL, &out->def.name, err) ||
	    get_string(r, g, "kind", NULL, &kind, err) ||
	    get_number(r, g, "threshold", -1, 0, 1e9, &out->def.threshold, err) ||
	    get_bool(r, g, "paired", 0, &paired, err) ||
	    get_string(r, g, "why", NULL, &out->def.why, err) ||
	    parse_side(r, g, "a", &out->def.a, err) || parse_side(r, g, "b", &out->def.b, err))
		return -EINVAL;
	k = text_index(kind_names, ARRAY_SIZE(kind_names), kind);
	if (k < 0)
		return bad(r, config_setting_get_member(g, "kind"), err,
			   "gate kind '%s': expected ratio_at_most, not_slower, at_least or faster",
			   kind);
	if (out->def.threshold < 0)
		return bad(r, g, err, "gate '%s' has no threshold", out->def.name);
	out->def.kind = (enum gate_kind)k;
	out->def.paired = paired;
	out->line = config_setting_source_line(g);
	return 0;
}

static int parse_tolerance(const struct rules *r, const config_setting_t *g,
			   struct tolerance_rule *out, struct mg_err *err)
{
	static const char *const known[] = {"suite",	"case", "metric", "unit", "ab",
					    "baseline", "cut",	"gate",	  "why"};

	if (!config_setting_is_group(g))
		return bad(r, g, err, "a tolerance is a group { unit = ...; ab = ...; ... }");
	if (only_known(r, g, known, ARRAY_SIZE(known), "a tolerance", err) ||
	    get_string(r, g, "suite", "*", &out->suite, err) ||
	    get_string(r, g, "case", "*", &out->cases, err) ||
	    get_string(r, g, "metric", "*", &out->metric, err) ||
	    get_string(r, g, "unit", "*", &out->unit, err) ||
	    get_number(r, g, "ab", -1, 0, 10, &out->ab, err) ||
	    get_number(r, g, "baseline", -1, 0, 10, &out->baseline, err) ||
	    get_number(r, g, "cut", -1, 1, 100, &out->cut, err) ||
	    get_bool(r, g, "gate", -1, &out->gate, err) ||
	    get_string(r, g, "why", NULL, &out->why, err))
		return -EINVAL;
	if (out->ab < 0 && out->baseline < 0 && out->cut < 0 && out->gate < 0)
		return bad(r, g, err, "a tolerance sets nothing: give ab, baseline, cut or gate");
	out->line = config_setting_source_line(g);
	return 0;
}

/* The list @name of the file's top level, parsed element by element with @one. */
static int parse_list(struct rules *r, const char *name, size_t size, void **arr, size_t *n,
		      int (*one)(const struct rules *, const config_setting_t *, void *,
				 struct mg_err *),
		      struct mg_err *err)
{
	const config_setting_t *l = config_lookup(&r->cfg, name);
	int len;

	*n = 0;
	if (!l)
		return 0;
	if (!config_setting_is_list(l))
		return bad(r, l, err, "'%s' expects a list ( {...}, {...} )", name);
	len = config_setting_length(l);
	*arr = calloc(len ? (size_t)len : 1, size);
	if (!*arr)
		return mg_err_set(err, ENOMEM, "out of memory reading the rules");
	for (int i = 0; i < len; i++, (*n)++)
		if (one(r, config_setting_get_elem(l, (unsigned int)i), (char *)*arr + *n * size,
			err))
			return -EINVAL;
	return 0;
}

static int one_gate(const struct rules *r, const config_setting_t *g, void *out, struct mg_err *err)
{
	return parse_gate(r, g, out, err);
}

static int one_tolerance(const struct rules *r, const config_setting_t *g, void *out,
			 struct mg_err *err)
{
	return parse_tolerance(r, g, out, err);
}

static int parse_top(struct rules *r, struct mg_err *err)
{
	static const char *const known[] = {"version", "gates", "alpha", "tolerances"};
	const config_setting_t *root = config_root_setting(&r->cfg);
	double version;
	void *gates = NULL, *tols = NULL;
	int ret;

	if (only_known(r, root, known, ARRAY_SIZE(known), "the rules", err) ||
	    get_number(r, root, "version", 0, 0, 1e9, &version, err) ||
	    get_number(r, root, "alpha", 0.05, 1e-6, 0.5, &r->alpha, err))
		return -EINVAL;
	if (version != 1)
		return bad(r, config_lookup(&r->cfg, "version"), err,
			   "'version = 1;' expected (the rules format this memgate reads)");
	ret = parse_list(r, "gates", sizeof(struct rules_gate), &gates, &r->n_gates, one_gate, err);
	r->gates = gates;
	if (!ret)
		ret = parse_list(r, "tolerances", sizeof(struct tolerance_rule), &tols, &r->n_tols,
				 one_tolerance, err);
	r->tols = tols;
	return ret;
}

/*
 * The line of @text that holds an @include directive, 0 when none does: a rules file is one
 * file, shown whole by `memgate rules`, bounded in size, and read by nothing else (an
 * included FIFO would hang the run, an included file escape the size bound and the print).
 */
static int include_line(const char *text)
{
	int line = 1;

	for (const char *p = text; *p; line++) {
		p += strspn(p, " \t");
		if (!strncmp(p, "@include", 8))
			return line;
		p += strcspn(p, "\n");
		p += *p == '\n';
	}
	return 0;
}

int rules_parse(struct rules *r, const char *text, const char *name, struct mg_err *err)
{
	int ret;

	if (include_line(text))
		return mg_err_set(
		    err, EINVAL,
		    "%s:%d: @include is not taken: a rules file is one file (memgate rules "
		    "prints it whole); put the rules in it",
		    name, include_line(text));
	memset(r, 0, sizeof(*r));
	config_init(&r->cfg);
	snprintf(r->source, sizeof(r->source), "%s", name);
	r->text = strdup(text);
	if (!r->text) {
		config_destroy(&r->cfg);
		return mg_err_set(err, ENOMEM, "out of memory reading the rules");
	}
	if (config_read_string(&r->cfg, text) != CONFIG_TRUE) {
		ret = mg_err_set(err, EINVAL, "%s:%d: %s", r->source, config_error_line(&r->cfg),
				 config_error_text(&r->cfg));
		rules_release(r);
		return ret;
	}
	ret = parse_top(r, err);
	if (ret)
		rules_release(r);
	return ret;
}

int rules_load(struct rules *r, const char *path, struct mg_err *err)
{
	struct mg_err why;
	char *text;
	int ret;

	if (!path)
		return rules_parse(r, rules_embedded_text, "(embedded rules)", err);
	text = text_read_input(path, RULES_MAX_BYTES, NULL, &why);
	if (!text)
		return mg_err_set(err, why.code, "--rules %s", why.msg);
	ret = rules_parse(r, text, path, err);
	free(text);
	return ret;
}

void rules_release(struct rules *r)
{
	config_destroy(&r->cfg);
	free(r->gates);
	free(r->tols);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

static bool tol_matches(const struct tolerance_rule *t, const char *suite, const char *full_name,
			const struct metric_def *m)
{
	return text_glob(t->suite, suite) && text_glob(t->cases, full_name) &&
	       text_glob(t->metric, m->name) && text_glob(t->unit, m->unit);
}

struct tolerance rules_tolerance(const struct rules *r, const char *suite, const char *full_name,
				 const struct metric_def *m)
{
	/* Without a matching rule: 10%, gated; the embedded rules always have a default. */
	struct tolerance t = {
	    .ab = 0.10, .baseline = 0.25, .gate = true, .why = "no rule", .line = 0};

	for (size_t i = 0; i < r->n_tols; i++) {
		const struct tolerance_rule *tr = &r->tols[i];

		if (!tol_matches(tr, suite, full_name, m))
			continue;
		if (tr->ab >= 0)
			t.ab = tr->ab;
		if (tr->baseline >= 0)
			t.baseline = tr->baseline;
		if (tr->cut >= 0)
			t.cut = tr->cut;
		if (tr->gate >= 0)
			t.gate = tr->gate;
		t.why = tr->why;
		t.line = tr->line;
	}
	return t;
}

/* Is suite @name among the instances' suites? Rules of other suites are not this run's. */
static bool suite_planned(const struct case_inst *insts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (text_glob(name, insts[i].suite->name))
			return true;
	return false;
}

size_t rules_warn_unused(const struct rules *r, const struct case_inst *insts, size_t n, FILE *out)
{
	size_t warned = 0;

	for (size_t i = 0; i < r->n_gates; i++) {
		const struct rules_gate *g = &r->gates[i];

		if (!suite_planned(insts, n, g->suite) ||
		    (case_any_matches(insts, n, g->def.a.glob) &&
		     case_any_matches(insts, n, g->def.b.glob)))
			continue;
		fprintf(out, "memgate: warning: %s:%d: gate %s.%s matches no case of this run\n",
			r->source, g->line, g->suite, g->def.name);
		warned++;
	}
	for (size_t i = 0; i < r->n_tols; i++) {
		const struct tolerance_rule *t = &r->tols[i];

		if (!suite_planned(insts, n, t->suite) || case_any_matches(insts, n, t->cases))
			continue;
		fprintf(out,
			"memgate: warning: %s:%d: tolerance for case %s matches no case of "
			"this run\n",
			r->source, t->line, t->cases);
		warned++;
	}
	return warned;
}
