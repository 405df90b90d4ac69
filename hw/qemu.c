/* qemu.c - find the host's QEMU, ask its version, launch it over QMP and time it. */
#include "hw/qemu.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/util.h"

/* The QMP a management layer sends to start and stop: the handshake, then quit. */
static const char qmp_feed[] = "{\"execute\":\"qmp_capabilities\"}\n{\"execute\":\"quit\"}\n";

/* How often the thread count is read while QEMU starts (it preallocates before QMP speaks). */
#define THREAD_POLL_MS 2

/* Threads of @pid now, from /proc; 0 when it cannot be read (the process is gone). */
static unsigned int proc_threads(pid_t pid)
{
	char path[64], line[128];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Keep the last bytes of a stream: @buf holds at most @cap - 1 of them, NUL-terminated. */
static void tail_append(char *buf, size_t cap, const char *data, size_t n)
{
	size_t have = strlen(buf);

	if (n >= cap - 1) {
		memcpy(buf, data + n - (cap - 1), cap - 1);
		buf[cap - 1] = '\0';
		return;
	}
	if (have + n >= cap) {
		size_t drop = have + n - (cap - 1);

		memmove(buf, buf + drop, have - drop + 1);
		have -= drop;
	}
	memcpy(buf + have, data, n);
	buf[have + n] = '\0';
}

/* In the child: stdio from the pipes, nothing else inherited, dies with its parent. */
static void exec_child(const char *path, char *const *argv, int in, int out, int errfd,
		       pid_t parent)
{
	sigset_t none;

	proc_die_with_parent(parent);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
		_exit(127);
	closefrom(3);
	execv(path, argv);
	fprintf(stderr, "cannot execute %s: %s\n", path, strerror(errno));
	_exit(127);
}

/*
 * Run @path with @args, feed @feed on its stdin, keep the head of its stdout in @head (may be
 * NULL) and the tail of its stderr in @out->output; count its threads until stdout speaks.
 */
/*
 * Reap @pid by @deadline, killing it then: a QEMU may close its output and live on, and
 * waitpid() alone would wait for it for ever. Returns 0, or -ETIMEDOUT when it was killed.
 */
static int reap_by(pid_t pid, int64_t deadline, int *status)
{
	const struct timespec tick = {0, THREAD_POLL_MS * 1000000L};
	pid_t got;

	while ((got = waitpid(pid, status, WNOHANG)) == 0 && util_now_ns() < deadline)
		nanosleep(&tick, NULL);
	if (got == pid)
		return 0;
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

static int spawn(const char *path, const char *const *args, const char *feed, double timeout_s,
		 char *head, size_t head_len, struct qemu_launch *out, struct mg_err *err)
{
	char *argv[64];
	int in[2], o[2], e[2], ret = 0;
	size_t n = 0, head_used = 0;
	pid_t pid, parent = getpid();
	int64_t t0, deadline;
	struct pollfd pf[2];

	memset(out, 0, sizeof(*out));
	argv[n++] = (char *)path;
	for (; args[n - 1] && n < ARRAY_SIZE(argv) - 1; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	if (pipe2(in, O_CLOEXEC))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	if (pipe2(o, O_CLOEXEC)) {
		ret = mg_err_set(err, errno, "pipe: %s", strerror(errno));
		goto close_in;
	}
	if (pipe2(e, O_CLOEXEC)) {
		ret = mg_err_set(err, errno, "pipe: %s", strerror(errno));
		goto close_out;
	}
	t0 = util_now_ns();
	deadline = t0 + (int64_t)(timeout_s * 1e9);
	pid = fork();
	if (pid < 0) {
		ret = mg_err_set(err, errno, "fork: %s", strerror(errno));
		goto close_err;
	}
	if (!pid)
		exec_child(path, argv, in[0], o[1], e[1], parent);
	close(in[0]);
	close(o[1]);
	close(e[1]);
	in[0] = o[1] = e[1] = -1;
	/* A pipe holds the few bytes: QEMU reads them when its monitor is up. */
	if (write(in[1], feed, strlen(feed)) < 0 && errno != EPIPE)
		ret = mg_err_set(err, errno, "writing to %s: %s", path, strerror(errno));
	pf[0] = (struct pollfd){.fd = o[0], .events = POLLIN};
	pf[1] = (struct pollfd){.fd = e[0], .events = POLLIN};
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int64_t left = deadline - util_now_ns();
		int wait_ms = left <= 0 ? 0 : (int)(left / 1000000) + 1;
		char buf[4096];

		if (!out->greeted) {
			unsigned int t = proc_threads(pid);

			out->max_threads = t > out->max_threads ? t : out->max_threads;
			wait_ms = wait_ms < THREAD_POLL_MS ? wait_ms : THREAD_POLL_MS;
		}
		if (left <= 0) {
			kill(pid, SIGKILL);
			ret = -ETIMEDOUT;
			mg_err_set(err, ETIMEDOUT, "%s did not exit within %.0f s: killed", path,
				   timeout_s);
			break;
		}
		if (poll(pf, 2, wait_ms) < 0 && errno != EINTR) {
			kill(pid, SIGKILL);
			ret = mg_err_set(err, errno, "poll: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t got;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(pf[i].fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				pf[i].fd = -1;
				continue;
			}
			if (i == 1) {
				tail_append(out->output, sizeof(out->output), buf, (size_t)got);
				continue;
			}
			out->greeted = true;
			if (head && head_used + 1 < head_len) {
				size_t take = (size_t)got < head_len - 1 - head_used
						  ? (size_t)got
						  : head_len - 1 - head_used;

				memcpy(head + head_used, buf, take);
				head_used += take;
				head[head_used] = '\0';
			}
		}
	}
	if (reap_by(pid, deadline, &out->status) && !ret)
		ret = mg_err_set(err, ETIMEDOUT,
				 "%s closed its output but did not exit within %.0f s: killed",
				 path, timeout_s);
	out->wall_ms = (double)(util_now_ns() - t0) / 1e6;
	if (!ret && !(WIFEXITED(out->status) && WEXITSTATUS(out->status) == 0)) {
		size_t len = strlen(out->output);

		while (len && (out->output[len - 1] == '\n' || out->output[len - 1] == '\r'))
			out->output[--len] = '\0';
		ret = mg_err_set(err, EIO, "%s %s %d%s%s", path,
				 WIFSIGNALED(out->status) ? "was killed by signal" : "exited with",
				 WIFSIGNALED(out->status) ? WTERMSIG(out->status)
							  : WEXITSTATUS(out->status),
				 len ? ": " : "", out->output);
	}
close_err:
	for (int i = 0; i < 2; i++)
		if (e[i] >= 0)
			close(e[i]);
close_out:
	for (int i = 0; i < 2; i++)
		if (o[i] >= 0)
			close(o[i]);
close_in:
	for (int i = 0; i < 2; i++)
		if (in[i] >= 0)
			close(in[i]);
	return ret;
}

int qemu_launch(const struct qemu_bin *q, const char *object, double timeout_s,
		struct qemu_launch *out, struct mg_err *err)
{
	const char *args[] = {"-machine", "none",  "-nodefaults", "-nographic", "-monitor", "none",
			      "-qmp",	  "stdio", "-object",	  object,	NULL};

	return spawn(q->path, args, qmp_feed, timeout_s, NULL, 0, out, err);
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
	ret = spawn(q->path, args, "", 10, head, sizeof(head), &l, &e);
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
