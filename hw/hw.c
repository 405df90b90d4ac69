/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hw.c - put the hw facts together and fingerprint the host class (print.c prints them). */
#include "hw/hw.h"

#include "hw/detect.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "hw/tsc.h"
#include "util/text.h"
#include "util/util.h"

/* Five 20 ms windows: 100 ms at start-up buys a frequency good to well under 0.1%. */
#define TSC_CAL_RUNS 5
#define TSC_CAL_WINDOW_MS 20

const char *hw_source_name(enum hw_source s)
{
	return s == HW_SOURCE_HOST     ? "host"
	       : s == HW_SOURCE_XML    ? "xml"
	       : s == HW_SOURCE_RECORD ? "record"
				       : "synthetic";
}

char *hw_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%" PRIu64 " %s", (uint64_t)v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

int hw_detect(struct hw_info *hw, const char *spec, struct mg_err *err)
{
	struct mg_err cpu_err;
	int ret;

	memset(hw, 0, sizeof(*hw));
	ret = hw_topo_load(hw, spec, err);
	if (ret)
		return ret;
	if (hw->source == HW_SOURCE_HOST) {
		/* A CPU libcpuid cannot identify is a fact to report, not a reason to stop. */
		if (hw_cpu_detect(&hw->cpu, &cpu_err))
			snprintf(hw->cpu.brand, sizeof(hw->cpu.brand), "(%.60s)", cpu_err.msg);
		hw->tsc_hz = tsc_calibrate_median_hz(TSC_CAL_RUNS, TSC_CAL_WINDOW_MS, NULL);
		hw_host_probe(hw);
	}
	hw_fingerprint(hw);
	return 0;
}

void hw_release(struct hw_info *hw)
{
	free(hw->nodes);
	hw->nodes = NULL;
	if (hw->topo)
		hwloc_topology_destroy(hw->topo);
	hw->topo = NULL;
}

static void page_size_list(const struct hw_info *hw, char *buf, size_t len)
{
	uint64_t seen[HW_MAX_PAGE_SIZES * 2];
	unsigned int n = 0;
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < hw->n_numa; i++) {
		for (unsigned int j = 0; j < hw->nodes[i].n_pages; j++) {
			uint64_t s = hw->nodes[i].pages[j].size_bytes;
			unsigned int k = 0;
			char tmp[32];

			while (k < n && seen[k] != s)
				k++;
			if (k < n || n == ARRAY_SIZE(seen))
				continue;
			seen[n++] = s;
			hw_format_bytes(s, tmp, sizeof(tmp));
			text_squeeze(tmp, '\0');
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
						 n > 1 ? "," : "", tmp);
		}
	}
}

void hw_fingerprint(struct hw_info *hw)
{
	hwloc_obj_t root = hwloc_get_root_obj(hw->topo);
	const char *arch = hwloc_obj_get_info_by_name(root, "Architecture");
	char pages[128];

	char model[sizeof(hw->cpu_model)];

	page_size_list(hw, pages, sizeof(pages));
	/* A key, so one word: CPUID pads the brand with blanks, and hypervisors name it freely. */
	snprintf(model, sizeof(model), "%s", hw->cpu_model);
	text_squeeze(model, '_');
	/*
	 * The hardware's shape alone: the kernel, glibc and QEMU are what users change between
	 * runs, so they are attributes of each run, shown in every comparison, not keys.
	 * Memory to the nearest GiB: firmware and kernel reservations move the exact figure.
	 */
	snprintf(hw->fingerprint, sizeof(hw->fingerprint),
		 "%.32s/%.100s/pkg%u-numa%u-core%u-pu%u/mem%" PRIu64 "G/pages:%.60s",
		 arch ? arch : "unknown", model, hw->n_packages, hw->n_numa, hw->n_cores, hw->n_pus,
		 (uint64_t)((hw->memory_bytes + (1ULL << 29)) >> 30), pages);
	snprintf(hw->fingerprint_hash, sizeof(hw->fingerprint_hash), "%016" PRIx64,
		 util_fnv1a64(UTIL_FNV1A64_INIT, hw->fingerprint));
}
