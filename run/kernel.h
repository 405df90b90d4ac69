/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel.h - the kernel `memgate vm --kernel` boots instead of the kit's: a linux-image .deb,
 * or an image (vmlinuz, a tree's arch/x86/boot/bzImage) with its modules (a .deb, a
 * lib/modules/VERSION folder, or a root holding one) or KVM built in. Its version is read from
 * the image's own header; its KVM modules, with what they depend on, go to the guest as a cpio
 * archive appended to the kit's initramfs, which guest/init loads (memgate.kvm=1).
 */
#ifndef MG_RUN_KERNEL_H
#define MG_RUN_KERNEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

struct vm_kernel {
	char image[PATH_MAX];	/* what QEMU boots */
	char version[128];	/* its release, as uname -r will say: "6.1.0-28-cloud-amd64" */
	char banner[256];	/* the header's whole version string */
	char modules[PATH_MAX]; /* its lib/modules/VERSION; "" when none came with it */
	char kvm[160];		/* where KVM comes from, for the reports */
	/* The package the modules (or the image) were unpacked from, and where: messages name the
	 * package, never memgate's temporary folder. "" when none. */
	char package[PATH_MAX], unpacked[PATH_MAX];
};

/**
 * vm_kernel_version() - the release and the whole version string of the x86 boot image
 * @image, from its setup header (kernel_version at 0x20e). Returns 0, or -errno with @err
 * (-ENOEXEC: not a bzImage).
 */
int vm_kernel_version(const char *image, char *version, size_t len, char *banner, size_t blen,
		      struct mg_err *err);

/**
 * vm_kernel_modinfo() - @key's value ("depends", "vermagic") in the .modinfo section of the
 * kernel module @m of @n bytes, into @out. Returns 0, -ENOEXEC when @m is no ELF64 module
 * (every offset checked against @n), -ENOENT when it has no such key.
 */
int vm_kernel_modinfo(const unsigned char *m, size_t n, const char *key, char *out, size_t len);

/**
 * vm_kernel_open() - @kernel (a .deb or an image) and @modules (NULL, a .deb, or a folder)
 * into @k; packages are unpacked under @workdir with dpkg-deb. Returns 0, or -errno with @err
 * saying which file and what was expected.
 */
int vm_kernel_open(struct vm_kernel *k, const char *kernel, const char *modules,
		   const char *workdir, struct mg_err *err);

/**
 * vm_kernel_kvm_archive() - the cpio archive @out for the guest: an empty /modules.load (the
 * kit's drivers are another kernel's), and /kvm with kvm.ko, kvm-amd.ko, kvm-intel.ko and
 * what they depend on (their .modinfo), listed in loading order in /kvm/amd.load and
 * /kvm/intel.load; compressed ones (.ko.xz, .ko.zst, .ko.gz) decompressed on the way. KVM
 * built in (modules.builtin, or no modules at all) lists nothing. Sets @k->kvm. Returns 0, or
 * -errno with @err: a module built for another kernel (its vermagic), one that does not
 * decompress, or modules without KVM.
 */
int vm_kernel_kvm_archive(struct vm_kernel *k, const char *out, struct mg_err *err);

#endif
