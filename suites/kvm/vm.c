/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - the kvm suite's VM: opened, made fresh, closed; where a slot goes; one timed
 * memslot change on the kernel or on the reference; pinning the case. */
#include "suites/kvm/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw/tsc.h"

int kvm_vm_open(struct kvm_vm *v, unsigned int slots, struct mg_err *err)
{
	v->mem_len = (size_t)slots * SLOT_BYTES;
	v->fd = -1;
	v->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (v->kvm < 0)
		return mg_err_set(err, errno, "/dev/kvm: %s", strerror(errno));
	v->mem = mmap(NULL, v->mem_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v->mem == MAP_FAILED) {
		int e = errno;

		close(v->kvm);
		v->kvm = -1;
		return mg_err_set(err, e, "mmap of %zu MiB: %s", v->mem_len >> 20, strerror(e));
	}
	return 0;
}

void kvm_vm_close(struct kvm_vm *v)
{
	if (v->fd >= 0)
		close(v->fd);
	munmap(v->mem, v->mem_len);
	close(v->kvm);
}

/* A fresh VM, the previous one (and all its slots) gone. */
int kvm_vm_fresh(struct kvm_vm *v, struct mg_err *err)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = ioctl(v->kvm, KVM_CREATE_VM, 0);
	if (v->fd < 0)
		return mg_err_set(err, errno, "KVM_CREATE_VM: %s", strerror(errno));
	return 0;
}

/* Slot @id where the sequence puts it: at its place, or moved past all slots. */
struct memslot kvm_slot_at(unsigned int id, unsigned int slots, bool moved, uint32_t flags,
			   const struct kvm_vm *v)
{
	uint64_t gpa = GPA_BASE + (uint64_t)(moved ? slots : id) * SLOT_BYTES;

	return (struct memslot){.id = (int32_t)id,
				.base_gfn = gpa >> 12,
				.npages = SLOT_BYTES >> 12,
				.userspace_addr = (uintptr_t)(v->mem + (size_t)id * SLOT_BYTES),
				.flags = flags};
}

int kvm_side_set(struct kvm_side *sd, const struct memslot *s, double *cycles)
{
	uint64_t t0;
	int ret;

	if (sd->vm) {
		struct kvm_userspace_memory_region r = {.slot = (uint32_t)s->id,
							.flags = s->flags,
							.guest_phys_addr = s->base_gfn << 12,
							.memory_size = s->npages << 12,
							.userspace_addr = s->userspace_addr};

		t0 = tsc_begin();
		ret = ioctl(sd->vm->fd, KVM_SET_USER_MEMORY_REGION, &r) ? -errno : 0;
		t0 = tsc_end() - t0;
	} else {
		t0 = tsc_begin();
		ret = memslots_set(sd->ref, s);
		t0 = tsc_end() - t0;
	}
	if (cycles)
		*cycles = (double)t0;
	return ret;
}

/*
 * Pin the case to the lowest PU it may run on: unpinned ioctl timings are up to 5x noisier
 * here, and the PU matters: on this VM an insert pinned to PU 1 took 80 us against 7 us on
 * PU 0, every time, so the PU is fixed rather than wherever the case happened to start.
 * Returns the PU, or -1 (logged) when pinning failed. @second (may be NULL) gets the next PU
 * the process was allowed before it was pinned, or -1 when there is none.
 */
int kvm_pin_first(struct case_ctx *ctx, int *second)
{
	cpu_set_t allowed, one;
	int first = -1;

	if (second)
		*second = -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		case_log(ctx, "not pinned: %s", strerror(errno));
		return -1;
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed))
			continue;
		if (first >= 0) {
			if (second)
				*second = c;
			break;
		}
		first = c;
	}
	CPU_ZERO(&one);
	if (first >= 0)
		CPU_SET(first, &one);
	if (first < 0 || sched_setaffinity(0, sizeof(one), &one)) {
		case_log(ctx, "not pinned: %s", first < 0 ? "no allowed PU" : strerror(errno));
		return -1;
	}
	case_prop(ctx, "pinned_pu", "%d", first);
	return first;
}
/* Which KVM this is: kvm_intel, kvm_amd or kvm_pvm (see hw.h). */
void kvm_prop_module(struct case_ctx *ctx)
{
	const char *mod = case_hw(ctx)->kvm_module;

	case_prop(ctx, "kvm_module", "%s", mod[0] ? mod : "unknown");
}
