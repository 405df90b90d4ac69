/* sampling.c - interleaved rounds of a perf case's arms; one sample in a fresh process. */
#include "harness/sampling.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/child.h"
#include "util/proc.h"
#include "util/util.h"

int case_interleave(const struct case_arms *arms)
{
	for (unsigned int i = 0; i < arms->warmup + arms->samples; i++) {
		bool measured = i >= arms->warmup;
		int ret = arms->round_begin ? arms->round_begin(arms->arg, i) : 0;

		for (unsigned int j = 0; !ret && j < arms->n; j++)
			ret = arms->sample(arms->arg, (i + j) % arms->n, i, measured);
		if (!ret && arms->round_end)
			ret = arms->round_end(arms->arg, i, measured);
		if (ret)
			return ret;
	}
	return 0;
}

/* What the fresh process sends back first: @fn's return and, on error, its message. */
struct fork_status {
	int ret;
	char msg[sizeof(((struct mg_err *)0)->msg)];
};

/* Write all of @buf, or fail: the parent reads exactly this much. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static void __attribute__((noreturn))
fork_child(int fd, int (*fn)(void *arg, void *out, struct mg_err *err), void *arg, void *out,
	   size_t size)
{
	struct fork_status st = {0};
	struct mg_err err = {0};

	st.ret = fn(arg, out, &err);
	if (st.ret)
		memcpy(st.msg, err.msg, sizeof(st.msg));
	if (write_all(fd, &st, sizeof(st)) || (!st.ret && write_all(fd, out, size)))
		_exit(2);
	_exit(0);
}

/* Read exactly @len bytes before @deadline_ns. Returns 0, -EPIPE (ended early), -ETIMEDOUT. */
static int read_until(int fd, void *buf, size_t len, int64_t deadline_ns)
{
	char *p = buf;

	while (len) {
		int64_t left_ms = (deadline_ns - util_now_ns()) / 1000000;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (left_ms <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left_ms > INT32_MAX ? INT32_MAX : (int)left_ms) == 0)
			continue;
		n = read(fd, p, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Kill the sample's process this long before the runner kills the case: time to report. */
static int64_t fork_margin_ns(const struct case_ctx *ctx)
{
	int64_t margin = (int64_t)(ctx->opts->timeout_s * 1e9) / 20;

	return margin < 1000000000 ? margin : 1000000000;
}

int case_fork(struct case_ctx *ctx, int (*fn)(void *arg, void *out, struct mg_err *err), void *arg,
	      void *out, size_t size, struct mg_err *err)
{
	struct fork_status st;
	int fd[2], status, ret;
	pid_t pid, parent = getpid();

	if (pipe2(fd, O_CLOEXEC))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	fflush(NULL); /* nothing buffered may be printed twice */
	pid = fork();
	if (pid < 0) {
		ret = mg_err_set(err, errno, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return ret;
	}
	if (pid == 0) {
		proc_die_with_parent(parent);
		close(fd[0]);
		fork_child(fd[1], fn, arg, out, size);
	}
	close(fd[1]);
	ret = read_until(fd[0], &st, sizeof(st), ctx->deadline_ns - fork_margin_ns(ctx));
	if (!ret && !st.ret)
		ret = read_until(fd[0], out, size, ctx->deadline_ns - fork_margin_ns(ctx));
	if (ret == -ETIMEDOUT)
		kill(pid, SIGKILL);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret == -ETIMEDOUT)
		return mg_err_set(err, ETIMEDOUT,
				  "a sample's process did not finish before "
				  "--timeout (%.0f s); killed",
				  ctx->opts->timeout_s);
	if (WIFSIGNALED(status))
		return mg_err_set(err, EIO, "a sample's process was killed by signal %d (SIG%s)",
				  WTERMSIG(status),
				  sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status))
								 : "?");
	if (ret)
		return mg_err_set(err, EIO,
				  "a sample's process ended without a result (exit "
				  "status %d)",
				  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (st.ret) {
		st.msg[sizeof(st.msg) - 1] = '\0';
		return mg_err_set(err, -st.ret, "%s", st.msg);
	}
	return 0;
}
