/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proc.c - start, watch, kill and reap child processes; catch and restore the stop signals. */
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"

const int proc_stop_signals[PROC_N_STOP_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* How long a wait may last without looking at a stop flag another thread may have set. */
#define STOP_LOOK_MS 200
/* How often a child is looked at when the kernel has no pidfd to poll for its end. */
#define NO_PIDFD_LOOK_MS 50

volatile sig_atomic_t proc_stop;
static volatile sig_atomic_t stop_depth;
static void (*stop_fatal)(void);
static struct sigaction stop_old[PROC_N_STOP_SIGNALS];
static bool stop_installed;

/* The one handler of the stop signals. */
static void on_stop(int sig)
{
	if (stop_depth > 0) {
		proc_stop = sig;
		return;
	}
	/* Nobody defers it: what must not outlive the process is undone, then the signal does
	 * what it did before memgate caught it (usually: end the process). */
	if (stop_fatal)
		stop_fatal();
	for (size_t i = 0; i < PROC_N_STOP_SIGNALS; i++)
		if (proc_stop_signals[i] == sig)
			sigaction(sig, &stop_old[i], NULL);
	raise(sig);
}

static void stops_install(bool on)
{
	struct sigaction sa = {.sa_handler = on_stop};

	if (on == stop_installed)
		return;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < PROC_N_STOP_SIGNALS; i++)
		sigaction(proc_stop_signals[i], on ? &sa : &stop_old[i], on ? &stop_old[i] : NULL);
	stop_installed = on;
}

void proc_stops_defer(void)
{
	if (stop_depth++ == 0)
		proc_stop = 0;
	stops_install(true);
}

void proc_stops_resume(void)
{
	if (stop_depth > 0)
		stop_depth--;
	if (!stop_depth && !stop_fatal)
		stops_install(false);
}

void proc_stops_on_fatal(void (*fn)(void))
{
	stop_fatal = fn;
	stops_install(true);
}

/* ---- in the child --------------------------------------------------------------------------- */

/* Signals a parent may catch or ignore; its child starts with the default for each, so that a
 * crash kills it and the parent sees the signal. */
static const int reset_signals[] = {SIGINT, SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS,
				    SIGILL, SIGFPE,  SIGABRT, SIGALRM, SIGCHLD, SIGUSR1, SIGUSR2};

static void child_fd(int fd, int target)
{
	if (fd != target && dup2(fd, target) < 0)
		_exit(127);
}

/* Where @how sends the stream, as an fd of the child's; -1 for "leave it". */
static int child_stream(enum proc_stream how, int pipe_end, int given, int devnull)
{
	switch (how) {
	case PROC_NULL:
		return devnull;
	case PROC_PIPE:
		return pipe_end;
	case PROC_FD:
		return given;
	default:
		return -1;
	}
}

static _Noreturn void child(const struct proc_spec *s, pid_t parent, const int in[2],
			    const int out[2], const int err[2], const int data[2])
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC), fd;
	sigset_t none;

	/* The death signal follows the thread that forked: memgate forks from its main thread. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	/* Its own group also from here: a kill of the group must find it whoever runs first. */
	if (s->own_group)
		setpgid(0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(reset_signals); i++)
		signal(reset_signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = child_stream(s->in, in[0], -1, devnull);
	if (fd >= 0)
		child_fd(fd, STDIN_FILENO);
	fd = child_stream(s->err, err[1], s->err_fd, devnull);
	if (fd >= 0)
		child_fd(fd, STDERR_FILENO);
	fd = s->out == PROC_TO_ERR ? STDERR_FILENO
				   : child_stream(s->out, out[1], s->out_fd, devnull);
	if (fd >= 0)
		child_fd(fd, STDOUT_FILENO);
	/* The caller's ends are not the child's: its stdin must see the end of the feed. The
	 * copies dup2() made lose close-on-exec; the originals go with the exec, or here. */
	if (in[1] >= 0)
		close(in[1]);
	if (out[0] >= 0)
		close(out[0]);
	if (err[0] >= 0)
		close(err[0]);
	if (data[0] >= 0)
		close(data[0]);
	if (!s->argv) {
		int status = s->fn(s->arg, data[1]);

		fflush(NULL);
		_exit(status);
	}
	if (s->close_others)
		closefrom(3);
	execvp(s->argv[0], (char *const *)s->argv);
	fprintf(stderr, "cannot run %s: %s\n", s->argv[0], strerror(errno));
	_exit(127);
}

/* ---- in the parent -------------------------------------------------------------------------- */

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	p[0] = p[1] = -1;
}

/* A pipe for the stream when @wanted: the caller's end non-blocking, so that a drain after a
 * kill cannot wait on a writer that lives on. */
static int make_pipe(bool wanted, int p[2], int callers_end, struct mg_err *err)
{
	if (!wanted)
		return 0;
	if (pipe2(p, O_CLOEXEC))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	fcntl(p[callers_end], F_SETFL, O_NONBLOCK);
	return 0;
}

int proc_start(struct proc *p, const struct proc_spec *s, struct mg_err *err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, data[2] = {-1, -1}, ret;
	pid_t parent = getpid();

	memset(p, 0, sizeof(*p));
	p->pid = -1;
	p->pid_fd = p->in = p->out = p->data = p->err = -1;
	ret = make_pipe(s->in == PROC_PIPE, in, 1, err);
	if (!ret)
		ret = make_pipe(s->out == PROC_PIPE, out, 0, err);
	if (!ret)
		ret = make_pipe(s->err == PROC_PIPE, errp, 0, err);
	if (!ret)
		ret = make_pipe(s->data_pipe && !s->argv, data, 0, err);
	if (ret)
		goto fail;
	/* The feed is written before the child reads it: it must not block the caller. */
	fflush(NULL); /* nothing buffered may be printed twice */
	p->started_ns = util_now_ns();
	p->pid = fork();
	if (p->pid < 0) {
		ret = mg_err_set(err, errno, "fork: %s", strerror(errno));
		goto fail;
	}
	if (p->pid == 0)
		child(s, parent, in, out, errp, data);
	if (s->own_group)
		setpgid(p->pid, p->pid);
	p->group = s->own_group;
	p->in = in[1];
	p->out = out[0];
	p->err = errp[0];
	p->data = data[0];
	in[1] = out[0] = errp[0] = data[0] = -1;
	close_pair(in);
	close_pair(out);
	close_pair(errp);
	close_pair(data);
	p->pid_fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	return 0;
fail:
	close_pair(in);
	close_pair(out);
	close_pair(errp);
	close_pair(data);
	return ret;
}

/* Keep the last PROC_TAIL_BYTES, moving them down only when twice that has gathered. */
static void tail_add(struct proc *p, const char *buf, size_t n)
{
	if (n >= PROC_TAIL_BYTES) {
		memcpy(p->tail, buf + n - PROC_TAIL_BYTES, PROC_TAIL_BYTES);
		p->tail_len = PROC_TAIL_BYTES;
		return;
	}
	if (p->tail_len + n > sizeof(p->tail)) {
		size_t keep = PROC_TAIL_BYTES - n;

		memmove(p->tail, p->tail + p->tail_len - keep, keep);
		p->tail_len = keep;
	}
	memcpy(p->tail + p->tail_len, buf, n);
	p->tail_len += n;
}

/* Read what @fd has now into its consumer; close it at its end. */
static void read_fd(struct proc *p, int *fd)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(*fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return;
		}
		if (fd == &p->err)
			tail_add(p, buf, (size_t)n);
		else if (fd == &p->out && p->on_out)
			p->on_out(p->cb_arg, buf, (size_t)n);
		else if (fd == &p->data && p->on_data)
			p->on_data(p->cb_arg, buf, (size_t)n);
		if ((size_t)n < sizeof(buf))
			return;
	}
}

/* Reap the child if it has ended (or wait for it); whatever its group left behind would hold
 * the pipes open, so it goes too. */
static void reap(struct proc *p, bool wait_for_it)
{
	pid_t got;

	if (p->exited)
		return;
	while ((got = wait4(p->pid, &p->status, wait_for_it ? 0 : WNOHANG, &p->usage)) < 0 &&
	       errno == EINTR)
		;
	if (got < 0) /* not ours to wait for (reaped elsewhere): as if it could not run */
		p->status = 127 << 8;
	else if (got != p->pid)
		return;
	p->exited = true;
	if (p->group)
		kill(-p->pid, SIGKILL);
}

void proc_kill(struct proc *p)
{
	if (p->pid <= 0)
		return;
	if (!p->exited)
		kill(p->group ? -p->pid : p->pid, SIGKILL);
	reap(p, true);
	/* Whatever was written before the kill is still in the pipes: keep it. */
	if (p->out >= 0)
		read_fd(p, &p->out);
	if (p->data >= 0)
		read_fd(p, &p->data);
	if (p->err >= 0)
		read_fd(p, &p->err);
}

int proc_watch(struct proc *p, int64_t deadline_ns, const volatile sig_atomic_t *stop)
{
	while (p->out >= 0 || p->data >= 0 || p->err >= 0 || !p->exited) {
		int *fds[] = {&p->out, &p->data, &p->err};
		struct pollfd pf[4];
		int *which[4];
		nfds_t n = 0;
		int64_t left_ms = (deadline_ns - util_now_ns()) / 1000000;
		int wait_ms = left_ms < STOP_LOOK_MS ? (int)left_ms + 1 : STOP_LOOK_MS;

		p->quiet_at_end = p->out < 0 && p->data < 0 && p->err < 0;
		if (stop && *stop) {
			proc_kill(p);
			return -EINTR;
		}
		if (left_ms < 0) {
			proc_kill(p);
			return -ETIMEDOUT;
		}
		if (p->on_tick) {
			int t = p->on_tick(p->cb_arg);

			wait_ms = t >= 0 && t < wait_ms ? t : wait_ms;
		}
		if (!p->exited && p->pid_fd < 0 && wait_ms > NO_PIDFD_LOOK_MS)
			wait_ms = NO_PIDFD_LOOK_MS;
		for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
			if (*fds[i] >= 0) {
				which[n] = fds[i];
				pf[n++] = (struct pollfd){.fd = *fds[i], .events = POLLIN};
			}
		if (!p->exited && p->pid_fd >= 0) {
			which[n] = NULL;
			pf[n++] = (struct pollfd){.fd = p->pid_fd, .events = POLLIN};
		}
		if (poll(pf, n, wait_ms) < 0 && errno != EINTR) {
			proc_kill(p);
			return -errno;
		}
		for (nfds_t i = 0; i < n; i++)
			if (which[i] && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				read_fd(p, which[i]);
		reap(p, false);
	}
	return 0;
}

void proc_close(struct proc *p)
{
	int *fds[] = {&p->in, &p->out, &p->data, &p->err, &p->pid_fd};

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

char *proc_tail_text(const struct proc *p)
{
	size_t skip = p->tail_len > PROC_TAIL_BYTES ? p->tail_len - PROC_TAIL_BYTES : 0;
	size_t len = p->tail_len - skip;
	char *t = malloc(len + 1);

	if (!t)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p->tail[skip + i];

		t[i] = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	t[len] = '\0';
	return t;
}

const char *proc_status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (SIG%s)", WTERMSIG(status),
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	return buf;
}
