/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest.c - find the guest kit, boot it in a real QEMU, read its console and QEMU's memory. */
#include "run/guest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw/measure.h"
#include "util/proc.h"
#include "util/util.h"

#define CONSOLE_PREFIX "memgate-guest: "
/* Disks per pci-bridge: slots 1 to 20 of its 32, as the report's guest had them. */
#define DISKS_PER_BRIDGE 20

/* @dir/@name into @out when it is a readable file; 0 or -errno. */
static int readable(char *out, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return access(out, R_OK) ? -errno : 0;
}

/* A file named on the command line: one memgate can read, or -errno with @err. Whether it
 * boots is the case's to find out (an ERROR with the console's tail). */
static int named_file(const char *opt, const char *path, char *out, size_t len, struct mg_err *err)
{
	if (access(path, R_OK))
		return mg_err_set(err, errno, "%s %s: %s", opt, path, strerror(errno));
	snprintf(out, len, "%s", path);
	return 0;
}

int guest_kit_dir(char *dir, size_t len, struct mg_err *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return mg_err_set(err, errno ? errno : ENOENT, "/proc/self/exe: %s",
				  strerror(errno ? errno : ENOENT));
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	if ((size_t)snprintf(dir, len, "%s/%s", exe, GUEST_KIT_DIR) >= len)
		return mg_err_set(err, ENAMETOOLONG, "%s: path too long", exe);
	return 0;
}

int guest_kit_find(struct guest_kit *k, const char *kernel, const char *initrd, struct mg_err *err)
{
	char dir[PATH_MAX];
	struct mg_err why;
	int ret = 0;

	memset(k, 0, sizeof(*k));
	if (kernel &&
	    (ret = named_file("--guest-kernel", kernel, k->kernel, sizeof(k->kernel), err)))
		return ret;
	if (initrd &&
	    (ret = named_file("--guest-initrd", initrd, k->initrd, sizeof(k->initrd), err)))
		return ret;
	if (kernel && initrd)
		return 0;
	if (guest_kit_dir(dir, sizeof(dir), &why)) {
		snprintf(k->why, sizeof(k->why), "no guest kit: %s", why.msg);
		k->kernel[0] = k->initrd[0] = '\0';
		return 0;
	}
	if (!kernel)
		ret = readable(k->kernel, sizeof(k->kernel), dir, GUEST_KIT_KERNEL);
	if (!ret && !initrd)
		ret = readable(k->initrd, sizeof(k->initrd), dir, GUEST_KIT_INITRD);
	if (ret) {
		snprintf(k->why, sizeof(k->why),
			 "no guest kit in %.200s (%s): `make` builds it from the kernel package "
			 "ci/install-deps.sh keeps, or pass --guest-kernel and --guest-initrd",
			 dir, strerror(-ret));
		k->kernel[0] = k->initrd[0] = '\0';
	}
	return 0;
}

void guest_console_init(struct guest_console *c)
{
	memset(c, 0, sizeof(*c));
	c->init_s = c->modules_s = c->disks_s = c->idle_s = c->vm_s = c->kvm_s = -1;
	c->disks = c->vm_exit = -1;
}

/* "uptime=S" and nothing after it into @out; false when @s is not that. */
static bool uptime_of(const char *s, double *out)
{
	char *end;

	if (strncmp(s, "uptime=", 7))
		return false;
	errno = 0;
	*out = strtod(s + 7, &end);
	return !errno && end != s + 7 && !*end && *out >= 0;
}

static enum guest_event malformed(struct guest_console *c, const char *said)
{
	if (!c->error[0])
		snprintf(c->error, sizeof(c->error), "the guest's init said \"%.200s\"", said);
	return GUEST_ERROR;
}

enum guest_event guest_console_line(struct guest_console *c, const char *line)
{
	const struct {
		const char *word;
		enum guest_event ev;
		double *uptime;
	} timed[] = {
	    {"init ", GUEST_INIT, &c->init_s},
	    {"modules ", GUEST_MODULES, &c->modules_s},
	    {"idle ", GUEST_IDLE, &c->idle_s},
	};
	/* "WORD=N UPTIME" */
	const struct {
		const char *word;
		enum guest_event ev;
		long max;
		int *value;
		double *uptime;
	} counted[] = {
	    {"disks=", GUEST_DISKS, 100000, &c->disks, &c->disks_s},
	    {"vm exit=", GUEST_VM, 255, &c->vm_exit, &c->vm_s},
	};
	char text[512];
	size_t len;
	const char *s;
	char *end;
	long v;

	if (strncmp(line, CONSOLE_PREFIX, strlen(CONSOLE_PREFIX)))
		return GUEST_OTHER;
	snprintf(text, sizeof(text), "%s", line + strlen(CONSOLE_PREFIX));
	len = strlen(text);
	while (len && (text[len - 1] == '\r' || text[len - 1] == '\n'))
		text[--len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(timed); i++) {
		if (strncmp(text, timed[i].word, strlen(timed[i].word)))
			continue;
		if (!uptime_of(text + strlen(timed[i].word), timed[i].uptime))
			return malformed(c, text);
		return timed[i].ev;
	}
	for (size_t i = 0; i < ARRAY_SIZE(counted); i++) {
		const char *n = text + strlen(counted[i].word);

		if (strncmp(text, counted[i].word, strlen(counted[i].word)))
			continue;
		errno = 0;
		v = strtol(n, &end, 10);
		if (errno || end == n || v < 0 || v > counted[i].max || *end != ' ' ||
		    !uptime_of(end + 1, counted[i].uptime))
			return malformed(c, text);
		*counted[i].value = (int)v;
		return counted[i].ev;
	}
	/* "kvm svm uptime=S" */
	if (!strncmp(text, "kvm ", 4)) {
		const char *sp = strchr(text + 4, ' ');
		size_t n = sp ? (size_t)(sp - text - 4) : 0;

		if (!sp || (n != 3) ||
		    (strncmp(text + 4, "svm", 3) && strncmp(text + 4, "vmx", 3)) ||
		    !uptime_of(sp + 1, &c->kvm_s))
			return malformed(c, text);
		memcpy(c->kvm_ext, text + 4, 3);
		c->kvm_ext[3] = '\0';
		return GUEST_KVM;
	}
	if (!strcmp(text, "done")) {
		c->done = true;
		return GUEST_DONE;
	}
	s = !strncmp(text, "error ", 6) ? text + 6 : NULL;
	if (s && !c->error[0])
		snprintf(c->error, sizeof(c->error), "the guest: %.480s", s);
	return s ? GUEST_ERROR : malformed(c, text);
}

/* QEMU's [heap] RSS and its anonymous memory now, from /proc/PID/smaps. */
static void qemu_mem(pid_t pid, struct guest_qemu_mem *m)
{
	struct measure_smaps sm;

	memset(m, 0, sizeof(*m));
	if (measure_smaps(pid, &sm))
		return;
	m->heap_kib = sm.heap_kib;
	m->anon_kib = sm.anon_kib;
	m->read = true;
}

/* QEMU's minor and major faults from /proc/PID/stat (fields 10 and 12, after the name). */
static void qemu_faults(pid_t pid, uint64_t *minflt, uint64_t *majflt)
{
	char path[64], buf[1024];
	unsigned long long mn, mj;
	const char *s;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')');
	if (s && sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &mn, &mj) == 2) {
		*minflt = mn;
		*majflt = mj;
	}
}

struct reader {
	struct proc *p;
	struct guest_boot *out;
	const struct guest_boot_spec *spec;
	int64_t cut_ns;		    /* launch + the cut; 0: none */
	volatile sig_atomic_t stop; /* set at the cut: proc_watch kills QEMU */
	char line[512];
	size_t used;
	size_t tail_used;
};

static double since_launch_ms(const struct reader *r)
{
	return (double)(util_now_ns() - r->p->started_ns) / 1e6;
}

static void on_line(struct reader *r)
{
	struct guest_boot *b = r->out;

	r->line[r->used] = '\0';
	if (r->spec->on_line)
		r->spec->on_line(r->spec->line_arg, r->line);
	switch (guest_console_line(&b->con, r->line)) {
	case GUEST_INIT:
		b->init_ms = since_launch_ms(r);
		break;
	case GUEST_DISKS:
		b->disks_ms = since_launch_ms(r);
		qemu_mem(r->p->pid, &b->at_disks);
		break;
	case GUEST_DONE:
		qemu_mem(r->p->pid, &b->after_idle);
		qemu_faults(r->p->pid, &b->minflt, &b->majflt);
		/* The guest's poweroff shuts every device down, seconds for sixty under TCG, and
		 * nothing of it is measured: QEMU is asked to quit, as a management layer would. */
		kill(r->p->pid, SIGTERM);
		break;
	default:
		break;
	}
	r->used = 0;
}

/* The console: its last bytes kept (control bytes shown as '?'), each line read. */
static void on_console(void *arg, const char *data, size_t n)
{
	struct reader *r = arg;
	char *tail = r->out->tail;
	size_t cap = sizeof(r->out->tail) - 1;

	for (size_t i = 0; i < n; i++) {
		char ch = data[i];

		if (ch == '\r')
			continue;
		if (r->tail_used == cap) {
			memmove(tail, tail + cap / 2, cap - cap / 2);
			r->tail_used = cap - cap / 2;
		}
		tail[r->tail_used++] =
		    (ch == '\n' || ch == '\t' || (ch >= ' ' && ch != 0x7f)) ? ch : '?';
		tail[r->tail_used] = '\0';
		if (ch == '\n')
			on_line(r);
		else if (r->used < sizeof(r->line) - 1)
			r->line[r->used++] = ch;
	}
}

/* Past the cut without every disk reported: stop. Returns the wait until the cut, in ms. */
static int on_tick(void *arg)
{
	struct reader *r = arg;
	int64_t left_ns;

	if (r->spec->interrupted && *r->spec->interrupted) {
		r->stop = 1;
		return 0;
	}
	if (!r->cut_ns || r->out->con.disks >= 0)
		return -1;
	left_ns = r->cut_ns - util_now_ns();
	if (left_ns <= 0) {
		r->stop = 1;
		return 0;
	}
	return (int)(left_ns / 1000000 + 1);
}

/* -m, -smp, and a memory backend and node for each of @g's nodes, appended to @argv at *@n. */
static int numa_args(const struct guest_numa *g, const char *cpu, char **argv, size_t *n)
{
	unsigned int per_node = g->cpus / g->nodes, mib = g->mem_mib / g->nodes;
	int ok = 1;

#define NARG(...) (ok = ok && asprintf(&argv[(*n)++], __VA_ARGS__) >= 0)
	NARG("-cpu");
	NARG("%s", cpu ? cpu : "max");
	NARG("-m");
	NARG("%u", mib * g->nodes);
	NARG("-smp");
	NARG("%u,sockets=%u,cores=%u,threads=1", g->cpus, g->sockets, g->cpus / g->sockets);
	for (unsigned int i = 0; i < g->nodes; i++) {
		NARG("-object");
		NARG("memory-backend-ram,id=m%u,size=%uM", i, mib);
		NARG("-numa");
		if (per_node > 1)
			NARG("node,nodeid=%u,memdev=m%u,cpus=%u-%u", i, i, i * per_node,
			     (i + 1) * per_node - 1);
		else
			NARG("node,nodeid=%u,memdev=m%u,cpus=%u", i, i, i * per_node);
	}
#undef NARG
	return ok ? 0 : -ENOMEM;
}

/*
 * The kernel's command line: the console, the kit init's parameters, @s->params, and init's
 * own arguments after " -- ". Errors and worse on the console (loglevel=4, what `quiet`
 * shows): a hung task or a stalled CPU is in the tail an ERROR shows; a clean boot prints
 * none. Returns 0 or -ENOMEM.
 */
static int kernel_line(const struct guest_boot_spec *s, char **out)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f,
		"console=ttyS0 loglevel=4 panic=-1 memgate.disks=%u memgate.wait=%.0f "
		"memgate.hold=%g",
		s->disks, s->timeout_s / 2, s->hold_s);
	if (s->params)
		fprintf(f, " %s", s->params);
	if (s->init_args) {
		fputs(" --", f);
		for (const char *const *a = s->init_args; *a; a++)
			fprintf(f, " %s", *a);
	}
	if (fclose(f)) {
		free(line);
		return -ENOMEM;
	}
	*out = line;
	return 0;
}

/* A command line being made: each word malloc()ed; @ok false once one could not be. */
struct boot_argv {
	char **v;
	size_t n;
	int ok;
};

#define ARG(a, ...) ((a)->ok = (a)->ok && asprintf(&(a)->v[(a)->n++], __VA_ARGS__) >= 0)

/* What runs QEMU: the environment, the binary, the accelerator and icount's clock. */
static void launch_args(const struct guest_boot_spec *s, struct boot_argv *a)
{
	/*
	 * glibc's mmap threshold fixed at its starting 128 KiB: left dynamic, it rises to the
	 * size of the first mmap()ed block freed, and every block under that comes from the
	 * heap from then on, so one early free moves megabytes between QEMU's [heap] and its
	 * other anonymous memory. QEMU 10.0 at 60 disks: 28,240 KiB of heap dynamic, 19,088
	 * fixed, its anonymous memory 273,548 and 275,656 KiB (docs/gating.md).
	 */
	ARG(a, "env");
	ARG(a, "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=%u", GUEST_MMAP_THRESHOLD);
	if (s->preload)
		ARG(a, "LD_PRELOAD=%s", s->preload);
	ARG(a, "%s", s->qemu);
	ARG(a, "-accel");
	ARG(a, "%s", s->kvm ? "kvm" : "tcg");
	if (!s->kvm && s->icount) {
		char day[16];
		time_t now = time(NULL);
		struct tm tm;

		ARG(a, "-icount");
		ARG(a, "shift=%d,sleep=off", GUEST_ICOUNT_SHIFT);
		/* The guest's clock from today's midnight (UTC) on, at the guest's own pace: the
		 * host's time of the launch would differ every boot, and the guest's work with
		 * it (the dates it formats, where its timer interrupts fall in the cases). */
		strftime(day, sizeof(day), "%Y-%m-%d", gmtime_r(&now, &tm));
		ARG(a, "-rtc");
		ARG(a, "base=%s,clock=vm", day);
	}
}

/* The machine: its shape, its name, no default devices, the console and the serial files. */
static void machine_args(const struct guest_boot_spec *s, struct boot_argv *a)
{
	ARG(a, "-machine");
	ARG(a, "%s", s->numa ? "q35" : "pc");
	if (s->numa) {
		a->ok = a->ok && numa_args(s->numa, s->cpu, a->v, &a->n) == 0;
	} else {
		ARG(a, "-m");
		ARG(a, "%u", s->mem_mib ? s->mem_mib : GUEST_MEM_MIB);
		ARG(a, "-smp");
		ARG(a, "%u", s->vcpus ? s->vcpus : GUEST_VCPUS);
	}
	/* Threads named (CPU 0/TCG, ...) for whoever looks at a hung QEMU with gdb or ps. */
	ARG(a, "-name");
	ARG(a, "memgate-guest,debug-threads=on");
	ARG(a, "-nodefaults");
	ARG(a, "-no-user-config");
	ARG(a, "-display");
	ARG(a, "none");
	ARG(a, "-monitor");
	ARG(a, "none");
	ARG(a, "-serial");
	ARG(a, "stdio");
	for (unsigned int i = 0; i < ARRAY_SIZE(s->serial_files) && s->serial_files[i]; i++) {
		ARG(a, "-chardev");
		ARG(a, "file,id=out%u,path=%s", i, s->serial_files[i]);
		ARG(a, "-serial");
		ARG(a, "chardev:out%u", i);
	}
	ARG(a, "-no-reboot");
}

/* The kit's kernel and initramfs, and the kernel's command line. */
static void kernel_args(const struct guest_boot_spec *s, struct boot_argv *a)
{
	char *append = NULL;

	ARG(a, "-kernel");
	ARG(a, "%s", s->kit->kernel);
	ARG(a, "-initrd");
	ARG(a, "%s", s->kit->initrd);
	/* Errors and worse on the console (loglevel=4, what `quiet` shows): a hung task or a
	 * stalled CPU is in the tail an ERROR shows; a clean boot prints none. */
	a->ok = a->ok && kernel_line(s, &append) == 0;
	ARG(a, "-append");
	ARG(a, "%s", append ? append : "");
	free(append);
}

/* The @s->disks disks, each a virtio-scsi controller of its own behind @bridges bridges. */
static void disk_args(const struct guest_boot_spec *s, unsigned int bridges, struct boot_argv *a)
{
	for (unsigned int b = 0; b < bridges; b++) {
		ARG(a, "-device");
		ARG(a, "pci-bridge,id=br%u,chassis_nr=%u", b, b + 1);
	}
	/* Modern virtio only: no I/O-port BAR each, which sixty of would not fit; two MSI-X
	 * vectors each, which sixty of fit one vCPU (GUEST_VCPUS). */
	for (unsigned int d = 0; d < s->disks; d++) {
		ARG(a, "-device");
		ARG(a, "virtio-scsi-pci,id=scsi%u,bus=br%u,addr=0x%x,disable-legacy=on,vectors=%u",
		    d, d / DISKS_PER_BRIDGE, d % DISKS_PER_BRIDGE + 1, GUEST_DISK_VECTORS);
		ARG(a, "-blockdev");
		ARG(a, "null-co,node-name=disk%u,size=1073741824", d);
		ARG(a, "-device");
		ARG(a, "scsi-hd,bus=scsi%u.0,drive=disk%u", d, d);
	}
}

#undef ARG

/* The arguments of a boot, each malloc()ed, in @argv (NULL-ended); 0 or -ENOMEM. */
static int boot_args(const struct guest_boot_spec *s, char ***argv_out)
{
	unsigned int bridges = (s->disks + DISKS_PER_BRIDGE - 1) / DISKS_PER_BRIDGE;
	size_t cap = 60 + 2 * (size_t)bridges + 6 * (size_t)s->disks;
	struct boot_argv a = {.ok = 1};

	for (const char *const *arg = s->init_args; arg && *arg; arg++)
		cap++;
	if (s->numa)
		cap += 4 * (size_t)s->numa->nodes;
	a.v = calloc(cap, sizeof(*a.v));
	if (!a.v)
		return -ENOMEM;
	launch_args(s, &a);
	machine_args(s, &a);
	kernel_args(s, &a);
	disk_args(s, bridges, &a);
	if (!a.ok) {
		for (size_t i = 0; i < a.n; i++)
			free(a.v[i]);
		free(a.v);
		return -ENOMEM;
	}
	a.v[a.n] = NULL;
	*argv_out = a.v;
	return 0;
}

int guest_boot(const struct guest_boot_spec *s, struct guest_boot *out, struct mg_err *err)
{
	struct proc_spec spec = {.in = PROC_NULL,
				 .out = PROC_PIPE,
				 .err = PROC_PIPE,
				 .own_group = true,
				 .close_others = true};
	struct reader r = {.out = out, .spec = s};
	struct proc p;
	char **argv, how[96], *qemu_said;
	int ret;

	memset(out, 0, sizeof(*out));
	guest_console_init(&out->con);
	if (boot_args(s, &argv))
		return mg_err_set(err, ENOMEM, "the boot's arguments: out of memory");
	for (size_t i = 0, used = 0; argv[i] && used < sizeof(out->argv_text) - 1; i++)
		used += (size_t)snprintf(out->argv_text + used, sizeof(out->argv_text) - used,
					 "%s%s", i ? " " : "", argv[i]);
	spec.argv = (const char *const *)argv;
	ret = proc_start(&p, &spec, err);
	if (!ret) {
		r.p = &p;
		p.on_out = on_console;
		p.on_tick = on_tick;
		p.cb_arg = &r;
		r.cut_ns = s->cut_s > 0 ? p.started_ns + (int64_t)(s->cut_s * 1e9) : 0;
		ret = proc_watch(&p, p.started_ns + (int64_t)(s->timeout_s * 1e9), &r.stop);
		if (ret == -EINTR && s->interrupted && *s->interrupted) {
			ret = mg_err_set(err, EINTR, "interrupted");
		} else if (ret == -EINTR) {
			out->cut = true;
			ret = mg_err_set(err, ECANCELED,
					 "cut at %.1f s, before the guest had seen its disks",
					 s->cut_s);
		} else if (ret == -ETIMEDOUT) {
			ret = mg_err_set(err, ETIMEDOUT, "the guest did not finish within %.0f s%s",
					 s->timeout_s,
					 out->con.init_s < 0 ? " (its init never started)" : "");
		} else if (ret) {
			ret = mg_err_set(err, -ret, "watching QEMU: %s", strerror(-ret));
		}
		if (r.used)
			on_line(&r); /* a last line without its newline */
		out->status = p.status;
		out->wall_ms = (double)(util_now_ns() - p.started_ns) / 1e6;
		qemu_said = proc_tail_text(&p);
		proc_close(&p);
		if (!ret && !out->con.done)
			ret = mg_err_set(
			    err, EIO, "QEMU %s before the guest's init said done%s%.300s",
			    proc_status_text(out->status, how, sizeof(how)),
			    qemu_said && *qemu_said ? ": " : "", qemu_said ? qemu_said : "");
		else if (!ret && out->con.error[0])
			ret = mg_err_set(err, EIO, "%s", out->con.error);
		else if (!ret && !(WIFEXITED(out->status) && !WEXITSTATUS(out->status)))
			ret = mg_err_set(err, EIO, "QEMU %s after the guest was done%s%.300s",
					 proc_status_text(out->status, how, sizeof(how)),
					 qemu_said && *qemu_said ? ": " : "",
					 qemu_said ? qemu_said : "");
		free(qemu_said);
	}
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
	return ret;
}
