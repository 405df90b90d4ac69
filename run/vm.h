/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vm.h - memgate inside a guest of a chosen NUMA shape (`memgate vm`): the guest kit's kernel
 * and initramfs with this very memgate and its libraries appended (guest/pack.sh), booted by
 * a real QEMU as a q35 machine of so many sockets, nodes, CPUs and memory; the command runs as
 * the kit's init tells it (guest/init), and its reports come back over two serial ports.
 */
#ifndef MG_RUN_VM_H
#define MG_RUN_VM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "hw/hw.h"
#include "run/guest.h"
#include "util/err.h"

/* Where `make` puts the packed memgate, beside the kit (guest/pack.sh). */
#define VM_PACK "memgate.cpio"
/* The default shape: two sockets, a node and a CPU each, 1 GiB a node. */
#define VM_DEFAULT_SHAPE "sockets=2,nodes=2,cpus=2,mem=2G"
/* The whole guest, boot to poweroff, unless --timeout: a run in it has its own per case. */
#define VM_DEFAULT_TIMEOUT_S 3600
/* Where the guest's command writes its reports: guest/init sends them to ttyS1 and ttyS2. */
#define VM_GUEST_JSON "/memgate-out/results.json"
#define VM_GUEST_JUNIT "/memgate-out/results.xml"

/**
 * vm_shape_parse() - "sockets=S,nodes=N,cpus=C,mem=SIZE", each optional (a missing one from
 * VM_DEFAULT_SHAPE; nodes, then cpus, default to the sockets) into @out. The CPUs divide
 * evenly into the sockets and the nodes, each node has 128 MiB at least. Returns 0, or
 * -EINVAL with @err naming what was wrong.
 */
int vm_shape_parse(const char *text, struct guest_numa *out, struct mg_err *err);

/**
 * vm_shape_of() - the shape of @machine (an hwloc XML loaded, say) scaled to a guest here:
 * its sockets and NUMA nodes, the fewest CPUs that divide evenly into both, a GiB a node or
 * what half of @host_available_mib gives them. Returns 0, or -EINVAL / -ENOMEM with @err
 * saying why that machine does not fit a guest here.
 */
int vm_shape_of(const struct hw_info *machine, uint64_t host_available_mib, struct guest_numa *out,
		struct mg_err *err);

/** vm_shape_name() - @g as vm_shape_parse() reads it, the parameters of the guest's suites. */
void vm_shape_name(const struct guest_numa *g, char *buf, size_t len);

struct vm_spec {
	const char *qemu;
	const struct guest_kit *kit;
	const char *pack;  /* guest/pack.sh's archive of this memgate */
	const char *extra; /* an archive appended after it (run/kernel.h's KVM), or NULL */
	const char *cpu;   /* -cpu, NULL: max */
	bool icount;	   /* under TCG: the guest's clock counts instructions (guest.h) */
	bool kvm_in_guest; /* guest/init loads KVM before the command (memgate.kvm=1) */
	bool kvm;	   /* -accel kvm, else tcg */
	struct guest_numa shape;
	double timeout_s;
	const char *const *args; /* the command in the guest, NULL-ended */
	const char *workdir;	 /* a folder of the caller's: the initramfs and the reports */
	void (*on_line)(void *arg, const char *line); /* each console line, or NULL */
	void *line_arg;
	const volatile sig_atomic_t *interrupted; /* set by a stop signal: the guest is killed */
};

struct vm_result {
	struct guest_boot boot;
	int exit; /* the command's status in the guest; -1: it did not end */
	char json[PATH_MAX], junit[PATH_MAX]; /* the reports that came back; "" when none did */
};

/**
 * vm_pack_find() - the packed memgate beside this binary (EXE_DIR/guest/VM_PACK) into @out.
 * Returns 0, or -ENOENT with @err saying how to make it.
 */
int vm_pack_find(char *out, size_t len, struct mg_err *err);

/**
 * vm_args_check() - can @args pass the kernel's command line to init? Each is a word without
 * white space or quotes, and all of them fit. Returns 0, or -EINVAL with @err naming one.
 */
int vm_args_check(const char *const *args, struct mg_err *err);

/**
 * vm_run() - boot @s's guest, run its command, and collect the reports it wrote into
 * @s->workdir. Returns 0 when the guest ran the command to its end (whatever its status,
 * @out->exit) and powered off; else what guest_boot() returns, or -errno with @err, and
 * @out->boot.tail the console's last lines.
 */
int vm_run(const struct vm_spec *s, struct vm_result *out, struct mg_err *err);

#endif
