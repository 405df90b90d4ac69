/* SPDX-License-Identifier: GPL-2.0-or-later */
/* print.c - `memgate hw`: the host description as text and as JSON. */
#include "hw/hw.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>

static const char *probe_word(enum hw_probe p)
{
	return p == HW_PROBE_YES ? "yes" : p == HW_PROBE_NO ? "no" : "unknown";
}

static void print_nodes(const struct hw_info *hw, FILE *out)
{
	char b1[32], b2[32];

	for (unsigned int i = 0; i < hw->n_numa; i++) {
		const struct hw_numa_node *n = &hw->nodes[i];

		fprintf(out, "  node %u: %s, %u PUs (first P#%u)\n", n->os_index,
			hw_format_bytes(n->memory_bytes, b1, sizeof(b1)), n->n_pus, n->first_pu);
		for (unsigned int j = 0; j < n->n_pages; j++) {
			const struct hw_page_pool *p = &n->pages[j];

			fprintf(out, "    pages %-8s total %" PRIu64,
				hw_format_bytes(p->size_bytes, b2, sizeof(b2)), p->total);
			if (p->free != UINT64_MAX)
				fprintf(out, ", free %" PRIu64, p->free);
			fputc('\n', out);
		}
	}
}

static void print_host(const struct hw_info *hw, FILE *out)
{
	const struct hw_cpu *c = &hw->cpu;
	char b[32];

	fprintf(out, "cpu (libcpuid): %s, %s, family %d model %d stepping %d\n", c->vendor,
		c->brand, c->family, c->model, c->stepping);
	fprintf(out, "  cores/package %d, logical CPUs/package %d, hypervisor %s\n",
		c->cores_per_package, c->logical_cpus, c->hypervisor);
	fprintf(out, "  invariant TSC %s, ERMS %s, FSRM %s\n", c->invariant_tsc ? "yes" : "no",
		c->erms ? "yes" : "no", c->fsrm ? "yes" : "no");
	fprintf(out, "cpus (kernel): %u online, %u allowed to this process, %u cores of those\n",
		hw->n_pus_online, hw->n_pus_allowed, hw->n_cores_sysfs);
	fprintf(out, "tsc: %.2f MHz (calibrated against CLOCK_MONOTONIC_RAW)\n", hw->tsc_hz / 1e6);
	fprintf(out, "memory (/proc/meminfo): total %s, ",
		hw_format_bytes(hw->meminfo_total_kib * 1024, b, sizeof(b)));
	fprintf(out, "available %s\n",
		hw_format_bytes(hw->meminfo_available_kib * 1024, b, sizeof(b)));
	for (unsigned int i = 0; i < hw->n_hugepages; i++)
		fprintf(out, "hugetlb %s: %" PRIu64 " pages, %" PRIu64 " free%s\n",
			hw_format_bytes(hw->hugepages[i].size_bytes, b, sizeof(b)),
			hw->hugepages[i].total, hw->hugepages[i].free,
			hw->hugepages[i].size_bytes == hw->default_hugepage_bytes ? " (default)"
										  : "");
	fprintf(out, "thp: %s\n", hw->thp_mode[0] ? hw->thp_mode : "unknown");
	fprintf(out, "kvm: %s (%s)%s%s\n", probe_word(hw->kvm), hw->kvm_detail,
		hw->kvm_module[0] ? ", module " : "", hw->kvm_module);
	fprintf(out, "MADV_POPULATE_WRITE: %s (%s)\n", probe_word(hw->populate_write),
		hw->populate_detail);
	fprintf(out, "glibc: %s\n", hw->glibc);
}

void hw_print_text(const struct hw_info *hw, FILE *out)
{
	char b[32];

	fprintf(out, "source: %s (%s)\n", hw_source_name(hw->source), hw->source_desc);
	if (!hw->can_bind)
		fprintf(out, "binding: impossible, the topology is not this host's: plans are "
			     "checked, not executed\n");
	fprintf(out, "topology (hwloc %s): %u packages, %u NUMA nodes, %u cores, %u PUs, %s\n",
		HWLOC_VERSION, hw->n_packages, hw->n_numa, hw->n_cores, hw->n_pus,
		hw_format_bytes(hw->memory_bytes, b, sizeof(b)));
	fprintf(out, "cpu model: %s\n", hw->cpu_model);
	print_nodes(hw, out);
	for (unsigned int i = 0; i < hw->n_caches; i++)
		fprintf(out, "  cache L%u%c: %s x %u\n", hw->caches[i].level, hw->caches[i].kind,
			hw_format_bytes(hw->caches[i].size_bytes, b, sizeof(b)),
			hw->caches[i].count);
	fprintf(out, "kernel: %s\n", hw->os_release);
	if (hw->source == HW_SOURCE_HOST || hw->source == HW_SOURCE_RECORD)
		print_host(hw, out);
	fprintf(out, "fingerprint: %s\n  hash %s\n", hw->fingerprint, hw->fingerprint_hash);
}

static json_t *pool_json(const struct hw_page_pool *p)
{
	json_t *o = json_pack("{s:I, s:I}", "size", (json_int_t)p->size_bytes, "total",
			      (json_int_t)p->total);

	if (o && p->free != UINT64_MAX)
		json_object_set_new(o, "free", json_integer((json_int_t)p->free));
	return o;
}

static json_t *nodes_json(const struct hw_info *hw)
{
	json_t *arr = json_array();

	for (unsigned int i = 0; arr && i < hw->n_numa; i++) {
		const struct hw_numa_node *n = &hw->nodes[i];
		json_t *pages = json_array();

		for (unsigned int j = 0; pages && j < n->n_pages; j++)
			json_array_append_new(pages, pool_json(&n->pages[j]));
		json_array_append_new(
		    arr, json_pack("{s:i, s:I, s:i, s:i, s:o*}", "os_index", (int)n->os_index,
				   "memory", (json_int_t)n->memory_bytes, "pus", (int)n->n_pus,
				   "first_pu", (int)n->first_pu, "pages", pages));
	}
	return arr;
}

static json_t *caches_json(const struct hw_info *hw)
{
	json_t *arr = json_array();

	for (unsigned int i = 0; arr && i < hw->n_caches; i++) {
		char kind[2] = {hw->caches[i].kind, '\0'};

		json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:i}", "level",
						     (int)hw->caches[i].level, "kind", kind, "size",
						     (json_int_t)hw->caches[i].size_bytes, "count",
						     (int)hw->caches[i].count));
	}
	return arr;
}

static json_t *host_json(const struct hw_info *hw)
{
	const struct hw_cpu *c = &hw->cpu;
	json_t *pools = json_array();

	for (unsigned int i = 0; pools && i < hw->n_hugepages; i++)
		json_array_append_new(pools, pool_json(&hw->hugepages[i]));
	return json_pack(
	    "{s:{s:b, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:b, s:b, s:s}, s:f, s:I, s:I,"
	    " s:I, s:o*, s:s, s:{s:b, s:s, s:i, s:s}, s:{s:s, s:s}, s:s, s:{s:i, s:i, s:i, s:i}}",
	    "cpu", "identified", c->known, "vendor", c->vendor, "brand", c->brand, "family",
	    c->family, "model", c->model, "stepping", c->stepping, "cores_per_package",
	    c->cores_per_package, "logical_cpus_per_package", c->logical_cpus, "invariant_tsc",
	    c->invariant_tsc, "erms", c->erms, "fsrm", c->fsrm, "hypervisor", c->hypervisor,
	    "tsc_hz", hw->tsc_hz, "meminfo_total", (json_int_t)hw->meminfo_total_kib * 1024,
	    "meminfo_available", (json_int_t)hw->meminfo_available_kib * 1024,
	    "default_hugepage_size", (json_int_t)hw->default_hugepage_bytes, "hugepages", pools,
	    "thp", hw->thp_mode, "kvm", "usable", hw->kvm == HW_PROBE_YES, "detail", hw->kvm_detail,
	    "max_memslots", hw->kvm_max_memslots, "module", hw->kvm_module, "madv_populate_write",
	    "supported", probe_word(hw->populate_write), "detail", hw->populate_detail, "glibc",
	    hw->glibc, "cpus", "online", (int)hw->n_pus_online, "allowed", (int)hw->n_pus_allowed,
	    "cores", (int)hw->n_cores_sysfs, "unbindable", (int)hw->n_pus_unbindable);
}

json_t *hw_to_json(const struct hw_info *hw)
{
	json_t *o = json_pack("{s:s, s:s, s:b, s:s, s:{s:i, s:i, s:i, s:i, s:I, s:o*, s:o*},"
			      " s:s, s:{s:s, s:s}}",
			      "source", hw_source_name(hw->source), "source_desc", hw->source_desc,
			      "can_bind", hw->can_bind, "hwloc_version", HWLOC_VERSION, "topology",
			      "packages", (int)hw->n_packages, "numa_nodes", (int)hw->n_numa,
			      "cores", (int)hw->n_cores, "pus", (int)hw->n_pus, "memory",
			      (json_int_t)hw->memory_bytes, "nodes", nodes_json(hw), "caches",
			      caches_json(hw), "cpu_model", hw->cpu_model, "fingerprint", "class",
			      hw->fingerprint, "hash", hw->fingerprint_hash);

	if (!o)
		return NULL;
	json_object_set_new(o, "kernel", json_string(hw->os_release));
	if (hw->source == HW_SOURCE_HOST || hw->source == HW_SOURCE_RECORD)
		json_object_set_new(o, "host", host_json(hw));
	return o;
}

int hw_print_json(const struct hw_info *hw, FILE *out)
{
	json_t *o = hw_to_json(hw);
	int ret;

	if (!o)
		return -ENOMEM;
	ret = json_dumpf(o, out, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', out);
	json_decref(o);
	return ret ? -EIO : 0;
}
