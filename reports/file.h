/* SPDX-License-Identifier: GPL-2.0-or-later */
/* file.h - a report's JSON or XML document written as util/file.h writes any file. */
#ifndef MG_REPORTS_FILE_H
#define MG_REPORTS_FILE_H

#include <jansson.h>
#include <libxml/tree.h>

#include "util/err.h"

/** report_write_json() - @doc as the report @path (indented, keys sorted), opened and committed. */
int report_write_json(const char *path, const json_t *doc, struct mg_err *err);

/** report_write_xml() - @doc as the report @path (formatted), opened and committed. */
int report_write_xml(const char *path, xmlDocPtr doc, struct mg_err *err);

#endif
