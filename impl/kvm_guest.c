/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kvm_guest.c - a real-mode KVM guest: by default one page writing a port in a loop. */
#include "impl/kvm_guest.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

#define GUEST_PAGE 4096
#define CONFIG_PORT 0xcf

/* out %al, $0xcf ; jmp back to it */
static const uint8_t guest_code[] = {0xe6, CONFIG_PORT, 0xeb, 0xfc};

static int fail(struct kvm_guest *g, struct mg_err *err, const char *what)
{
	int e = errno;

	kvm_guest_close(g);
	return mg_err_set(err, e, "%s: %s", what, strerror(e));
}

int kvm_guest_open_shaped(struct kvm_guest *g, const struct kvm_guest_shape *s, struct mg_err *err)
{
	struct kvm_userspace_memory_region region = {
	    .slot = s->slot, .guest_phys_addr = 0, .memory_size = s->mem_bytes};
	struct kvm_sregs sregs;
	struct kvm_regs regs = {.rip = 0, .rflags = 2}; /* bit 1 is reserved, always set */

	memset(g, 0, sizeof(*g));
	g->kvm = g->vm = g->vcpu = -1;
	g->mem = MAP_FAILED;
	g->run = MAP_FAILED;
	g->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (g->kvm < 0)
		return fail(g, err, "/dev/kvm");
	g->own_vm = s->vm < 0;
	g->vm = g->own_vm ? ioctl(g->kvm, KVM_CREATE_VM, 0) : s->vm;
	if (g->vm < 0)
		return fail(g, err, "KVM_CREATE_VM");
	g->mem = mmap(NULL, s->mem_bytes, PROT_READ | PROT_WRITE,
		      (s->shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (g->mem == MAP_FAILED)
		return fail(g, err, "mmap of the guest's memory");
	g->mem_bytes = s->mem_bytes;
	memcpy(g->mem, s->code, s->code_len);
	region.userspace_addr = (uintptr_t)g->mem;
	if (ioctl(g->vm, KVM_SET_USER_MEMORY_REGION, &region))
		return fail(g, err, "KVM_SET_USER_MEMORY_REGION");
	g->vcpu = ioctl(g->vm, KVM_CREATE_VCPU, 0);
	if (g->vcpu < 0)
		return fail(g, err, "KVM_CREATE_VCPU");
	g->run_size = ioctl(g->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (g->run_size <= 0)
		return fail(g, err, "KVM_GET_VCPU_MMAP_SIZE");
	g->run = mmap(NULL, (size_t)g->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, g->vcpu, 0);
	if (g->run == MAP_FAILED)
		return fail(g, err, "mmap of kvm_run");
	/* Real mode at 0:0. */
	if (ioctl(g->vcpu, KVM_GET_SREGS, &sregs))
		return fail(g, err, "KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(g->vcpu, KVM_SET_SREGS, &sregs))
		return fail(g, err, "KVM_SET_SREGS");
	if (ioctl(g->vcpu, KVM_SET_REGS, &regs))
		return fail(g, err, "KVM_SET_REGS");
	return 0;
}

int kvm_guest_open(struct kvm_guest *g, struct mg_err *err)
{
	const struct kvm_guest_shape one_page = {
	    .code = guest_code, .code_len = sizeof(guest_code), .mem_bytes = GUEST_PAGE, .vm = -1};

	return kvm_guest_open_shaped(g, &one_page, err);
}

void kvm_guest_open_modelled(struct kvm_guest *g, uint64_t exit_ns)
{
	memset(g, 0, sizeof(*g));
	g->kvm = g->vm = g->vcpu = -1;
	g->model_exit_ns = exit_ns;
}

/* The modelled round trip: the thread is busy, as a vCPU in the guest is, not asleep. */
static void modelled_exit(struct kvm_guest *g, int64_t t0)
{
	while (util_now_ns() - t0 < (int64_t)g->model_exit_ns)
		__builtin_ia32_pause();
}

int kvm_guest_exit(struct kvm_guest *g, struct mg_err *err)
{
	struct kvm_run *run = g->run;
	int64_t t0 = util_now_ns();

	if (g->model_exit_ns) {
		modelled_exit(g, t0);
		g->exits++;
		g->exit_ns_total += util_now_ns() - t0;
		return 0;
	}
	for (;;) {
		if (ioctl(g->vcpu, KVM_RUN, 0)) {
			if (errno == EINTR)
				continue;
			return mg_err_set(err, errno, "KVM_RUN: %s", strerror(errno));
		}
		if (run->exit_reason == KVM_EXIT_IO && run->io.port == CONFIG_PORT &&
		    run->io.direction == KVM_EXIT_IO_OUT) {
			g->exits++;
			g->exit_ns_total += util_now_ns() - t0;
			return 0;
		}
		if (run->exit_reason != KVM_EXIT_INTR)
			return mg_err_set(err, EIO, "KVM_RUN: unexpected exit %u (io port 0x%x)",
					  run->exit_reason, run->io.port);
	}
}

void kvm_guest_close(struct kvm_guest *g)
{
	if (g->run && g->run != MAP_FAILED)
		munmap(g->run, (size_t)g->run_size);
	if (g->mem && g->mem != MAP_FAILED)
		munmap(g->mem, g->mem_bytes);
	if (g->vcpu > 0)
		close(g->vcpu);
	if (g->vm > 0 && g->own_vm)
		close(g->vm);
	if (g->kvm > 0)
		close(g->kvm);
	memset(g, 0, sizeof(*g));
	g->kvm = g->vm = g->vcpu = -1;
}
