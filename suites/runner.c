/* runner.c - expand suites into instances; fork, watch and reap one child per instance. */
#include "suites/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suites/child.h"
#include "util/text.h"

#define STDERR_TAIL_BYTES 8192		/* enough for a backtrace or an assertion message */
#define RESULT_LINE_MAX (1u << 20)	/* one event; a case sends thousands of small ones */
#define BOOTSTRAP_RESAMPLES 2000	/* 95% interval ends stable to ~1% of their width */

char *runner_full_name(const struct case_inst *inst, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s.%s", inst->suite->name, inst->def->group, inst->name);
	return buf;
}

static void inst_name(struct case_inst *inst)
{
	size_t used = (size_t)snprintf(inst->name, sizeof(inst->name), "%s", inst->def->name);

	for (unsigned int i = 0; i < inst->params.n && used < sizeof(inst->name); i++)
		used += (size_t)snprintf(inst->name + used, sizeof(inst->name) - used, "%s%s=%s",
					 i ? "," : "[", inst->params.p[i].name,
					 inst->params.p[i].value);
	if (inst->params.n && used < sizeof(inst->name))
		snprintf(inst->name + used, sizeof(inst->name) - used, "]");
}

static bool suite_selected(const struct suite_def *s, const struct runner_filter *f)
{
	if (!f || f->n_suites == 0)
		return true;
	for (size_t i = 0; i < f->n_suites; i++)
		if (!strcmp(f->suites[i], s->name))
			return true;
	return false;
}

static int check_suite_names(const struct suite_def *const *suites, size_t n_suites,
			     const struct runner_filter *f, struct mg_err *err)
{
	for (size_t i = 0; f && i < f->n_suites; i++) {
		size_t j = 0;

		while (j < n_suites && strcmp(suites[j]->name, f->suites[i]))
			j++;
		if (j == n_suites)
			return mg_err_set(err, ENOENT, "unknown suite \"%s\" (see `memgate list`)",
					  f->suites[i]);
	}
	return 0;
}

/* Append the instances of one case definition that pass the glob. */
static int expand_case(const struct suite_def *s, const struct case_def *d,
		       const struct hw_info *hw, const struct run_opts *opts, const char *glob,
		       struct case_inst **arr, size_t *n, size_t *cap)
{
	struct case_params sets[CASE_MAX_INSTANCES];
	unsigned int k = 1;

	memset(sets, 0, sizeof(sets));
	if (d->expand)
		k = d->expand(hw, opts, sets, CASE_MAX_INSTANCES);
	for (unsigned int i = 0; i < k; i++) {
		struct case_inst inst = {.suite = s, .def = d, .params = sets[i]};
		char full[256];

		inst_name(&inst);
		if (glob && !text_glob(glob, runner_full_name(&inst, full, sizeof(full))))
			continue;
		if (*n == *cap) {
			struct case_inst *grown;

			*cap = *cap ? *cap * 2 : 16;
			grown = realloc(*arr, *cap * sizeof(**arr));
			if (!grown)
				return -ENOMEM;
			*arr = grown;
		}
		(*arr)[(*n)++] = inst;
	}
	return 0;
}

int runner_expand(const struct suite_def *const *suites, size_t n_suites, const struct hw_info *hw,
		  const struct run_opts *opts, const struct runner_filter *filter,
		  struct case_inst **out, size_t *n_out, struct mg_err *err)
{
	struct case_inst *arr = NULL;
	size_t n = 0, cap = 0;
	int ret = check_suite_names(suites, n_suites, filter, err);

	for (size_t i = 0; !ret && i < n_suites; i++) {
		if (!suite_selected(suites[i], filter))
			continue;
		for (unsigned int j = 0; !ret && j < suites[i]->n_cases; j++)
			ret = expand_case(suites[i], &suites[i]->cases[j], hw, opts,
					  filter ? filter->glob : NULL, &arr, &n, &cap);
	}
	if (ret) {
		free(arr);
		if (ret == -ENOMEM)
			mg_err_set(err, ENOMEM, "out of memory expanding the cases");
		return ret;
	}
	*out = arr;
	*n_out = n;
	return 0;
}

/* ---- results ---------------------------------------------------------------------------- */

static void append_text(char **dst, const char *line, const char *sep)
{
	char *joined;

	if (!*dst) {
		*dst = strdup(line);
		return;
	}
	if (asprintf(&joined, "%s%s%s", *dst, sep, line) < 0)
		return;
	free(*dst);
	*dst = joined;
}

static void set_outcome(struct case_result *r, enum case_outcome o, const char *msg)
{
	/* The worst outcome wins: ERROR over FAIL over SKIP over PASS. Messages accumulate. */
	if (o > r->outcome) {
		r->outcome = o;
		free(r->message);
		r->message = NULL;
	}
	if (o == r->outcome)
		append_text(&r->message, msg, "; ");
}

static int add_sample(struct metric_result *m, double v, int stolen)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		double *nv = realloc(m->v, cap * sizeof(*nv));
		unsigned char *ns;

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		ns = realloc(m->stolen, cap);
		if (!ns)
			return -ENOMEM;
		m->stolen = ns;
		m->cap = cap;
	}
	m->v[m->n] = v;
	m->stolen[m->n++] = (unsigned char)stolen;
	return 0;
}

static int add_prop(struct case_result *r, const char *name, const char *value)
{
	struct case_prop *np = realloc(r->props, (r->n_props + 1) * sizeof(*np));

	if (!np)
		return -ENOMEM;
	r->props = np;
	np[r->n_props].name = strdup(name);
	np[r->n_props].value = strdup(value);
	r->n_props++;
	return 0;
}

/* A metric event names its metric by index; refuse indices the definition does not have. */
static struct metric_result *event_metric(struct case_result *r, json_t *ev)
{
	json_int_t m = json_integer_value(json_object_get(ev, "m"));

	if (m < 0 || m >= (json_int_t)r->inst->def->n_metrics)
		return NULL;
	return &r->metrics[m];
}

int runner_apply_event(struct case_result *r, const char *line)
{
	json_t *ev = json_loads(line, 0, NULL);
	const char *kind = json_string_value(json_object_get(ev, "ev"));
	const char *msg = json_string_value(json_object_get(ev, "msg"));
	struct metric_result *m;
	int ret = 0;

	if (!kind) {
		ret = -EINVAL;
	} else if (!strcmp(kind, "sample")) {
		m = event_metric(r, ev);
		ret = m ? add_sample(m, json_number_value(json_object_get(ev, "v")),
				     json_is_true(json_object_get(ev, "stolen")))
			: -EINVAL;
	} else if (!strcmp(kind, "counter") && (m = event_metric(r, ev))) {
		snprintf(m->counter, sizeof(m->counter), "%s",
			 json_string_value(json_object_get(ev, "name")));
	} else if (!strcmp(kind, "prop")) {
		ret = add_prop(r, json_string_value(json_object_get(ev, "name")),
			       json_string_value(json_object_get(ev, "value")));
	} else if (msg && !strcmp(kind, "log")) {
		append_text(&r->output, msg, "\n");
	} else if (msg && !strcmp(kind, "fail")) {
		set_outcome(r, OUTCOME_FAIL, msg);
	} else if (msg && !strcmp(kind, "skip")) {
		set_outcome(r, OUTCOME_SKIP, msg);
	} else if (msg && !strcmp(kind, "error")) {
		set_outcome(r, OUTCOME_ERROR, msg);
	} else if (strcmp(kind, "done")) {
		ret = -EINVAL;
	}
	json_decref(ev);
	return ret;
}

void runner_result_release(struct case_result *r)
{
	for (unsigned int i = 0; r->metrics && i < r->inst->def->n_metrics; i++) {
		free(r->metrics[i].v);
		free(r->metrics[i].stolen);
	}
	for (size_t i = 0; i < r->n_props; i++) {
		free(r->props[i].name);
		free(r->props[i].value);
	}
	free(r->metrics);
	free(r->props);
	free(r->message);
	free(r->output);
	free(r->stderr_tail);
	memset(r, 0, sizeof(*r));
}

/* ---- one child ---------------------------------------------------------------------------- */

/* The signal that interrupted the run (SIGINT, SIGTERM), 0 while none has. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

struct child_io {
	pid_t pid;
	int res_fd, err_fd, pid_fd;	/* -1 once closed */
	char *line;			/* a result line not yet complete */
	size_t line_len;
	char tail[2 * STDERR_TAIL_BYTES];
	size_t tail_len;
	bool exited, done_seen;
	int status;
};

static const int default_signals[] = {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGBUS,
				      SIGILL,  SIGFPE,  SIGABRT, SIGALRM};

static void child_main(const struct case_inst *inst, const struct hw_info *hw,
		       const struct run_opts *opts, int res_fd, int err_fd)
{
	struct case_ctx ctx = {.inst = inst, .hw = hw, .opts = opts, .fd = res_fd};
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	sigset_t none;

	/* Its own process group: a timeout kills everything the case started, and the
	 * terminal's Ctrl-C reaches the parent, which decides what to do. */
	setpgid(0, 0);
	/* Default dispositions: a crash must kill the child so the parent sees the signal, whatever
	 * handlers the parent (a test framework, say) had installed. */
	for (size_t i = 0; i < sizeof(default_signals) / sizeof(default_signals[0]); i++)
		signal(default_signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(err_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	close(err_fd);
	inst->def->run(&ctx);
	child_finish(&ctx);
	fflush(NULL);
	_exit(0);
}

/* Split what arrived on the result pipe into lines and apply each. */
static void read_results(struct child_io *io, struct case_result *r)
{
	char buf[65536];
	ssize_t n = read(io->res_fd, buf, sizeof(buf));

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(io->res_fd);
			io->res_fd = -1;
		}
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			char *grown;

			if (io->line_len + 2 > RESULT_LINE_MAX)
				continue;	/* an oversized event is dropped, not buffered forever */
			grown = realloc(io->line, io->line_len + 2);
			if (!grown)
				continue;
			io->line = grown;
			io->line[io->line_len++] = buf[i];
			continue;
		}
		if (!io->line)
			continue;
		io->line[io->line_len] = '\0';
		if (!strcmp(io->line, "{\"ev\":\"done\"}"))
			io->done_seen = true;
		runner_apply_event(r, io->line);
		io->line_len = 0;
	}
}

/* Keep the last STDERR_TAIL_BYTES of what the child printed. */
static void read_stderr(struct child_io *io)
{
	ssize_t n = read(io->err_fd, io->tail + io->tail_len, sizeof(io->tail) - io->tail_len);

	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(io->err_fd);
			io->err_fd = -1;
		}
		return;
	}
	io->tail_len += (size_t)n;
	if (io->tail_len > STDERR_TAIL_BYTES * 3 / 2) {
		size_t drop = io->tail_len - STDERR_TAIL_BYTES;

		memmove(io->tail, io->tail + drop, STDERR_TAIL_BYTES);
		io->tail_len = STDERR_TAIL_BYTES;
	}
}

static void reap(struct child_io *io, bool wait_for_it)
{
	if (io->exited)
		return;
	if (waitpid(io->pid, &io->status, wait_for_it ? 0 : WNOHANG) == io->pid) {
		io->exited = true;
		/* Anything the case left behind in its group would hold the pipes open. */
		kill(-io->pid, SIGKILL);
	}
}

/*
 * Read both pipes until the child has exited and closed them, the deadline passes or the
 * run is interrupted. Returns 0, or -ETIMEDOUT / -EINTR with the child still to be killed.
 */
static int watch(struct child_io *io, struct case_result *r, int64_t deadline_ns)
{
	while (io->res_fd >= 0 || io->err_fd >= 0 || !io->exited) {
		struct pollfd p[3];
		nfds_t np = 0;
		int64_t left = deadline_ns - measure_now_ns();
		/* Without a pidfd, look at the child every 50 ms. */
		int wait_ms = io->pid_fd >= 0 ? (int)(left / 1000000) + 1
				: (int)(left / 1000000 < 50 ? left / 1000000 + 1 : 50);

		if (interrupted)
			return -EINTR;
		if (left <= 0)
			return -ETIMEDOUT;
		if (io->res_fd >= 0)
			p[np++] = (struct pollfd){.fd = io->res_fd, .events = POLLIN};
		if (io->err_fd >= 0)
			p[np++] = (struct pollfd){.fd = io->err_fd, .events = POLLIN};
		if (io->pid_fd >= 0 && !io->exited)
			p[np++] = (struct pollfd){.fd = io->pid_fd, .events = POLLIN};
		if (poll(p, np, wait_ms) < 0 && errno != EINTR)
			return -errno;
		for (nfds_t i = 0; i < np; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (p[i].fd == io->res_fd)
				read_results(io, r);
			else if (p[i].fd == io->err_fd)
				read_stderr(io);
		}
		reap(io, false);
	}
	return 0;
}

static void classify(struct child_io *io, struct case_result *r, int watch_ret,
		     const struct run_opts *opts)
{
	char msg[256];

	if (watch_ret == -ETIMEDOUT) {
		r->timed_out = 1;
		snprintf(msg, sizeof(msg), "timed out after %.0f s (--timeout); killed", opts->timeout_s);
		set_outcome(r, OUTCOME_ERROR, msg);
	} else if (watch_ret == -EINTR) {
		snprintf(msg, sizeof(msg), "interrupted by %s", sigabbrev_np(interrupted));
		set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFSIGNALED(io->status)) {
		r->term_signal = WTERMSIG(io->status);
		snprintf(msg, sizeof(msg), "crashed: killed by signal %d (SIG%s: %s)",
			 r->term_signal, sigabbrev_np(r->term_signal) ? sigabbrev_np(r->term_signal)
								       : "?",
			 strsignal(r->term_signal));
		set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFEXITED(io->status) && WEXITSTATUS(io->status)) {
		snprintf(msg, sizeof(msg), "exited with status %d before reporting a result",
			 WEXITSTATUS(io->status));
		set_outcome(r, OUTCOME_ERROR, msg);
	} else if (!io->done_seen) {
		set_outcome(r, OUTCOME_ERROR, "ended without reporting a result");
	}
	if (io->tail_len) {
		size_t skip = io->tail_len > STDERR_TAIL_BYTES ? io->tail_len - STDERR_TAIL_BYTES : 0;

		r->stderr_tail = strndup(io->tail + skip, io->tail_len - skip);
	}
}

static uint64_t name_seed(uint64_t seed, const char *s)
{
	while (*s)
		seed = (seed ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return seed;
}

static void summarise(struct case_result *r, const struct run_opts *opts)
{
	for (unsigned int i = 0; i < r->inst->def->n_metrics; i++) {
		struct metric_result *m = &r->metrics[i];

		if (m->n)
			stats_summarise(m->v, m->n, BOOTSTRAP_RESAMPLES,
					name_seed(opts->seed, m->def->name), &m->sum);
	}
}

static void utc_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* A reason to skip before forking: a capability the case declares it needs is missing. */
static const char *missing_need(const struct case_def *d, const struct hw_info *hw)
{
	if ((d->needs & NEEDS_HOST) && !hw->can_bind)
		return "topology loaded from a file: plans are checked, not executed";
	if ((d->needs & NEEDS_KVM) && hw->kvm != HW_PROBE_YES)
		return hw->kvm_detail[0] ? hw->kvm_detail : "no usable /dev/kvm";
	if ((d->needs & NEEDS_ROOT) && geteuid() != 0)
		return "needs root";
	return NULL;
}

static int run_one(const struct case_inst *inst, const struct hw_info *hw,
		   const struct run_opts *opts, struct case_result *r, struct mg_err *err)
{
	struct child_io io = {.res_fd = -1, .err_fd = -1, .pid_fd = -1};
	int res[2], errp[2], ret;
	int64_t t0;
	const char *skip = missing_need(inst->def, hw);

	if (skip) {
		set_outcome(r, OUTCOME_SKIP, skip);
		return 0;
	}
	if (pipe2(res, O_CLOEXEC))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC)) {
		close(res[0]);
		close(res[1]);
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	}
	fflush(NULL);	/* nothing buffered may be printed twice */
	t0 = measure_now_ns();
	io.pid = fork();
	if (io.pid < 0) {
		ret = mg_err_set(err, errno, "fork: %s", strerror(errno));
		close(res[0]);
		close(res[1]);
		close(errp[0]);
		close(errp[1]);
		return ret;
	}
	if (io.pid == 0) {
		close(res[0]);
		close(errp[0]);
		child_main(inst, hw, opts, res[1], errp[1]);
	}
	/* Also from the parent: the kill on timeout must find the group even if it runs first. */
	setpgid(io.pid, io.pid);
	close(res[1]);
	close(errp[1]);
	io.res_fd = res[0];
	io.err_fd = errp[0];
	io.pid_fd = (int)syscall(SYS_pidfd_open, io.pid, 0);
	ret = watch(&io, r, t0 + (int64_t)(opts->timeout_s * 1e9));
	if (!io.exited) {
		kill(-io.pid, SIGKILL);
		reap(&io, true);
		/* Whatever was written before the kill is still in the pipes: keep it. */
		while (io.res_fd >= 0)
			read_results(&io, r);
		while (io.err_fd >= 0)
			read_stderr(&io);
	}
	r->time_s = (double)(measure_now_ns() - t0) / 1e9;
	classify(&io, r, ret, opts);
	summarise(r, opts);
	if (io.pid_fd >= 0)
		close(io.pid_fd);
	free(io.line);
	return ret == -EINTR || ret == -ETIMEDOUT || ret == 0 ? 0 : ret;
}

static void progress(const struct run_opts *opts, size_t k, size_t n, const struct case_inst *inst,
		     const struct case_result *r)
{
	char full[256];

	if (!opts->progress)
		return;
	if (!r) {
		fprintf(stderr, "[%zu/%zu] %s ...", k + 1, n, runner_full_name(inst, full, sizeof(full)));
		return;
	}
	fprintf(stderr, " %s (%.2f s)\n", case_outcome_name(r->outcome), r->time_s);
}

static int init_result(struct case_result *r, const struct case_inst *inst)
{
	memset(r, 0, sizeof(*r));
	r->inst = inst;
	utc_now(r->timestamp, sizeof(r->timestamp));
	r->metrics = calloc(inst->def->n_metrics ? inst->def->n_metrics : 1, sizeof(*r->metrics));
	if (!r->metrics)
		return -ENOMEM;
	for (unsigned int i = 0; i < inst->def->n_metrics; i++)
		r->metrics[i].def = &inst->def->metrics[i];
	return 0;
}

int runner_run(const struct case_inst *insts, size_t n, const struct hw_info *hw,
	       const struct run_opts *opts, struct case_result *results, struct mg_err *err)
{
	struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
	int ret = 0;
	size_t i;

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (i = 0; i < n; i++) {
		if (init_result(&results[i], &insts[i])) {
			ret = mg_err_set(err, ENOMEM, "out of memory");
			break;
		}
		if (interrupted) {
			set_outcome(&results[i], OUTCOME_ERROR, "not run: interrupted");
			continue;
		}
		progress(opts, i, n, &insts[i], NULL);
		ret = run_one(&insts[i], hw, opts, &results[i], err);
		progress(opts, i, n, &insts[i], &results[i]);
		if (ret)
			break;
	}
	/* Results past a harness failure still need to be valid for the caller to release. */
	for (i = i + (i < n); ret && i < n; i++)
		if (!init_result(&results[i], &insts[i]))
			set_outcome(&results[i], OUTCOME_ERROR, "not run: the harness failed");
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return ret ? ret : interrupted;
}

int runner_merge(struct case_result *into, const struct case_result *more,
		 const struct run_opts *opts)
{
	for (unsigned int i = 0; i < into->inst->def->n_metrics; i++) {
		const struct metric_result *m = &more->metrics[i];

		for (size_t k = 0; k < m->n; k++)
			if (add_sample(&into->metrics[i], m->v[k], m->stolen[k]))
				return -ENOMEM;
	}
	if (more->outcome > into->outcome)
		set_outcome(into, more->outcome, more->message ? more->message : "");
	into->time_s += more->time_s;
	summarise(into, opts);
	return 0;
}

void case_params_add(struct case_params *p, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (p->n == CASE_MAX_PARAMS)
		return;
	snprintf(p->p[p->n].name, sizeof(p->p[p->n].name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(p->p[p->n].value, sizeof(p->p[p->n].value), fmt, ap);
	va_end(ap);
	p->n++;
}

const char *case_params_get(const struct case_params *p, const char *name)
{
	for (unsigned int i = 0; i < p->n; i++)
		if (!strcmp(p->p[i].name, name))
			return p->p[i].value;
	return NULL;
}
