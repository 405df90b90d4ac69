/* guest.h - a real KVM guest whose every instruction pair is a port write: one exit a call. */
#ifndef MG_IMPL_GUEST_H
#define MG_IMPL_GUEST_H

#include <stdint.h>

#include "util/err.h"

/*
 * The boot model's config-space accesses come from a guest: each is a KVM_RUN that ends in
 * a KVM_EXIT_IO, as a firmware's or kernel's `out` to 0xcfc does, and between two of them the
 * vCPU thread is in the guest, outside the big lock: the gap the call_rcu thread takes the
 * lock in. The guest is one page of 16-bit code, `out %al, $0xcf; jmp .-2` (0xcf stands for
 * the config data port; a byte port keeps the code to 4 bytes).
 */

struct guest {
	int kvm, vm, vcpu;
	void *mem; /* the guest's one page */
	void *run; /* struct kvm_run, mmapped */
	long run_size;
	uint64_t exits;
};

/**
 * guest_open() - create the VM and its vCPU. Returns 0, or -errno with @err: -ENOENT or
 * -EACCES when /dev/kvm is missing or not ours (callers run without a guest then).
 */
int guest_open(struct guest *g, struct mg_err *err);

/** guest_exit() - run the vCPU until its next port write. Returns 0 or -errno with @err. */
int guest_exit(struct guest *g, struct mg_err *err);

/** guest_close() - tear down what guest_open() made; a zeroed @g is fine. */
void guest_close(struct guest *g);

#endif
