/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kvm_guest.h - a real KVM guest whose every instruction pair is a port write: one exit a call. */
#ifndef MG_IMPL_KVM_GUEST_H
#define MG_IMPL_KVM_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/*
 * The boot model's config-space accesses come from a guest: each is a KVM_RUN that ends in
 * a KVM_EXIT_IO, as a firmware's or kernel's `out` to 0xcfc does, and between two of them the
 * vCPU thread is in the guest, outside the big lock: the gap the call_rcu thread takes the
 * lock in. The guest is one page of 16-bit code, `out %al, $0xcf; jmp .-2` (0xcf stands for
 * the config data port; a byte port keeps the code to 4 bytes).
 */

/*
 * Without /dev/kvm (containers, cloud VMs without nested virtualisation) the guest is modelled:
 * each exit is the vCPU thread spending the time of a real exit's round trip (the guest's own
 * instructions, the world switch, KVM's handling, the return to user space) busy outside the
 * big lock, so the call_rcu thread finds the same gaps to take it in. The default, 2 us, is the
 * order of a KVM_EXIT_IO round trip to user space under the nested KVM of these CI hosts; it
 * has not yet been measured on one of them: where KVM exists, rcu.perf.boot records the real
 * round trip as guest.exit_ns, and --guest-exit-ns sets the model's. The gates' verdicts were
 * checked to hold from 0.5 to 10 us (docs/figures.md).
 */
#define GUEST_MODEL_EXIT_NS 2000

struct kvm_guest {
	int kvm, vm, vcpu;
	bool own_vm; /* vm was made for it (kvm_guest_close() closes it) */
	void *mem;   /* the guest's memory, at guest physical 0 */
	size_t mem_bytes;
	void *run; /* struct kvm_run, mmapped */
	long run_size;
	uint64_t exits;
	uint64_t model_exit_ns; /* 0: a real KVM guest; else each exit is modelled, this long */
	int64_t exit_ns_total;	/* wall time spent in kvm_guest_exit(): the exits' round trips */
};

/**
 * kvm_guest_open() - create the VM and its vCPU. Returns 0, or -errno with @err: -ENOENT or
 * -EACCES when /dev/kvm is missing or not ours (callers run without a guest then).
 */
int kvm_guest_open(struct kvm_guest *g, struct mg_err *err);

/*
 * Another guest on the same scaffold: 16-bit real mode at 0:0,  at guest physical 0 in
 *  of memory in memslot , one vCPU; in the VM  (another user's, which keeps
 * it) or, when  is -1, in a VM of its own.
 */
struct kvm_guest_shape {
	const void *code;
	size_t code_len;
	size_t mem_bytes;
	bool shared; /* MAP_SHARED memory (else private) */
	unsigned int slot;
	int vm;
};

/** kvm_guest_open_shaped() - kvm_guest_open() of  guest. The same returns. */
int kvm_guest_open_shaped(struct kvm_guest *g, const struct kvm_guest_shape *s, struct mg_err *err);

/**
 * kvm_guest_open_modelled() - a guest without KVM whose every exit takes @exit_ns of the calling
 * thread's time (see GUEST_MODEL_EXIT_NS). Never fails.
 */
void kvm_guest_open_modelled(struct kvm_guest *g, uint64_t exit_ns);

/** kvm_guest_exit() - run the vCPU until its next port write. Returns 0 or -errno with @err. */
int kvm_guest_exit(struct kvm_guest *g, struct mg_err *err);

/** kvm_guest_close() - tear down what kvm_guest_open() made; a zeroed @g is fine. */
void kvm_guest_close(struct kvm_guest *g);

#endif
