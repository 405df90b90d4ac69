/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_proc.c - the one module that starts child processes: streams, deadlines, stops, tails. */
#include "tests/testutil.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/util.h"

#define SECOND_NS 1000000000LL

/* What a child wrote on stdout or its data pipe, gathered by the parent. */
struct gathered {
	char text[256];
	size_t len;
};

static void gather(void *arg, const char *data, size_t n)
{
	struct gathered *g = arg;

	n = n < sizeof(g->text) - 1 - g->len ? n : sizeof(g->text) - 1 - g->len;
	memcpy(g->text + g->len, data, n);
	g->len += n;
	g->text[g->len] = '\0';
}

/* Runs `sh -c SCRIPT` with stdin fed, stdout gathered, stderr's tail kept. */
static int run_sh(const char *script, const char *feed, int64_t deadline_ns,
		  const volatile sig_atomic_t *stop, struct proc *p, struct gathered *g)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct proc_spec spec = {
	    .argv = argv, .in = PROC_PIPE, .out = PROC_PIPE, .err = PROC_PIPE, .own_group = true};
	struct mg_err err;
	int ret = proc_start(p, &spec, &err);

	assert_int_equal(ret, 0);
	p->on_out = gather;
	p->cb_arg = g;
	if (feed)
		assert_true(write(p->in, feed, strlen(feed)) == (ssize_t)strlen(feed));
	close(p->in);
	p->in = -1;
	ret = proc_watch(p, deadline_ns, stop);
	proc_close(p);
	return ret;
}

static void test_streams_and_status(void **state)
{
	struct gathered g = {0};
	struct proc p;
	char *tail, how[96];

	(void)state;
	/* stdin reaches it and ends; stdout is read as it comes; a NUL and an escape in stderr
	 * come back as '?'; the exit status is the child's. */
	assert_int_equal(run_sh("cat; printf 'bad\\000\\033[2Jend\\n' >&2; exit 3", "fed\n",
				util_now_ns() + 10 * SECOND_NS, NULL, &p, &g),
			 0);
	assert_string_equal(g.text, "fed\n");
	assert_true(WIFEXITED(p.status));
	assert_int_equal(WEXITSTATUS(p.status), 3);
	tail = proc_tail_text(&p);
	assert_non_null(tail);
	assert_string_equal(tail, "bad??[2Jend\n");
	free(tail);
	assert_string_equal(proc_status_text(p.status, how, sizeof(how)), "exited with status 3");
}

static void test_tail_keeps_the_end(void **state)
{
	struct gathered g = {0};
	struct proc p;
	char *tail;

	(void)state;
	/* Far more than the tail holds, then a last line: the last PROC_TAIL_BYTES remain. */
	assert_int_equal(run_sh("i=0; while [ $i -lt 3000 ]; do echo 0123456789; i=$((i+1)); "
				"done >&2; echo LAST >&2",
				NULL, util_now_ns() + 20 * SECOND_NS, NULL, &p, &g),
			 0);
	tail = proc_tail_text(&p);
	assert_non_null(tail);
	assert_int_equal(strlen(tail), PROC_TAIL_BYTES);
	assert_non_null(strstr(tail + PROC_TAIL_BYTES - 5, "LAST\n"));
	free(tail);
}

static void test_deadline_kills_the_group(void **state)
{
	struct gathered g = {0};
	struct proc p;
	int64_t t0 = util_now_ns();
	pid_t grandchild;
	bool gone = false;

	(void)state;
	/* A grandchild that holds stdout open and sleeps: the deadline kills both, and the
	 * watch returns soon after it instead of waiting for the pipe. */
	assert_int_equal(run_sh("sleep 30 & echo $!; wait", NULL, t0 + SECOND_NS / 2, NULL, &p, &g),
			 -ETIMEDOUT);
	assert_true(util_now_ns() - t0 < 5 * SECOND_NS);
	assert_true(WIFSIGNALED(p.status));
	assert_int_equal(WTERMSIG(p.status), SIGKILL);
	grandchild = (pid_t)atoi(g.text);
	assert_true(grandchild > 0);
	/* Gone, or a zombie waiting for init: never still running a second later. */
	for (int i = 0; i < 100 && !gone; i++) {
		char path[64], st[256] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)grandchild);
		f = fopen(path, "re");
		gone = !f || (fgets(st, sizeof(st), f) && strstr(st, ") Z "));
		if (f)
			fclose(f);
		if (!gone)
			usleep(10000);
	}
	assert_true(gone);
}

static void test_stop_flag(void **state)
{
	static volatile sig_atomic_t stop = SIGTERM;
	struct gathered g = {0};
	struct proc p;

	(void)state;
	assert_int_equal(run_sh("sleep 30", NULL, util_now_ns() + 60 * SECOND_NS, &stop, &p, &g),
			 -EINTR);
	assert_true(WIFSIGNALED(p.status));
}

static int child_fn(void *arg, int fd)
{
	const char *msg = arg;

	return write(fd, msg, strlen(msg)) == (ssize_t)strlen(msg) ? 7 : 1;
}

static void test_function_and_data_pipe(void **state)
{
	struct proc_spec spec = {.fn = child_fn, .arg = "over the data pipe", .data_pipe = true};
	struct gathered g = {0};
	struct mg_err err;
	struct proc p;

	(void)state;
	assert_int_equal(proc_start(&p, &spec, &err), 0);
	p.on_data = gather;
	p.cb_arg = &g;
	assert_int_equal(proc_watch(&p, util_now_ns() + 10 * SECOND_NS, NULL), 0);
	proc_close(&p);
	assert_string_equal(g.text, "over the data pipe");
	assert_int_equal(WEXITSTATUS(p.status), 7);
}

static void test_missing_program(void **state)
{
	const char *argv[] = {"/nonexistent/memgate-no-such-program", NULL};
	struct proc_spec spec = {.argv = argv, .err = PROC_PIPE};
	struct mg_err err;
	struct proc p;
	char *tail;

	(void)state;
	assert_int_equal(proc_start(&p, &spec, &err), 0);
	assert_int_equal(proc_watch(&p, util_now_ns() + 10 * SECOND_NS, NULL), 0);
	proc_close(&p);
	assert_int_equal(WEXITSTATUS(p.status), 127);
	tail = proc_tail_text(&p);
	assert_non_null(strstr(tail, "cannot run /nonexistent/memgate-no-such-program"));
	free(tail);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_streams_and_status),
	    cmocka_unit_test(test_tail_keeps_the_end),
	    cmocka_unit_test(test_deadline_kills_the_group),
	    cmocka_unit_test(test_stop_flag),
	    cmocka_unit_test(test_function_and_data_pipe),
	    cmocka_unit_test(test_missing_program),
	};

	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
