/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.h - what the kvm suite's cases share: a VM to set memslots on, a slot's place, one
 * timed KVM_SET_USER_MEMORY_REGION (or the same change on the reference), pinning. */
#ifndef MG_SUITES_KVM_VM_H
#define MG_SUITES_KVM_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "impl/memslots.h"
#include "run/case.h"
#include "util/err.h"

/*
 * Slots of 2 MiB, one anonymous mapping behind them all, reserved and never touched: the
 * smallest slot the kernel can map with one large page, so its per-slot arrays (large-page
 * info, the dirty bitmap when logging) are those of a real guest's slot, and 32,764 of them
 * are 64 GiB of address space and no memory. Guest physical addresses start at 4 GiB.
 */
#define SLOT_BYTES (2ULL << 20)
#define GPA_BASE (4ULL << 30)

/* A VM of the host's KVM and the mapping behind its slots. */
struct kvm_vm {
	int kvm, fd;
	char *mem;	/* behind the slots */
	size_t mem_len; /* slots * SLOT_BYTES */
};

/** kvm_vm_open() - /dev/kvm and a reserved mapping for @slots slots (no VM yet). 0 or -errno. */
int kvm_vm_open(struct kvm_vm *v, unsigned int slots, struct mg_err *err);

/** kvm_vm_fresh() - a fresh VM, the previous one (and all its slots) gone. 0 or -errno. */
int kvm_vm_fresh(struct kvm_vm *v, struct mg_err *err);

/** kvm_vm_close() - the VM, the mapping and /dev/kvm closed. */
void kvm_vm_close(struct kvm_vm *v);

/** kvm_slot_at() - slot @id where the sequence puts it: at its place, or moved past all @slots. */
struct memslot kvm_slot_at(unsigned int id, unsigned int slots, bool moved, uint32_t flags,
			   const struct kvm_vm *v);

/* One side of a comparison: the kernel's VM, or the reference's array. */
struct kvm_side {
	struct kvm_vm *vm;    /* the kernel's, or NULL */
	struct memslots *ref; /* the reference's, or NULL */
};

/** kvm_side_set() - set @s on @sd (a deletion when npages is 0), its TSC cycles in @cycles. */
int kvm_side_set(struct kvm_side *sd, const struct memslot *s, double *cycles);

/**
 * kvm_pin_first() - pin the case to the lowest PU it may run on. Returns the PU, or -1
 * (logged); @second (may be NULL) gets the next PU it was allowed, or -1.
 */
int kvm_pin_first(struct case_ctx *ctx, int *second);

/** kvm_prop_module() - the case property kvm_module: kvm_intel, kvm_amd or kvm_pvm. */
void kvm_prop_module(struct case_ctx *ctx);

#endif
