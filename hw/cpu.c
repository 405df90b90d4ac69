/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu.c - CPU identification through libcpuid, plus the leaf-7 bits libcpuid has no flag for. */
#include "hw/detect.h"
#include "hw/hw.h"

#include <errno.h>
#include <libcpuid/libcpuid.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"
#include "util/util.h"

/* Names for libcpuid's hypervisor_vendor_t, in its order (libcpuid 0.6). */
static const char *hypervisor_name(hypervisor_vendor_t v)
{
	static const char *const names[] = {
	    [HYPERVISOR_NONE] = "none",
	    [HYPERVISOR_BHYVE] = "bhyve",
	    [HYPERVISOR_HYPERV] = "hyper-v",
	    [HYPERVISOR_KVM] = "kvm",
	    [HYPERVISOR_PARALLELS] = "parallels",
	    [HYPERVISOR_QEMU] = "qemu",
	    [HYPERVISOR_VIRTUALBOX] = "virtualbox",
	    [HYPERVISOR_VMWARE] = "vmware",
	    [HYPERVISOR_XEN] = "xen",
	};

	if (v >= 0 && (size_t)v < ARRAY_SIZE(names) && names[v])
		return names[v];
	return "unknown";
}

/* What memgate keeps of a raw CPUID dump, this host's or a recorded one's. */
static int identify(struct hw_cpu *cpu, struct cpu_raw_data_t *raw, struct mg_err *err)
{
	struct cpu_id_t id;
	uint32_t max_leaf, max_ext;

	if (cpu_identify(raw, &id) < 0)
		return mg_err_set(err, EIO, "libcpuid: %s", cpuid_error());
	snprintf(cpu->vendor, sizeof(cpu->vendor), "%s", id.vendor_str);
	snprintf(cpu->brand, sizeof(cpu->brand), "%s", id.brand_str);
	text_squeeze(cpu->brand, ' ');
	cpu->family = id.ext_family;
	cpu->model = id.ext_model;
	cpu->stepping = id.stepping;
	cpu->cores_per_package = id.num_cores;
	/* Per package, from CPUID itself: total_logical_cpus is the OS count of the machine that
	 * runs memgate, wrong for a recorded host. */
	cpu->logical_cpus = id.num_logical_cpus;
	snprintf(cpu->hypervisor, sizeof(cpu->hypervisor), "%s",
		 hypervisor_name(cpuid_get_hypervisor(raw, &id)));

	/* Leaf 0 EAX and leaf 0x80000000 EAX give the highest leaves the raw dump is valid for. */
	max_leaf = raw->basic_cpuid[0][EAX];
	max_ext = raw->ext_cpuid[0][EAX];
	if (max_ext >= 0x80000007)
		cpu->invariant_tsc = raw->ext_cpuid[7][EDX] & (1u << 8);
	if (max_leaf >= 7) {
		/* libcpuid stores leaf 7 sub-leaf 0, the one holding both bits. */
		cpu->erms = raw->basic_cpuid[7][EBX] & (1u << 9);
		cpu->fsrm = raw->basic_cpuid[7][EDX] & (1u << 4);
	}
	cpu->known = true;
	return 0;
}

int hw_cpu_detect(struct hw_cpu *cpu, struct mg_err *err)
{
	struct cpu_raw_data_t raw;

	memset(cpu, 0, sizeof(*cpu));
	if (!cpuid_present())
		return mg_err_set(err, ENOTSUP, "CPUID instruction not available");
	if (cpuid_get_raw_data(&raw) < 0)
		return mg_err_set(err, EIO, "libcpuid: %s", cpuid_error());
	return identify(cpu, &raw, err);
}

int hw_cpu_load(struct hw_cpu *cpu, const char *path, struct mg_err *err)
{
	struct cpu_raw_data_t raw;

	memset(cpu, 0, sizeof(*cpu));
	if (cpuid_deserialize_raw_data(&raw, path) < 0)
		return mg_err_set(err, EINVAL, "%s: not a libcpuid raw CPUID dump: %s", path,
				  cpuid_error());
	return identify(cpu, &raw, err);
}

int hw_cpu_record(const char *path, struct mg_err *err)
{
	struct cpu_raw_data_t raw;

	if (!cpuid_present())
		return mg_err_set(err, ENOTSUP, "CPUID instruction not available");
	if (cpuid_get_raw_data(&raw) < 0 || cpuid_serialize_raw_data(&raw, path) < 0)
		return mg_err_set(err, EIO, "%s: libcpuid: %s", path, cpuid_error());
	return 0;
}
