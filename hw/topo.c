/* SPDX-License-Identifier: GPL-2.0-or-later */
/* topo.c - load a topology with hwloc (this host, hwloc XML, or synthetic) and summarise it. */
#include "hw/detect.h"
#include "hw/hw.h"

#include <errno.h>
#include <libxml/parser.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/text.h"
#include "util/util.h"

#define SYNTHETIC_PREFIX "synthetic:"

/*
 * What a topology may hold before hwloc is asked to build it: hwloc takes minutes and
 * gigabytes for "pack:100 core:100 pu:10", and the largest hosts memgate plans for have a
 * few thousand PUs.
 */
#define TOPO_MAX_PUS 16384
#define TOPO_MAX_XML_BYTES (64u << 20)
/* A NUMA node larger than this is a broken file, not a machine. */
#define TOPO_MAX_NODE_BYTES (1ULL << 52)

/*
 * hwloc's own XML errors carry no line number, so read the file with libxml2 first: a
 * malformed file is then reported as "FILE:LINE: what the parser expected".
 */
struct first_error {
	int line; /* 0 until the parser reports something */
	char msg[256];
};

/* The first error is the one that explains the file; later ones are its consequences. */
static void keep_first_error(void *data, xmlErrorPtr e)
{
	struct first_error *fe = data;

	if (fe->line || !e || e->level < XML_ERR_ERROR)
		return;
	fe->line = e->line > 0 ? e->line : 1;
	snprintf(fe->msg, sizeof(fe->msg), "%s", e->message ? e->message : "parse error");
	fe->msg[strcspn(fe->msg, "\n")] = '\0';
}

static int xml_precheck(const char *path, struct mg_err *err)
{
	struct first_error fe = {0};
	xmlDocPtr doc;
	const xmlNode *root;
	int ret = 0;

	xmlSetStructuredErrorFunc(&fe, keep_first_error);
	doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOWARNING);
	xmlSetStructuredErrorFunc(NULL, NULL);
	if (!doc)
		return mg_err_set(err, EINVAL, "%s:%d: not well-formed XML: %s", path,
				  fe.line ? fe.line : 1, fe.line ? fe.msg : "cannot be parsed");
	root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "topology"))
		ret = mg_err_set(err, EINVAL,
				 "%s:%d: expected an hwloc topology (root element <topology>), "
				 "found <%s>",
				 path, root ? root->line : 1, root ? (const char *)root->name : "");
	xmlFreeDoc(doc);
	return ret;
}

/* The leaves a synthetic description makes: the product of its arities ("type:N"). */
static double synthetic_leaves(const char *desc)
{
	double leaves = 1;

	for (const char *p = strchr(desc, ':'); p; p = strchr(p + 1, ':')) {
		char *end;
		double n = strtod(p + 1, &end);

		if (end > p + 1 && n > 0)
			leaves *= n;
	}
	return leaves;
}

static int topo_set_source(struct hw_info *hw, const char *spec, struct mg_err *err)
{
	if (!spec) {
		hw->source = HW_SOURCE_HOST;
		snprintf(hw->source_desc, sizeof(hw->source_desc), "this host");
		/* PCI and other I/O objects play no part in memory planning; skip their discovery.
		 */
		hwloc_topology_set_io_types_filter(hw->topo, HWLOC_TYPE_FILTER_KEEP_NONE);
		return 0;
	}
	if (!strncmp(spec, SYNTHETIC_PREFIX, strlen(SYNTHETIC_PREFIX))) {
		const char *desc = spec + strlen(SYNTHETIC_PREFIX);

		hw->source = HW_SOURCE_SYNTHETIC;
		snprintf(hw->source_desc, sizeof(hw->source_desc), "%s", desc);
		if (synthetic_leaves(desc) > TOPO_MAX_PUS)
			return mg_err_set(err, E2BIG,
					  "synthetic topology \"%s\" has %.0f PUs; memgate "
					  "plans for at most %d",
					  desc, synthetic_leaves(desc), TOPO_MAX_PUS);
		if (hwloc_topology_set_synthetic(hw->topo, desc) < 0)
			return mg_err_set(
			    err, EINVAL,
			    "synthetic topology \"%s\" is not valid: expected an hwloc "
			    "synthetic description such as "
			    "\"pack:2 [numa] core:4 pu:2\"",
			    desc);
		return 0;
	}
	hw->source = HW_SOURCE_XML;
	snprintf(hw->source_desc, sizeof(hw->source_desc), "%s", spec);
	if (access(spec, R_OK))
		return mg_err_set(err, errno, "%s: %s", spec, strerror(errno));
	/* Only a regular file of a sane size: a FIFO would hang the reader, a huge file stall it.
	 */
	if (text_input_check(spec, TOPO_MAX_XML_BYTES, err))
		return -EINVAL;
	if (xml_precheck(spec, err))
		return -EINVAL;
	if (hwloc_topology_set_xml(hw->topo, spec) < 0)
		return mg_err_set(err, errno ? errno : EINVAL, "%s: hwloc cannot use this file",
				  spec);
	return 0;
}

static void topo_node_pages(struct hw_numa_node *node, const hwloc_obj_t obj)
{
	const struct hwloc_numanode_attr_s *a = &obj->attr->numanode;

	for (unsigned int i = 0; i < a->page_types_len && node->n_pages < HW_MAX_PAGE_SIZES; i++) {
		struct hw_page_pool *p = &node->pages[node->n_pages++];

		p->size_bytes = a->page_types[i].size;
		p->total = a->page_types[i].count;
		p->free = UINT64_MAX; /* hwloc does not say; the host probe fills it in */
	}
}

static int topo_nodes(struct hw_info *hw)
{
	hwloc_obj_t obj = NULL;
	unsigned int i = 0;

	hw->n_numa = (unsigned int)hwloc_get_nbobjs_by_type(hw->topo, HWLOC_OBJ_NUMANODE);
	hw->nodes = calloc(hw->n_numa ? hw->n_numa : 1, sizeof(*hw->nodes));
	if (!hw->nodes)
		return -ENOMEM;
	while ((obj = hwloc_get_next_obj_by_type(hw->topo, HWLOC_OBJ_NUMANODE, obj)) &&
	       i < hw->n_numa) {
		struct hw_numa_node *n = &hw->nodes[i++];
		int first = hwloc_bitmap_first(obj->cpuset);

		n->os_index = obj->os_index;
		n->memory_bytes = obj->attr->numanode.local_memory;
		n->n_pus = (unsigned int)hwloc_get_nbobjs_inside_cpuset_by_type(
		    hw->topo, obj->cpuset, HWLOC_OBJ_PU);
		n->first_pu = first < 0 ? 0 : (unsigned int)first;
		hw->memory_bytes += n->memory_bytes;
		topo_node_pages(n, obj);
	}
	return 0;
}

static void topo_caches(struct hw_info *hw)
{
	static const hwloc_obj_type_t types[] = {
	    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
	    HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
	};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		hwloc_obj_t c = hwloc_get_obj_by_type(hw->topo, types[i], 0);
		struct hw_cache *hc;

		if (!c || hw->n_caches == HW_MAX_CACHES)
			continue;
		hc = &hw->caches[hw->n_caches++];
		hc->level = c->attr->cache.depth;
		hc->kind = c->attr->cache.type == HWLOC_OBJ_CACHE_DATA		? 'd'
			   : c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? 'i'
										: 'u';
		hc->size_bytes = c->attr->cache.size;
		hc->count = (unsigned int)hwloc_get_nbobjs_by_type(hw->topo, types[i]);
	}
}

static void topo_names(struct hw_info *hw)
{
	hwloc_obj_t root = hwloc_get_root_obj(hw->topo);
	hwloc_obj_t pkg = hwloc_get_obj_by_type(hw->topo, HWLOC_OBJ_PACKAGE, 0);
	const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
	const char *rel = hwloc_obj_get_info_by_name(root, "OSRelease");
	struct utsname u;

	if (!model)
		model = hwloc_obj_get_info_by_name(root, "CPUModel");
	snprintf(hw->cpu_model, sizeof(hw->cpu_model), "%s",
		 model ? model : (hw->source == HW_SOURCE_SYNTHETIC ? "synthetic" : "unknown"));
	if (hw->source == HW_SOURCE_HOST && !uname(&u))
		rel = u.release;
	snprintf(hw->os_release, sizeof(hw->os_release), "%s", rel ? rel : "unknown");
}

/* What was loaded describes a machine memgate can plan for; else exit 2 with what is wrong. */
static int topo_validate(const struct hw_info *hw, struct mg_err *err)
{
	if (!hw->n_pus)
		return mg_err_set(err, EINVAL, "%s: the topology has no PU", hw->source_desc);
	if (hw->n_pus > TOPO_MAX_PUS)
		return mg_err_set(err, E2BIG, "%s: %u PUs; memgate plans for at most %d",
				  hw->source_desc, hw->n_pus, TOPO_MAX_PUS);
	if (!hw->n_numa)
		return mg_err_set(err, EINVAL, "%s: the topology has no NUMA node",
				  hw->source_desc);
	for (unsigned int i = 0; i < hw->n_numa; i++)
		if (hw->nodes[i].memory_bytes > TOPO_MAX_NODE_BYTES)
			return mg_err_set(err, EINVAL,
					  "%s: NUMA node %u claims %llu bytes of memory",
					  hw->source_desc, hw->nodes[i].os_index,
					  (unsigned long long)hw->nodes[i].memory_bytes);
	return 0;
}

int hw_topo_load(struct hw_info *hw, const char *spec, struct mg_err *err)
{
	int ret;

	if (hwloc_topology_init(&hw->topo) < 0)
		return mg_err_set(err, errno, "hwloc: cannot initialise a topology");
	ret = topo_set_source(hw, spec, err);
	if (ret)
		goto fail;
	if (hwloc_topology_load(hw->topo) < 0) {
		ret = mg_err_set(err, errno ? errno : EINVAL,
				 "%s: hwloc could not load the topology (%s)", hw->source_desc,
				 strerror(errno ? errno : EINVAL));
		goto fail;
	}
	/* A loaded topology describes another machine: binding to its CPUs means nothing. */
	hw->can_bind = hw->source == HW_SOURCE_HOST && hwloc_topology_is_thissystem(hw->topo);
	hw->n_packages = (unsigned int)hwloc_get_nbobjs_by_type(hw->topo, HWLOC_OBJ_PACKAGE);
	hw->n_cores = (unsigned int)hwloc_get_nbobjs_by_type(hw->topo, HWLOC_OBJ_CORE);
	hw->n_pus = (unsigned int)hwloc_get_nbobjs_by_type(hw->topo, HWLOC_OBJ_PU);
	ret = topo_nodes(hw);
	if (ret) {
		mg_err_set(err, -ret, "out of memory");
		goto fail;
	}
	/* Names from outside reach JSON and XML reports: valid UTF-8 only. */
	text_utf8_fix(hw->source_desc, sizeof(hw->source_desc));
	ret = topo_validate(hw, err);
	if (ret)
		goto fail;
	topo_caches(hw);
	topo_names(hw);
	text_utf8_fix(hw->cpu_model, sizeof(hw->cpu_model));
	text_squeeze(hw->cpu_model, ' ');
	text_utf8_fix(hw->os_release, sizeof(hw->os_release));
	return 0;
fail:
	free(hw->nodes);
	hw->nodes = NULL;
	hwloc_topology_destroy(hw->topo);
	hw->topo = NULL;
	return ret;
}
