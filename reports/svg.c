/* SPDX-License-Identifier: GPL-2.0-or-later */
/* svg.c - the charts' drawing primitives and scales (see svg.h). */
#include "reports/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"

#define SVG_NS "http://www.w3.org/2000/svg"

const char *const svg_palette[8] = {"#1565c0", "#6d4c41", "#00838f", "#6a1b9a",
				    "#ef6c00", "#546e7a", "#ad1457", "#558b2f"};

xmlNodePtr xml_child(xmlNodePtr parent, const char *name, const char *text)
{
	char *clean = text ? text_xml_clean(text, strlen(text)) : NULL;
	xmlNodePtr n = xmlNewTextChild(parent, NULL, BAD_CAST name, BAD_CAST clean);

	free(clean);
	return n;
}

void xml_attr(xmlNodePtr n, const char *name, const char *fmt, ...)
{
	char buf[1024], *clean;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clean = text_xml_clean(buf, strlen(buf));
	xmlNewProp(n, BAD_CAST name, BAD_CAST(clean ? clean : ""));
	free(clean);
}

xmlNodePtr svg_text(xmlNodePtr svg, double x, double y, const char *anchor, const char *fill,
		    const char *text)
{
	xmlNodePtr t = xml_child(svg, "text", text);

	xml_attr(t, "x", "%.1f", x);
	xml_attr(t, "y", "%.1f", y);
	xml_attr(t, "text-anchor", "%s", anchor);
	xml_attr(t, "fill", "%s", fill);
	xml_attr(t, "font-size", "11");
	xml_attr(t, "font-family", "sans-serif");
	return t;
}

/* A row's name, right-aligned against the plot; a long one keeps its end (the parameters
 * and the metric), its start elided: the full name is in the page's table. */
void svg_label(xmlNodePtr svg, double y, const char *fill, const char *name)
{
	size_t len = strlen(name);
	char buf[64];

	if (len > LABEL_CHARS)
		snprintf(buf, sizeof(buf), "\u2026%s", name + len - (LABEL_CHARS - 1));
	else
		snprintf(buf, sizeof(buf), "%s", name);
	svg_text(svg, LABEL_W, y, "end", fill, buf);
}

void svg_line(xmlNodePtr svg, double x1, double y1, double x2, double y2, const char *stroke,
	      double width, bool dashed)
{
	xmlNodePtr l = xmlNewChild(svg, NULL, BAD_CAST "line", NULL);

	xml_attr(l, "x1", "%.1f", x1);
	xml_attr(l, "y1", "%.1f", y1);
	xml_attr(l, "x2", "%.1f", x2);
	xml_attr(l, "y2", "%.1f", y2);
	xml_attr(l, "stroke", "%s", stroke);
	xml_attr(l, "stroke-width", "%.1f", width);
	if (dashed)
		xml_attr(l, "stroke-dasharray", "4 3");
}

void svg_rect(xmlNodePtr svg, double x, double y, double w, double h, const char *fill,
	      double opacity)
{
	xmlNodePtr r = xmlNewChild(svg, NULL, BAD_CAST "rect", NULL);

	xml_attr(r, "x", "%.1f", x);
	xml_attr(r, "y", "%.1f", y);
	xml_attr(r, "width", "%.1f", w > 0.5 ? w : 0.5);
	xml_attr(r, "height", "%.1f", h);
	xml_attr(r, "fill", "%s", fill);
	xml_attr(r, "fill-opacity", "%.2f", opacity);
}

void svg_dot(xmlNodePtr svg, double x, double y, double r, const char *color, bool hollow)
{
	xmlNodePtr c = xmlNewChild(svg, NULL, BAD_CAST "circle", NULL);

	xml_attr(c, "cx", "%.1f", x);
	xml_attr(c, "cy", "%.1f", y);
	xml_attr(c, "r", "%.1f", r);
	xml_attr(c, "fill", "%s", hollow ? "none" : color);
	xml_attr(c, "stroke", "%s", color);
	xml_attr(c, "fill-opacity", "0.55");
}

/* A new SVG document of @height, its root returned through @root; @title for screen readers. */
xmlDocPtr svg_new(double height, const char *title, xmlNodePtr *root)
{
	xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
	xmlNodePtr svg = xmlNewNode(NULL, BAD_CAST "svg");

	xmlDocSetRootElement(doc, svg);
	xmlNewNs(svg, BAD_CAST SVG_NS, NULL);
	xml_attr(svg, "width", "%d", CHART_W);
	xml_attr(svg, "height", "%.0f", height);
	xml_attr(svg, "viewBox", "0 0 %d %.0f", CHART_W, height);
	xml_child(svg, "title", title);
	svg_rect(svg, 0, 0, CHART_W, height, "#ffffff", 1);
	*root = svg;
	return doc;
}

/* A scale over [lo, hi]: logarithmic when the values span more than 30x and are positive. */
struct svg_scale svg_scale_of(double lo, double hi)
{
	struct svg_scale s = {lo, hi, false};

	if (!(hi > lo)) {
		s.lo = lo > 0 ? lo * 0.9 : lo - 1;
		s.hi = hi > 0 ? hi * 1.1 : hi + 1;
	}
	if (s.lo > 0 && s.hi / s.lo > 30) {
		s.log = true;
		s.lo = pow(10, floor(log10(s.lo)));
		s.hi = pow(10, ceil(log10(s.hi)));
	} else {
		double pad = (s.hi - s.lo) * 0.05;

		s.lo = s.lo >= 0 && s.lo - pad < 0 ? 0 : s.lo - pad;
		s.hi += pad;
	}
	return s;
}

double svg_x(const struct svg_scale *s, double v)
{
	double f;

	if (s->log)
		f = v > 0 ? (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo)) : 0;
	else
		f = (v - s->lo) / (s->hi - s->lo);
	f = f < 0 ? 0 : f > 1 ? 1 : f;
	return PLOT_X + f * PLOT_W;
}

/* Ticks and their labels under a plot whose rows end at @y. */
void svg_axis(xmlNodePtr svg, const struct svg_scale *s, double y_top, double y, const char *unit)
{
	char buf[64];

	int decades = s->log ? (int)lround(log10(s->hi / s->lo)) : 4;

	svg_line(svg, PLOT_X, y, PLOT_X + PLOT_W, y, COLOR_INK, 1, false);
	/* Linear: five even ticks; logarithmic: one a decade. */
	for (int i = 0; i <= decades; i++) {
		double v = s->log ? s->lo * pow(10, i) : s->lo + i * (s->hi - s->lo) / 4;
		double x = svg_x(s, v);

		svg_line(svg, x, y_top, x, y, COLOR_GRID, 1, false);
		snprintf(buf, sizeof(buf), "%.4g", v);
		svg_text(svg, x, y + 14, "middle", COLOR_INK, buf);
	}
	snprintf(buf, sizeof(buf), "%s%s", unit, s->log ? " (log scale)" : "");
	svg_text(svg, PLOT_X - 24, y + 14, "end", COLOR_INK, buf);
}
