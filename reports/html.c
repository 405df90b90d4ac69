/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * html.c - a static page a person would rather look at than read: the verdicts, a chart of
 * every perf case's samples, the gates' ratios against their thresholds, and with history
 * the trend of each metric. Jenkins serves reports under a Content-Security-Policy that
 * blocks scripts and inline styles, so the page has neither: the charts are SVG files
 * (presentation attributes only) shown with <img>, the styles a CSS file beside the page.
 * libxml2 builds both trees, so every name and message is escaped by construction.
 */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/uri.h>

#include "util/file.h"
#include "reports/svg.h"
#include "util/stats.h"
#include "util/util.h"

/* ---- files beside the page -------------------------------------------------------------- */

struct page {
	char dir[4096];	   /* where the page is */
	char files[4096];  /* its files' folder, relative to the page: "NAME-files" */
	char href[4096];   /* the same as a relative URL: "my%20run-files" for "my run-files" */
	unsigned int next; /* charts written so far */
	struct mg_err *err;
	int failed;
};

static int write_svg(struct page *pg, xmlDocPtr doc, const char *name)
{
	char path[8400];
	struct file_out rf;
	xmlChar *mem = NULL;
	int len = 0, ret;

	snprintf(path, sizeof(path), "%s/%s/%s", pg->dir, pg->files, name);
	xmlDocDumpFormatMemoryEnc(doc, &mem, &len, "UTF-8", 1);
	if (!mem)
		return mg_err_set(pg->err, ENOMEM, "cannot serialise %s", path);
	ret = file_out_create(&rf, path, pg->err);
	if (!ret) {
		rf.failed = fwrite(mem, 1, (size_t)len, rf.f) != (size_t)len;
		ret = file_out_commit(&rf, pg->err);
	}
	xmlFree(mem);
	return ret;
}

/* Write @doc as the next chart and show it in @parent as a figure with @caption. */
static void figure(struct page *pg, xmlNodePtr parent, xmlDocPtr doc, const char *alt,
		   const char *caption)
{
	char name[32];
	xmlNodePtr fig, img;

	snprintf(name, sizeof(name), "chart-%03u.svg", ++pg->next);
	if (!pg->failed && write_svg(pg, doc, name))
		pg->failed = 1;
	xmlFreeDoc(doc);
	fig = xml_child(parent, "div", NULL);
	xml_attr(fig, "class", "figure");
	img = xml_child(fig, "img", NULL);
	xml_attr(img, "src", "%s/%s", pg->href, name);
	xml_attr(img, "alt", "%s", alt);
	xml_attr(xml_child(fig, "p", caption), "class", "caption");
}

/* ---- a perf case's samples --------------------------------------------------------------- */

/* The arm of a metric: what comes before its first dot ("impl" of "impl.update_max"). */
static size_t arm_len(const char *metric)
{
	const char *dot = strchr(metric, '.');

	return dot ? (size_t)(dot - metric) : strlen(metric);
}

static const char *arm_color(const struct case_result *r, const char *metric)
{
	size_t len = arm_len(metric), k = 0;

	for (size_t m = 0; m < r->inst->def->n_metrics; m++) {
		const char *other = r->metrics[m].def->name;

		if (arm_len(other) == len && !strncmp(other, metric, len))
			break;
		/* A new arm: the first metric of its name. */
		bool seen = false;

		for (size_t p = 0; p < m && !seen; p++)
			seen = arm_len(r->metrics[p].def->name) == arm_len(other) &&
			       !strncmp(r->metrics[p].def->name, other, arm_len(other));
		k += !seen;
	}
	return svg_palette[k % ARRAY_SIZE(svg_palette)];
}

/* One unit's rows of @r from @y: samples as dots (hollow: stolen time), the interval as a
 * band, the median as a bar. Returns the y below the axis. */
static double unit_rows(xmlNodePtr svg, const struct case_result *r, const char *unit, double y)
{
	double lo = INFINITY, hi = -INFINITY, y0 = y;
	struct svg_scale s;
	char buf[96];

	for (size_t m = 0; m < r->inst->def->n_metrics; m++) {
		const struct metric_result *mr = &r->metrics[m];

		if (!mr->n || strcmp(mr->def->unit, unit))
			continue;
		for (size_t i = 0; i < mr->n; i++) {
			lo = mr->v[i] < lo ? mr->v[i] : lo;
			hi = mr->v[i] > hi ? mr->v[i] : hi;
		}
	}
	s = svg_scale_of(lo, hi);
	for (size_t m = 0; m < r->inst->def->n_metrics; m++) {
		const struct metric_result *mr = &r->metrics[m];
		const char *color = arm_color(r, mr->def->name);
		double mid = y + ROW_H / 2.0;

		if (!mr->n || strcmp(mr->def->unit, unit))
			continue;
		svg_label(svg, mid + 4, COLOR_INK, mr->def->name);
		svg_rect(svg, svg_x(&s, mr->sum.ci_lo), y + 3,
			 svg_x(&s, mr->sum.ci_hi) - svg_x(&s, mr->sum.ci_lo), ROW_H - 6, color,
			 0.18);
		for (size_t i = 0; i < mr->n; i++)
			svg_dot(svg, svg_x(&s, mr->v[i]), mid, 2.5, color,
				mr->stolen && mr->stolen[i]);
		svg_line(svg, svg_x(&s, mr->sum.median), y + 2, svg_x(&s, mr->sum.median),
			 y + ROW_H - 2, color, 2.5, false);
		snprintf(buf, sizeof(buf), "%.4g %s", mr->sum.median, unit);
		svg_text(svg, PLOT_X + PLOT_W + 8, mid + 4, "start", COLOR_INK, buf);
		y += ROW_H;
	}
	svg_axis(svg, &s, y0, y, unit);
	return y + AXIS_H + 8;
}

static void case_chart(struct page *pg, xmlNodePtr parent, const struct case_result *r)
{
	const char *units[16];
	size_t n_units = 0, rows = 0;
	double y = 8;
	xmlNodePtr svg;
	xmlDocPtr doc;
	char title[320];

	for (size_t m = 0; m < r->inst->def->n_metrics; m++) {
		const struct metric_result *mr = &r->metrics[m];
		size_t u = 0;

		if (!mr->n)
			continue;
		rows++;
		while (u < n_units && strcmp(units[u], mr->def->unit))
			u++;
		if (u == n_units && n_units < ARRAY_SIZE(units))
			units[n_units++] = mr->def->unit;
	}
	if (!rows)
		return;
	snprintf(title, sizeof(title), "%s.%s.%s: samples per metric", r->inst->suite->name,
		 case_group(r->inst->def), r->inst->name);
	doc = svg_new(16 + (double)rows * ROW_H + (double)n_units * (AXIS_H + 8), title, &svg);
	for (size_t u = 0; u < n_units; u++)
		y = unit_rows(svg, r, units[u], y);
	figure(
	    pg, parent, doc, title,
	    "Each dot a sample (hollow: taken while the VM lost its CPU), the bar the median, the "
	    "band its bootstrap 95% interval; a colour per arm (the implementation under test "
	    "and each reference).");
}

/* ---- gates and verdicts: a ratio and its interval against the threshold ------------------ */

static const char *outcome_color(enum case_outcome o)
{
	return o == OUTCOME_PASS			 ? COLOR_PASS
	       : o == OUTCOME_FAIL || o == OUTCOME_ERROR ? COLOR_FAIL
							 : COLOR_OTHER;
}

/* The judged results of @suite (gates, or A/B and baseline verdicts) in one chart. */
static void verdict_chart(struct page *pg, xmlNodePtr parent, const struct report_run *run,
			  const char *suite)
{
	double lo = INFINITY, hi = -INFINITY, y = 8;
	size_t rows = 0;
	struct svg_scale s;
	xmlNodePtr svg;
	xmlDocPtr doc;
	char title[160], buf[96];

	for (size_t i = 0; i < run->n; i++) {
		const struct judged_figures *v = &run->results[i].judged;

		if (strcmp(run->results[i].inst->suite->name, suite) || !v->judged ||
		    !isfinite(v->value))
			continue;
		rows++;
		lo = fmin(lo, fmin(isfinite(v->lo) ? v->lo : v->value, v->bound));
		hi = fmax(hi, fmax(isfinite(v->hi) ? v->hi : v->value, v->bound));
	}
	if (!rows)
		return;
	s = svg_scale_of(lo > 0 ? lo / 1.1 : lo, hi * 1.1);
	snprintf(title, sizeof(title), "%s: ratios against their bounds", suite);
	doc = svg_new(16 + (double)rows * ROW_H + AXIS_H + 8, title, &svg);
	for (size_t i = 0; i < run->n; i++) {
		const struct case_result *r = &run->results[i];
		const struct judged_figures *v = &r->judged;
		const char *color = outcome_color(r->outcome);
		double mid = y + ROW_H / 2.0;

		if (strcmp(r->inst->suite->name, suite) || !v->judged || !isfinite(v->value))
			continue;
		svg_label(svg, mid + 4, color, r->inst->name);
		if (isfinite(v->lo) && isfinite(v->hi))
			svg_line(svg, svg_x(&s, v->lo), mid, svg_x(&s, v->hi), mid, color, 3,
				 false);
		svg_line(svg, svg_x(&s, v->bound), y + 1, svg_x(&s, v->bound), y + ROW_H - 1,
			 COLOR_INK, 1.2, true);
		svg_dot(svg, svg_x(&s, v->value), mid, 4, color, false);
		snprintf(buf, sizeof(buf), "%.3g (bound %.3g)", v->value, v->bound);
		svg_text(svg, PLOT_X + PLOT_W + 8, mid + 4, "start", color, buf);
		y += ROW_H;
	}
	svg_axis(svg, &s, 8, y, "ratio");
	figure(pg, parent, doc, title,
	       "Each row a gate or a comparison: the dot is the ratio (for comparisons, head "
	       "against base in the worse direction), the bar its 95% interval, the dashed line "
	       "the bound it is judged against; red when it failed, green when it passed, grey "
	       "when skipped.");
}

/* ---- trends over the history ------------------------------------------------------------- */

/* For each metric of @r that the history has: its median per run, oldest first, then this
 * run's, each row scaled to its own range. */
static void trend_chart(struct page *pg, xmlNodePtr parent, const struct report_run *run,
			const struct case_result *r)
{
	char full[256], title[320], buf[96];
	double y = 8;
	size_t rows = 0;
	xmlNodePtr svg;
	xmlDocPtr doc;

	snprintf(full, sizeof(full), "%s.%s.%s", r->inst->suite->name, case_group(r->inst->def),
		 r->inst->name);
	for (size_t m = 0; m < r->inst->def->n_metrics; m++)
		for (size_t k = 0; k < run->n_history && r->metrics[m].n; k++) {
			const struct hist_case *hc = hist_case(&run->history[k], full);

			if (hc && hist_metric(hc, r->metrics[m].def->name)) {
				rows++;
				break;
			}
		}
	if (!rows)
		return;
	snprintf(title, sizeof(title), "%s: medians over the history, this run last", full);
	doc = svg_new(16 + (double)rows * ROW_H, title, &svg);
	for (size_t m = 0; m < r->inst->def->n_metrics; m++) {
		const struct metric_result *mr = &r->metrics[m];
		double v[64], lo = INFINITY, hi = -INFINITY, px = 0, py = 0, mid = y + ROW_H / 2.0;
		size_t n = 0;

		if (!mr->n)
			continue;
		/* The history is newest first. */
		for (size_t k = run->n_history; k-- > 0 && n < ARRAY_SIZE(v) - 1;) {
			const struct hist_case *hc = hist_case(&run->history[k], full);
			const struct hist_metric *hm = hc ? hist_metric(hc, mr->def->name) : NULL;

			if (hm && hm->n)
				v[n++] = stats_median(hm->v, hm->n);
		}
		if (!n)
			continue;
		v[n++] = mr->sum.median;
		for (size_t i = 0; i < n; i++) {
			lo = fmin(lo, v[i]);
			hi = fmax(hi, v[i]);
		}
		svg_label(svg, mid + 4, COLOR_INK, mr->def->name);
		for (size_t i = 0; i < n; i++) {
			double x = PLOT_X + (n > 1 ? (double)i * PLOT_W / (double)(n - 1) : 0);
			double yy =
			    y + ROW_H - 3 - (hi > lo ? (v[i] - lo) / (hi - lo) : 0.5) * (ROW_H - 6);

			if (i)
				svg_line(svg, px, py, x, yy, svg_palette[0], 1.5, false);
			px = x;
			py = yy;
		}
		svg_dot(svg, px, py, 3, svg_palette[0], false);
		snprintf(buf, sizeof(buf), "%.4g -> %.4g %s", v[0], v[n - 1], mr->def->unit);
		svg_text(svg, PLOT_X + PLOT_W + 8, mid + 4, "start", COLOR_INK, buf);
		y += ROW_H;
	}
	figure(pg, parent, doc, title,
	       "Each row one metric's median in each run of the history (oldest left), this run "
	       "the dot at the right; each row scaled to its own range.");
}

/* ---- the page ------------------------------------------------------------------------------ */

static const char css[] =
    "body { font-family: sans-serif; margin: 1.5em 2em; color: #263238; max-width: 72em; }\n"
    "h1 { font-size: 1.5em; margin-bottom: 0.2em; }\n"
    "h2 { font-size: 1.2em; border-bottom: 1px solid #cfd8dc; padding-bottom: 0.2em; "
    "margin-top: 2em; }\n"
    "h3 { font-size: 1em; margin: 1.2em 0 0.3em; font-family: monospace; }\n"
    "table { border-collapse: collapse; margin: 0.5em 0; }\n"
    "th, td { text-align: left; padding: 0.15em 0.8em 0.15em 0; vertical-align: top; }\n"
    "td.name { font-family: monospace; }\n"
    "td.time { white-space: nowrap; }\n"
    "td.msg { font-size: 0.9em; max-width: 50em; }\n"
    ".outcome { font-weight: bold; }\n"
    ".PASS { color: #2e7d32; }\n"
    ".FAIL, .ERROR { color: #c62828; }\n"
    ".SKIP { color: #757575; }\n"
    "p.verdict { font-size: 1.1em; font-weight: bold; }\n"
    "div.figure { margin: 0.8em 0 1.5em; }\n"
    "div.figure img { max-width: 100%; border: 1px solid #eceff1; }\n"
    "p.caption { font-size: 0.85em; color: #546e7a; margin-top: 0.2em; }\n"
    "p.nav a { margin-right: 1em; }\n";

static xmlNodePtr link_to(xmlNodePtr parent, const char *href, const char *text)
{
	xmlNodePtr a = xml_child(parent, "a", text);

	xml_attr(a, "href", "%s", href);
	return a;
}

static void facts(xmlNodePtr body, const struct report_run *run)
{
	const struct {
		const char *k, *v;
	} rows[] = {
	    {"memgate", run->version},
	    {"commit", run->commit ? run->commit : "unknown"},
	    {"label", run->label && *run->label ? run->label : "-"},
	    {"host", run->hostname},
	    {"CPU", run->hw->cpu_model},
	    {"kernel", run->hw->os_release},
	    {"glibc", run->hw->glibc},
	    {"QEMU", run->qemu && *run->qemu ? run->qemu : "-"},
	    {"host class", run->hw->fingerprint_hash},
	    {"started (UTC)", run->timestamp},
	};
	xmlNodePtr t = xml_child(body, "table", NULL);

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		xmlNodePtr tr = xml_child(t, "tr", NULL);

		xml_child(tr, "th", rows[i].k);
		xml_child(tr, "td", rows[i].v);
	}
}

static void counts(const struct report_run *run, const char *suite, size_t c[4])
{
	memset(c, 0, 4 * sizeof(*c));
	for (size_t i = 0; i < run->n; i++)
		if (!suite || !strcmp(run->results[i].inst->suite->name, suite))
			c[run->results[i].outcome]++;
}

static void case_row(xmlNodePtr table, const struct case_result *r, const char *anchor)
{
	xmlNodePtr tr = xml_child(table, "tr", NULL), td;
	char buf[64];

	td = xml_child(tr, "td", case_result_label(r));
	xml_attr(td, "class", "outcome %s", case_result_label(r));
	td = xml_child(tr, "td", NULL);
	xml_attr(td, "class", "name");
	if (anchor)
		link_to(td, anchor, r->inst->name);
	else
		xmlNodeAddContent(td, BAD_CAST r->inst->name);
	snprintf(buf, sizeof(buf), "%.3f s", r->time_s);
	xml_attr(xml_child(tr, "td", buf), "class", "time");
	td = xml_child(tr, "td", r->message ? r->message : "");
	xml_attr(td, "class", "msg");
}

/* Does @r get a chart of its samples: a perf case, or a verdict that failed with the rounds
 * of both sides, with samples to draw? The table links it, the section draws it. */
static bool charted(const struct case_result *r)
{
	bool any = false;

	if (!r->metrics || (r->inst->def->kind != CASE_PERF &&
			    (r->outcome == OUTCOME_PASS || r->outcome == OUTCOME_SKIP)))
		return false;
	for (size_t m = 0; m < r->inst->def->n_metrics && !any; m++)
		any = r->metrics[m].n > 0;
	return any;
}

static void suite_section(struct page *pg, xmlNodePtr body, const struct report_run *run,
			  const char *suite)
{
	xmlNodePtr sec = xml_child(body, "div", NULL), table;
	size_t c[4];
	char buf[320], anchor[32];

	xml_attr(sec, "id", "suite-%s", suite);
	xml_child(sec, "h2", suite);
	counts(run, suite, c);
	snprintf(buf, sizeof(buf), "%zu passed, %zu failed, %zu errors, %zu skipped",
		 c[OUTCOME_PASS], c[OUTCOME_FAIL], c[OUTCOME_ERROR], c[OUTCOME_SKIP]);
	xml_child(sec, "p", buf);
	verdict_chart(pg, sec, run, suite);
	table = xml_child(sec, "table", NULL);
	for (size_t i = 0; i < run->n; i++) {
		const struct case_result *r = &run->results[i];
		bool has_chart = charted(r);

		if (strcmp(r->inst->suite->name, suite))
			continue;
		snprintf(anchor, sizeof(anchor), "#case-%zu", i);
		case_row(table, r, has_chart ? anchor : NULL);
	}
	for (size_t i = 0; i < run->n; i++) {
		const struct case_result *r = &run->results[i];
		xmlNodePtr h;

		if (strcmp(r->inst->suite->name, suite) || !charted(r))
			continue;
		snprintf(buf, sizeof(buf), "%s.%s", case_group(r->inst->def), r->inst->name);
		h = xml_child(sec, "h3", buf);
		xml_attr(h, "id", "case-%zu", i);
		case_chart(pg, sec, r);
		if (run->n_history)
			trend_chart(pg, sec, run, r);
	}
}

/*
 * NAME-files/ beside the page, made if missing: a folder of its own, never a link (the charts
 * would be written wherever it points) nor a file (the run would fail at its end).
 */
static int files_dir(const char *full, struct mg_err *err)
{
	struct stat st;
	int ret = util_make_dir(full, 0755, &st);

	if (ret && ret != -ENOTDIR)
		return mg_err_set(err, -ret, "--html: cannot make %s: %s", full, strerror(-ret));
	if (ret)
		return mg_err_set(err, ENOTDIR,
				  "--html: %s is %s, not the folder of the page's charts", full,
				  S_ISLNK(st.st_mode) ? "a link" : "not a folder");
	return 0;
}

static int page_dirs(struct page *pg, const char *path);

int report_html_check(const char *path, struct mg_err *err)
{
	struct page pg = {.err = err};
	int ret = file_path_check(path, "--html", err);

	return ret ? ret : page_dirs(&pg, path);
}

/* The page's folder and its files' folder ("report.html" -> "report-files"), made. */
static int page_dirs(struct page *pg, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t stem = strcspn(base, ".");
	char full[8400];
	xmlChar *href;

	snprintf(pg->dir, sizeof(pg->dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	if (slash == path)
		snprintf(pg->dir, sizeof(pg->dir), "/");
	snprintf(pg->files, sizeof(pg->files), "%.*s-files", (int)(stem ? stem : strlen(base)),
		 base);
	snprintf(full, sizeof(full), "%s/%s", pg->dir, pg->files);
	/* A name is no URL: a space, '#', '?' or '%' in it would break the page's links. */
	href = xmlURIEscapeStr(BAD_CAST pg->files, BAD_CAST "");
	if (!href)
		return mg_err_set(pg->err, ENOMEM, "--html: out of memory");
	snprintf(pg->href, sizeof(pg->href), "%s", (const char *)href);
	xmlFree(href);
	return files_dir(full, pg->err);
}

/* The suites of @run's results in the order they first appear, at most @max; how many. */
static size_t suites_of(const struct report_run *run, const char **suites, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < run->n; i++) {
		const char *s = run->results[i].inst->suite->name;
		size_t k = 0;

		while (k < n && strcmp(suites[k], s))
			k++;
		if (k == n && n < max)
			suites[n++] = s;
	}
	return n;
}

/* The page's head: its title says what failed, its stylesheet is in @pg's files folder. */
static void page_head(const struct page *pg, xmlNodePtr html, const struct report_run *run,
		      const size_t c[4])
{
	xmlNodePtr head = xml_child(html, "head", NULL), n;
	char buf[512];

	n = xml_child(head, "meta", NULL);
	xml_attr(n, "charset", "utf-8");
	snprintf(buf, sizeof(buf), "memgate on %s: %zu failed, %zu errors", run->hostname,
		 c[OUTCOME_FAIL], c[OUTCOME_ERROR]);
	xml_child(head, "title", buf);
	n = xml_child(head, "link", NULL);
	xml_attr(n, "rel", "stylesheet");
	xml_attr(n, "href", "%s/memgate.css", pg->href);
}

/* The top of the body: the counts, the host, a link a suite, the failures and errors. */
static void page_top(xmlNodePtr body, const struct report_run *run, const size_t c[4],
		     const char *const *suites, size_t n_suites)
{
	xmlNodePtr n, nav;
	char buf[512];

	xml_child(body, "h1", "memgate");
	snprintf(buf, sizeof(buf), "%zu cases: %zu passed, %zu failed, %zu errors, %zu skipped",
		 run->n, c[OUTCOME_PASS], c[OUTCOME_FAIL], c[OUTCOME_ERROR], c[OUTCOME_SKIP]);
	n = xml_child(body, "p", buf);
	xml_attr(n, "class", "verdict %s", c[OUTCOME_FAIL] || c[OUTCOME_ERROR] ? "FAIL" : "PASS");
	facts(body, run);
	nav = xml_child(body, "p", NULL);
	xml_attr(nav, "class", "nav");
	for (size_t s = 0; s < n_suites; s++) {
		snprintf(buf, sizeof(buf), "#suite-%s", suites[s]);
		link_to(nav, buf, suites[s]);
	}
	if (c[OUTCOME_FAIL] || c[OUTCOME_ERROR]) {
		xmlNodePtr sec = xml_child(body, "div", NULL), table;

		xml_child(sec, "h2", "Failures and errors");
		table = xml_child(sec, "table", NULL);
		for (size_t i = 0; i < run->n; i++)
			if (run->results[i].outcome == OUTCOME_FAIL ||
			    run->results[i].outcome == OUTCOME_ERROR)
				case_row(table, &run->results[i], NULL);
	}
}

/* The stylesheet, then the page @doc at @path: a page never names files that are not there. */
static int page_files(const struct page *pg, xmlDocPtr doc, const char *path, struct mg_err *err)
{
	char css_path[8400];
	struct file_out rf;
	xmlChar *mem = NULL;
	int len = 0, ret;

	snprintf(css_path, sizeof(css_path), "%s/%s/memgate.css", pg->dir, pg->files);
	ret = file_out_create(&rf, css_path, err);
	if (!ret) {
		rf.failed = fputs(css, rf.f) == EOF;
		ret = file_out_commit(&rf, err);
	}
	if (ret)
		return ret;
	htmlDocDumpMemoryFormat(doc, &mem, &len, 1);
	ret = mem ? file_out_open(&rf, path, err)
		  : mg_err_set(err, ENOMEM, "cannot serialise %s", path);
	if (!ret) {
		rf.failed = fwrite(mem, 1, (size_t)len, rf.f) != (size_t)len;
		ret = file_out_commit(&rf, err);
	}
	xmlFree(mem);
	return ret;
}

int report_html_write(const struct report_run *run, const char *path, struct mg_err *err)
{
	struct page pg = {.err = err};
	const char *suites[64];
	size_t n_suites, c[4];
	xmlDocPtr doc;
	xmlNodePtr html, body;
	int ret;

	if ((ret = page_dirs(&pg, path)))
		return ret;
	n_suites = suites_of(run, suites, ARRAY_SIZE(suites));
	doc = htmlNewDocNoDtD(NULL, NULL);
	xmlCreateIntSubset(doc, BAD_CAST "html", NULL, NULL);
	html = xmlNewNode(NULL, BAD_CAST "html");
	xmlDocSetRootElement(doc, html);
	xml_attr(html, "lang", "en");
	counts(run, NULL, c);
	page_head(&pg, html, run, c);
	body = xml_child(html, "body", NULL);
	page_top(body, run, c, suites, n_suites);
	for (size_t s = 0; s < n_suites; s++)
		suite_section(&pg, body, run, suites[s]);
	ret = pg.failed ? -EIO : page_files(&pg, doc, path, err);
	xmlFreeDoc(doc);
	return ret;
}
