/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_kernel.c - run/kernel.c on made-up kernels: an image's version from its boot header,
 * packages and module folders, KVM's modules and what they depend on, in loading order, with
 * each mismatch named; and the cpio archive the guest gets (util/cpio.c), read back. */
#include "tests/testutil.h"

#include <elf.h>

#include "run/kernel.h"
#include "util/text.h"

#define VERSION "6.1.0-test"

/* @path made from @data of @len bytes, its folders too. */
static void put(const char *path, const void *data, size_t len)
{
	char cmd[4200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* An x86 boot image as far as memgate reads one: "HdrS" and the version string's offset. */
static void make_image(const char *path, const char *banner)
{
	unsigned char img[0x400] = {0};

	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00; /* the string at 0x100 + 0x200 */
	img[0x20f] = 0x01;
	snprintf((char *)img + 0x300, 0x100, "%s", banner);
	put(path, img, sizeof(img));
}

/* A kernel module as far as memgate reads one: an ELF64 file with a .modinfo section holding
 * "vermagic=@magic" and "depends=@deps". */
static void make_module(const char *path, const char *magic, const char *deps)
{
	static const char names[] = "\0.shstrtab\0.modinfo";
	unsigned char buf[1024] = {0};
	Elf64_Ehdr *eh = (void *)buf;
	Elf64_Shdr sh[3] = {{0}};
	size_t info_at = sizeof(*eh) + sizeof(names), info_len, sh_at;
	int n = snprintf((char *)buf + info_at, 400,
			 "license=GPL%cvermagic=%s SMP mod_unload%c"
			 "depends=%s%cname=x",
			 0, magic, 0, deps, 0);

	info_len = (size_t)n + 1;
	sh_at = (info_at + info_len + 7) & ~(size_t)7;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = sh_at;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 1;
	memcpy(buf + sizeof(*eh), names, sizeof(names));
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = sizeof(*eh),
			     .sh_size = sizeof(names)};
	sh[2] = (Elf64_Shdr){
	    .sh_name = 11, .sh_type = SHT_PROGBITS, .sh_offset = info_at, .sh_size = info_len};
	memcpy(buf + sh_at, sh, sizeof(sh));
	put(path, buf, sh_at + sizeof(sh));
}

/* Debian's layout of KVM's modules under @root for kernel @ver, built for @magic. */
static void make_modules(const char *root, const char *ver, const char *magic)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/virt/lib/irqbypass.ko", root, ver);
	make_module(p, magic, "");
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm.ko", root, ver);
	make_module(p, magic, "irqbypass");
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko", root, ver);
	make_module(p, magic, "kvm");
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-intel.ko", root, ver);
	make_module(p, magic, "kvm");
	snprintf(p, sizeof(p), "%s/lib/modules/%s/modules.order", root, ver);
	put(p, "", 0);
}

/* A fresh folder under the test's own. */
static const char *fresh(const char *name)
{
	char cmd[4200];
	const char *dir = test_tmp(name);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);
	return dir;
}

/* The member @name of the newc archive @path: its data (a new string) or NULL. */
static char *cpio_member(const char *path, const char *name, size_t *len)
{
	size_t n = 0, at = 0;
	char *a = text_read_input(path, 1 << 24, &n, &(struct mg_err){0});

	assert_non_null(a);
	while (at + 110 <= n) {
		char field[9] = {0};
		size_t namesize, filesize, data;
		const char *got;

		assert_memory_equal(a + at, "070701", 6);
		memcpy(field, a + at + 6 + 6 * 8, 8);
		filesize = strtoul(field, NULL, 16);
		memcpy(field, a + at + 6 + 11 * 8, 8);
		namesize = strtoul(field, NULL, 16);
		got = a + at + 110;
		data = (at + 110 + namesize + 3) & ~(size_t)3;
		if (!strcmp(got, "TRAILER!!!"))
			break;
		if (!strcmp(got, name)) {
			char *out = malloc(filesize + 1);

			memcpy(out, a + data, filesize);
			out[filesize] = '\0';
			*len = filesize;
			free(a);
			return out;
		}
		at = (data + filesize + 3) & ~(size_t)3;
	}
	free(a);
	return NULL;
}

static void expect_member(const char *archive, const char *name, const char *text)
{
	size_t len = 0;
	char *got = cpio_member(archive, name, &len);

	if (!got)
		fail_msg("%s: no member %s", archive, name);
	if (text)
		assert_string_equal(got, text);
	free(got);
}

/* In @dir: an image of VERSION at @img, a folder for modules at @root, the archive's path at
 * @archive (each of 2048 bytes). */
static void layout(const char *dir, char *img, char *root, char *archive)
{
	snprintf(img, 2048, "%s/bzImage", dir);
	snprintf(root, 2048, "%s/root", dir);
	snprintf(archive, 2048, "%s/kvm.cpio", dir);
	make_image(img, VERSION " #1");
}

static void test_image_version(void **state)
{
	char ver[128], banner[256];
	struct mg_err err = {0};
	const char *dir = fresh("img");
	char img[4200], other[4200];

	(void)state;
	snprintf(img, sizeof(img), "%s/bzImage", dir);
	make_image(img, VERSION " (someone@example) #1 SMP PREEMPT_DYNAMIC\n");
	assert_int_equal(vm_kernel_version(img, ver, sizeof(ver), banner, sizeof(banner), &err), 0);
	assert_string_equal(ver, VERSION);
	assert_string_equal(banner, VERSION " (someone@example) #1 SMP PREEMPT_DYNAMIC");
	snprintf(other, sizeof(other), "%s/README", dir);
	put(other, "not a kernel\n", 13);
	assert_int_equal(vm_kernel_version(other, ver, sizeof(ver), banner, sizeof(banner), &err),
			 -ENOEXEC);
	assert_non_null(strstr(err.msg, "not an x86 boot image"));
	assert_int_equal(vm_kernel_version("/nonexistent/bzImage", ver, sizeof(ver), banner,
					   sizeof(banner), &err),
			 -ENOENT);
}

/* An image and a root of its modules: both vendors' lists, dependencies first. */
static void test_modules_in_order(void **state)
{
	const char *dir = fresh("order");
	char img[2048], root[2048], archive[2048];
	struct vm_kernel k;
	struct mg_err err = {0};

	(void)state;
	layout(dir, img, root, archive);
	make_modules(root, VERSION, VERSION);
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_non_null(strstr(k.modules, "/lib/modules/" VERSION));
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	assert_string_equal(k.kvm, "modules: kvm_amd, kvm_intel");
	expect_member(archive, "modules.load", "");
	expect_member(archive, "kvm/amd.load", "irqbypass.ko\nkvm.ko\nkvm_amd.ko\n");
	expect_member(archive, "kvm/intel.load", "irqbypass.ko\nkvm.ko\nkvm_intel.ko\n");
	expect_member(archive, "kvm/kvm.ko", NULL);
	expect_member(archive, "kvm/kvm_amd.ko", NULL);
	/* The lib/modules/VERSION folder itself does as well. */
	snprintf(root, sizeof(root), "%s/root/lib/modules/%s", dir, VERSION);
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
}

/* What will not do, each named: another kernel's modules, compressed ones, none of KVM. */
static void test_modules_refused(void **state)
{
	const char *dir = fresh("refused");
	char img[2048], root[2048], archive[2048], p[4200], cmd[4200];
	struct vm_kernel k;
	struct mg_err err = {0};

	(void)state;
	layout(dir, img, root, archive);
	/* Folders of another version only. */
	make_modules(root, "5.10.0-test", "5.10.0-test");
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "its modules are for 5.10.0-test, the kernel is " VERSION));
	/* The right folder, the wrong build inside it. */
	make_modules(root, VERSION, "5.10.0-test");
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is built for kernel 5.10.0-test, the kernel is " VERSION
					": it will not load"));
	assert_int_equal(access(archive, F_OK), -1);
	/* Compressed, but not what its name says: xz's own words. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko.xz", root,
		 VERSION);
	put(p, "not xz", 6);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/modules.order", root, VERSION);
	put(p, "", 0);
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EMEDIUMTYPE);
	assert_non_null(strstr(err.msg, "kvm-amd.ko.xz: xz -dc exited with status 1"));
	/* No KVM at all. */
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko.xz", root,
		 VERSION);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no KVM in kernel " VERSION "'s modules"));
	/* A vendor's module whose dependency is missing: an error, not a vendor without KVM. */
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko", root, VERSION);
	make_module(p, VERSION, "kvm");
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no kvm.ko, and modules.builtin does not list it"));
	/* Neither a package nor a folder. */
	assert_int_equal(vm_kernel_open(&k, img, img, dir, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expected a linux-image .deb"));
}

/* Modules compressed as Debian's 6.12 ships them (.ko.xz): decompressed into the archive. */
static void test_modules_compressed(void **state)
{
	const char *dir = fresh("xz");
	char img[2048], root[2048], archive[2048], cmd[4200];
	struct vm_kernel k;
	struct mg_err err = {0};
	size_t len = 0;
	char *got;

	(void)state;
	if (system("command -v xz >/dev/null 2>&1"))
		skip_because("no xz here");
	layout(dir, img, root, archive);
	make_modules(root, VERSION, VERSION);
	snprintf(cmd, sizeof(cmd), "find '%s' -name '*.ko' -exec xz {} +", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	expect_member(archive, "kvm/amd.load", "irqbypass.ko\nkvm.ko\nkvm_amd.ko\n");
	got = cpio_member(archive, "kvm/kvm.ko", &len);
	assert_non_null(got);
	assert_memory_equal(got, ELFMAG, SELFMAG);
	free(got);
}

/* KVM built in: listed in modules.builtin, or an image alone. */
static void test_builtin(void **state)
{
	const char *dir = fresh("builtin");
	char img[2048], mods[2048], archive[2048], p[4200];
	struct vm_kernel k;
	struct mg_err err = {0};
	static const char builtin[] = "kernel/virt/lib/irqbypass.ko\nkernel/arch/x86/kvm/kvm.ko\n"
				      "kernel/arch/x86/kvm/kvm-amd.ko\n"
				      "kernel/arch/x86/kvm/kvm-intel.ko\n";

	(void)state;
	snprintf(img, sizeof(img), "%s/bzImage", dir);
	snprintf(mods, sizeof(mods), "%s/lib/modules/%s", dir, VERSION);
	snprintf(archive, sizeof(archive), "%s/kvm.cpio", dir);
	make_image(img, VERSION " #1");
	snprintf(p, sizeof(p), "%s/modules.builtin", mods);
	put(p, builtin, sizeof(builtin) - 1);
	snprintf(p, sizeof(p), "%s/modules.order", mods);
	put(p, "", 0);
	assert_int_equal(vm_kernel_open(&k, img, mods, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	assert_string_equal(k.kvm, "built in (modules.builtin)");
	expect_member(archive, "kvm/amd.load", "");
	assert_int_equal(vm_kernel_open(&k, img, NULL, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	assert_string_equal(k.kvm, "built in (no modules given)");
	expect_member(archive, "modules.load", "");
}

/* A linux-image package (dpkg-deb -b of Debian's layout): its image and its modules. */
static void test_package(void **state)
{
	const char *dir = fresh("deb");
	char tree[2048], deb[2048], p[4200], cmd[9000], archive[2048], here[4096];
	static const char control[] = "Package: linux-image-test\nVersion: 1\nArchitecture: amd64\n"
				      "Maintainer: memgate <memgate@localhost>\n"
				      "Description: a made-up kernel\n";
	struct vm_kernel k;
	struct mg_err err = {0};

	(void)state;
	if (system("command -v dpkg-deb >/dev/null 2>&1"))
		skip_because("no dpkg-deb here");
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(deb, sizeof(deb), "%s/linux-image-test.deb", dir);
	snprintf(archive, sizeof(archive), "%s/kvm.cpio", dir);
	snprintf(p, sizeof(p), "%s/boot/vmlinuz-%s", tree, VERSION);
	make_image(p, VERSION " #1");
	make_modules(tree, VERSION, VERSION);
	snprintf(p, sizeof(p), "%s/DEBIAN/control", tree);
	put(p, control, sizeof(control) - 1);
	snprintf(cmd, sizeof(cmd), "dpkg-deb --root-owner-group -b '%s' '%s' >/dev/null", tree,
		 deb);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vm_kernel_open(&k, deb, NULL, dir, &err), 0);
	assert_string_equal(k.version, VERSION);
	assert_non_null(strstr(k.image, "/kernel-deb/boot/vmlinuz-" VERSION));
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	expect_member(archive, "kvm/amd.load", "irqbypass.ko\nkvm.ko\nkvm_amd.ko\n");
	/* The package's modules with an image of the same version, then of another. */
	snprintf(p, sizeof(p), "%s/bzImage", dir);
	make_image(p, VERSION " #1");
	assert_int_equal(vm_kernel_open(&k, p, deb, dir, &err), 0);
	assert_non_null(strstr(k.modules, "/modules-deb/lib/modules/" VERSION));
	make_image(p, "6.12.0-other #1");
	assert_int_equal(vm_kernel_open(&k, p, deb, dir, &err), -EINVAL);
	assert_non_null(
	    strstr(err.msg, "its modules are for " VERSION ", the kernel is 6.12.0-other"));
	/* A package named like an option is a file to dpkg-deb, not an option. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/-x.deb'", deb, dir);
	assert_int_equal(system(cmd), 0);
	assert_non_null(getcwd(here, sizeof(here)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(vm_kernel_open(&k, "-x.deb", NULL, dir, &err), 0);
	assert_int_equal(chdir(here), 0);
	/* A package whose vmlinuz is no boot image: the error names the package, not memgate's
	 * folder it was unpacked in. */
	snprintf(p, sizeof(p), "%s/boot/vmlinuz-%s", tree, VERSION);
	put(p, "text\n", 5);
	snprintf(cmd, sizeof(cmd), "dpkg-deb --root-owner-group -b '%s' '%s' >/dev/null", tree,
		 deb);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vm_kernel_open(&k, deb, NULL, dir, &err), -ENOEXEC);
	snprintf(cmd, sizeof(cmd), "--kernel %s, its boot/vmlinuz-%s: not an x86 boot image", deb,
		 VERSION);
	assert_non_null(strstr(err.msg, cmd));
}

/* What a hostile or broken kernel input gets: refused at once, naming it (docs/hostile.md). */
static void test_hostile(void **state)
{
	const char *dir = fresh("hostile");
	char img[2048], root[2048], archive[2048], fifo[2100], p[4200], cmd[9000];
	struct vm_kernel k;
	struct mg_err err = {0};

	(void)state;
	layout(dir, img, root, archive);
	make_modules(root, VERSION, VERSION);
	snprintf(fifo, sizeof(fifo), "%s/f", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* A FIFO as the kernel or its modules: refused, never opened for a read that waits. */
	assert_int_equal(vm_kernel_open(&k, fifo, NULL, dir, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--kernel "));
	assert_non_null(strstr(err.msg, "/f: a FIFO, not a regular file"));
	assert_int_equal(vm_kernel_open(&k, img, fifo, dir, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/f: a FIFO, not a regular file or a folder"));
	/* A module that is a FIFO, plain or compressed. */
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm.ko", root, VERSION);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "kvm.ko: a FIFO, not a regular file"));
	snprintf(cmd, sizeof(cmd), "%s", p);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm.ko.xz", root, VERSION);
	assert_int_equal(rename(cmd, p), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "kvm.ko.xz: a FIFO, not a regular file"));
	assert_int_equal(unlink(p), 0);
	/* A depends= cycle: irqbypass needing kvm, which needs it. */
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm.ko", root, VERSION);
	make_module(p, VERSION, "irqbypass");
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/virt/lib/irqbypass.ko", root, VERSION);
	make_module(p, VERSION, "kvm");
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "irqbypass depends on kvm, which needs irqbypass again"));
	assert_non_null(strstr(err.msg, "a cycle"));
	make_module(p, VERSION, "");
	/* A decompression bomb (256 MiB of zeros in a few KB): stopped at 64 MiB, not drained. */
	if (!system("command -v xz >/dev/null 2>&1")) {
		snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko", root,
			 VERSION);
		snprintf(cmd, sizeof(cmd), "rm '%s' && head -c 256M /dev/zero | xz -1 >'%s.xz'", p,
			 p);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), -EMEDIUMTYPE);
		assert_non_null(strstr(err.msg, "gave more than 64 MiB, more than a module holds: "
						"stopped"));
		snprintf(cmd, sizeof(cmd), "%s.xz", p);
		assert_int_equal(unlink(cmd), 0);
	}
	/* modules.builtin a FIFO, read when a vendor's module is missing: none, not a wait. */
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/arch/x86/kvm/kvm-amd.ko", root, VERSION);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/modules.builtin", root, VERSION);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(vm_kernel_kvm_archive(&k, archive, &err), 0);
	assert_string_equal(k.kvm, "modules: kvm_intel");
	/* A header whose version would climb out of lib/modules, or drive the terminal. */
	make_image(img, "../../../../.. #1");
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), -ENOEXEC);
	assert_non_null(strstr(err.msg, "version \"../../../../..\" is not a release name"));
	make_image(img, "6.1\033[2J #1");
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), -ENOEXEC);
	assert_non_null(strstr(err.msg, "\"6.1?[2J\" is not a release name"));
	make_image(img, VERSION " #1 \033]0;title\007");
	assert_int_equal(vm_kernel_open(&k, img, root, dir, &err), 0);
	assert_string_equal(k.banner, VERSION " #1 ?]0;title?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_image_version),   cmocka_unit_test(test_modules_in_order),
	    cmocka_unit_test(test_modules_refused), cmocka_unit_test(test_modules_compressed),
	    cmocka_unit_test(test_builtin),	    cmocka_unit_test(test_package),
	    cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
