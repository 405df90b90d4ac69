/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sampling.c - interleaved rounds of a perf case's arms; one sample in a fresh process. */
#include "run/sampling.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/child.h"
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
		if (measured && arms->ctx && i + 1 < arms->warmup + arms->samples &&
		    case_settled(arms->ctx)) {
			case_log(arms->ctx,
				 "sampling stopped after %u of %u rounds: the samples settle every "
				 "verdict they feed",
				 i + 1 - arms->warmup, arms->samples);
			break;
		}
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

/* One sample's process, both ends: what it runs, and the status and result it sends back. */
struct fork_job {
	int (*fn)(void *arg, void *out, struct mg_err *err);
	void *arg, *out;
	size_t size;
	struct fork_status st;
	size_t got; /* bytes of st, then of out, the parent has */
};

static int fork_child(void *arg, int fd)
{
	struct fork_job *j = arg;
	struct mg_err err = {0};

	memset(&j->st, 0, sizeof(j->st));
	j->st.ret = j->fn(j->arg, j->out, &err);
	if (j->st.ret)
		memcpy(j->st.msg, err.msg, sizeof(j->st.msg));
	if (write_all(fd, &j->st, sizeof(j->st)) || (!j->st.ret && write_all(fd, j->out, j->size)))
		return 2;
	return 0;
}

/* In the parent: the status first, then the result, nothing past them. */
static void fork_gather(void *arg, const char *data, size_t n)
{
	struct fork_job *j = arg;

	while (n) {
		size_t total = sizeof(j->st) + j->size, take;
		char *to;

		if (j->got >= total)
			return;
		to = j->got < sizeof(j->st) ? (char *)&j->st + j->got
					    : (char *)j->out + (j->got - sizeof(j->st));
		take = j->got < sizeof(j->st) ? sizeof(j->st) - j->got : total - j->got;
		take = take < n ? take : n;
		memcpy(to, data, take);
		j->got += take;
		data += take;
		n -= take;
	}
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
	struct fork_job job = {.fn = fn, .arg = arg, .out = out, .size = size};
	struct proc_spec spec = {.fn = fork_child, .arg = &job, .data_pipe = true};
	struct proc p;
	char how[96];
	int ret;

	ret = proc_start(&p, &spec, err);
	if (ret)
		return ret;
	p.on_data = fork_gather;
	p.cb_arg = &job;
	job.got = 0;
	ret = proc_watch(&p, ctx->deadline_ns - fork_margin_ns(ctx), NULL);
	proc_close(&p);
	if (ret == -ETIMEDOUT)
		return mg_err_set(err, ETIMEDOUT,
				  "a sample's process did not finish before "
				  "--timeout (%.0f s); killed",
				  ctx->opts->timeout_s);
	if (ret)
		return mg_err_set(err, -ret, "watching a sample's process: %s", strerror(-ret));
	if (WIFSIGNALED(p.status))
		return mg_err_set(err, EIO, "a sample's process was %s",
				  proc_status_text(p.status, how, sizeof(how)));
	if (job.got < sizeof(job.st) || (!job.st.ret && job.got < sizeof(job.st) + size))
		return mg_err_set(err, EIO,
				  "a sample's process ended without a result (exit "
				  "status %d)",
				  WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1);
	if (job.st.ret) {
		job.st.msg[sizeof(job.st.msg) - 1] = '\0';
		return mg_err_set(err, -job.st.ret, "%s", job.st.msg);
	}
	return 0;
}
