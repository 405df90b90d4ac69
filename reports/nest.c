/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nest.c - a guest's JSON and JUnit reports renamed into the host's (see nest.h). */
#include "reports/nest.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "reports/file.h"
#include "util/json.h"

/* The guest's results file: as large as a results file memgate reads anywhere. */
#define NEST_MAX_BYTES (256u << 20)

int report_nest_json(const char *in, const char *out, const char *prefix,
		     const struct nest_prop *props, size_t n_props, struct mg_err *err)
{
	json_t *doc = json_doc_load(in, NEST_MAX_BYTES, NULL, err), *cases, *c, *vm;
	size_t i;
	int ret;

	if (!doc)
		return -EINVAL;
	cases = json_object_get(doc, "cases");
	if (!json_is_array(cases)) {
		json_decref(doc);
		return mg_err_set(err, EINVAL, "%s: no \"cases\" array: not memgate's results", in);
	}
	json_array_foreach(cases, i, c)
	{
		const char *suite = json_string_value(json_object_get(c, "suite"));
		char name[512];

		if (!suite) {
			json_decref(doc);
			return mg_err_set(err, EINVAL, "%s: case %zu has no \"suite\"", in, i);
		}
		snprintf(name, sizeof(name), "%s.%s", prefix, suite);
		json_object_set_new(c, "suite", json_string(name));
	}
	vm = json_object();
	for (i = 0; i < n_props; i++)
		json_object_set_new(vm, props[i].name, json_string(props[i].value));
	json_object_set_new(doc, "vm", vm);
	ret = report_write_json(out, doc, err);
	json_decref(doc);
	return ret;
}

/* @node's attribute @name as PREFIX.VALUE, or for a classname memgate.PREFIX.REST. */
static void rename_attr(xmlNodePtr node, const char *name, const char *prefix, bool classname)
{
	xmlChar *v = xmlGetProp(node, BAD_CAST name);
	const char *s = (const char *)v, *rest;
	char buf[1024];

	if (!v)
		return;
	rest = classname && !strncmp(s, "memgate.", 8) ? s + 8 : s;
	snprintf(buf, sizeof(buf), "%s%s.%s", classname ? "memgate." : "", prefix, rest);
	xmlSetProp(node, BAD_CAST name, BAD_CAST buf);
	xmlFree(v);
}

static xmlNodePtr child_named(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr n = parent->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name))
			return n;
	return NULL;
}

static void nest_suite(xmlNodePtr suite, const char *prefix, const struct nest_prop *props,
		       size_t n_props)
{
	xmlNodePtr p = child_named(suite, "properties");

	rename_attr(suite, "name", prefix, false);
	if (!p) {
		p = xmlNewNode(NULL, BAD_CAST "properties");
		if (suite->children)
			xmlAddPrevSibling(suite->children, p);
		else
			xmlAddChild(suite, p);
	}
	for (size_t i = 0; i < n_props; i++) {
		xmlNodePtr prop = xmlNewChild(p, NULL, BAD_CAST "property", NULL);

		xmlNewProp(prop, BAD_CAST "name", BAD_CAST props[i].name);
		xmlNewProp(prop, BAD_CAST "value", BAD_CAST props[i].value);
	}
	for (xmlNodePtr n = suite->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "testcase"))
			rename_attr(n, "classname", prefix, true);
}

int report_nest_junit(const char *in, const char *out, const char *prefix,
		      const struct nest_prop *props, size_t n_props, struct mg_err *err)
{
	xmlDocPtr doc = xmlReadFile(in, NULL,
				    XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
					XML_PARSE_NOWARNING);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	int ret;

	if (!doc) {
		const xmlError *e = xmlGetLastError();

		return mg_err_set(err, EINVAL, "%s:%d: %s", in, e ? e->line : 0,
				  e && e->message ? e->message : "not XML");
	}
	if (!root || (strcmp((const char *)root->name, "testsuites") &&
		      strcmp((const char *)root->name, "testsuite"))) {
		xmlFreeDoc(doc);
		return mg_err_set(err, EINVAL, "%s: no <testsuites> or <testsuite>: not JUnit", in);
	}
	if (!strcmp((const char *)root->name, "testsuite"))
		nest_suite(root, prefix, props, n_props);
	for (xmlNodePtr n = root->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "testsuite"))
			nest_suite(n, prefix, props, n_props);
	ret = report_write_xml(out, doc, err);
	xmlFreeDoc(doc);
	return ret;
}
