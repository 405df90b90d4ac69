/* SPDX-License-Identifier: GPL-2.0-or-later */
/* runner.c - expand suites into instances; fork, watch and reap one child per instance. */
#include "run/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/child.h"
#include "util/json.h"
#include "util/proc.h"
#include "util/text.h"
#include "util/tmpdir.h"
#include "util/util.h"

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
	json_t *ev = json_doc_parse(line, strlen(line), "a case's event", NULL, NULL);
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
	if (!sim_dir[0])
		return;
	/* Callgrind's dumps: those of a case killed before it read them, and its final one. */
	tmpdir_remove(sim_dir);
	sim_dir[0] = '\0';
}

static int sim_prepare(struct mg_err *err)
{
	int ret;

	if (sim_dir[0])
		return 0;
	ret = tmpdir_make(sim_dir, sizeof(sim_dir), "sim");
	return ret ? mg_err_set(err, -ret, "a folder for callgrind's counts in %s ($TMPDIR): %s",
				tmpdir_base(), strerror(-ret))
		   : 0;
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
	for (size_t k = 0; opts->impl && k < opts->impl->n; k++)
		SIM_ARG("--impl", impl[k], "%s=%s", opts->impl->key[k]->key, opts->impl->value[k]);
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

/* What the parent gathers from one child's result pipe. */
struct child_results {
	struct case_result *r;
	char *line; /* a result line not yet complete */
	size_t line_len;
	bool done_seen;
};

/* What the child runs: the case, in a process of its own group (a timeout kills everything
 * it started, and the terminal's Ctrl-C reaches the parent, which decides what to do), its
 * stdout and stderr into the parent's tail, its events on @res_fd. */
struct child_args {
	const struct case_inst *inst;
	const struct hw_info *hw;
	const struct run_opts *opts;
	int64_t deadline_ns;
};

static int child_main(void *arg, int res_fd)
{
	const struct child_args *a = arg;
	struct case_ctx ctx = {.inst = a->inst,
			       .hw = a->hw,
			       .opts = a->opts,
			       .fd = res_fd,
			       .deadline_ns = a->deadline_ns};

	if (a->inst->def->counted && a->opts->counter == COUNTER_SIMULATED &&
	    !counter_under_valgrind()) {
		sim_exec(a->inst, a->opts, res_fd, a->deadline_ns);
		case_error(&ctx, "cannot run this case under valgrind (--counter simulated): %s",
			   sim_dir[0] ? strerror(errno) : "no folder for its counts");
		child_finish(&ctx);
		return 0;
	}
	a->inst->def->run(&ctx);
	child_finish(&ctx);
	return 0;
}

/* Split what arrived on the result pipe into lines and apply each. */
static void on_results(void *arg, const char *buf, size_t n)
{
	struct child_results *c = arg;

	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			char *grown;

			if (c->line_len + 2 > RESULT_LINE_MAX)
				continue; /* an oversized event is dropped, not buffered forever */
			grown = realloc(c->line, c->line_len + 2);
			if (!grown)
				continue;
			c->line = grown;
			c->line[c->line_len++] = buf[i];
			continue;
		}
		if (!c->line)
			continue;
		c->line[c->line_len] = '\0';
		if (!strcmp(c->line, "{\"ev\":\"done\"}"))
			c->done_seen = true;
		runner_apply_event(c->r, c->line);
		c->line_len = 0;
	}
}

static void classify(const struct proc *p, const struct child_results *c, int watch_ret,
		     const struct run_opts *opts)
{
	struct case_result *r = c->r;
	char msg[256];

	if (watch_ret == -ETIMEDOUT) {
		r->timed_out = 1;
		snprintf(msg, sizeof(msg), "timed out after %.0f s (--timeout); killed",
			 opts->timeout_s);
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (watch_ret == -EINTR) {
		snprintf(msg, sizeof(msg), "interrupted by %s", sigabbrev_np(proc_stop));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFSIGNALED(p->status)) {
		r->term_signal = WTERMSIG(p->status);
		snprintf(msg, sizeof(msg), "crashed: killed by signal %d (SIG%s: %s)",
			 r->term_signal,
			 sigabbrev_np(r->term_signal) ? sigabbrev_np(r->term_signal) : "?",
			 strsignal(r->term_signal));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (WIFEXITED(p->status) && WEXITSTATUS(p->status)) {
		snprintf(msg, sizeof(msg), "exited with status %d before reporting a result",
			 WEXITSTATUS(p->status));
		case_result_set_outcome(r, OUTCOME_ERROR, msg);
	} else if (!c->done_seen) {
		case_result_set_outcome(r, OUTCOME_ERROR, "ended without reporting a result");
	}
	if (p->tail_len)
		r->stderr_tail = proc_tail_text(p);
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
	const char *skip = missing_need(inst->def, hw, opts);
	struct child_args args = {.inst = inst, .hw = hw, .opts = opts};
	struct proc_spec spec = {.fn = child_main,
				 .arg = &args,
				 .in = PROC_NULL,
				 .out = PROC_TO_ERR,
				 .err = PROC_PIPE,
				 .data_pipe = true,
				 .own_group = true};
	struct child_results c = {.r = r};
	struct proc p;
	int ret;

	if (skip) {
		case_result_set_outcome(r, OUTCOME_SKIP, skip);
		return 0;
	}
	args.deadline_ns = util_now_ns() + (int64_t)(opts->timeout_s * 1e9);
	ret = proc_start(&p, &spec, err);
	if (ret)
		return ret;
	p.on_data = on_results;
	p.cb_arg = &c;
	ret = proc_watch(&p, args.deadline_ns, &proc_stop);
	r->time_s = (double)(util_now_ns() - p.started_ns) / 1e9;
	classify(&p, &c, ret, opts);
	case_result_summarise(r, opts->seed);
	proc_close(&p);
	free(c.line);
	if (ret && ret != -EINTR && ret != -ETIMEDOUT)
		return mg_err_set(err, -ret, "watching a case: %s", strerror(-ret));
	return 0;
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
	int ret = 0;
	size_t i;

	proc_stops_defer();
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
		if (proc_stop) {
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
	proc_stops_resume();
	return ret ? ret : proc_stop;
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
