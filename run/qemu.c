/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu.c - find the host's QEMU, ask its version, launch it over QMP and time it. */
#include "run/qemu.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/util.h"

/* The QMP a management layer sends to start and stop: the handshake, then quit. */
static const char qmp_hello[] = "{\"execute\":\"qmp_capabilities\"}\n";
static const char qmp_quit[] = "{\"execute\":\"quit\"}\n";
static const char qmp_feed[] = "{\"execute\":\"qmp_capabilities\"}\n{\"execute\":\"quit\"}\n";

/* How often the threads and the resident memory are read while QEMU starts (it preallocates
 * before QMP speaks); doubled each time the trace fills. */
#define POLL_MS 1

/*
 * QEMU's preallocation threads alive now: its tasks named "touch_pages", the name that
 * QEMU's util/oslib-posix.c gives them, 7.2 to 10.x, under -name debug-threads=on. They are
 * all created before any starts and joined after all end, so at a poll every 1 ms during a
 * preallocation of 30 ms or more, the most seen at once is how many it ran. Counting every thread
 * instead (and taking away those of a launch without prealloc) missed one of two at 1 GiB on both
 * versions.
 */
static unsigned int proc_touch_threads(pid_t pid)
{
	char path[96], comm[32];
	unsigned int n = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/comm", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "touch_pages", 11))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* QEMU's resident memory, KiB: VmRSS and HugetlbPages of its status (0 when unreadable). */
static unsigned long proc_resident_kib(pid_t pid)
{
	char path[64], line[128];
	unsigned long kib = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu", &v) == 1 ||
		    sscanf(line, "HugetlbPages: %lu", &v) == 1)
			kib += v;
	fclose(f);
	return kib;
}

/* What a launch reads as QEMU runs: its stdout's head and its threads until stdout speaks. */
struct watch {
	struct proc *p;
	struct qemu_launch *out;
	char *head;
	size_t head_len, head_used;
	bool placement; /* read the policy lines of numa_maps at the greeting, then quit */
	int poll_ms;	/* the interval of the polls, doubled each time the trace fills */
};

/* One poll of QEMU's resident memory into the trace. */
static void trace_resident(struct watch *w)
{
	struct qemu_launch *l = w->out;

	if (l->n_trace == QEMU_TRACE) {
		for (unsigned int i = 0; i < QEMU_TRACE / 2; i++) {
			l->trace_ms[i] = l->trace_ms[2 * i];
			l->trace_kib[i] = l->trace_kib[2 * i];
		}
		l->n_trace = QEMU_TRACE / 2;
		w->poll_ms *= 2;
	}
	l->trace_ms[l->n_trace] = (double)(util_now_ns() - w->p->started_ns) / 1e6;
	l->trace_kib[l->n_trace++] = proc_resident_kib(w->p->pid);
}

double qemu_fill_ms(const struct qemu_launch *l, unsigned long long bytes)
{
	unsigned long kib = (unsigned long)(bytes >> 10), base = ULONG_MAX, lo, hi;
	double below = -1;

	if (!l->n_trace || !kib)
		return -1;
	/* The least seen, not the first: a poll before the exec reads memgate's forked image. */
	for (unsigned int i = 0; i < l->n_trace; i++)
		base = l->trace_kib[i] && l->trace_kib[i] < base ? l->trace_kib[i] : base;
	lo = base + kib / 8;
	hi = base + kib / 8 * 7;
	for (unsigned int i = 0; i < l->n_trace; i++) {
		if (l->trace_kib[i] < lo)
			below = l->trace_ms[i];
		else if (l->trace_kib[i] >= hi)
			return below < 0 ? -1 : (l->trace_ms[i] - below) * 4 / 3;
	}
	return -1;
}

/*
 * The lines of QEMU's /proc/PID/numa_maps with a memory policy other than the default (its
 * bound backends: "ADDR bind:1 anon=N dirty=N N1=N ...") into @out, as many as fit.
 */
static void read_placement(pid_t pid, char *out, size_t len)
{
	char path[64], line[1024];
	size_t used = 0;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && used + strlen(line) < len)
		if (!strstr(line, " default"))
			used += (size_t)snprintf(out + used, len - used, "%s", line);
	fclose(f);
}

static void on_stdout(void *arg, const char *data, size_t n)
{
	struct watch *w = arg;
	size_t take;

	/* QMP greets once every -object is made, preallocation done: the memory is in place. */
	if (!w->out->greeted)
		trace_resident(w);
	if (w->placement && !w->out->greeted) {
		read_placement(w->p->pid, w->out->placement, sizeof(w->out->placement));
		if (write(w->p->in, qmp_quit, strlen(qmp_quit)) < 0)
			w->out->placement[0] = '\0';
	}
	w->out->greeted = true;
	if (!w->head || w->head_used + 1 >= w->head_len)
		return;
	take = n < w->head_len - 1 - w->head_used ? n : w->head_len - 1 - w->head_used;
	memcpy(w->head + w->head_used, data, take);
	w->head_used += take;
	w->head[w->head_used] = '\0';
}

/* Until QMP speaks, read threads and memory every poll: QEMU preallocates before it speaks. */
static int on_tick(void *arg)
{
	struct watch *w = arg;
	unsigned int t;

	if (w->out->greeted)
		return -1;
	trace_resident(w);
	t = proc_touch_threads(w->p->pid);
	w->out->max_touch = t > w->out->max_touch ? t : w->out->max_touch;
	return w->poll_ms;
}

/*
 * Run @path with @args, feed @feed on its stdin, keep the head of its stdout in @head (may be
 * NULL) and the tail of its stderr in @out->output; count its threads until stdout speaks.
 * Killed at @timeout_s, also when it closes its output and lives on.
 */
static int spawn(const char *path, const char *const *args, const char *feed, double timeout_s,
		 char *head, size_t head_len, bool placement, struct qemu_launch *out,
		 struct mg_err *err)
{
	const char *argv[64];
	struct proc_spec spec = {.argv = argv,
				 .in = PROC_PIPE,
				 .out = PROC_PIPE,
				 .err = PROC_PIPE,
				 .close_others = true};
	struct proc p;
	struct watch w = {.p = &p,
			  .out = out,
			  .head = head,
			  .head_len = head_len,
			  .placement = placement,
			  .poll_ms = POLL_MS};
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_pipe;
	size_t n = 0;
	char *tail, how[96];
	int ret;

	memset(out, 0, sizeof(*out));
	if (head && head_len)
		head[0] = '\0';
	argv[n++] = path;
	for (; args[n - 1] && n < ARRAY_SIZE(argv) - 1; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	/* A QEMU that dies at once (a bad -object) closes its stdin: EPIPE, not SIGPIPE. */
	sigaction(SIGPIPE, &ignore, &old_pipe);
	ret = proc_start(&p, &spec, err);
	if (ret) {
		sigaction(SIGPIPE, &old_pipe, NULL);
		return ret;
	}
	p.on_out = on_stdout;
	p.on_tick = on_tick;
	p.cb_arg = &w;
	/* A pipe holds the few bytes: QEMU reads them when its monitor is up. */
	if (write(p.in, feed, strlen(feed)) < 0 && errno != EPIPE)
		ret = mg_err_set(err, errno, "writing to %s: %s", path, strerror(errno));
	if (proc_watch(&p, p.started_ns + (int64_t)(timeout_s * 1e9), NULL) == -ETIMEDOUT)
		ret = mg_err_set(err, ETIMEDOUT, "%s %s within %.0f s: killed", path,
				 p.quiet_at_end ? "closed its output but did not exit"
						: "did not exit",
				 timeout_s);
	out->status = p.status;
	out->wall_ms = (double)(util_now_ns() - p.started_ns) / 1e6;
	out->cpu_ms = (double)(p.usage.ru_utime.tv_sec + p.usage.ru_stime.tv_sec) * 1e3 +
		      (double)(p.usage.ru_utime.tv_usec + p.usage.ru_stime.tv_usec) / 1e3;
	tail = proc_tail_text(&p);
	if (tail) {
		size_t len = strlen(tail), cap = sizeof(out->output) - 1;

		while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
			tail[--len] = '\0';
		snprintf(out->output, sizeof(out->output), "%s",
			 tail + (len > cap ? len - cap : 0));
		free(tail);
	}
	proc_close(&p);
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (!ret && !(WIFEXITED(out->status) && WEXITSTATUS(out->status) == 0))
		ret = mg_err_set(err, EIO, "%s %s%s%s", path,
				 proc_status_text(out->status, how, sizeof(how)),
				 out->output[0] ? ": " : "", out->output);
	return ret;
}

int qemu_launch(const struct qemu_bin *q, const char *object, double timeout_s,
		struct qemu_launch *out, struct mg_err *err)
{
	const char *args[] = {
	    "-machine", "none", "-nodefaults", "-nographic", "-monitor",
	    "none",	"-qmp", "stdio",       "-name",	     "memgate,debug-threads=on",
	    "-object",	object, NULL};

	return spawn(q->path, args, qmp_feed, timeout_s, NULL, 0, false, out, err);
}

int qemu_launch_placed(const struct qemu_bin *q, const char *const *objects, double timeout_s,
		       struct qemu_launch *out, struct mg_err *err)
{
	const char *args[32] = {"-machine", "none", "-nodefaults", "-nographic",
				"-monitor", "none", "-qmp",	   "stdio"};
	size_t n = 8;

	for (; *objects && n + 3 < ARRAY_SIZE(args); objects++) {
		args[n++] = "-object";
		args[n++] = *objects;
	}
	args[n] = NULL;
	return spawn(q->path, args, qmp_hello, timeout_s, NULL, 0, true, out, err);
}

/* An executable regular file? 0, or -errno with @err naming @path. */
static int check_exec(const char *path, struct mg_err *err)
{
	struct stat st;

	if (stat(path, &st))
		return mg_err_set(err, errno, "--qemu %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return mg_err_set(err, EINVAL, "--qemu %s: not a regular file", path);
	if (access(path, X_OK))
		return mg_err_set(err, errno, "--qemu %s: not executable: %s", path,
				  strerror(errno));
	return 0;
}

/* The first executable @name in a directory of PATH into @out; 0 or -ENOENT. */
static int search_path(const char *name, char *out, size_t len)
{
	const char *p = getenv("PATH");

	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		size_t dlen = strcspn(p, ":");

		if (dlen && (size_t)snprintf(out, len, "%.*s/%s", (int)dlen, p, name) < len &&
		    !check_exec(out, NULL))
			return 0;
		p += dlen;
		p += *p == ':';
	}
	out[0] = '\0';
	return -ENOENT;
}

int qemu_find(struct qemu_bin *q, const char *path, struct mg_err *err)
{
	static const char *const args[] = {"-version", NULL};
	static const char prefix[] = "QEMU emulator version ";
	struct qemu_launch l;
	struct mg_err e;
	char head[512] = "";
	const char *v;
	int ret;

	memset(q, 0, sizeof(*q));
	if (path) {
		ret = check_exec(path, err);
		if (ret)
			return ret;
		snprintf(q->path, sizeof(q->path), "%s", path);
	} else if (search_path(QEMU_DEFAULT_NAME, q->path, sizeof(q->path))) {
		snprintf(q->why, sizeof(q->why),
			 "no QEMU: %s is not on PATH (install Debian's qemu-system-x86, as "
			 "ci/install-deps.sh does, or pass --qemu PATH)",
			 QEMU_DEFAULT_NAME);
		return 0;
	}
	ret = spawn(q->path, args, "", 10, head, sizeof(head), false, &l, &e);
	v = strstr(head, prefix);
	if (ret || !v) {
		if (!ret)
			ret = mg_err_set(&e, EINVAL,
					 "%s is not a QEMU system emulator: `-version` printed "
					 "no \"%s\" line",
					 q->path, prefix);
		q->path[0] = '\0';
		/* Named on the command line: bad input. Found on PATH: no QEMU, and why. */
		if (path)
			return mg_err_set(err, -ret, "--qemu %s", e.msg);
		snprintf(q->why, sizeof(q->why), "no usable QEMU: %.500s", e.msg);
		return 0;
	}
	v += strlen(prefix);
	snprintf(q->version, sizeof(q->version), "%.*s", (int)strcspn(v, "\n"), v);
	return 0;
}
