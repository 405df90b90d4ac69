/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guest.h - memgate's guest kit (guest/mkkit.sh: Debian's cloud kernel and a busybox-static
 * initramfs whose init reports on the serial console) booted by a real QEMU, KVM's vCPUs where
 * /dev/kvm is usable and TCG's otherwise, with its console read line by line.
 */
#ifndef MG_RUN_GUEST_H
#define MG_RUN_GUEST_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

/* Where `make` puts the kit, beside the memgate binary it builds. */
#define GUEST_KIT_DIR "guest"
#define GUEST_KIT_KERNEL "vmlinuz"
#define GUEST_KIT_INITRD "initramfs.cpio"

struct guest_kit {
	char kernel[PATH_MAX], initrd[PATH_MAX]; /* "" when there is none */
	char why[600];				 /* when there is none: why, and what to do */
};

/**
 * guest_kit_dir() - where `make` builds the guest kit for this memgate: EXE_DIR/guest, into
 * @dir of @len bytes. Returns 0, or -errno with @err (no /proc/self/exe, too long a path).
 */
int guest_kit_dir(char *dir, size_t len, struct mg_err *err);

/**
 * guest_kit_find() - the kernel and initramfs to boot: @kernel and @initrd where given
 * (--guest-kernel, --guest-initrd), else the kit `make` built beside this memgate
 * (EXE_DIR/guest/). A file named on the command line that cannot be read is -errno with @err;
 * no kit built is 0 with @k->kernel empty and @k->why saying how to build one.
 */
int guest_kit_find(struct guest_kit *k, const char *kernel, const char *initrd, struct mg_err *err);

/* What the guest's init said (guest/init), uptimes in seconds, negative until said. */
struct guest_console {
	double init_s, modules_s, disks_s, idle_s, vm_s, kvm_s;
	int disks;	 /* the disks it saw; -1 until said */
	int vm_exit;	 /* memgate vm: the command's exit status; -1 until said */
	char kvm_ext[8]; /* memgate.kvm=1: "svm" or "vmx" once KVM is up in the guest */
	bool done;
	char error[512]; /* its first "error" line, or a line memgate could not read */
};

enum guest_event {
	GUEST_OTHER, /* a kernel message, or nothing */
	GUEST_INIT,
	GUEST_MODULES,
	GUEST_DISKS,
	GUEST_IDLE,
	GUEST_KVM, /* KVM is up in the guest (kvm_ext) */
	GUEST_VM,  /* memgate vm's command ended (vm_exit) */
	GUEST_DONE,
	GUEST_ERROR, /* the guest said "error", or a "memgate-guest:" line was malformed */
};

/** guest_console_init() - nothing said yet. */
void guest_console_init(struct guest_console *c);

/**
 * guest_console_line() - read one console line (without its newline; a trailing CR is
 * ignored) into @c. Lines that do not start "memgate-guest: " are GUEST_OTHER.
 */
enum guest_event guest_console_line(struct guest_console *c, const char *line);

/* QEMU's memory, from /proc/PID/smaps: its [heap] and all its anonymous memory. */
struct guest_qemu_mem {
	uint64_t heap_kib, anon_kib;
	bool read;
};

/*
 * A multi-socket NUMA guest (memgate vm): q35 with -cpu max (TCG's default model lacks
 * rdtscp, which memgate uses), @cpus vCPUs in @sockets packages, @nodes nodes each with an
 * equal share of the CPUs (in order) and of @mem_mib, one memory-backend-ram a node.
 */
struct guest_numa {
	unsigned int sockets, nodes, cpus, mem_mib;
};

/*
 * Under TCG with icount (guest_boot_spec.icount): each instruction advances the guest's clock
 * by 2^GUEST_ICOUNT_SHIFT ns, and nothing else does while a vCPU runs (sleep=off: an idle
 * guest's clock jumps to its next timer instead of waiting for the host's). TCG's TSC reads
 * that clock, so a TSC difference in the guest counts the instructions between the reads.
 */
#define GUEST_ICOUNT_SHIFT 0

struct guest_boot_spec {
	const char *qemu;
	const struct guest_kit *kit;
	bool kvm;		       /* -accel kvm, else tcg */
	const struct guest_numa *numa; /* NULL: the boot cases' pc machine */
	const char *params;	       /* more kernel parameters, or NULL */
	const char *const *init_args;  /* init's arguments (after " -- "), NULL-ended, or NULL */
	const char *serial_files[2];   /* files the guest's ttyS1 and ttyS2 write to, or NULL */
	void (*on_line)(void *arg, const char *line); /* each console line, or NULL */
	void *line_arg;
	const volatile sig_atomic_t *interrupted; /* set by a stop signal: QEMU is killed */
	unsigned int disks;   /* each a virtio-scsi-pci controller of its own with one scsi-hd */
	unsigned int vcpus;   /* 0: GUEST_VCPUS */
	unsigned int mem_mib; /* 0: GUEST_MEM_MIB */
	double hold_s;	      /* the guest's idle pause before poweroff */
	double timeout_s;     /* the boot is killed past it */
	double cut_s; /* stopped this long after launch if not every disk is seen (0: never) */
	const char *preload; /* LD_PRELOAD for QEMU (a test fixture), or NULL */
	const char *cpu;     /* the NUMA guest's -cpu model; NULL: max */
	bool icount;	     /* under TCG: -icount shift=GUEST_ICOUNT_SHIFT,sleep=off */
};

/*
 * One vCPU. With two under TCG, 60-disk boots livelocked now and then (3 of about 40 on a
 * loaded 2-vCPU host): both vCPUs spinning with interrupts off in the disks' interrupt path,
 * and no report, as TCG has no NMI for the hard-lockup detector. One vCPU cannot deadlock
 * with another. Each device then gets two MSI-X vectors (GUEST_DISK_VECTORS): with the four
 * it asks by default (config, control, event, one request queue) sixty devices need more
 * than one x86 CPU has free, and the last six probes fail with ENOSPC (-28).
 */
#define GUEST_VCPUS 1
/* Per virtio-scsi-pci: the config vector and one the queues share (virtio_pci's fallback). */
#define GUEST_DISK_VECTORS 2
#define GUEST_MEM_MIB 256
/* The mmap threshold QEMU's glibc is run with, bytes: its own starting value, fixed (boot_args()).
 */
#define GUEST_MMAP_THRESHOLD (128u << 10)

/* One boot: times from QEMU's launch (host clock, ms), what the console said, QEMU's memory. */
struct guest_boot {
	double init_ms, disks_ms, wall_ms;
	struct guest_console con;
	struct guest_qemu_mem at_disks, after_idle; /* read when the guest said so */
	uint64_t minflt, majflt;		    /* QEMU's faults, read at "done" */
	int status;				    /* waitpid()'s */
	bool cut;				    /* stopped at @s->cut_s, disks not all seen */
	char tail[2048];			    /* the console's last lines */
	char argv_text[1024];			    /* the command's head, for the log */
};

/**
 * guest_boot() - boot the kit in @s->qemu until the guest's init says "done" and QEMU exits.
 * QEMU dies with the caller and is killed at @s->timeout_s, or at @s->cut_s while the
 * guest has not reported its disks. Returns 0 when the guest said done and QEMU exited 0;
 * -ETIMEDOUT; -ECANCELED at the cut (@out->cut); -EINTR once @s->interrupted is set; -EIO
 * when QEMU ended first or the guest said "error" (@err and @out->tail say what); another
 * -errno with @err.
 */
int guest_boot(const struct guest_boot_spec *s, struct guest_boot *out, struct mg_err *err);

#endif
