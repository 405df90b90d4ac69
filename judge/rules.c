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

/* The file being read: where its rules go, what it may hold, its name in messages. */
struct file_ctx {
	struct rules *r;
	const config_t *cfg;
	const char *name;
	const char *suite; /* a suite's own file: its rules are that suite's alone */
	bool user;	   /* --rules: over the embedded rules */
};

/* "FILE:LINE: message" for setting @s (line 0: the file alone). Returns -EINVAL. */
__attribute__((format(printf, 4, 5))) static int
bad(const struct file_ctx *f, const config_setting_t *s, struct mg_err *err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s && config_setting_source_line(s))
		mg_err_set(err, EINVAL, "%s:%u: %s", f->name, config_setting_source_line(s), msg);
	else
		mg_err_set(err, EINVAL, "%s: %s", f->name, msg);
	return -EINVAL;
}

/* Every member of group @g is one of @known; anything else is a typo worth an error. */
static int only_known(const struct file_ctx *f, const config_setting_t *g, const char *const *known,
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
		return bad(f, m, err, "unknown setting '%s' in %s (expected %s)", name ? name : "?",
			   what, list);
	}
	return 0;
}

/* A string member @name of @g: @def when absent; an error when it is not a string. */
static int get_string(const struct file_ctx *f, const config_setting_t *g, const char *name,
		      const char *def, const char **out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def ? def : ""; /* never NULL, even on the error path */
	if (!s)
		return def ? 0 : bad(f, g, err, "'%s' is missing", name);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad(f, s, err, "'%s' expects a string in double quotes", name);
	*out = config_setting_get_string(s);
	return 0;
}

/* A number member @name of @g within [@lo, @hi]; @def (may be < @lo: "not set") when absent. */
static int get_number(const struct file_ctx *f, const config_setting_t *g, const char *name,
		      double def, double lo, double hi, double *out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def;
	if (!s)
		return 0;
	if (!config_setting_is_number(s))
		return bad(f, s, err, "'%s' expects a number from %g to %g", name, lo, hi);
	*out = config_setting_type(s) == CONFIG_TYPE_FLOAT ? config_setting_get_float(s)
							   : (double)config_setting_get_int64(s);
	if (!(*out >= lo && *out <= hi))
		return bad(f, s, err, "'%s' expects a number from %g to %g, got %g", name, lo, hi,
			   *out);
	return 0;
}

/* A boolean member @name of @g as 1 or 0; @def when absent. */
static int get_bool(const struct file_ctx *f, const config_setting_t *g, const char *name, int def,
		    int *out, struct mg_err *err)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*out = def;
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return bad(f, s, err, "'%s' expects true or false", name);
	*out = config_setting_get_bool(s);
	return 0;
}

/* A rule's suite: in a suite's own file that suite, named or left out; else @def. */
static int get_suite(const struct file_ctx *f, const config_setting_t *g, const char *def,
		     const char **out, struct mg_err *err)
{
	if (get_string(f, g, "suite", f->suite ? f->suite : def, out, err))
		return -EINVAL;
	if (f->suite && strcmp(*out, f->suite))
		return bad(f, config_setting_get_member(g, "suite"), err,
			   "suite = \"%s\" in the %s suite's rules: a suite's file holds its own "
			   "rules alone",
			   *out, f->suite);
	return 0;
}

/* A gate side: { case = GLOB; metric = NAME; }. */
static int parse_side(const struct file_ctx *f, const config_setting_t *g, const char *name,
		      struct gate_side *side, struct mg_err *err)
{
	static const char *const known[] = {"case", "metric"};
	const config_setting_t *s = config_setting_get_member(g, name);

	if (!s || !config_setting_is_group(s))
		return bad(f, s ? s : g, err,
			   "'%s' expects a group { case = \"GLOB\"; metric = "
			   "\"NAME\"; }",
			   name);
	return only_known(f, s, known, ARRAY_SIZE(known), name, err) ||
	       get_string(f, s, "case", NULL, &side->glob, err) ||
	       get_string(f, s, "metric", NULL, &side->metric, err);
}

/* A gate's effect: { a = SIDE; b = SIDE; threshold = X; why = "..."; }, or none. */
static int parse_effect(const struct file_ctx *f, const config_setting_t *g, struct gate_effect *e,
			struct mg_err *err)
{
	static const char *const known[] = {"a", "b", "threshold", "why"};
	const config_setting_t *s = config_setting_get_member(g, "effect");

	if (!s)
		return 0;
	if (!config_setting_is_group(s))
		return bad(f, s, err,
			   "'effect' expects a group { a = SIDE; b = SIDE; threshold = X; why "
			   "= \"...\"; }");
	if (only_known(f, s, known, ARRAY_SIZE(known), "effect", err) ||
	    get_number(f, s, "threshold", -1, 0, 1e9, &e->threshold, err) ||
	    get_string(f, s, "why", NULL, &e->why, err) || parse_side(f, s, "a", &e->a, err) ||
	    parse_side(f, s, "b", &e->b, err))
		return -EINVAL;
	if (e->threshold <= 0)
		return bad(f, s, err, "an effect needs a threshold above 0 (a / b at least it)");
	return 0;
}

/* What a gate is judged by: its kind, threshold, sides and reason. */
static int parse_gate_def(const struct file_ctx *f, const config_setting_t *g, struct gate_def *d,
			  struct mg_err *err)
{
	const char *kind;
	int paired, k;

	if (get_string(f, g, "kind", NULL, &kind, err) ||
	    get_number(f, g, "threshold", -1, 0, 1e9, &d->threshold, err) ||
	    get_bool(f, g, "paired", 0, &paired, err) ||
	    get_string(f, g, "why", NULL, &d->why, err) || parse_side(f, g, "a", &d->a, err) ||
	    parse_side(f, g, "b", &d->b, err) || parse_effect(f, g, &d->effect, err))
		return -EINVAL;
	k = text_index(kind_names, ARRAY_SIZE(kind_names), kind);
	if (k < 0)
		return bad(f, config_setting_get_member(g, "kind"), err,
			   "gate kind '%s': expected ratio_at_most, not_slower, at_least or faster",
			   kind);
	if (d->threshold < 0)
		return bad(f, g, err, "gate '%s' has no threshold", d->name);
	d->kind = (enum gate_kind)k;
	d->paired = paired;
	return 0;
}

/* A gate into @out; *@off set when it turns the gate of its name off (--rules only). */
static int parse_gate(const struct file_ctx *f, const config_setting_t *g, struct rules_gate *out,
		      bool *off, struct mg_err *err)
{
	static const char *const known[] = {"suite",	 "name",   "kind", "a",	     "b",
					    "threshold", "paired", "why",  "effect", "off"};
	int is_off;

	if (!config_setting_is_group(g))
		return bad(f, g, err, "a gate is a group { suite = ...; name = ...; ... }");
	if (only_known(f, g, known, ARRAY_SIZE(known) - !f->user, "a gate", err) ||
	    get_suite(f, g, NULL, &out->suite, err) ||
	    get_string(f, g, "name", NULL, &out->def.name, err) ||
	    get_bool(f, g, "off", 0, &is_off, err))
		return -EINVAL;
	out->source = f->name;
	out->line = config_setting_source_line(g);
	out->user = f->user;
	*off = is_off;
	return is_off ? 0 : parse_gate_def(f, g, &out->def, err);
}

/* One more element at the end of *@arr of *@n: zeroed, or NULL when memory ran out. */
static void *append(void *arr_p, size_t *n, size_t size)
{
	void **arr = arr_p;
	char *grown = realloc(*arr, (*n + 1) * size);

	if (!grown)
		return NULL;
	*arr = grown;
	memset(grown + *n * size, 0, size);
	return grown + (*n)++ * size;
}

/*
 * Gate @g of setting @s into the rules: a --rules gate replaces the one of its suite and name,
 * or with @off removes it; the embedded files name each gate once.
 */
static int add_gate(const struct file_ctx *f, const config_setting_t *s, const struct rules_gate *g,
		    bool off, struct mg_err *err)
{
	struct rules *r = f->r;
	struct rules_gate *slot;
	size_t i = 0;

	while (i < r->n_gates &&
	       (strcmp(r->gates[i].suite, g->suite) || strcmp(r->gates[i].def.name, g->def.name)))
		i++;
	if (i < r->n_gates && !f->user)
		return bad(f, s, err, "gate %s.%s is given twice (%s:%d first)", g->suite,
			   g->def.name, r->gates[i].source, r->gates[i].line);
	if (off && i == r->n_gates)
		return bad(f, s, err, "no gate %s.%s to turn off (`memgate rules` shows them)",
			   g->suite, g->def.name);
	if (off) {
		memmove(&r->gates[i], &r->gates[i + 1], (r->n_gates - i - 1) * sizeof(*r->gates));
		r->n_gates--;
		return 0;
	}
	slot = i < r->n_gates ? &r->gates[i] : append(&r->gates, &r->n_gates, sizeof(*slot));
	if (!slot)
		return mg_err_set(err, ENOMEM, "out of memory reading the rules");
	*slot = *g;
	return 0;
}

static int parse_tolerance(const struct file_ctx *f, const config_setting_t *g,
			   struct tolerance_rule *out, struct mg_err *err)
{
	static const char *const known[] = {"suite",	"case", "metric", "unit", "ab",
					    "baseline", "cut",	"gate",	  "why"};

	if (!config_setting_is_group(g))
		return bad(f, g, err, "a tolerance is a group { unit = ...; ab = ...; ... }");
	if (only_known(f, g, known, ARRAY_SIZE(known), "a tolerance", err) ||
	    get_suite(f, g, "*", &out->suite, err) ||
	    get_string(f, g, "case", "*", &out->cases, err) ||
	    get_string(f, g, "metric", "*", &out->metric, err) ||
	    get_string(f, g, "unit", "*", &out->unit, err) ||
	    get_number(f, g, "ab", -1, 0, 10, &out->ab, err) ||
	    get_number(f, g, "baseline", -1, 0, 10, &out->baseline, err) ||
	    get_number(f, g, "cut", -1, 1, 100, &out->cut, err) ||
	    get_bool(f, g, "gate", -1, &out->gate, err) ||
	    get_string(f, g, "why", NULL, &out->why, err))
		return -EINVAL;
	if (out->ab < 0 && out->baseline < 0 && out->cut < 0 && out->gate < 0)
		return bad(f, g, err, "a tolerance sets nothing: give ab, baseline, cut or gate");
	out->source = f->name;
	out->line = config_setting_source_line(g);
	out->user = f->user;
	return 0;
}

/* The list @name of the file's top level in *@l (NULL when it has none), its length in *@len. */
static int top_list(const struct file_ctx *f, const char *name, const config_setting_t **l,
		    int *len, struct mg_err *err)
{
	*l = config_lookup(f->cfg, name);
	*len = *l ? config_setting_length(*l) : 0;
	if (*l && !config_setting_is_list(*l))
		return bad(f, *l, err, "'%s' expects a list ( {...}, {...} )", name);
	return 0;
}

static int parse_gates(const struct file_ctx *f, struct mg_err *err)
{
	const config_setting_t *l;
	int len, ret = top_list(f, "gates", &l, &len, err);

	for (int i = 0; !ret && i < len; i++) {
		const config_setting_t *s = config_setting_get_elem(l, (unsigned int)i);
		struct rules_gate g = {.suite = "", .def.name = ""}; /* set by parse_gate() */
		bool off = false;

		ret = parse_gate(f, s, &g, &off, err);
		if (!ret)
			ret = add_gate(f, s, &g, off, err);
	}
	return ret;
}

static int parse_tolerances(const struct file_ctx *f, struct mg_err *err)
{
	const config_setting_t *l;
	int len, ret = top_list(f, "tolerances", &l, &len, err);

	for (int i = 0; !ret && i < len; i++) {
		struct tolerance_rule t = {0}, *slot;

		ret = parse_tolerance(f, config_setting_get_elem(l, (unsigned int)i), &t, err);
		if (ret)
			break;
		slot = append(&f->r->tols, &f->r->n_tols, sizeof(*slot));
		if (!slot)
			return mg_err_set(err, ENOMEM, "out of memory reading the rules");
		*slot = t;
	}
	return ret;
}

static int parse_top(const struct file_ctx *f, struct mg_err *err)
{
	/* A suite's file sets no alpha: that is the whole run's. */
	static const char *const known[] = {"version", "gates", "tolerances", "alpha"};
	const config_setting_t *root = config_root_setting(f->cfg);
	double version;
	int ret;

	if (only_known(f, root, known, ARRAY_SIZE(known) - !!f->suite,
		       f->suite ? "a suite's rules" : "the rules", err) ||
	    get_number(f, root, "version", 0, 0, 1e9, &version, err) ||
	    get_number(f, root, "alpha", f->r->alpha, 1e-6, 0.5, &f->r->alpha, err))
		return -EINVAL;
	if (version != 1)
		return bad(f, config_lookup(f->cfg, "version"), err,
			   "'version = 1;' expected (the rules format this memgate reads)");
	ret = parse_gates(f, err);
	return ret ? ret : parse_tolerances(f, err);
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

/* @text after what `memgate rules` prints already, under a line naming @name. */
static int append_text(struct rules *r, const char *name, const char *text)
{
	size_t had = r->text ? strlen(r->text) : 0, len = strlen(text);
	char *grown = realloc(r->text, had + strlen(name) + len + 16);

	if (!grown)
		return -ENOMEM;
	r->text = grown;
	sprintf(grown + had, "# ==== %s\n%s%s", name, text,
		len && text[len - 1] != '\n' ? "\n" : "");
	return 0;
}

/* @file's rules after those read so far; @user: it is --rules, over the embedded ones. */
static int read_file(struct rules *r, const struct rules_file *file, bool user, struct mg_err *err)
{
	struct file_ctx f = {.r = r, .suite = file->suite, .user = user};
	config_t *cfg = &r->cfg[r->n_files];

	if (include_line(file->text))
		return mg_err_set(
		    err, EINVAL,
		    "%s:%d: @include is not taken: a rules file is one file (memgate rules "
		    "prints it whole); put the rules in it",
		    file->name, include_line(file->text));
	if (r->n_files == RULES_MAX_FILES)
		return mg_err_set(err, EINVAL, "%s: more than %d files of rules", file->name,
				  RULES_MAX_FILES);
	config_init(cfg);
	f.cfg = cfg;
	f.name = r->names[r->n_files++] = strdup(file->name);
	if (!f.name || append_text(r, file->name, file->text))
		return mg_err_set(err, ENOMEM, "out of memory reading the rules");
	if (config_read_string(cfg, file->text) != CONFIG_TRUE)
		return mg_err_set(err, EINVAL, "%s:%d: %s", f.name, config_error_line(cfg),
				  config_error_text(cfg));
	return parse_top(&f, err);
}

static void rules_init(struct rules *r)
{
	memset(r, 0, sizeof(*r));
	r->alpha = 0.05;
}

int rules_parse(struct rules *r, const char *text, const char *name, struct mg_err *err)
{
	struct rules_file file = {name, text, NULL};
	int ret;

	rules_init(r);
	snprintf(r->source, sizeof(r->source), "%s", name);
	ret = read_file(r, &file, false, err);
	if (ret)
		rules_release(r);
	return ret;
}

/* --rules @path over the rules read so far. */
static int read_user(struct rules *r, const char *path, struct mg_err *err)
{
	struct rules_file file = {path, NULL, NULL};
	struct mg_err why;
	char *text = text_read_input(path, RULES_MAX_BYTES, NULL, &why);
	int ret;

	if (!text)
		return mg_err_set(err, why.code, "--rules %s", why.msg);
	file.text = text;
	ret = read_file(r, &file, true, err);
	free(text);
	return ret;
}

int rules_load(struct rules *r, const struct rules_file *suites, size_t n, const char *path,
	       struct mg_err *err)
{
	int ret;

	rules_init(r);
	snprintf(r->source, sizeof(r->source), "the embedded rules%s%.500s",
		 path ? " and --rules " : "", path ? path : "");
	ret = read_file(r, &rules_defaults, false, err);
	for (size_t i = 0; !ret && i < n; i++)
		ret = read_file(r, &suites[i], false, err);
	if (!ret && path)
		ret = read_user(r, path, err);
	if (ret)
		rules_release(r);
	return ret;
}

void rules_release(struct rules *r)
{
	for (size_t i = 0; i < r->n_files; i++) {
		config_destroy(&r->cfg[i]);
		free(r->names[i]);
	}
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
	    .ab = 0.10, .baseline = 0.25, .gate = true, .why = "no rule", .source = "", .line = 0};

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
		t.source = tr->source;
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

		if (!g->user || !suite_planned(insts, n, g->suite) ||
		    (case_any_matches(insts, n, g->def.a.glob) &&
		     case_any_matches(insts, n, g->def.b.glob)))
			continue;
		fprintf(out, "memgate: warning: %s:%d: gate %s.%s matches no case of this run\n",
			g->source, g->line, g->suite, g->def.name);
		warned++;
	}
	for (size_t i = 0; i < r->n_tols; i++) {
		const struct tolerance_rule *t = &r->tols[i];

		if (!t->user || !suite_planned(insts, n, t->suite) ||
		    case_any_matches(insts, n, t->cases))
			continue;
		fprintf(out,
			"memgate: warning: %s:%d: tolerance for case %s matches no case of "
			"this run\n",
			t->source, t->line, t->cases);
		warned++;
	}
	return warned;
}

void rules_tolerance_from(const struct tolerance *t, char *buf, size_t len)
{
	if (t->line > 0)
		snprintf(buf, len, "%s:%d: %s", t->source, t->line, t->why);
	else
		snprintf(buf, len, "%s", t->why);
}
