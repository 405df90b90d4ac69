/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.c - a host as a folder: `memgate hw --record DIR` writes it, `--host DIR` plans from it.
 */
#include "hw/detect.h"
#include "hw/hw.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/json.h"
#include "util/text.h"

/*
 * The folder holds three files, each in the format of the library that reads it, so that a
 * user can send one and we can read it with the same tools:
 * - topology.xml: hwloc's XML export (packages, nodes, caches, page sizes of each node);
 * - cpuid.raw: libcpuid's raw CPUID dump (cpuid_serialize_raw_data), absent when the CPU
 *   was not dumped (a record made from another tool's XML);
 * - host.json: what memgate reads of sysfs, procfs and ioctls, as `memgate hw --json` prints
 *   it under "host", and the kernel release.
 */
#define RECORD_TOPOLOGY "topology.xml"
#define RECORD_CPUID "cpuid.raw"
#define RECORD_FACTS "host.json"
/* host.json is a few KiB; a larger file is not one memgate wrote. */
#define RECORD_MAX_FACTS_BYTES (1u << 20)
/* What a host can hold: the PUs hw/topo.c plans for at most, and a TSC of at most 100 GHz. */
#define RECORD_MAX_PUS 16384
#define RECORD_MAX_TSC_HZ 100e9
/* libcpuid's dump is a few hundred lines of registers. */
#define RECORD_MAX_CPUID_BYTES (1u << 20)

static void record_path(char *buf, size_t len, const char *dir, const char *file)
{
	snprintf(buf, len, "%s/%s", dir, file);
}

int hw_record(const struct hw_info *hw, const char *dir, struct mg_err *err)
{
	char path[4096], *xml = NULL;
	int xml_len = 0;
	struct file_out out;
	json_t *o;
	int ret;

	if (hw->source != HW_SOURCE_HOST)
		return mg_err_set(err, EINVAL,
				  "--record writes this host: not with --topology or --host");
	if (mkdir(dir, 0755) && errno != EEXIST)
		return mg_err_set(err, errno, "%s: %s", dir, strerror(errno));
	record_path(path, sizeof(path), dir, RECORD_TOPOLOGY);
	if (hwloc_topology_export_xmlbuffer(hw->topo, &xml, &xml_len, 0) < 0)
		return mg_err_set(err, errno ? errno : EIO, "%s: hwloc could not export it: %s",
				  path, strerror(errno ? errno : EIO));
	ret = file_out_create(&out, path, err);
	if (!ret) {
		/* hwloc counts the buffer's final NUL. */
		out.failed = xml_len > 0 &&
			     fwrite(xml, 1, (size_t)xml_len - 1, out.f) != (size_t)xml_len - 1;
		ret = file_out_commit(&out, err);
	}
	hwloc_free_xmlbuffer(hw->topo, xml);
	if (ret)
		return ret;
	record_path(path, sizeof(path), dir, RECORD_CPUID);
	ret = hw_cpu_record(path, err);
	if (ret)
		return ret;
	record_path(path, sizeof(path), dir, RECORD_FACTS);
	o = hw_to_json(hw);
	if (!o)
		return mg_err_set(err, ENOMEM, "out of memory");
	ret = file_out_create(&out, path, err);
	if (!ret) {
		out.failed = json_dumpf(o, out.f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0;
		ret = file_out_commit(&out, err);
	}
	json_decref(o);
	return ret;
}

static enum hw_probe probe_of(const char *word)
{
	return !word		      ? HW_PROBE_UNKNOWN
	       : !strcmp(word, "yes") ? HW_PROBE_YES
	       : !strcmp(word, "no")  ? HW_PROBE_NO
				      : HW_PROBE_UNKNOWN;
}

/* The hugetlb pools, system-wide: [{"size": BYTES, "total": N, "free": N}, ...]. */
static int facts_pools(struct hw_info *hw, json_t *pools, const char *path, struct mg_err *err)
{
	size_t i;
	json_t *p;

	json_array_foreach(pools, i, p)
	{
		json_int_t size, total, free_pages = -1;
		json_error_t je;

		if (hw->n_hugepages == HW_MAX_PAGE_SIZES)
			break;
		if (json_unpack_ex(p, &je, JSON_STRICT, "{s:I, s:I, s?I}", "size", &size, "total",
				   &total, "free", &free_pages) ||
		    size <= 4096 || total < 0)
			return mg_err_set(err, EINVAL,
					  "%s: host.hugepages[%zu]: expected {\"size\": bytes, "
					  "\"total\": pages, \"free\": pages}",
					  path, i);
		hw->hugepages[hw->n_hugepages++] = (struct hw_page_pool){
		    .size_bytes = (uint64_t)size,
		    .total = (uint64_t)total,
		    .free = free_pages < 0 ? UINT64_MAX : (uint64_t)free_pages};
	}
	return 0;
}

/* Strings are copied bounded and cleaned: a record is outside input that reaches reports. */
static void copy_text(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
	text_utf8_fix(dst, len);
}

static int load_facts(struct hw_info *hw, const char *path, struct mg_err *err)
{
	json_t *root, *host, *pools = NULL;
	json_error_t je;
	const char *kernel = NULL, *thp = "", *kvm_detail = "", *kvm_module = "", *pop = NULL,
		   *pop_detail = "";
	const char *glibc = "";
	json_int_t total = 0, avail = 0, defsize = 0, slots = 0;
	int kvm = 0, online = 0, allowed = 0, cores = 0, unbindable = 0, ret = 0;
	double tsc = 0;

	root = json_doc_load(path, RECORD_MAX_FACTS_BYTES, "memgate host facts", err);
	if (!root)
		return err->code == ENOENT ? -ENOENT : -EINVAL;
	host = json_object_get(root, "host");
	if (json_unpack_ex(root, &je, 0, "{s?s}", "kernel", &kernel) || !json_is_object(host) ||
	    json_unpack_ex(
		host, &je, 0,
		"{s?F, s?I, s?I, s?I, s?o, s?s, s?{s?b, s?s, s?I, s?s}, s?{s?s, s?s}, s?s,"
		" s:{s:i, s:i, s:i, s:i}}",
		"tsc_hz", &tsc, "meminfo_total", &total, "meminfo_available", &avail,
		"default_hugepage_size", &defsize, "hugepages", &pools, "thp", &thp, "kvm",
		"usable", &kvm, "detail", &kvm_detail, "max_memslots", &slots, "module",
		&kvm_module, "madv_populate_write", "supported", &pop, "detail", &pop_detail,
		"glibc", &glibc, "cpus", "online", &online, "allowed", &allowed, "cores", &cores,
		"unbindable", &unbindable)) {
		ret =
		    mg_err_set(err, EINVAL,
			       "%s: expected memgate host facts (an object \"host\" as `memgate hw "
			       "--json` prints it, with \"cpus\"): %s",
			       path, json_is_object(host) ? je.text : "no object \"host\"");
		goto out;
	}
	if (online <= 0 || allowed < 0 || cores < 0 || unbindable < 0 || total < 0 || avail < 0 ||
	    online > RECORD_MAX_PUS || allowed > online || cores > online ||
	    unbindable > RECORD_MAX_PUS || (pools && !json_is_array(pools))) {
		ret = mg_err_set(err, EINVAL,
				 "%s: host.cpus.online must be from 1 to %d, allowed and cores "
				 "at most that, every count 0 or more, host.hugepages an array",
				 path, RECORD_MAX_PUS);
		goto out;
	}
	if (!(tsc >= 0 && tsc < RECORD_MAX_TSC_HZ)) {
		ret = mg_err_set(err, EINVAL,
				 "%s: host.tsc_hz %g: expected 0 (not measured) up to %.0f GHz",
				 path, tsc, RECORD_MAX_TSC_HZ / 1e9);
		goto out;
	}
	if (pools && (ret = facts_pools(hw, pools, path, err)))
		goto out;
	hw->tsc_hz = tsc;
	hw->meminfo_total_kib = (uint64_t)total / 1024;
	hw->meminfo_available_kib = (uint64_t)avail / 1024;
	hw->default_hugepage_bytes = defsize > 0 ? (uint64_t)defsize : 0;
	copy_text(hw->thp_mode, sizeof(hw->thp_mode), thp);
	hw->kvm = kvm ? HW_PROBE_YES : HW_PROBE_NO;
	copy_text(hw->kvm_detail, sizeof(hw->kvm_detail), kvm_detail);
	hw->kvm_max_memslots = (int)slots;
	copy_text(hw->kvm_module, sizeof(hw->kvm_module), kvm_module);
	hw->populate_write = probe_of(pop);
	copy_text(hw->populate_detail, sizeof(hw->populate_detail), pop_detail);
	copy_text(hw->glibc, sizeof(hw->glibc), glibc);
	hw->n_pus_online = (unsigned int)online;
	hw->n_pus_allowed = (unsigned int)allowed;
	hw->n_cores_sysfs = (unsigned int)cores;
	hw->n_pus_unbindable = (unsigned int)unbindable;
	if (kernel)
		copy_text(hw->os_release, sizeof(hw->os_release), kernel);
out:
	json_decref(root);
	return ret;
}

/* A regular file of a sane size: a FIFO would hang the reader (libcpuid's too). */
static int record_file_ok(const char *path, size_t max, struct mg_err *err)
{
	struct mg_err why;

	if (!text_input_check(path, max, &why))
		return 0;
	return mg_err_set(err, why.code == ENOENT ? ENOENT : EINVAL,
			  "%s (a host record is a folder that `memgate hw --record DIR` wrote)",
			  why.msg);
}

int hw_load_record(struct hw_info *hw, const char *dir, struct mg_err *err)
{
	char path[4096];
	struct mg_err cpu_err;
	int ret;

	memset(hw, 0, sizeof(*hw));
	record_path(path, sizeof(path), dir, RECORD_FACTS);
	if (record_file_ok(path, RECORD_MAX_FACTS_BYTES, err))
		return -EINVAL;
	record_path(path, sizeof(path), dir, RECORD_TOPOLOGY);
	ret = hw_topo_load(hw, path, err);
	if (ret)
		return ret;
	hw->source = HW_SOURCE_RECORD;
	copy_text(hw->source_desc, sizeof(hw->source_desc), dir);
	record_path(path, sizeof(path), dir, RECORD_FACTS);
	ret = load_facts(hw, path, err);
	if (ret) {
		hw_release(hw);
		return ret;
	}
	/* No dump, or one libcpuid cannot place: an unknown CPU, as on a host it does not know. */
	record_path(path, sizeof(path), dir, RECORD_CPUID);
	if (access(path, F_OK)) {
		snprintf(hw->cpu.brand, sizeof(hw->cpu.brand), "(no %s in the record)",
			 RECORD_CPUID);
	} else if (record_file_ok(path, RECORD_MAX_CPUID_BYTES, err)) {
		hw_release(hw);
		return -EINVAL;
	} else if (hw_cpu_load(&hw->cpu, path, &cpu_err)) {
		if (cpu_err.code == EINVAL) {
			mg_err_set(err, EINVAL, "%s", cpu_err.msg);
			hw_release(hw);
			return -EINVAL;
		}
		snprintf(hw->cpu.brand, sizeof(hw->cpu.brand), "(%.60s)", cpu_err.msg);
	}
	hw_fingerprint(hw);
	return 0;
}
