/* runner.c - expand suites into instances; fork, watch and reap one child per instance. */
#include "harness/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/child.h"
#include "util/proc.h"
#include "util/text.h"
#include "util/util.h"

#define STDERR_TAIL_BYTES 8192	   /* enough for a backtrace or an assertion message */
#define RESULT_LINE_MAX (1u << 20) /* one event; a case sends thousands of small ones */

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

/*
 * --shard I/N: a case definition (SUITE.GROUP.NAME, its parameters left out) belongs to one
 * shard, by a hash every host computes alike; a gate, which judges instances of one case,
 * stays in the shard that runs them.
 */
static bool in_shard(const struct runner_filter *f, const char *full)
{
	char def[256];

	snprintf(def, sizeof(def), "%.*s", (int)strcspn(full, "["), full);
	return util_fnv1a64(UTIL_FNV1A64_INIT, def) % f->shards == f->shard;
}

/* Does the instance named @full pass @f: its glob, its exact names, its kind, its shard? */
static bool passes(const struct runner_filter *f, const struct case_def *d, const char *full)
{
	bool named = !f || !f->n_names;

	for (size_t i = 0; !named && i < f->n_names; i++)
		named = !strcmp(f->names[i], full);
	if (!named)
		return false;
	if (f && f->glob && !text_glob(f->glob, full))
		return false;
	if (f && f->kinds && !(f->kinds & (1u << d->kind)))
		return false;
	return !f || !f->shards || in_shard(f, full);
}

/* Append the instances of one case definition that pass @f. */
static int expand_case(const struct suite_def *s, const struct case_def *d,
		       const struct hw_info *hw, const struct run_opts *opts,
		       const struct runner_filter *f, struct case_inst **arr, size_t *n,
		       size_t *cap)
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
		if (!passes(f, d, case_full_name(&inst, full, sizeof(full))))
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
			ret = expand_case(suites[i], &suites[i]->cases[j], hw, opts, filter, &arr,
					  &n, &cap);
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

/* A metric event names its metric by index; refuse indices the definition does not have. */
static struct metric_result *event_metric(struct case_result *r, json_t *ev)
{
	json_int_t m = json_integer_value(json_object_get(ev, "m"));

	if (m < 0 || m >= (json_int_t)r->inst->def->n_metrics)
		return NULL;
	return &r->metrics[m];
}

/*
 * A counted metric's unit as its counter gave it: one of the units a counter counts in (the
 * definition keeps pointing at static text), or none given. Returns 0 or -EINVAL.
 */
static int counted_unit(struct metric_result *m, const char *unit)
{
	static const char *const units[] = {"cycles", "instructions", "misses"};

	if (!unit)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(unit, units[i])) {
			m->counted_def = *m->def;
			m->counted_def.unit = units[i];
			m->def = &m->counted_def;
			return 0;
		}
	return -EINVAL;
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
		ret = m ? case_result_add_sample(m, json_number_value(json_object_get(ev, "v")),
						 json_is_true(json_object_get(ev, "stolen")))
			: -EINVAL;
	} else if (!strcmp(kind, "counter") && (m = event_metric(r, ev))) {
		snprintf(m->counter, sizeof(m->counter), "%s",
			 json_string_value(json_object_get(ev, "name")));
		ret = counted_unit(m, json_string_value(json_object_get(ev, "unit")));
	} else if (!strcmp(kind, "prop")) {
		ret = case_result_add_prop(r, json_string_value(json_object_get(ev, "name")),
					   json_string_value(json_object_get(ev, "value")));
	} else if (msg && !strcmp(kind, "log")) {
		case_result_log(r, msg);
	} else if (msg && !strcmp(kind, "warn")) {
		ret = case_result_warn(r, msg);
	} else if (msg && !strcmp(kind, "fail")) {
		case_result_set_outcome(r, OUTCOME_FAIL, msg);
	} else if (msg && !strcmp(kind, "skip")) {
		case_result_set_outcome(r, OUTCOME_SKIP, msg);
	} else if (msg && !strcmp(kind, "error")) {
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (strcmp(kind, "done")) {
		ret = -EINVAL;
	}
	json_decref(ev);
	return ret;
}

/* ---- simulated counts: a counted case's process under callgrind ----------------------------- */

/*
 * With --counter simulated, a counted case's child execs valgrind on this very memgate
 * (`memgate case-exec`), keeping its result pipe: the parent watches, times out and reads it as
 * for any child. That process plans without the host (a counted case's expand() does not read
 * it): detecting it reads the TSC with rdtscp, which valgrind cannot run, and loading a record
 * goes through libxml2's hash tables, seeded at random, which would move the heap and so the
 * misses. The workspace holds callgrind's dumps; runner_run() removes it.
 */
static char sim_dir[4096];

static void sim_remove(void)
{
	DIR *d;
	struct dirent *e;

	if (!sim_dir[0])
		return;
	/* Callgrind's dumps: those of a case killed before it read them, and its final one. */
	d = opendir(sim_dir);
	while (d && (e = readdir(d))) {
		char file[4400];

		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", sim_dir, e->d_name);
		unlink(file);
	}
	if (d)
		closedir(d);
	rmdir(sim_dir);
	sim_dir[0] = '\0';
}

static int sim_prepare(struct mg_err *err)
{
	const char *tmp = getenv("TMPDIR");

	if (sim_dir[0])
		return 0;
	snprintf(sim_dir, sizeof(sim_dir), "%s/memgate-sim.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(sim_dir)) {
		int e = errno;

		sim_dir[0] = '\0';
		return mg_err_set(err, e, "a folder for callgrind's counts: %s", strerror(e));
	}
	return 0;
}

/* Append "--name value" (value printf-formatted into @buf) to @argv. */
#define SIM_ARG(name, buf, ...)                                                                    \
	do {                                                                                       \
		snprintf(buf, sizeof(buf), __VA_ARGS__);                                           \
		argv[argc++] = name;                                                               \
		argv[argc++] = buf;                                                                \
	} while (0)

/*
 * In the child: become `valgrind --tool=callgrind ... memgate case-exec` running @inst with
 * @opts, its events on @res_fd. Returns only when the exec failed (errno set).
 */
/* Every symbol bound before the first count, and nothing else from the caller's environment. */
static const char *const sim_env[] = {"LD_BIND_NOW=1", NULL};

static void sim_exec(const struct case_inst *inst, const struct run_opts *opts, int res_fd,
		     int64_t deadline_ns)
{
	char self[4096], vg[4096], out[4200], dump[4200], fd[16], name[256], full[256],
	    deadline[32], n[16], w[16], seed[32], size[32], guest[16], exit_ns[32],
	    impl[IMPL_MAX_KEYS][96];
	const char *argv[64 + 2 * IMPL_MAX_KEYS];
	int argc = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (!sim_dir[0])
		return;
	if (len <= 0 || !counter_find_valgrind(vg, sizeof(vg)))
		return;
	self[len] = '\0';
	snprintf(out, sizeof(out), "--callgrind-out-file=%s/cg", sim_dir);
	argv[argc++] = vg;
	argv[argc++] = "-q";
	argv[argc++] = "--tool=callgrind";
	argv[argc++] = "--cache-sim=yes";
	argv[argc++] = "--collect-atstart=no";
	argv[argc++] = "--separate-threads=yes";
	argv[argc++] = COUNTER_SIM_I1;
	argv[argc++] = COUNTER_SIM_D1;
	argv[argc++] = COUNTER_SIM_LL;
	argv[argc++] = out;
	argv[argc++] = self;
	argv[argc++] = "case-exec";
	SIM_ARG("--fd", fd, "%d", res_fd);
	SIM_ARG("--case", full, "%s", case_full_name(inst, name, sizeof(name)));
	SIM_ARG("--deadline-ns", deadline, "%019lld", (long long)deadline_ns);
	SIM_ARG("--dump", dump, "%s/cg", sim_dir);
	/* A simulated count is the same every time: one sample, and no warm-up, since every
	 * symbol is bound before the first (LD_BIND_NOW below), unless asked otherwise. */
	SIM_ARG("-n", n, "%u", opts->samples_set ? opts->samples : 1);
	SIM_ARG("--warmup", w, "%u", opts->warmup_set ? opts->warmup : 0);
	SIM_ARG("--seed", seed, "%llu", (unsigned long long)opts->seed);
	SIM_ARG("--guest", guest, "%s",
		opts->guest == RUN_GUEST_KVM	    ? "kvm"
		: opts->guest == RUN_GUEST_MODELLED ? "modelled"
						    : "auto");
	if (opts->size_bytes)
		SIM_ARG("--size", size, "%llu", (unsigned long long)opts->size_bytes);
	if (opts->guest_exit_ns)
		SIM_ARG("--guest-exit-ns", exit_ns, "%llu",
			(unsigned long long)opts->guest_exit_ns);
	for (unsigned int k = 0; opts->impl && impl_opts_key(k); k++)
		if (opts->impl->value[k])
			SIM_ARG("--impl", impl[k], "%s=%s", impl_opts_key(k), opts->impl->value[k]);
	if (opts->quick)
		argv[argc++] = "--quick";
	if (opts->long_run)
		argv[argc++] = "--long";
	argv[argc] = NULL;
	/*
	 * The pipe survives the exec. The layout is the same run after run: no randomisation
	 * (setarch -R), arguments of one length (the dumps are cg.N: one case at a time runs in
	 * this folder) and one environment, since the strings on the stack move everything
	 * below them and so which cache sets the data falls in: the misses.
	 */
	fcntl(res_fd, F_SETFD, 0);
	personality(ADDR_NO_RANDOMIZE);
	execve(vg, (char *const *)argv, (char *const *)sim_env);
}

int runner_case_exec(const struct case_inst *inst, const struct hw_info *hw,
		     const struct run_opts *opts, int res_fd, int64_t deadline_ns)
{
	struct case_ctx ctx = {
	    .inst = inst, .hw = hw, .opts = opts, .fd = res_fd, .deadline_ns = deadline_ns};

	inst->def->run(&ctx);
	child_finish(&ctx);
	return 0;
}

/* ---- one child ---------------------------------------------------------------------------- */

/* What ends a run early, its reports written: Ctrl-C, kill, a lost terminal (a Jenkins
 * agent's), SIGQUIT. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* The signal that interrupted the run, 0 while none has. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

struct child_io {
	pid_t pid;
	int res_fd, err_fd, pid_fd; /* -1 once closed */
	char *line;		    /* a result line not yet complete */
	size_t line_len;
	char tail[2 * STDERR_TAIL_BYTES];
	size_t tail_len;
	bool exited, done_seen;
	int status;
};

static const int default_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV,
				      SIGBUS, SIGILL,  SIGFPE, SIGABRT, SIGALRM};

static void child_main(const struct case_inst *inst, const struct hw_info *hw,
		       const struct run_opts *opts, int res_fd, int err_fd, int64_t deadline_ns,
		       pid_t parent)
{
	struct case_ctx ctx = {
	    .inst = inst, .hw = hw, .opts = opts, .fd = res_fd, .deadline_ns = deadline_ns};
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	sigset_t none;

	proc_die_with_parent(parent);

	/* Its own process group: a timeout kills everything the case started, and the
	 * terminal's Ctrl-C reaches the parent, which decides what to do. */
	setpgid(0, 0);
	/* Default dispositions: a crash must kill the child so the parent sees the signal, whatever
	 * handlers the parent (a test framework, say) had installed. */
	for (size_t i = 0; i < ARRAY_SIZE(default_signals); i++)
		signal(default_signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(err_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	close(err_fd);
	if (inst->def->counted && opts->counter == COUNTER_SIMULATED && !counter_under_valgrind()) {
		sim_exec(inst, opts, res_fd, deadline_ns);
		case_error(&ctx, "cannot run this case under valgrind (--counter simulated): %s",
			   sim_dir[0] ? strerror(errno) : "no folder for its counts");
		child_finish(&ctx);
		_exit(0);
	}
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
				continue; /* an oversized event is dropped, not buffered forever */
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
		int64_t left = deadline_ns - util_now_ns();
		/* Without a pidfd, look at the child every 50 ms. */
		int wait_ms = io->pid_fd >= 0
				  ? (int)(left / 1000000) + 1
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

/*
 * What a child printed, as text a console and a report can show: a NUL would cut it short
 * and an escape sequence would drive the reader's terminal, so both, and every other
 * control but newline and tab, become '?'.
 */
static char *tail_text(const char *s, size_t len)
{
	char *t = malloc(len + 1);

	if (!t)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		t[i] = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	t[len] = '\0';
	return t;
}

static void classify(struct child_io *io, struct case_result *r, int watch_ret,
		     const struct run_opts *opts)
{
	char msg[256];

	if (watch_ret == -ETIMEDOUT) {
		r->timed_out = 1;
		snprintf(msg, sizeof(msg), "timed out after %.0f s (--timeout); killed",
			 opts->timeout_s);
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (watch_ret == -EINTR) {
		snprintf(msg, sizeof(msg), "interrupted by %s", sigabbrev_np(interrupted));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFSIGNALED(io->status)) {
		r->term_signal = WTERMSIG(io->status);
		snprintf(msg, sizeof(msg), "crashed: killed by signal %d (SIG%s: %s)",
			 r->term_signal,
			 sigabbrev_np(r->term_signal) ? sigabbrev_np(r->term_signal) : "?",
			 strsignal(r->term_signal));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFEXITED(io->status) && WEXITSTATUS(io->status)) {
		snprintf(msg, sizeof(msg), "exited with status %d before reporting a result",
			 WEXITSTATUS(io->status));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (!io->done_seen) {
		case_result_set_outcome(r, OUTCOME_ERROR, "ended without reporting a result");
	}
	if (io->tail_len) {
		size_t skip =
		    io->tail_len > STDERR_TAIL_BYTES ? io->tail_len - STDERR_TAIL_BYTES : 0;

		r->stderr_tail = tail_text(io->tail + skip, io->tail_len - skip);
	}
}

/* A reason to skip before forking: a capability the case declares it needs is missing. */
static const char *missing_need(const struct case_def *d, const struct hw_info *hw,
				const struct run_opts *opts)
{
	if ((d->needs & NEEDS_HOST) && !hw->can_bind)
		return "topology loaded from a file: plans are checked, not executed";
	if ((d->needs & NEEDS_KVM) && hw->kvm != HW_PROBE_YES)
		return hw->kvm_detail[0] ? hw->kvm_detail : "no usable /dev/kvm";
	if ((d->needs & NEEDS_ROOT) && geteuid() != 0)
		return "needs root";
	if ((d->needs & NEEDS_QEMU) && (!opts->qemu || !opts->qemu->path[0]))
		return opts->qemu && opts->qemu->why[0] ? opts->qemu->why : "no QEMU binary";
	return NULL;
}

static int run_one(const struct case_inst *inst, const struct hw_info *hw,
		   const struct run_opts *opts, struct case_result *r, struct mg_err *err)
{
	struct child_io io = {.res_fd = -1, .err_fd = -1, .pid_fd = -1};
	int res[2], errp[2], ret;
	int64_t t0, deadline;
	pid_t parent;
	const char *skip = missing_need(inst->def, hw, opts);

	if (skip) {
		case_result_set_outcome(r, OUTCOME_SKIP, skip);
		return 0;
	}
	if (pipe2(res, O_CLOEXEC))
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC)) {
		close(res[0]);
		close(res[1]);
		return mg_err_set(err, errno, "pipe: %s", strerror(errno));
	}
	fflush(NULL); /* nothing buffered may be printed twice */
	t0 = util_now_ns();
	deadline = t0 + (int64_t)(opts->timeout_s * 1e9);
	parent = getpid();
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
		child_main(inst, hw, opts, res[1], errp[1], deadline, parent);
	}
	/* Also from the parent: the kill on timeout must find the group even if it runs first. */
	setpgid(io.pid, io.pid);
	close(res[1]);
	close(errp[1]);
	io.res_fd = res[0];
	io.err_fd = errp[0];
	io.pid_fd = (int)syscall(SYS_pidfd_open, io.pid, 0);
	ret = watch(&io, r, deadline);
	if (!io.exited) {
		kill(-io.pid, SIGKILL);
		reap(&io, true);
		/* Whatever was written before the kill is still in the pipes: keep it. */
		while (io.res_fd >= 0)
			read_results(&io, r);
		while (io.err_fd >= 0)
			read_stderr(&io);
	}
	r->time_s = (double)(util_now_ns() - t0) / 1e9;
	classify(&io, r, ret, opts);
	case_result_summarise(r, opts->seed);
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
		fprintf(stderr, "[%zu/%zu] %s ...", k + 1, n,
			case_full_name(inst, full, sizeof(full)));
		return;
	}
	fprintf(stderr, " %s (%.2f s)\n", case_outcome_name(r->outcome), r->time_s);
}

/* The caller's view of a final result, as it becomes final. */
static void show(const struct run_opts *opts, const struct case_result *r)
{
	if (opts->on_result)
		opts->on_result(r, opts->on_result_arg);
}

int runner_run(const struct case_inst *insts, size_t n, const struct hw_info *hw,
	       const struct run_opts *opts, struct case_result *results, struct mg_err *err)
{
	struct sigaction sa = {.sa_handler = on_interrupt}, old[ARRAY_SIZE(stop_signals)];
	int ret = 0;
	size_t i;

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	for (size_t s = 0; s < ARRAY_SIZE(stop_signals); s++)
		sigaction(stop_signals[s], &sa, &old[s]);
	for (i = 0; i < n; i++)
		if (insts[i].def->counted && opts->counter == COUNTER_SIMULATED &&
		    !counter_under_valgrind()) {
			/* Without it, those cases are ERRORs saying so. */
			if (sim_prepare(err))
				fprintf(stderr, "memgate: --counter simulated: %s\n", err->msg);
			break;
		}
	for (i = 0; i < n; i++) {
		if (case_result_init(&results[i], &insts[i])) {
			ret = mg_err_set(err, ENOMEM, "out of memory");
			break;
		}
		if (interrupted) {
			case_result_set_outcome(&results[i], OUTCOME_ERROR, "not run: interrupted");
			show(opts, &results[i]);
			continue;
		}
		progress(opts, i, n, &insts[i], NULL);
		ret = run_one(&insts[i], hw, opts, &results[i], err);
		/* The harness could not run it (no fork, no pipe): an ERROR saying so, never the
		 * PASS an untouched result would read as. */
		if (ret)
			case_result_set_outcome(&results[i], OUTCOME_ERROR, err->msg);
		progress(opts, i, n, &insts[i], &results[i]);
		show(opts, &results[i]);
		if (ret)
			break;
	}
	/* Results past a harness failure still need to be valid for the caller to release. */
	for (i = i + (i < n); ret && i < n; i++)
		if (!case_result_init(&results[i], &insts[i])) {
			case_result_set_outcome(&results[i], OUTCOME_ERROR,
						"not run: the harness failed");
			show(opts, &results[i]);
		}
	sim_remove();
	for (size_t s = 0; s < ARRAY_SIZE(stop_signals); s++)
		sigaction(stop_signals[s], &old[s], NULL);
	return ret ? ret : interrupted;
}

int runner_merge(struct case_result *into, const struct case_result *more,
		 const struct run_opts *opts)
{
	for (unsigned int i = 0; i < into->inst->def->n_metrics; i++) {
		const struct metric_result *m = &more->metrics[i];

		for (size_t k = 0; k < m->n; k++)
			if (case_result_add_sample(&into->metrics[i], m->v[k], m->stolen[k]))
				return -ENOMEM;
	}
	if (more->outcome > into->outcome)
		case_result_set_outcome(into, more->outcome, more->message ? more->message : "");
	into->time_s += more->time_s;
	case_result_summarise(into, opts->seed);
	return 0;
}
