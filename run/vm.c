/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - memgate inside a guest of a chosen NUMA shape (see vm.h). */
#include "run/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/text.h"
#include "util/util.h"

#define VM_MAX_SOCKETS 8
#define VM_MAX_NODES 8
#define VM_MAX_CPUS 64
#define VM_MIN_NODE_MIB 128
#define VM_MAX_MIB (64u << 10)
/* The kernel keeps 2048 bytes of command line on x86; the kit's own words take about 100. */
#define VM_MAX_ARGS_BYTES 1800

/* One "key=value" of a shape into @g; 0 or -EINVAL with @err. */
static int shape_word(const char *word, struct guest_numa *g, bool *set, struct mg_err *err)
{
	static const char *const keys[] = {"sockets", "nodes", "cpus", "mem"};
	const char *eq = strchr(word, '=');
	unsigned int *fields[] = {&g->sockets, &g->nodes, &g->cpus, &g->mem_mib};
	size_t k;
	char *end;
	unsigned long v;
	uint64_t bytes;

	for (k = 0; eq && k < ARRAY_SIZE(keys); k++)
		if ((size_t)(eq - word) == strlen(keys[k]) &&
		    !strncmp(word, keys[k], strlen(keys[k])))
			break;
	if (!eq || k == ARRAY_SIZE(keys))
		return mg_err_set(err, EINVAL,
				  "--shape: '%s' is not sockets=N, nodes=N, cpus=N or mem=SIZE",
				  word);
	if (set[k])
		return mg_err_set(err, EINVAL, "--shape: %s given twice", keys[k]);
	if (k == 3) {
		if (text_size(eq + 1, &bytes) || bytes < (1u << 20) ||
		    bytes > (uint64_t)VM_MAX_MIB << 20)
			return mg_err_set(
			    err, EINVAL, "--shape: mem=%s is not a size from 1M to 64G, such as 2G",
			    eq + 1);
		g->mem_mib = (unsigned int)(bytes >> 20);
	} else {
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || v < 1 || v > VM_MAX_CPUS)
			return mg_err_set(err, EINVAL, "--shape: %s expects a number from 1 to %d",
					  keys[k], VM_MAX_CPUS);
		*fields[k] = (unsigned int)v;
	}
	set[k] = true;
	return 0;
}

int vm_shape_parse(const char *text, struct guest_numa *out, struct mg_err *err)
{
	struct guest_numa g = {0};
	bool set[4] = {false};
	char buf[256], *save = NULL;
	int ret = 0;

	if (strlen(text) >= sizeof(buf))
		return mg_err_set(err, EINVAL, "--shape: too long");
	if (!text[strspn(text, ", ")])
		return mg_err_set(err, EINVAL,
				  "--shape: empty; expected sockets=N,nodes=N,cpus=N,mem=SIZE "
				  "(each optional, at least one)");
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *w = strtok_r(buf, ",", &save); w && !ret; w = strtok_r(NULL, ",", &save))
		ret = shape_word(w, &g, set, err);
	if (ret)
		return ret;
	if (!set[0])
		g.sockets = 2;
	if (!set[1])
		g.nodes = g.sockets;
	if (!set[2])
		g.cpus = g.nodes > g.sockets ? g.nodes : g.sockets;
	if (!set[3])
		g.mem_mib = g.nodes * 1024;
	if (g.sockets > VM_MAX_SOCKETS || g.nodes > VM_MAX_NODES)
		return mg_err_set(err, EINVAL, "--shape: at most %d sockets and %d nodes",
				  VM_MAX_SOCKETS, VM_MAX_NODES);
	if (g.cpus % g.sockets || g.cpus % g.nodes)
		return mg_err_set(
		    err, EINVAL,
		    "--shape: %u CPUs do not divide evenly into %u sockets and %u nodes", g.cpus,
		    g.sockets, g.nodes);
	if (g.mem_mib / g.nodes < VM_MIN_NODE_MIB)
		return mg_err_set(err, EINVAL,
				  "--shape: %u MiB for %u nodes: at least %d MiB a node", g.mem_mib,
				  g.nodes, VM_MIN_NODE_MIB);
	*out = g;
	return 0;
}

void vm_shape_name(const struct guest_numa *g, char *buf, size_t len)
{
	snprintf(buf, len, "sockets=%u,nodes=%u,cpus=%u,mem=%uM", g->sockets, g->nodes, g->cpus,
		 g->mem_mib / g->nodes * g->nodes);
}

int vm_pack_find(char *out, size_t len, struct mg_err *err)
{
	char dir[PATH_MAX];
	int ret = guest_kit_dir(dir, sizeof(dir), err);

	if (ret)
		return ret;
	if ((size_t)snprintf(out, len, "%s/%s", dir, VM_PACK) >= len)
		return mg_err_set(err, ENAMETOOLONG, "%s: path too long", dir);
	if (access(out, R_OK))
		return mg_err_set(err, ENOENT,
				  "%s: %s: `make` packs this memgate for the guest (guest/pack.sh) "
				  "where it builds the guest kit",
				  out, strerror(errno));
	return 0;
}

int vm_args_check(const char *const *args, struct mg_err *err)
{
	size_t total = 0;

	if (!args || !*args)
		return mg_err_set(err, EINVAL,
				  "no command to run in the guest (memgate vm -- run ...)");
	for (const char *const *a = args; *a; a++) {
		if (!**a || strpbrk(*a, " \t\n\"'\\"))
			return mg_err_set(
			    err, EINVAL,
			    "'%s': the guest gets its command on the kernel's command "
			    "line, where an empty word or one with white space, quotes or "
			    "backslashes cannot pass",
			    *a);
		total += strlen(*a) + 1;
	}
	if (total > VM_MAX_ARGS_BYTES)
		return mg_err_set(
		    err, EINVAL,
		    "the command is %zu bytes: the kernel's command line holds about %d", total,
		    VM_MAX_ARGS_BYTES);
	return 0;
}

/* Append the file @from to the open file @to; 0 or -errno with @err. */
static int append_file(int to, const char *from, struct mg_err *err)
{
	char buf[1 << 16];
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return mg_err_set(err, errno, "%s: %s", from, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0, w; off < n; off += w)
			if ((w = write(to, buf + off, (size_t)(n - off))) < 0) {
				close(fd);
				return mg_err_set(err, errno, "writing the initramfs: %s",
						  strerror(errno));
			}
	if (n < 0) {
		int e = errno;

		close(fd);
		return mg_err_set(err, e, "%s: %s", from, strerror(e));
	}
	close(fd);
	return 0;
}

/* The kit's initramfs with the packed memgate after it, as @path: the kernel unpacks both. */
static int vm_initrd(const struct vm_spec *s, const char *path, struct mg_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;

	if (fd < 0)
		return mg_err_set(err, errno, "%s: %s", path, strerror(errno));
	ret = append_file(fd, s->kit->initrd, err);
	if (!ret)
		ret = append_file(fd, s->pack, err);
	if (!ret && s->extra)
		ret = append_file(fd, s->extra, err);
	if (close(fd) && !ret)
		ret = mg_err_set(err, errno, "%s: %s", path, strerror(errno));
	return ret;
}

/* @path into @out when the guest wrote something there. */
static void came_back(const char *path, char *out, size_t len)
{
	struct stat st;

	out[0] = '\0';
	if (!stat(path, &st) && st.st_size > 0)
		snprintf(out, len, "%s", path);
}

int vm_run(const struct vm_spec *s, struct vm_result *out, struct mg_err *err)
{
	struct guest_kit kit = *s->kit;
	char json[PATH_MAX], junit[PATH_MAX];
	struct guest_boot_spec b = {.qemu = s->qemu,
				    .kit = &kit,
				    .kvm = s->kvm,
				    .numa = &s->shape,
				    .params = s->kvm_in_guest ? "memgate.vm=1 memgate.kvm=1"
							      : "memgate.vm=1",
				    .cpu = s->cpu,
				    .icount = s->icount,
				    .init_args = s->args,
				    .serial_files = {json, junit},
				    .on_line = s->on_line,
				    .line_arg = s->line_arg,
				    .interrupted = s->interrupted,
				    .timeout_s = s->timeout_s};
	int ret;

	memset(out, 0, sizeof(*out));
	out->exit = -1;
	if ((ret = vm_args_check(s->args, err)))
		return ret;
	if ((size_t)snprintf(kit.initrd, sizeof(kit.initrd), "%s/initramfs.cpio", s->workdir) >=
		sizeof(kit.initrd) ||
	    (size_t)snprintf(json, sizeof(json), "%s/guest.json", s->workdir) >= sizeof(json) ||
	    (size_t)snprintf(junit, sizeof(junit), "%s/guest.xml", s->workdir) >= sizeof(junit))
		return mg_err_set(err, ENAMETOOLONG, "%s: path too long", s->workdir);
	if ((ret = vm_initrd(s, kit.initrd, err)))
		return ret;
	unlink(json);
	unlink(junit);
	ret = guest_boot(&b, &out->boot, err);
	out->exit = out->boot.con.vm_exit;
	came_back(json, out->json, sizeof(out->json));
	came_back(junit, out->junit, sizeof(out->junit));
	if (!ret && out->exit < 0)
		ret = mg_err_set(err, EIO, "the guest powered off without running the command");
	return ret;
}

static unsigned int gcd(unsigned int a, unsigned int b)
{
	while (b) {
		unsigned int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int vm_shape_of(const struct hw_info *machine, uint64_t host_available_mib, struct guest_numa *out,
		struct mg_err *err)
{
	struct guest_numa g = {.sockets = machine->n_packages ? machine->n_packages : 1,
			       .nodes = machine->n_numa ? machine->n_numa : 1};
	uint64_t mib;

	if (g.sockets > VM_MAX_SOCKETS || g.nodes > VM_MAX_NODES)
		return mg_err_set(
		    err, EINVAL, "%s: %u sockets and %u nodes: a guest here has at most %d of each",
		    machine->source_desc, g.sockets, g.nodes, VM_MAX_SOCKETS);
	/* The fewest CPUs that split evenly into both: the shape, not the size. */
	g.cpus = g.sockets / gcd(g.sockets, g.nodes) * g.nodes;
	/* A GiB a node, or what half of this host's available memory gives them. */
	mib = (uint64_t)g.nodes * 1024;
	if (host_available_mib && mib > host_available_mib / 2)
		mib = host_available_mib / 2;
	if (mib / g.nodes < VM_MIN_NODE_MIB)
		return mg_err_set(err, ENOMEM,
				  "%s: %u nodes of %d MiB at least need more than half of this "
				  "host's %llu MiB available",
				  machine->source_desc, g.nodes, VM_MIN_NODE_MIB,
				  (unsigned long long)host_available_mib);
	g.mem_mib = (unsigned int)(mib / g.nodes * g.nodes);
	*out = g;
	return 0;
}
