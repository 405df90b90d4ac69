/* SPDX-License-Identifier: GPL-2.0-or-later */
/* detect.h - the parts hw_detect() and hw_load_record() are made of, shared by the files of
 * hw/ (cpu.c, topo.c, host.c, record.c, hw.c); the other layers use hw.h. */
#ifndef MG_HW_DETECT_H
#define MG_HW_DETECT_H

#include "hw/hw.h"
#include "util/err.h"

/** hw_cpu_detect() - identify the CPU with libcpuid. Returns 0 or -errno with @err. */
int hw_cpu_detect(struct hw_cpu *cpu, struct mg_err *err);

/**
 * hw_cpu_load() - identify the CPU of a raw CPUID dump (libcpuid's serialised format) at @path.
 * Returns 0, or -errno with @err (EINVAL: not such a dump; EIO: libcpuid does not know it).
 */
int hw_cpu_load(struct hw_cpu *cpu, const char *path, struct mg_err *err);

/** hw_cpu_record() - write this CPU's raw CPUID dump to @path. Returns 0 or -errno with @err. */
int hw_cpu_record(const char *path, struct mg_err *err);

/** hw_topo_load() - load the topology named by @spec (NULL: this host) into @hw. */
int hw_topo_load(struct hw_info *hw, const char *spec, struct mg_err *err);

/** hw_host_probe() - sysfs, /proc and ioctl facts of this host into @hw. Never fails. */
void hw_host_probe(struct hw_info *hw);

/** hw_fingerprint() - fill @hw->fingerprint and its hash from the facts already in @hw. */
void hw_fingerprint(struct hw_info *hw);

#endif
