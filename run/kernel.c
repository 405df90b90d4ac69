/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kernel.c - the kernel memgate vm boots, and its KVM for the guest (see kernel.h). */
#include "run/kernel.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cpio.h"
#include "util/proc.h"
#include "util/text.h"
#include "util/util.h"

/* x86 boot protocol: "HdrS" at 0x202, and at 0x20e the offset less 0x200 of the version. */
#define HDR_MAGIC_AT 0x202
#define HDR_VERSION_AT 0x20e
#define SETUP_AT 0x200
/* A module memgate reads whole: kvm.ko is 1-15 MB (with or without debug information). */
#define MODULE_MAX (64u << 20)
/* Modules a kernel's KVM may need: kvm, a vendor's, and what .modinfo says they depend on. */
#define MAX_MODULES 16
/* A package unpacks within this: 100 MB of a kernel's modules take seconds. */
#define UNPACK_TIMEOUT_S 300

/* @path as the user knows it: a file of a package unpacked at @root is "PKG, its PATH". */
static const char *shown(const struct vm_kernel *k, const char *path, char *buf, size_t len)
{
	size_t n = strlen(k->unpacked);

	if (n && !strncmp(path, k->unpacked, n) && path[n] == '/')
		snprintf(buf, len, "%s, its %s", k->package, path + n + 1);
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

/* Is the first word of @s (up to a space) a release as uname -r says it, fit to be a folder's
 * name under lib/modules: printable, no '/', not "." or ".."? */
static bool release_name(const char *s)
{
	size_t n = strcspn(s, " ");

	if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (const char *end = s + n; s < end; s++)
		if (*s <= ' ' || *s > '~' || *s == '/')
			return false;
	return true;
}

/* The version of the image @fd (named @name), as vm_kernel_version() says. */
static int image_version(int fd, const char *name, char *version, size_t len, char *banner,
			 size_t blen, struct mg_err *err)
{
	unsigned char hdr[0x210];
	char text[256];
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
	unsigned int at;
	bool ok;

	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr + HDR_MAGIC_AT, "HdrS", 4))
		return mg_err_set(err, ENOEXEC,
				  "--kernel %s: not an x86 boot image (no \"HdrS\" at 0x202): give "
				  "a vmlinuz, a tree's arch/x86/boot/bzImage or a linux-image .deb",
				  name);
	at = (unsigned int)(hdr[HDR_VERSION_AT] | hdr[HDR_VERSION_AT + 1] << 8) + SETUP_AT;
	n = pread(fd, text, sizeof(text) - 1, at);
	if (n <= 0 || at == SETUP_AT)
		return mg_err_set(err, ENOEXEC, "--kernel %s: its header names no version", name);
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	ok = release_name(text);
	/* Shown and reported: no byte of it may drive a terminal. */
	for (char *c = text; *c; c++)
		*c = (unsigned char)*c < ' ' || *c == 0x7f ? '?' : *c;
	snprintf(banner, blen, "%s", text);
	text[strcspn(text, " ")] = '\0';
	if (!ok)
		return mg_err_set(err, ENOEXEC,
				  "--kernel %s: its header's version \"%.64s\" is not a release "
				  "name (printable, no '/', not \"..\")",
				  name, text);
	if (strlen(text) >= len)
		return mg_err_set(err, ENOEXEC, "--kernel %s: its header's version is too long",
				  name);
	snprintf(version, len, "%s", text);
	return 0;
}

/* The version of the image at @path, named @name (the user's words for it) in messages. */
static int read_version(const char *path, const char *name, char *version, size_t len, char *banner,
			size_t blen, struct mg_err *err)
{
	char opt[PATH_MAX + 80];
	int fd, ret;

	snprintf(opt, sizeof(opt), "--kernel %s", name);
	if ((fd = text_input_open(path, opt, 0, err)) < 0)
		return fd;
	ret = image_version(fd, name, version, len, banner, blen, err);
	close(fd);
	return ret;
}

int vm_kernel_version(const char *image, char *version, size_t len, char *banner, size_t blen,
		      struct mg_err *err)
{
	return read_version(image, image, version, len, banner, blen, err);
}

/* Does @fd start as a Debian package (an ar archive whose first member is debian-binary)? */
static bool is_deb(int fd)
{
	char head[21] = "";

	return pread(fd, head, 20, 0) == 20 && !memcmp(head, "!<arch>\ndebian-binary", 20);
}

/* dpkg-deb -x @deb @dir; 0 or -errno with @err saying what dpkg-deb said. */
static int unpack(const char *opt, const char *deb, const char *dir, struct mg_err *err)
{
	const char *argv[] = {"dpkg-deb", "-x", "--", deb, dir, NULL};
	struct proc_spec spec = {.argv = argv, .in = PROC_NULL, .out = PROC_PIPE, .err = PROC_PIPE};
	struct proc p;
	char how[96], *said;
	int ret = proc_start(&p, &spec, err);

	if (ret)
		return ret;
	ret = proc_watch(&p, p.started_ns + (int64_t)UNPACK_TIMEOUT_S * 1000000000, &proc_stop);
	said = proc_tail_text(&p);
	proc_close(&p);
	if (!ret && !(WIFEXITED(p.status) && !WEXITSTATUS(p.status)))
		ret = mg_err_set(err, EINVAL, "%s %s: dpkg-deb -x %s: %.300s", opt, deb,
				 proc_status_text(p.status, how, sizeof(how)), said ? said : "");
	else if (ret)
		ret = mg_err_set(err, -ret, "%s %s: dpkg-deb -x: %s", opt, deb, strerror(-ret));
	free(said);
	return ret;
}

/* The one entry of @dir (a package's lib/modules or boot) that starts with @prefix. */
static int only_entry(const char *dir, const char *prefix, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && !strncmp(e->d_name, prefix, strlen(prefix))) {
			found++;
			snprintf(out, len, "%s/%s", dir, e->d_name);
		}
	closedir(d);
	return found == 1 ? 0 : found ? -E2BIG : -ENOENT;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* @k->modules from @given: a lib/modules/VERSION folder, a root holding lib/modules/VERSION,
 * or a package unpacked into @root. */
static int modules_dir(struct vm_kernel *k, const char *opt, const char *given, const char *root,
		       struct mg_err *err)
{
	char path[PATH_MAX];

	if (root) {
		snprintf(path, sizeof(path), "%s/lib/modules/%s", root, k->version);
		if (is_dir(path)) {
			snprintf(k->modules, sizeof(k->modules), "%s", path);
			return 0;
		}
		snprintf(path, sizeof(path), "%s/lib/modules", root);
		if (!only_entry(path, "", path, sizeof(path)))
			return mg_err_set(err, EINVAL,
					  "%s %s: its modules are for %s, the kernel is %s: they "
					  "will not load",
					  opt, given, strrchr(path, '/') + 1, k->version);
		return mg_err_set(err, EINVAL,
				  "%s %s: no lib/modules/%s in it: not the kernel's modules", opt,
				  given, k->version);
	}
	if (!is_dir(given))
		return mg_err_set(
		    err, EINVAL,
		    "%s %s: expected a linux-image .deb, a lib/modules/VERSION folder "
		    "or a root holding one",
		    opt, given);
	snprintf(path, sizeof(path), "%s/modules.order", given);
	if (!access(path, R_OK) ||
	    (snprintf(path, sizeof(path), "%s/kernel", given), is_dir(path))) {
		snprintf(k->modules, sizeof(k->modules), "%s", given);
		return 0;
	}
	return modules_dir(k, opt, given, given, err);
}

/* Is @path, the user's @opt, a package (0 no, 1 yes), or no input at all (-errno with @err)?
 * A regular file, or with @folder_ok a folder, opened without waiting. */
static int input_kind(const char *opt, const char *path, bool folder_ok, struct mg_err *err)
{
	char name[PATH_MAX + 16];
	int fd, yes;

	snprintf(name, sizeof(name), "%s %s", opt, path);
	if ((fd = text_input_open(path, name, folder_ok, err)) < 0)
		return fd;
	yes = is_deb(fd);
	close(fd);
	return yes;
}

int vm_kernel_open(struct vm_kernel *k, const char *kernel, const char *modules,
		   const char *workdir, struct mg_err *err)
{
	char root[PATH_MAX], boot[PATH_MAX + 8], name[PATH_MAX + 64];
	int package, modules_package = 0, ret;

	memset(k, 0, sizeof(*k));
	/* Both inputs checked before anything is unpacked. */
	if ((package = input_kind("--kernel", kernel, false, err)) < 0 ||
	    (modules && (modules_package = input_kind("--modules", modules, true, err)) < 0))
		return package < 0 ? package : modules_package;
	if (package) {
		snprintf(root, sizeof(root), "%s/kernel-deb", workdir);
		if ((ret = unpack("--kernel", kernel, root, err)))
			return ret;
		snprintf(k->unpacked, sizeof(k->unpacked), "%s", root);
		snprintf(k->package, sizeof(k->package), "%s", kernel);
		snprintf(boot, sizeof(boot), "%s/boot", root);
		if (only_entry(boot, "vmlinuz-", k->image, sizeof(k->image)))
			return mg_err_set(err, EINVAL,
					  "--kernel %s: no one boot/vmlinuz-* in it: not a "
					  "linux-image package",
					  kernel);
	} else {
		snprintf(k->image, sizeof(k->image), "%s", kernel);
	}
	if ((ret = read_version(k->image, shown(k, k->image, name, sizeof(name)), k->version,
				sizeof(k->version), k->banner, sizeof(k->banner), err)))
		return ret;
	if (modules && modules_package) {
		snprintf(root, sizeof(root), "%s/modules-deb", workdir);
		if ((ret = unpack("--modules", modules, root, err)))
			return ret;
		snprintf(k->unpacked, sizeof(k->unpacked), "%s", root);
		snprintf(k->package, sizeof(k->package), "%s", modules);
		return modules_dir(k, "--modules", modules, root, err);
	}
	if (modules)
		return modules_dir(k, "--modules", modules, NULL, err);
	if (package)
		return modules_dir(k, "--kernel", kernel, root, err);
	return 0;
}

/* ---- the KVM modules ---------------------------------------------------------------------- */

/* "kvm-amd" and "kvm_amd" are one module to the kernel. */
static void module_name(const char *file, char *out, size_t len)
{
	size_t i;

	for (i = 0; file[i] && i + 1 < len; i++)
		out[i] = file[i] == '-' ? '_' : file[i];
	out[i] = '\0';
	if (strstr(out, ".ko"))
		*strstr(out, ".ko") = '\0';
}

/* A module's bytes as a decompressor writes them. */
struct grown {
	unsigned char *data;
	size_t len, cap;
	bool too_big;
	pid_t pid; /* the decompressor: stopped once it gives more than a module holds */
};

static void on_bytes(void *arg, const char *data, size_t n)
{
	struct grown *g = arg;

	if (g->too_big || g->len + n > MODULE_MAX) {
		if (!g->too_big)
			kill(g->pid, SIGKILL);
		g->too_big = true;
		return;
	}
	if (g->len + n > g->cap) {
		size_t cap = (g->len + n) * 2;
		unsigned char *more = realloc(g->data, cap);

		if (!more) {
			g->too_big = true;
			return;
		}
		g->data = more;
		g->cap = cap;
	}
	memcpy(g->data + g->len, data, n);
	g->len += n;
}

/* The module at @path whole, decompressed by xz, zstd or gzip as its suffix says (Debian's
 * 6.12 ships .ko.xz; the guest's busybox insmod loads plain ones). 0 or -errno with @err. */
static int read_compressed(const struct vm_kernel *k, const char *path, unsigned char **data,
			   size_t *len, struct mg_err *err)
{
	const char *ext = strrchr(path, '.');
	const char *tool = !strcmp(ext, ".xz")	  ? "xz"
			   : !strcmp(ext, ".zst") ? "zstd"
			   : !strcmp(ext, ".gz")  ? "gzip"
						  : NULL;
	const char *argv[] = {tool, "-dc", "--", path, NULL};
	struct proc_spec spec = {.argv = argv, .in = PROC_NULL, .out = PROC_PIPE, .err = PROC_PIPE};
	struct grown g = {0};
	struct proc p;
	char how[96], name[PATH_MAX + 64];
	int ret;

	shown(k, path, name, sizeof(name));
	if (!tool)
		return mg_err_set(err, EMEDIUMTYPE,
				  "%s: compressed as %s, which memgate cannot read", name, ext);
	/* A FIFO would hang the decompressor: the file is checked as any input. */
	if ((ret = text_input_open(path, name, 0, err)) < 0)
		return ret;
	close(ret);
	if ((ret = proc_start(&p, &spec, err)))
		return ret;
	g.pid = p.pid;
	p.on_out = on_bytes;
	p.cb_arg = &g;
	ret = proc_watch(&p, p.started_ns + (int64_t)UNPACK_TIMEOUT_S * 1000000000, &proc_stop);
	proc_close(&p);
	if (!ret && (g.too_big || !WIFEXITED(p.status) || WEXITSTATUS(p.status) || !g.len))
		ret = mg_err_set(
		    err, EMEDIUMTYPE, "%s: %s -dc %s%s", name, tool,
		    g.too_big ? "gave more than 64 MiB, more than a module holds: stopped"
			      : proc_status_text(p.status, how, sizeof(how)),
		    WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127 ? " (is it installed?)"
									: "");
	else if (ret)
		ret = mg_err_set(err, -ret, "%s: %s -dc: %s", name, tool, strerror(-ret));
	if (ret) {
		free(g.data);
		return ret;
	}
	*data = g.data;
	*len = g.len;
	return 0;
}

/* The module named @name under @dir (recursively) into @out: 0, -ENOENT, or -EMEDIUMTYPE
 * when only a compressed one is there. */
static int find_module(const char *dir, const char *name, char *out, size_t len, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX], got[128];
	int ret = -ENOENT;

	if (!d || depth > 8) {
		if (d)
			closedir(d);
		return -ENOENT;
	}
	while (ret && (e = readdir(d))) {
		const char *ko = strstr(e->d_name, ".ko");

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			int r = find_module(path, name, out, len, depth + 1);

			ret = r == -ENOENT ? ret : r;
			continue;
		}
		if (!ko)
			continue;
		module_name(e->d_name, got, sizeof(got));
		if (strcmp(got, name))
			continue;
		snprintf(out, len, "%s", path);
		ret = ko[3] ? -EMEDIUMTYPE : 0;
	}
	closedir(d);
	return ret;
}

/* Section header @i of the ELF file @m (@n bytes) whose headers start at @off; copied, as a
 * module's bytes need not be aligned for it. */
static Elf64_Shdr section(const unsigned char *m, uint64_t off, unsigned int i)
{
	Elf64_Shdr sh;

	memcpy(&sh, m + off + (uint64_t)i * sizeof(sh), sizeof(sh));
	return sh;
}

int vm_kernel_modinfo(const unsigned char *m, size_t n, const char *key, char *out, size_t len)
{
	static const char wanted[] = ".modinfo";
	Elf64_Ehdr eh;
	Elf64_Shdr names;
	size_t klen = strlen(key);

	if (n < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, m, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > n ||
	    eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		return -ENOEXEC;
	names = section(m, eh.e_shoff, eh.e_shstrndx);
	if (names.sh_offset > n)
		return -ENOEXEC;
	for (unsigned int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh = section(m, eh.e_shoff, i);
		const char *s, *end;

		/* Its name, whole inside the file, is ".modinfo"; its bytes inside the file. */
		if (sh.sh_name > n - names.sh_offset ||
		    n - names.sh_offset - sh.sh_name < sizeof(wanted) ||
		    memcmp(m + names.sh_offset + sh.sh_name, wanted, sizeof(wanted)) ||
		    sh.sh_offset > n || sh.sh_size > n - sh.sh_offset)
			continue;
		s = (const char *)m + sh.sh_offset;
		end = s + sh.sh_size;
		for (; s < end; s += strnlen(s, (size_t)(end - s)) + 1)
			if ((size_t)(end - s) > klen && !strncmp(s, key, klen) && s[klen] == '=') {
				snprintf(out, len, "%.*s",
					 (int)strnlen(s + klen + 1, (size_t)(end - s) - klen - 1),
					 s + klen + 1);
				return 0;
			}
		return -ENOENT;
	}
	return -ENOEXEC;
}

/* A module read for the guest, and the names of what it depends on (its .modinfo). */
struct module {
	char name[64], path[PATH_MAX], deps[256];
	unsigned char *data;
	size_t len;
	bool loading; /* what it depends on is being added: met again, a cycle */
};

/* Every module the guest gets, each once, a module after what it depends on. */
struct module_set {
	struct module m[MAX_MODULES];
	size_t n;
};

static int set_index(const struct module_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->m[i].name, name))
			return (int)i;
	return -1;
}

/* Is @name built into the kernel of @dir (its modules.builtin lists NAME.ko)? A list that is
 * not a regular file (a FIFO) is read as none, never waited on. */
static bool builtin(const char *dir, const char *name)
{
	char path[PATH_MAX + 32], *text, *line, *save = NULL, got[128];
	struct mg_err err = {0};
	bool yes = false;

	snprintf(path, sizeof(path), "%s/modules.builtin", dir);
	text = text_read_input(path, 1u << 20, NULL, &err);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !yes;
	     line = strtok_r(NULL, "\n", &save)) {
		module_name(strrchr(line, '/') ? strrchr(line, '/') + 1 : line, got, sizeof(got));
		yes = !strcmp(got, name);
	}
	free(text);
	return yes;
}

/*
 * @name and what it depends on, into @set in loading order (dependencies first), each read
 * once and checked against @k's version; a module built in is nothing to load. 0 or -errno
 * with @err; -ENOENT when @name itself (@depth 0) is neither a module nor built in, which for
 * a vendor's module means the kernel has none for that vendor.
 */
static int add_module(const struct vm_kernel *k, const char *name, const char *from,
		      struct module_set *set, int depth, struct mg_err *err)
{
	struct module *m;
	char path[PATH_MAX], deps[256], magic[256], *save = NULL, dir[PATH_MAX + 64],
						    file[PATH_MAX + 64];
	int ret, at = set_index(set, name);

	shown(k, k->modules, dir, sizeof(dir));
	if (at >= 0 && set->m[at].loading)
		return mg_err_set(err, ELOOP,
				  "%s: %s depends on %s, which needs %s again (their .modinfo "
				  "depends=): a cycle no kernel can load",
				  dir, from, name, from);
	if (at >= 0)
		return 0;
	if (depth > MAX_MODULES || set->n == MAX_MODULES)
		return mg_err_set(err, ELOOP, "%s: %s needs more than %d modules", dir, name,
				  MAX_MODULES);
	ret = find_module(k->modules, name, path, sizeof(path), 0);
	if (ret == -ENOENT && builtin(k->modules, name))
		return 0;
	if (ret == -ENOENT)
		return mg_err_set(err, depth ? EINVAL : ENOENT,
				  "%s: no %s.ko, and modules.builtin does not list it", dir, name);
	m = &set->m[set->n];
	snprintf(m->path, sizeof(m->path), "%s", path);
	snprintf(m->name, sizeof(m->name), "%s", name);
	shown(k, path, file, sizeof(file));
	if (ret == -EMEDIUMTYPE) {
		if ((ret = read_compressed(k, path, &m->data, &m->len, err)))
			return ret;
	} else {
		int fd = text_input_open(path, file, 0, err);

		/* A file that is there but unfit is an error, not a vendor without KVM. */
		if (fd < 0)
			return fd == -ENOENT ? -EINVAL : fd;
		m->data = (unsigned char *)text_read_opened(fd, file, MODULE_MAX, &m->len, err);
		if (!m->data)
			return -EIO;
	}
	m->loading = true;
	set->n++;
	if (vm_kernel_modinfo(m->data, m->len, "vermagic", magic, sizeof(magic)))
		return mg_err_set(err, ENOEXEC, "%s: not a kernel module (no .modinfo vermagic)",
				  file);
	magic[strcspn(magic, " ")] = '\0';
	if (strcmp(magic, k->version))
		return mg_err_set(err, EINVAL,
				  "%s is built for kernel %s, the kernel is %s: it will not load",
				  file, magic, k->version);
	if (vm_kernel_modinfo(m->data, m->len, "depends", m->deps, sizeof(m->deps)))
		m->deps[0] = '\0';
	snprintf(deps, sizeof(deps), "%s", m->deps);
	for (char *d = strtok_r(deps, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		char dep[64];

		module_name(d, dep, sizeof(dep));
		if ((ret = add_module(k, dep, name, set, depth + 1, err)))
			return ret;
	}
	set->m[set_index(set, name)].loading = false;
	/* Its dependencies went in after it: move it behind them. */
	for (size_t i = (size_t)set_index(set, name); i + 1 < set->n; i++) {
		struct module tmp = set->m[i];

		set->m[i] = set->m[i + 1];
		set->m[i + 1] = tmp;
	}
	return 0;
}

/*
 * /kvm/VENDOR.load: the loading order of module @root (nothing when it is built in) and of
 * what it needs, in @set's order, as a new string of @len bytes.
 */
static char *load_list(const struct module_set *set, const char *root, size_t *len)
{
	bool needed[MAX_MODULES] = {false};
	int at = set_index(set, root);
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	if (at >= 0)
		needed[at] = true;
	/* A module comes after what it depends on: from the last back, each marks its own. */
	for (int i = at; i >= 0; i--) {
		char deps[256], *save = NULL;

		if (!needed[i])
			continue;
		snprintf(deps, sizeof(deps), "%s", set->m[i].deps);
		for (char *d = strtok_r(deps, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
			char dep[64];
			int j;

			module_name(d, dep, sizeof(dep));
			if ((j = set_index(set, dep)) >= 0)
				needed[j] = true;
		}
	}
	for (size_t i = 0; i < set->n; i++)
		if (needed[i])
			fprintf(f, "%s.ko\n", set->m[i].name);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* The archive @c: an empty /modules.load, /kvm with every module of @set once, and each
 * vendor's loading order. 0 or -errno with @err. */
static int write_archive(struct cpio *c, const struct module_set *set, const char *const *vendors,
			 size_t n_vendors, struct mg_err *err)
{
	int ret = cpio_data(c, "modules.load", "", 0, err);

	ret = ret ? ret : cpio_dir(c, "kvm", err);
	for (size_t i = 0; !ret && i < set->n; i++) {
		char path[96];

		snprintf(path, sizeof(path), "kvm/%.56s.ko", set->m[i].name);
		ret = cpio_data(c, path, set->m[i].data, set->m[i].len, err);
	}
	for (size_t v = 0; !ret && v < n_vendors; v++) {
		char path[64], root[32];
		size_t len = 0;
		char *list;

		snprintf(root, sizeof(root), "kvm_%s", vendors[v]);
		list = load_list(set, root, &len);
		snprintf(path, sizeof(path), "kvm/%s.load", vendors[v]);
		ret = list ? cpio_data(c, path, list, len, err)
			   : mg_err_set(err, ENOMEM, "out of memory");
		free(list);
	}
	return ret;
}

int vm_kernel_kvm_archive(struct vm_kernel *k, const char *out, struct mg_err *err)
{
	static const char *const vendors[] = {"amd", "intel"};
	struct module_set *set = calloc(1, sizeof(*set));
	struct cpio c;
	int ret = 0, missing = 0;
	bool amd, intel;

	if (!set)
		return mg_err_set(err, ENOMEM, "out of memory");
	for (size_t v = 0; k->modules[0] && v < ARRAY_SIZE(vendors) && !ret; v++) {
		char name[32];

		snprintf(name, sizeof(name), "kvm_%s", vendors[v]);
		ret = add_module(k, name, NULL, set, 0, err);
		if (ret == -ENOENT) {
			missing++;
			ret = 0;
		}
	}
	if (!ret && missing == 2) {
		char dir[PATH_MAX + 64];

		ret = mg_err_set(err, ENOENT,
				 "%s: no KVM in kernel %s's modules (neither kvm_amd nor "
				 "kvm_intel, as a module or built in)",
				 shown(k, k->modules, dir, sizeof(dir)), k->version);
	}
	if (!ret && !(ret = cpio_open(&c, out, err))) {
		ret = write_archive(&c, set, vendors, ARRAY_SIZE(vendors), err);
		if (ret)
			cpio_discard(&c);
		else
			ret = cpio_close(&c, err);
	}
	amd = set_index(set, "kvm_amd") >= 0;
	intel = set_index(set, "kvm_intel") >= 0;
	if (!ret && !k->modules[0])
		snprintf(k->kvm, sizeof(k->kvm), "built in (no modules given)");
	else if (!ret && !set->n)
		snprintf(k->kvm, sizeof(k->kvm), "built in (modules.builtin)");
	else if (!ret)
		snprintf(k->kvm, sizeof(k->kvm), "modules: %s%s%s", amd ? "kvm_amd" : "",
			 amd && intel ? ", " : "", intel ? "kvm_intel" : "");
	for (size_t i = 0; i < set->n; i++)
		free(set->m[i].data);
	free(set);
	return ret;
}
