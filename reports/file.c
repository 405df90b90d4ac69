/* SPDX-License-Identifier: GPL-2.0-or-later */
/* file.c - a report's document written whole, as util/file.c writes any file. */
#include "reports/file.h"

#include "util/file.h"

int report_write_json(const char *path, const json_t *doc, struct mg_err *err)
{
	struct file_out rf;
	int ret = file_out_open(&rf, path, err);

	if (ret)
		return ret;
	rf.failed = json_dumpf(doc, rf.f, JSON_INDENT(1) | JSON_SORT_KEYS) != 0;
	return file_out_commit(&rf, err);
}

int report_write_xml(const char *path, xmlDocPtr doc, struct mg_err *err)
{
	struct file_out rf;
	int ret = file_out_open(&rf, path, err);

	if (ret)
		return ret;
	rf.failed = xmlDocFormatDump(rf.f, doc, 1) < 0;
	return file_out_commit(&rf, err);
}
