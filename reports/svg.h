/* SPDX-License-Identifier: GPL-2.0-or-later */
/* svg.h - the charts' drawing: SVG documents built with libxml2 (text, lines, rectangles,
 * dots), their geometry and colours, and a value scale with its axis. The HTML page
 * (html.c) lays out what these draw; the tree helpers serve its HTML too. */
#ifndef MG_REPORTS_SVG_H
#define MG_REPORTS_SVG_H

#include <stdbool.h>
#include <libxml/tree.h>

/* Chart geometry, in SVG user units (pixels at 100%). */
#define CHART_W 860
#define LABEL_W 300    /* metric or gate names, right-aligned against the plot */
#define VALUE_W 180    /* the median or ratio, as text */
#define LABEL_CHARS 48 /* what LABEL_W holds at 11 px */
#define PLOT_X (LABEL_W + 10)
#define PLOT_W (CHART_W - PLOT_X - VALUE_W)
#define ROW_H 18
#define AXIS_H 22

/* Outcome colours; the arms of a case take svg_palette's in order of first appearance. */
#define COLOR_PASS "#2e7d32"
#define COLOR_FAIL "#c62828"
#define COLOR_OTHER "#9e9e9e"
#define COLOR_INK "#263238"
#define COLOR_GRID "#cfd8dc"
extern const char *const svg_palette[8];

/** xml_child() - a new element @name under @parent holding @text (NULL: empty), with what
 * XML cannot hold replaced. */
xmlNodePtr xml_child(xmlNodePtr parent, const char *name, const char *text);

/** xml_attr() - @n's attribute @name, printf-formatted. */
void xml_attr(xmlNodePtr n, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** svg_new() - a new SVG document of @height, its root returned through @root; @title for
 * screen readers. */
xmlDocPtr svg_new(double height, const char *title, xmlNodePtr *root);

/** svg_text() - @text at (@x, @y), anchored "start", "middle" or "end", in @fill; its node. */
xmlNodePtr svg_text(xmlNodePtr svg, double x, double y, const char *anchor, const char *fill,
		    const char *text);
/** svg_label() - a row's name, right-aligned against the plot; a long one keeps its end (the
 * parameters and the metric), its start elided: the full name is in the page's table. */
void svg_label(xmlNodePtr svg, double y, const char *fill, const char *name);
/** svg_line() - a line from (@x1, @y1) to (@x2, @y2) of @width in @stroke, dashed or not. */
void svg_line(xmlNodePtr svg, double x1, double y1, double x2, double y2, const char *stroke,
	      double width, bool dashed);
/** svg_rect() - a @w x @h rectangle from (@x, @y), @fill at @opacity. */
void svg_rect(xmlNodePtr svg, double x, double y, double w, double h, const char *fill,
	      double opacity);
/** svg_dot() - a dot of radius @r at (@x, @y) in @color, a ring when @hollow (a stolen sample). */
void svg_dot(xmlNodePtr svg, double x, double y, double r, const char *color, bool hollow);

/* A value scale onto the plot's width. */
struct svg_scale {
	double lo, hi;
	bool log;
};

/** svg_scale_of() - a scale over [lo, hi]: logarithmic when the values span more than 30x
 * and are positive. */
struct svg_scale svg_scale_of(double lo, double hi);

/** svg_x() - where @v falls on the plot, clamped to it. */
double svg_x(const struct svg_scale *s, double v);

/** svg_axis() - ticks and their labels under a plot whose rows span @y_top to @y. */
void svg_axis(xmlNodePtr svg, const struct svg_scale *s, double y_top, double y, const char *unit);

#endif
