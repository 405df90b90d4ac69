/* test_cli.c - build/memgate as a user runs it: exit statuses, output, reports. */
#include "tests/testutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw/reserve.h"
#include "util/text.h"
#include "util/util.h"

/* Run `build/memgate ARGS`, stdout and stderr together; returns the exit status. */
static int memgate(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int memgate(char **out, const char *fmt, ...)
{
	char args[2048], cmd[2400], *buf = NULL;
	size_t len = 0, cap = 0;
	va_list ap;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* $MG_TMP and $MG_BUILD in @args: the shell finds this program's own folder and the
	 * build there. */
	setenv("MG_TMP", test_tmp_dir(), 1);
	setenv("MG_BUILD", test_build_dir(), 1);
	snprintf(cmd, sizeof(cmd), "%s/memgate %s 2>&1", test_build_dir(), args);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *grown = realloc(buf, cap);

			if (!grown)
				free(buf);
			assert_non_null(grown);
			buf = grown;
		}
		size_t r = fread(buf + len, 1, 4096, p);

		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Any exit status below 2: a verdict, whichever it was (expect_judged()). */
#define A_VERDICT (-1)

/*
 * Did `memgate @args` (@where: how it ran) exit @want_status with @want_text (NULL: anything)
 * in its output @out? If not, say what it gave; @out is freed, then the test fails.
 */
static void check_output(const char *args, const char *where, int st, int want_status,
			 const char *want_text, char *out)
{
	char want[16];
	bool ok = (want_status == A_VERDICT ? st == 0 || st == 1 : st == want_status) && out &&
		  (!want_text || strstr(out, want_text));

	if (want_status == A_VERDICT)
		snprintf(want, sizeof(want), "0 or 1");
	else
		snprintf(want, sizeof(want), "%d", want_status);
	/* Say it, free the output, then fail: fail() does not return. */
	if (!ok)
		print_error("memgate %s%s: exit %d (want %s), output:\n%s\n(wanted: %s)\n", args,
			    where, st, want, out ? out : "", want_text ? want_text : "-");
	free(out);
	if (!ok)
		fail();
}

/*
 * `memgate @args...` (NULL-terminated) started and left running: its stdout to @out_fd (-1:
 * /dev/null), its stderr to /dev/null, @close_fd (-1: none) closed in it. Returns its pid.
 */
static pid_t memgate_start(int out_fd, int close_fd, const char *const *args)
{
	char bin[1024];
	const char *argv[32] = {bin};
	size_t n = 1;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/memgate", test_build_dir());
	while (*args && n + 1 < ARRAY_SIZE(argv))
		argv[n++] = *args++;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (close_fd >= 0)
			close(close_fd);
		dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void expect(int want_status, const char *want_text, const char *args)
{
	char *out;
	int st = memgate(&out, "%s", args);

	check_output(args, "", st, want_status, want_text, out);
}

/*
 * An A/A of real timings as a test of what the verdict says, not of what it decided: it is
 * wrong at its alpha by design (a few percent of runs here), so its exit status may be 0 or 1
 * (never 2 or more), and @want_text must be in its output.
 */
static void expect_judged(const char *want_text, const char *args)
{
	expect(A_VERDICT, want_text, args);
}

/* The command line of expect_without_kvm(), run in its namespace; its exit status. */
static int run_without_kvm(void *arg)
{
	char cmd[2400];
	int st;

	snprintf(cmd, sizeof(cmd), "%s/memgate %s >'%s' 2>&1", test_build_dir(), (const char *)arg,
		 test_tmp("without-kvm.out"));
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 126;
}

/*
 * As expect(), with /dev/kvm hidden: where KVM is usable, the no-KVM side of a case is run in
 * a mount namespace of the test's own (test_without_dev()); where it is not, expect() sees
 * that side already.
 */
static void expect_without_kvm(int want_status, const char *want_text, const char *args)
{
	char why[128];
	int st;

	if (access("/dev/kvm", R_OK | W_OK)) {
		expect(want_status, want_text, args);
		return;
	}
	setenv("MG_TMP", test_tmp_dir(), 1);
	setenv("MG_BUILD", test_build_dir(), 1);
	st = test_without_dev(run_without_kvm, (void *)args, why, sizeof(why));
	if (st < 0) {
		printf("# not run without /dev/kvm (%s): memgate %s\n", why, args);
		return;
	}
	check_output(args, ", without /dev/kvm", st, want_status, want_text,
		     text_read_file(test_tmp("without-kvm.out"), 1 << 24));
}

/* One command line and what it must give: its exit status and a piece of its output. */
struct expectation {
	int status;
	const char *text; /* NULL: any output */
	const char *args; /* for the shell: $MG_BUILD is the build folder, $MG_TMP this program's */
};

static void expect_all(const struct expectation *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect(e[i].status, e[i].text, e[i].args);
}

static const struct expectation usage_expectations[] = {
    {0, "exit status:", "--help"},
    {0, "128+N", "run --help"},
    {2, "missing command", ""},
    {2, "unknown command 'frobnicate'", "frobnicate"},
    {2, "man takes no arguments", "man page"},
    {2, "--samples expects a whole number", "run -n abc"},
    {2, "--samples expects a whole number", "run -n 0"},
    {2, "unknown suite \"nosuch\"", "run -s nosuch"},
    {2, "no case matches", "run -k 'nothing*'"},
    {2, "--junit-style expects", "run --junit-style xunit"},
    {2, "unrecognized option", "hw --junit x.xml"},
    {2, "unexpected argument 'extra'", "list extra"},
};

static void test_usage(void **state)
{
	(void)state;
	expect_all(usage_expectations, ARRAY_SIZE(usage_expectations));
}

static void test_hw_text_and_json(void **state)
{
	char *out;
	json_t *j;
	json_error_t jerr;

	(void)state;
	expect(0, "fingerprint:", "hw");
	assert_int_equal(memgate(&out, "hw --json"), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("hw --json is not JSON: %s\n%s", jerr.text, out);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "topology"), "pus")),
			 sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(json_is_boolean(
	    json_object_get(json_object_get(json_object_get(j, "host"), "cpu"), "invariant_tsc")));
	assert_non_null(json_string_value(json_object_get(json_object_get(j, "host"), "thp")));
	json_decref(j);
	free(out);
}

static void test_topologies(void **state)
{
	DIR *d = opendir(TOPO_DIR);
	struct dirent *e;
	int n = 0;

	(void)state;
	if (!d)
		skip_because(TOPO_DIR " not found (run from the checkout)");
	while ((e = readdir(d))) {
		char args[512];

		if (!strstr(e->d_name, ".xml"))
			continue;
		snprintf(args, sizeof(args), "hw --topology " TOPO_DIR "/%s", e->d_name);
		expect(0, "binding: impossible", args);
		snprintf(args, sizeof(args), "hw --json --topology " TOPO_DIR "/%s", e->d_name);
		expect(0, "\"can_bind\": false", args);
		n++;
	}
	closedir(d);
	assert_true(n >= 4);
	expect(0, "16 PUs", "hw --topology 'synthetic:pack:2 [numa] core:4 pu:2'");
	expect(2, "not valid", "hw --topology synthetic:nonsense");
	expect(2, "COPYING.hwloc:1: not well-formed XML",
	       "hw --topology " TOPO_DIR "/COPYING.hwloc");
}

static void validate(const char *xml, const char *schema)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "xmllint --noout --schema %s/%s %s", test_schema_dir(), schema,
		 xml);
	assert_int_equal(system(cmd), 0);
}

/* The hw suite on this host: the end-to-end run, both JUnit dialects. */
static void test_run_hw_suite(void **state)
{
	char xml[256], ant[256], json[256], args[1024];

	(void)state;
	if (access(test_schema_dir(), R_OK) || system("command -v xmllint >/dev/null"))
		skip_because("needs the JUnit schemas in %s (MEMGATE_SCHEMAS) and xmllint",
			     test_schema_dir());
	snprintf(xml, sizeof(xml), "%s/test-hw.xml", test_build_dir());
	snprintf(ant, sizeof(ant), "%s/test-hw-ant.xml", test_build_dir());
	snprintf(json, sizeof(json), "%s/test-hw.json", test_build_dir());
	snprintf(args, sizeof(args), "run -s hw --quick --junit %s --json %s", xml, json);
	expect(0, "0 failed, 0 errors", args);
	validate(xml, "jenkins-xunit-junit-10.xsd");
	snprintf(args, sizeof(args), "run -s hw --quick --junit %s --junit-style ant", ant);
	expect(0, "passed", args);
	validate(ant, "windyroad-JUnit.xsd");
}

/* A loaded topology plans but does not execute: every host case is SKIP with the reason. */
static void test_run_on_loaded_topology(void **state)
{
	char xml[256], args[1024];

	(void)state;
	snprintf(xml, sizeof(xml), "%s/test-synthetic.xml", test_build_dir());
	snprintf(args, sizeof(args),
		 "run -s hw --quick --topology 'synthetic:pack:2 [numa] core:2 pu:1' --junit %s",
		 xml);
	expect(0, "plans are checked, not executed", args);
	expect(0, "hw.topology.pu_count", "list --topology 'synthetic:pack:2 [numa] core:2 pu:1'");
}

/* The memslot checks run whole (quick: fewer ops); the posted v2 must fail them. */
static void test_memslots_checks(void **state)
{
	(void)state;
	expect(0, "0 failed, 0 errors", "run -s memslots -k 'memslots.check.*' --quick");
	expect(1, "FAIL  memslots.check.regression[check=flags_only_change,order=size]",
	       "run -s memslots -k '*regression*' --impl memslots.update=shift-posted");
	expect(2, "memslots.update takes shift, swap, heapsort, shift-posted",
	       "run -s memslots --impl memslots.update=bubble");
	expect(2, "expected KEY=VALUE", "run --impl nosuch=1");
	expect(0, "impl=linear", "list -s memslots --impl memslots.lookup=linear");
}

/*
 * The prealloc checks: the plans on every shared topology (planned, not run), and on this
 * host the residency and running-out checks; as root with the pool sized for the run and put
 * back afterwards, which is checked here too.
 */
static void test_prealloc_checks(void **state)
{
	DIR *d = opendir(TOPO_DIR);
	struct dirent *e;
	char before[64] = "", after[64] = "";
	FILE *f;

	(void)state;
	for (; d && (e = readdir(d));) {
		char args[512];

		if (!strstr(e->d_name, ".xml"))
			continue;
		snprintf(args, sizeof(args),
			 "run -s prealloc -k '*plan*' --topology " TOPO_DIR "/%s", e->d_name);
		expect(0, "0 failed, 0 errors", args);
	}
	if (d)
		closedir(d);
	/* As root the checks reserve pages: the pool is read back, so it is the tests' turn. */
	if (geteuid() == 0)
		test_host_turn();
	if ((f = fopen("/proc/sys/vm/nr_hugepages", "r"))) {
		if (!fgets(before, sizeof(before), f))
			before[0] = '\0';
		fclose(f);
	}
	if (geteuid() == 0) {
		expect(0, "0 failed, 0 errors",
		       "run -s prealloc -k 'prealloc.check.*' --quick --reserve-hugepages");
	} else {
		expect(0, "0 failed, 0 errors", "run -s prealloc -k 'prealloc.check.*' --quick");
		expect(2, "needs root", "run -s prealloc -k '*plan*' --reserve-hugepages");
	}
	if ((f = fopen("/proc/sys/vm/nr_hugepages", "r"))) {
		if (!fgets(after, sizeof(after), f))
			after[0] = '\0';
		fclose(f);
	}
	assert_string_equal(before, after);
	expect(2, "--size expects", "run -s prealloc --size 10");
}

/*
 * The RCU checks; a 1-disk boot with its guest where /dev/kvm is ours; and with jemalloc
 * preloaded, malloc is not the C library's: the boot SKIPs saying so, the checks still pass.
 */
static void test_rcu_suite(void **state)
{
	const char *boot1 = "run -s rcu -k 'rcu.perf.boot[[]disks=1,*' -n 2 --warmup 0";
	glob_t g;

	(void)state;
	expect(0, "0 failed, 0 errors", "run -s rcu -k 'rcu.check.*'");
	expect(2, "rcu.trim takes idle, every-batch, none", "run -s rcu --impl rcu.trim=sometimes");
	/* Under ASan malloc is ASan's: the boot SKIPs saying so, as under jemalloc. Elsewhere it
	 * runs, with KVM's guest or a modelled one. */
	expect(0,
	       test_under_asan() ? "malloc comes from" : "PASS  rcu.perf.boot[disks=1,impl=idle]",
	       boot1);
	if (test_under_asan())
		skip_because("under AddressSanitizer, whose runtime must be the first library: "
			     "jemalloc cannot be preloaded before it");
	if (glob("/usr/lib/*/libjemalloc.so.2", 0, NULL, &g) || !g.gl_pathc)
		skip_because("no /usr/lib/*/libjemalloc.so.2 (Debian: libjemalloc2)");
	assert_int_equal(setenv("LD_PRELOAD", g.gl_pathv[0], 1), 0);
	globfree(&g);
	expect(0, "0 failed, 0 errors", "run -s rcu -k 'rcu.check.*'");
	expect(0, "libjemalloc.so.2, not the C library", boot1);
	unsetenv("LD_PRELOAD");
}

/* The rules: printed, replaced, refused with file and line when bad. */
static void test_rules_cli(void **state)
{
	char dir[128], bad[192], good[192], args[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "rules")));
	expect(0, "impl_vs_heapsort[capacity=128]", "rules");
	expect(0, "(embedded rules) (15 gates", "rules");
	snprintf(bad, sizeof(bad), "%s/bad.conf", dir);
	snprintf(good, sizeof(good), "%s/good.conf", dir);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("version = 1;\ntolerances = (\n  { unit = \"ms\"; ab = 0.1; why = \"w\"; },\n"
	      "  { unit = \"ms\"; ab = fast; }\n);\n",
	      f);
	fclose(f);
	snprintf(args, sizeof(args), "rules --rules %s", bad);
	expect(2, ":4: syntax error", args);
	snprintf(args, sizeof(args), "run -s memslots -k '*regression*' --rules %s", bad);
	expect(2, "bad.conf:4:", args);
	f = fopen(good, "w");
	assert_non_null(f);
	fputs("version = 1;\ngates = ( { suite = \"memslots\"; name = \"typo\"; kind = \"faster\";"
	      " threshold = 1; why = \"w\"; a = { case = \"memslots.nosuch\"; metric = \"m\"; };"
	      " b = { case = \"memslots.nosuch\"; metric = \"m\"; }; } );\n",
	      f);
	fclose(f);
	/* A rule that matches no case is a warning naming it, not an error. */
	snprintf(args, sizeof(args), "list -s memslots --rules %s", good);
	expect(0, "good.conf:2: gate memslots.typo matches no case", args);
	/* One file, shown whole: an @include is refused, and a FIFO is no rules file. */
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("version = 1;\n  @include \"/etc/hostname\"\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "rules --rules %s", bad);
	expect(2, "bad.conf:2: @include is not taken", args);
	unlink(bad);
	assert_int_equal(mkfifo(bad, 0600), 0);
	expect(2, "not a regular file", args);
	unlink(bad);
	unlink(good);
	rmdir(dir);
}

/* A side that is no memgate, or none at all: exit 2 before anything runs. A side is the
 * words of a POSIX shell: wrappers before the memgate, quotes kept, no substitution. */
static const struct expectation ab_side_expectations[] = {
    {2, "does not speak the A/B protocol",
     "ab --base /bin/true --head $MG_BUILD/memgate -s memslots"},
    {2, "/nonexistent/memgate", "ab --base $MG_BUILD/memgate --head /nonexistent/memgate"},
    {2, "ab needs --base", "ab --head build/memgate"},
    {0, "memgate ab-protocol 1", "ab-protocol"},
    {2, "unrecognized option '--bogus'", "ab-protocol --bogus"},
    /* Real timings of one build on both sides: a verdict either way (wrong at its alpha by
     * design, as test_calibrate_cli's), so exit 0 or 1; what is tested is that the sides
     * ran with their commands. */
    {A_VERDICT, "1 cases compared",
     "ab --base \"env MEMGATE_SIDE=base $MG_BUILD/memgate\" --head \"nice -n 1 "
     "$MG_BUILD/memgate\" -s memslots -k '*growth*' --quick"},
    {2, "/nonexistent/my qemu: No such file",
     "ab --base $MG_BUILD/memgate --head \"$MG_BUILD/memgate --qemu '/nonexistent/my qemu'\" "
     "-s qemu"},
    {2, "--qemu-preload /nonexistent/trim.so: No such file",
     "ab --base $MG_BUILD/memgate --head \"$MG_BUILD/memgate --qemu-preload /nonexistent/trim.so\" "
     "-s qemu -k '*boot*'"},
    {2, "unrecognized option '--bogus'",
     "ab --base $MG_BUILD/memgate --head \"$MG_BUILD/memgate --bogus\" -s memslots"},
    {2, "a command substitution",
     "ab --base $MG_BUILD/memgate --head \"$MG_BUILD/memgate \\$(id)\" -s memslots"},
};

static void test_ab_sides(void **state)
{
	char args[512];
	FILE *f;

	(void)state;
	expect_all(ab_side_expectations, ARRAY_SIZE(ab_side_expectations));
	/* A head that speaks the protocol but dies on its runs: each case an ERROR, exit 1. */
	f = fopen(test_tmp("crash-head.sh"), "w");
	assert_non_null(f);
	fprintf(
	    f,
	    "#!/bin/sh\ncase \"$1\" in run) kill -SEGV $$ ;; *) exec %s/memgate \"$@\" ;; esac\n",
	    test_build_dir());
	fclose(f);
	assert_int_equal(chmod(test_tmp("crash-head.sh"), 0755), 0);
	snprintf(args, sizeof(args),
		 "ab --base %s/memgate --head %s -s "
		 "memslots -k '*growth*' --quick",
		 test_build_dir(), test_tmp("crash-head.sh"));
	expect(1, "failed on memslots.update.growth[impl=shift] (signal 11)", args);
	/* One that dies listing its cases: head failed (1), naming the signal, not bad usage. */
	f = fopen(test_tmp("crash-head.sh"), "w");
	assert_non_null(f);
	fprintf(
	    f,
	    "#!/bin/sh\ncase \"$1\" in list) kill -SEGV $$ ;; *) exec %s/memgate \"$@\" ;; esac\n",
	    test_build_dir());
	fclose(f);
	expect(1, "`list` was killed by signal 11", args);
	unlink(test_tmp("crash-head.sh"));
}

/* Copy results @from to @to with every sample of a cycles metric times @k. */
static void scale_samples(const char *from, const char *to, double k)
{
	json_t *root = json_load_file(from, 0, NULL), *cases = json_object_get(root, "cases");

	assert_non_null(root);
	for (size_t i = 0; i < json_array_size(cases); i++) {
		json_t *ms = json_object_get(json_array_get(cases, i), "metrics");

		for (size_t m = 0; m < json_array_size(ms); m++) {
			json_t *met = json_array_get(ms, m), *v = json_object_get(met, "samples");

			if (strcmp(json_string_value(json_object_get(met, "unit")), "cycles"))
				continue;
			for (size_t s = 0; s < json_array_size(v); s++)
				json_real_set(json_array_get(v, s),
					      k * json_number_value(json_array_get(v, s)));
		}
	}
	assert_int_equal(json_dump_file(root, to, 0), 0);
	json_decref(root);
}

/* A test's own folder in the test program's temporary one, and the files its runs write. */
struct scratch {
	char dir[128], a[192], b[192], hist[192];
};

static void scratch_make(struct scratch *s, const char *what)
{
	assert_non_null(mkdtemp(test_tmp_template(s->dir, sizeof(s->dir), what)));
	snprintf(s->a, sizeof(s->a), "%s/a.json", s->dir);
	snprintf(s->b, sizeof(s->b), "%s/b.json", s->dir);
	snprintf(s->hist, sizeof(s->hist), "%s/hist", s->dir);
}

/*
 * Results as history: a run compares clean against itself and fails against its double; a run of
 * another host class is refused; `baseline add` files a run, `run --baseline` finds it, and a
 * heap-sort head fails against it.
 */
static void test_history_cli(void **state)
{
	struct scratch s;
	char args[1024], other[192];
	const char *sel = "-s memslots -k 'memslots.update.growing?capacity=128*' -n 8";
	char cmd[1024];

	(void)state;
	scratch_make(&s, "hist");
	snprintf(other, sizeof(other), "%s/other.json", s.dir);
	snprintf(args, sizeof(args), "run %s --label a --json %s", sel, s.a);
	expect(0, NULL, args);
	/*
	 * No timing here: a run against itself passes, and the same run with every cycle count
	 * four times as high (written below) fails, naming the metric: far enough past the 50%
	 * baseline tolerance that the spread of 8 samples on a loaded agent cannot hide it.
	 */
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.a);
	expect(0, "impl.update_median", args);
	scale_samples(s.a, s.b, 4.0);
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.b);
	expect(1, "REGRESSION: impl.update_median", args);
	snprintf(cmd, sizeof(cmd),
		 "sed 's/\"hash\": \"[0-9a-f]*\"/\"hash\": \"0123456789abcdef\"/' "
		 "%s > %s",
		 s.a, other);
	assert_int_equal(system(cmd), 0);
	snprintf(args, sizeof(args), "compare %s %s", other, s.b);
	expect(2, "another host class", args);
	snprintf(args, sizeof(args), "baseline add %s %s", s.a, s.hist);
	expect(0, "filed", args);
	snprintf(args, sizeof(args), "run %s --baseline %s --impl memslots.update=heapsort", sel,
		 s.hist);
	expect(1, "REGRESSION: impl.update_median", args);
	snprintf(args, sizeof(args), "run -s memslots -k '*regression*' --baseline %s/nothing",
		 s.dir);
	expect(0, "no run of this host class", args);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", s.dir);
	assert_int_equal(system(cmd), 0);
}

/* Copy results @from to @to with every case's string @field set to @value (@prefix: put before). */
static void set_cases(const char *from, const char *to, const char *field, const char *value,
		      bool prefix)
{
	json_t *root = json_load_file(from, 0, NULL), *cases = json_object_get(root, "cases");

	assert_non_null(root);
	for (size_t i = 0; i < json_array_size(cases); i++) {
		json_t *c = json_array_get(cases, i);
		char buf[512];

		snprintf(buf, sizeof(buf), "%s%s", value,
			 prefix ? json_string_value(json_object_get(c, field)) : "");
		json_object_set_new(c, field, json_string(buf));
	}
	assert_int_equal(json_dump_file(root, to, 0), 0);
	json_decref(root);
}

/* Copy results @from to @to with member @key of @object (NULL: the top) set to @value. */
static void set_member(const char *from, const char *to, const char *object, const char *key,
		       const char *value)
{
	json_t *root = json_load_file(from, 0, NULL);

	assert_non_null(root);
	json_object_set_new(object ? json_object_get(root, object) : root, key, json_string(value));
	assert_int_equal(json_dump_file(root, to, 0), 0);
	json_decref(root);
}

/* The samples of every metric of @path, in order: "case:metric v v ...\n" lines into @buf. */
static void samples_of(const char *path, char *buf, size_t len)
{
	json_t *root = json_load_file(path, 0, NULL), *c, *m;
	size_t used = 0, i, k;

	assert_non_null(root);
	buf[0] = '\0';
	for (i = 0; (c = json_array_get(json_object_get(root, "cases"), i)); i++)
		for (k = 0; (m = json_array_get(json_object_get(c, "metrics"), k)); k++) {
			json_t *v;

			used += (size_t)snprintf(buf + used, len - used, "%s:%s",
						 json_string_value(json_object_get(c, "name")),
						 json_string_value(json_object_get(m, "name")));
			for (size_t s = 0; (v = json_array_get(json_object_get(m, "samples"), s));
			     s++)
				used += (size_t)snprintf(buf + used, len - used, " %.17g",
							 json_number_value(v));
			used += (size_t)snprintf(buf + used, len - used, "\n");
			assert_true(used < len);
		}
	json_decref(root);
}

/*
 * --counter: bad names refused; instructions where the PMU counts, a reason where not;
 * simulated under valgrind (a reason without it), and two simulated runs identical. No count is
 * asserted: only that the same build counts the same.
 */
static void test_counter_cli(void **state)
{
	char args[1024], sa[8192], sb[8192];
	struct scratch s;
	const char *ops = "-s rcu -k '*ops*'";
	char *out;
	int st;

	(void)state;
	expect(2, "--counter expects tsc, instructions, simulated or auto", "run --counter cycles");
	st = memgate(&out, "run %s --counter instructions -n 2", ops);
	if (st == 0)
		assert_non_null(strstr(out, "counter instructions"));
	else
		assert_true(st == 2 && strstr(out, "perf_event_open") != NULL);
	free(out);
	/* Without valgrind on PATH, simulated is refused (exit 2) saying what to install. */
	snprintf(
	    args, sizeof(args),
	    "PATH=/nonexistent %s/memgate run %s --counter simulated 2>&1 | grep -q 'valgrind is "
	    "not on PATH'",
	    test_build_dir(), ops);
	assert_int_equal(system(args), 0);
	if (test_under_asan())
		skip_because("valgrind cannot run an AddressSanitizer build");
	if (system("command -v valgrind >/dev/null 2>&1"))
		skip_because("valgrind is not installed (ci/install-deps.sh installs it)");
	scratch_make(&s, "counter");
	snprintf(args, sizeof(args), "run %s --counter simulated --json %s", ops, s.a);
	expect(0, "counter simulated", args);
	snprintf(args, sizeof(args), "run %s --counter simulated --json %s", ops, s.b);
	expect(0, "read_lock_unlock.d1_misses", args);
	samples_of(s.a, sa, sizeof(sa));
	samples_of(s.b, sb, sizeof(sb));
	assert_string_equal(sa, sb);
	assert_non_null(strstr(sa, "call_rcu.ll_misses "));
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.b);
	expect(0, NULL, args);
	/* A/B of simulated counts: two rounds, exact. */
	expect(
	    0, "every round the same: the mean is exact (simulated counts)",
	    "ab --base build/memgate --head build/memgate -s rcu -k '*ops*' --counter simulated");
	snprintf(args, sizeof(args), "rm -rf %s", s.dir);
	assert_int_equal(system(args), 0);
}

/* calibrate files a host class's noise; ab reads it, says when it uses it, refuses a bad one. */
static void test_calibrate_cli(void **state)
{
	char dir[128], args[1024], cmd[1400], file[1200];
	const char *sel = "-s memslots -k '*update.growth*' -n 1 --warmup 0";
	char *out, *path, *end;

	(void)state;
	expect(2, "--rounds expects an even number",
	       "ab --base build/memgate --head build/memgate --rounds 3");
	expect(2, "calibrate needs --history DIR", "calibrate -s memslots");
	expect(2, "--spread expects a fraction", "model --spread 2");
	expect(0, "medians of 5, flag, 5 fresh, Holm",
	       "model --runs 10 --spread 0.03 --metrics 20");
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "calib")));
	snprintf(args, sizeof(args), "calibrate --history %s --runs 2 --rounds 2 %s", dir, sel);
	assert_int_equal(memgate(&out, "%s", args), 0);
	path = strstr(out, dir);
	assert_non_null(path);
	end = strstr(path, ": ");
	assert_non_null(end);
	snprintf(file, sizeof(file), "%.*s", (int)(end - path), path);
	free(out);
	/* 4 rounds are too few to be used: the run's own spread, said. */
	snprintf(args, sizeof(args),
		 "ab --base build/memgate --head build/memgate %s --rounds 2 --confirm-rounds 2 "
		 "--calibration %s",
		 sel, dir);
	expect_judged("no calibration for this host class and metric", args);
	/* The same file saying 40 rounds of a 2% spread: the calibrated spread decides, and the
	 * verdict says so (whatever spread, 0 included, these few rounds happened to measure). */
	snprintf(
	    cmd, sizeof(cmd),
	    "sed -i -e 's/\"rounds\": 4,/\"rounds\": 40,/' -e 's/\"sd\": [^,}]*/\"sd\": 0.02/' %s",
	    file);
	assert_int_equal(system(cmd), 0);
	expect_judged("z-test with the spread calibrated for this host class", args);
	snprintf(cmd, sizeof(cmd), "echo '{\"format\": 9}' > %s", file);
	assert_int_equal(system(cmd), 0);
	expect(2, "expected a memgate calibration", args);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A comparison of nothing is never a pass: a zero side, no shared case, a head whose cases
 * broke, base cases that failed, a history from the future, a selection that matches nothing.
 */
static void test_nothing_compared(void **state)
{
	struct scratch s;
	char args[1024];
	const char *sel = "-s memslots -k 'memslots.update.growing?capacity=128*' -n 4";
	char cmd[1024];

	(void)state;
	scratch_make(&s, "nothing");
	snprintf(args, sizeof(args), "run %s --json %s", sel, s.a);
	expect(0, NULL, args);
	/* Base measured 0 cycles: no ratio, so no pass. */
	scale_samples(s.a, s.b, 0.0);
	snprintf(args, sizeof(args), "compare %s %s", s.b, s.a);
	expect(1, "INCONCLUSIVE (no ratio to judge: base is 0 and head is not)", args);
	/* No case of head in the base. */
	set_cases(s.a, s.b, "name", "renamed_", true);
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.b);
	expect(1, "nothing compared", args);
	/* Head's cases broke; then the base's failed: neither is compared. */
	set_cases(s.a, s.b, "outcome", "ERROR", false);
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.b);
	expect(1, "nothing compared", args);
	set_cases(s.a, s.b, "outcome", "FAIL", false);
	snprintf(args, sizeof(args), "compare %s %s", s.b, s.a);
	expect(1, "nothing compared", args);
	/* A run dated in the future never becomes a baseline. */
	set_member(s.a, s.b, NULL, "timestamp", "2999-01-01T00:00:00");
	snprintf(args, sizeof(args), "baseline add %s %s", s.b, s.hist);
	expect(0, "filed", args);
	snprintf(args, sizeof(args), "run %s --baseline %s", sel, s.hist);
	expect(0, "is not a time it could have been made at", args);
	/* baseline add: nothing in the file leads out of the history, nothing is half-filed. */
	set_member(s.a, s.b, "host_class", "hash", "../../outside");
	snprintf(args, sizeof(args), "baseline add %s %s/h2", s.b, s.dir);
	expect(2, "is not 16 hex digits", args);
	set_member(s.a, s.b, NULL, "memgate_commit", "../../x y");
	snprintf(args, sizeof(args), "baseline add %s %s/h2", s.b, s.dir);
	expect(0, "-.._.._x_y.json", args);
	expect(2, "filed already", args);
	/* ab: a selection with no perf case is bad usage; a head with none compares nothing. */
	snprintf(args, sizeof(args), "ab --base %s/memgate --head %s/memgate -k 'typo.*' --quick",
		 test_build_dir(), test_build_dir());
	expect(2, "no perf case matches the selection", args);
	snprintf(args, sizeof(args),
		 "ab --base %s/memgate --head '%s/memgate --case nothing' -s memslots -k "
		 "'*growth*' --quick",
		 test_build_dir(), test_build_dir());
	expect(1, "nothing compared: base lists 1 perf cases, head 0", args);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", s.dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A wedged QEMU under ab with --timeout 3: ab ends (exit 1, nothing compared), and nothing it
 * started outlives it: this test is the orphans' reaper, and every one is gone within 5 s.
 */
static void test_ab_hung_qemu_leaves_nothing(void **state)
{
	char bin[256], side[512];
	int status;
	pid_t pid;

	(void)state;
	snprintf(bin, sizeof(bin), "%s/memgate", test_build_dir());
	snprintf(side, sizeof(side), "%s --qemu tests/fixtures/qemu-hangs", bin);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	pid =
	    memgate_start(-1, -1,
			  (const char *[]){"ab", "--base", side, "--head", side, "-s", "qemu", "-k",
					   "*backend=ram*", "--timeout", "3", "--quick", NULL});
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	/* Whatever ab left is ours now: reap it; anything still running after 5 s fails. */
	for (int i = 0; i < 500; i++) {
		const struct timespec tick = {0, 10000000};
		pid_t got = waitpid(-1, &status, WNOHANG);

		if (got < 0 && errno == ECHILD)
			break;
		if (got == 0)
			nanosleep(&tick, NULL);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* Report files as root on a shared host: devices written in place, no link followed, no
 * read-only file replaced, bad paths refused before anything runs. */
static void test_report_files(void **state)
{
	char dir[128], p[160], victim[160], link[160], args[1024];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "reports")));
	expect(0, NULL, "run -s hw -k '*pu_count*' --junit /dev/null --json /dev/null");
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	expect(3, "cannot write the report", "run -s hw -k '*pu_count*' --junit /dev/full");
	expect(2, "--junit: an empty path", "run -s hw --junit ''");
	snprintf(p, sizeof(p), "%s/r.xml", dir);
	snprintf(args, sizeof(args), "run -s hw --junit %s --json %s/../%s/r.xml", p, dir,
		 strrchr(dir, '/') + 1);
	expect(2, "name the same file", args);
	snprintf(args, sizeof(args), "run -s hw --json %s/nosuch/r.json", dir);
	expect(2, "does not exist", args);
	/* A link planted where an old memgate put its temporary: never followed. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "%s/r.xml.tmp", dir);
	assert_int_equal(symlink(victim, args), 0);
	snprintf(args, sizeof(args), "run -s hw -k '*pu_count*' --junit %s", p);
	expect(0, NULL, args);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(args, sizeof(args), f));
	fclose(f);
	assert_string_equal(args, "precious\n");
	/* A link as the report itself, and a read-only report: refused with the reason. */
	snprintf(link, sizeof(link), "%s/link.xml", dir);
	assert_int_equal(symlink(victim, link), 0);
	snprintf(args, sizeof(args), "run -s hw --junit %s", link);
	expect(2, "a symbolic link", args);
	assert_int_equal(chmod(victim, 0444), 0);
	snprintf(args, sizeof(args), "run -s hw --json %s", victim);
	expect(2, "read-only", args);
	/* A link to a FIFO or a device is a link; a FIFO nothing reads is an error, not a hang. */
	snprintf(p, sizeof(p), "%s/fifo", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	snprintf(link, sizeof(link), "%s/to-fifo.xml", dir);
	assert_int_equal(symlink(p, link), 0);
	snprintf(args, sizeof(args), "run -s hw --junit %s", link);
	expect(2, "a symbolic link", args);
	snprintf(link, sizeof(link), "%s/to-null.xml", dir);
	assert_int_equal(symlink("/dev/null", link), 0);
	snprintf(args, sizeof(args), "run -s hw --junit %s", link);
	expect(2, "a symbolic link", args);
	snprintf(args, sizeof(args), "run -s hw -k '*pu_count*' --junit %s", p);
	expect(3, "a FIFO that nothing reads", args);
	/* In --csv DIR memgate names the files: whatever is planted there is replaced. */
	snprintf(p, sizeof(p), "%s/csv", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(link, sizeof(link), "%s/csv/hw-cycles.csv", dir);
	assert_int_equal(mkfifo(link, 0600), 0);
	snprintf(args, sizeof(args), "run -s hw -k '*read_cost*' --csv %s", p);
	expect(0, NULL, args);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* The page's NAME-files: a link or a file there is refused before anything runs. */
	snprintf(p, sizeof(p), "%s/page-files", dir);
	assert_int_equal(symlink(dir, p), 0);
	snprintf(args, sizeof(args), "run -s hw --html %s/page.html", dir);
	expect(2, "page-files is a link, not the folder", args);
	unlink(p);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	expect(2, "page-files is not a folder", args);
	/* A full stdout is the harness failing, not a pass (its message goes there too). */
	expect(3, NULL, "list > /dev/full");
	expect(2, "expects a whole number", "run -s hw --seed ' -1'");
	expect(2, "from 64M to 1024T", "run -s hw --size 4194304T");
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	assert_int_equal(system(args), 0);
}

/* The fields of one CSV line, quotes undone, into @f; returns how many. */
static int csv_fields(char *line, char f[][160], int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	while (n < max) {
		size_t k = 0;
		bool quoted = *line == '"';

		for (line += quoted; *line && (quoted || *line != ','); line++) {
			if (quoted && *line == '"') {
				if (line[1] != '"') {
					quoted = false;
					continue;
				}
				line++;
			}
			if (k < 159)
				f[n][k++] = *line;
		}
		f[n++][k] = '\0';
		if (*line++ != ',')
			break;
	}
	return n;
}

/* --csv: one file per suite and unit, a row of labels and a row of medians, as Plot reads. */
static void test_csv_for_plot(void **state)
{
	char dir[128], args[512], head[8192], vals[8192];
	static char labels[64][160], values[64][160];
	int n_labels, n_values;
	bool found = false;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "csv")));
	snprintf(args, sizeof(args),
		 "run -s memslots -k 'memslots.update.growing[[]capacity=128,impl=shift]' -n 3 "
		 "--warmup 0 --csv %s/plots",
		 dir);
	expect(0, NULL, args);
	snprintf(args, sizeof(args), "%s/plots/memslots-cycles.csv", dir);
	f = fopen(args, "r");
	assert_non_null(f);
	assert_non_null(fgets(head, sizeof(head), f));
	assert_non_null(fgets(vals, sizeof(vals), f));
	assert_null(fgets(args, sizeof(args), f)); /* two rows, no more */
	fclose(f);
	n_labels = csv_fields(head, labels, 64);
	n_values = csv_fields(vals, values, 64);
	assert_int_equal(n_labels, n_values);
	assert_true(n_labels >= 3);
	for (int i = 0; i < n_values; i++) {
		char *end;

		assert_true(strtod(values[i], &end) > 0 && *end == '\0');
		found |= !strcmp(labels[i], "memslots.update.growing[capacity=128,impl=shift] "
					    "impl.update_median");
	}
	assert_true(found); /* the comma in the case's name came back out of the quotes */
	expect(2, "not a folder", "run -s hw --csv /dev/null");
	snprintf(args, sizeof(args), "run -s hw --csv %s/no/such", dir);
	expect(2, "cannot make the folder", args);
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	assert_int_equal(system(args), 0);
}

/* No pipe for a case's child: that case is an ERROR with the reason, never a PASS. */
static void test_no_false_pass(void **state)
{
	char cmd[512];
	char *out;
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "sh -c 'ulimit -n 5; %s/memgate run -s hw -k \"*pu_count*\"' "
		 "> %s 2>&1",
		 test_build_dir(), test_tmp("nofd.txt"));
	st = system(cmd);
	out = text_read_file(test_tmp("nofd.txt"), 1 << 20);
	assert_non_null(out);
	unlink(test_tmp("nofd.txt"));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 3 || !strstr(out, "ERROR hw.topology.pu_count") ||
	    !strstr(out, "Too many open files") || strstr(out, "PASS "))
		print_error("exit %d, output:\n%s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
	free(out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

/*
 * Ctrl-C, a lost terminal and SIGQUIT end a run with its reports: exit 128 + the signal,
 * and the JSON holds what was measured and says what was not run.
 */
static void test_interrupted_runs_report(void **state)
{
	static const int sigs[] = {SIGINT, SIGHUP, SIGQUIT};

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		const char *json = test_tmp("interrupted.json");
		char *text;
		int st;
		pid_t pid;

		unlink(json);
		pid = memgate_start(
		    -1, -1, (const char *[]){"run", "-s", "memslots", "--json", json, NULL});
		/* Long enough for a case or two to end; the whole suite takes seconds more. */
		usleep(700 * 1000);
		kill(pid, sigs[i]);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		text = text_read_file(json, 16 << 20);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 128 + sigs[i] || !text ||
		    !strstr(text, "interrupted"))
			fail_msg("signal %d: exit %d, JSON %s", sigs[i],
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				 text ? "without it" : "missing");
		free(text);
		unlink(json);
	}
}

/* Hostile topologies: bounded before hwloc builds them, validated after, names made UTF-8. */
static void test_hostile_topologies(void **state)
{
	char cmd[5400], bad_name[4200];
	char *out;
	json_t *j;

	(void)state;
	expect(2, "has 100000 PUs; memgate plans for at most 16384",
	       "hw --topology synthetic:'pack:100 core:100 pu:10'");
	unlink(test_tmp("topo.fifo"));
	assert_int_equal(mkfifo(test_tmp("topo.fifo"), 0600), 0);
	expect(2, "not a regular file", "hw --topology $MG_TMP/topo.fifo");
	unlink(test_tmp("topo.fifo"));
	snprintf(cmd, sizeof(cmd),
		 "sed 's/local_memory=\"19316633600\"/local_memory="
		 "\"18446744073709551615\"/' %s/24em64t-2n6c2t-pci.xml > %s",
		 TOPO_DIR, test_tmp("huge.xml"));
	assert_int_equal(system(cmd), 0);
	expect(2, "NUMA node 0 claims 18446744073709551615 bytes",
	       "hw --topology "
	       "$MG_TMP/huge.xml");
	unlink(test_tmp("huge.xml"));
	/* A path that is not UTF-8: the JSON is still written, and valid. */
	snprintf(bad_name, sizeof(bad_name), "%s/\xff\xfe.xml", test_tmp_dir());
	snprintf(cmd, sizeof(cmd), "cp %s/16em64t-4s2c2t.xml '%s'", TOPO_DIR, bad_name);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "hw --json --topology '%s'", bad_name);
	assert_int_equal(memgate(&out, "%s", cmd), 0);
	j = json_loads(out, 0, NULL);
	if (!j)
		fail_msg("not JSON: %s", out);
	assert_non_null(
	    strstr(json_string_value(json_object_get(j, "source_desc")), "\xEF\xBF\xBD"));
	json_decref(j);
	free(out);
	unlink(bad_name);
}

/* `memgate run ... | head -1`: a closed stdout is an error to report, not a silent death: the
 * run ends with exit 3 and its JSON report written. (A pipe whose reader is already gone.) */
static void test_closed_stdout(void **state)
{
	const char *json_path = test_tmp("pipe.json");
	char *json;
	int fds[2], st;
	pid_t pid;

	(void)state;
	unlink(json_path);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	pid = memgate_start(fds[1], -1,
			    (const char *[]){"run", "-s", "memslots", "-k", "*regression*",
					     "--json", json_path, NULL});
	close(fds[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	json = text_read_file(json_path, 1 << 22);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 3 || !json || !strstr(json, "lookup_bounds"))
		fail_msg("exit %d (signal %d), JSON %s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			 WIFSIGNALED(st) ? WTERMSIG(st) : 0, json ? "incomplete" : "missing");
	free(json);
	unlink(json_path);
}

/* The console is a pipe in Jenkins: a case's line arrives when it ends, not with the rest. */
static void test_lines_as_cases_end(void **state)
{
	char line[512];
	int fds[2], st;
	FILE *in;
	pid_t pid, alive;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = memgate_start(fds[1], fds[0], (const char *[]){"run", "-s", "memslots", NULL});
	close(fds[1]);
	in = fdopen(fds[0], "r");
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	/* The first case's line is here while the suite (tens of cases) still runs. */
	alive = waitpid(pid, &st, WNOHANG);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	fclose(in);
	assert_non_null(strstr(line, "PASS  memslots.check.equivalence[capacity=125,order=size]"));
	assert_int_equal(alive, 0);
}

/*
 * --shard I/N partitions `memgate list` of the host @where names ("" for this one): every line
 * in exactly one shard, gates included.
 */
static void shards_partition(const char *where)
{
	char *all, *s1, *s2, *s3;
	size_t lines = 0, found = 0, total;

	assert_int_equal(memgate(&all, "list %s", where), 0);
	assert_int_equal(memgate(&s1, "list --shard 1/3 %s", where), 0);
	assert_int_equal(memgate(&s2, "list --shard 2/3 %s", where), 0);
	assert_int_equal(memgate(&s3, "list --shard 3/3 %s", where), 0);
	total = strlen(all);
	for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
		int in = (strstr(s1, line) != NULL) + (strstr(s2, line) != NULL) +
			 (strstr(s3, line) != NULL);

		lines++;
		found += in == 1;
		if (in != 1)
			print_error("%s: in %d shards: %s\n", where, in, line);
	}
	assert_true(lines > 20);
	assert_int_equal(found, lines);
	assert_int_equal(strlen(s1) + strlen(s2) + strlen(s3), total);
	free(all);
	free(s1);
	free(s2);
	free(s3);
}

static void test_shards_partition(void **state)
{
	(void)state;
	shards_partition("");
	expect(2, "--shard expects I/N", "list --shard 0/2");
}

#define HOSTS_DIR "tests/hosts"

/* The value after "fingerprint: " in `memgate hw` output @out, into @fp. */
static void fingerprint_of(const char *out, char *fp, size_t len)
{
	const char *p = strstr(out, "\nfingerprint: ");

	assert_non_null(p);
	p += strlen("\nfingerprint: ");
	snprintf(fp, len, "%.*s", (int)strcspn(p, "\n"), p);
}

/*
 * One recorded host: it loads, its fingerprint is one word and the same twice, its shards
 * partition its list, and no check fails on what the host provides.
 */
static void check_record(const char *dir)
{
	char fp[256], again[400], *out;

	assert_int_equal(memgate(&out, "hw --host %s", dir), 0);
	fingerprint_of(out, fp, sizeof(fp));
	free(out);
	assert_int_equal(memgate(&out, "hw --host %s", dir), 0);
	fingerprint_of(out, again, sizeof(again));
	free(out);
	assert_string_equal(fp, again);
	for (const char *c = fp; *c; c++)
		if (isspace((unsigned char)*c))
			fail_msg("%s: a blank in the fingerprint \"%s\"", dir, fp);
	snprintf(again, sizeof(again), "--host %s", dir);
	shards_partition(again);
	/* The suites whose checks read host facts; the cases that need this machine SKIP. */
	if (memgate(&out, "run --checks -s hw -s prealloc -s kvm -s qemu --host %s", dir) != 0 ||
	    strstr(out, "\nFAIL ") || strstr(out, "\nERROR "))
		fail_msg("%s: a check failed on a recorded host:\n%s", dir, out);
	free(out);
}

/* Every host in tests/hosts, and what a bad record gets. */
static void test_host_records(void **state)
{
	DIR *d = opendir(HOSTS_DIR);
	struct dirent *e;
	char dir[128], path[192], args[192], topo[PATH_MAX], *out;
	FILE *f;
	int n = 0;

	(void)state;
	if (!d)
		skip_because(HOSTS_DIR " not found (run from the checkout)");
	while ((e = readdir(d))) {
		char rec[300], facts[320];

		snprintf(rec, sizeof(rec), HOSTS_DIR "/%s", e->d_name);
		snprintf(facts, sizeof(facts), "%s/host.json", rec);
		if (e->d_name[0] == '.' || access(facts, R_OK))
			continue;
		check_record(rec);
		n++;
	}
	closedir(d);
	assert_true(n >= 6);
	/* CPUID under a hypervisor, and a cpuset, say something else: a WARN, the check passes. */
	expect(0, "WARN: CPUID (libcpuid) says 1 cores a package",
	       "run --checks -s hw --host " HOSTS_DIR "/amd-turin-vm-nokvm");
	expect(0, "WARN: hwloc counts 1 PUs, sysfs lists 32 online CPUs",
	       "run --checks -s hw --host " HOSTS_DIR "/container-1pu-of-32");
	/* No 1 GiB pages there: no 1 GiB case or gate in its plan; where they are, both. */
	assert_int_equal(memgate(&out, "list --host " HOSTS_DIR "/amd-turin-vm-nokvm"), 0);
	if (strstr(out, "1g") || strstr(out, "1GiB"))
		fail_msg("1 GiB cases or gates planned on a host without 1 GiB pages:\n%s", out);
	free(out);
	expect(0, "prealloc.gates.scaling[kind=hugetlb-1g]",
	       "list --host " HOSTS_DIR "/amd-epyc-vm-kvm-1g");
	/* Bad records: exit 2, naming the file and what was expected. */
	expect(2, "host.json: No such file", "hw --host /nonexistent");
	expect(2, "--topology and --host each name", "hw --host x --topology y");
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "record")));
	snprintf(path, sizeof(path), "%s/host.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\n  \"host\": {\n    \"cpus\": [1, 2]\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "%s/topology.xml", dir);
	assert_non_null(realpath(TOPO_DIR "/kvm-epyc-1n2c-hugepages.xml", topo));
	assert_int_equal(symlink(topo, args), 0);
	snprintf(args, sizeof(args), "hw --host %s", dir);
	expect(2, "host.json:4: not memgate host facts", args);
	unlink(path);
	snprintf(args, sizeof(args), "%s/topology.xml", dir);
	unlink(args);
	rmdir(dir);
}

/* What `hw --record` writes of this host plans as this host does: the same list. */
static void test_record_roundtrip(void **state)
{
	static const char *const files[] = {"topology.xml", "cpuid.raw", "host.json"};
	char dir[128], path[192], *here, *there;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "record")));
	snprintf(path, sizeof(path), "hw --record %s", dir);
	expect(0, "recorded this host in", path);
	assert_int_equal(memgate(&here, "list"), 0);
	assert_int_equal(memgate(&there, "list --host %s", dir), 0);
	assert_string_equal(here, there);
	free(here);
	free(there);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* Read the file @path whole (NULL when it cannot be read); free it. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Write @text to @path, replacing it. */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * --html: a page libxml2's HTML parser takes without a complaint, no script and no inline
 * style, its charts SVG files beside it, a failed gate drawn red.
 */
static void test_html_report(void **state)
{
	const char *dir = test_tmp("html");
	char cmd[512], *page, *svg;
	glob_t g;
	bool red = false;

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "run -s memslots -k 'memslots.update.growing?capacity=128*' --quick "
		 "--impl memslots.update=heapsort --html %s/report.html",
		 dir);
	expect(1, "FAIL  memslots.gates.impl_vs_heapsort[capacity=128]", cmd);
	/* xmllint --html prints every element it does not know: nothing may be printed. */
	snprintf(cmd, sizeof(cmd), "xmllint --html --noout %s/report.html 2>&1 | grep -q .", dir);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/report.html", dir);
	page = slurp(cmd);
	assert_non_null(page);
	assert_null(strstr(page, "<script"));
	assert_null(strstr(page, "style="));
	assert_non_null(strstr(page, "href=\"report-files/memgate.css\""));
	assert_non_null(strstr(page, "<img src=\"report-files/chart-001.svg\""));
	free(page);
	snprintf(cmd, sizeof(cmd), "%s/report-files/chart-*.svg", dir);
	assert_int_equal(glob(cmd, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 2);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s", g.gl_pathv[i]);
		assert_int_equal(system(cmd), 0);
		svg = slurp(g.gl_pathv[i]);
		assert_non_null(svg);
		assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
		assert_null(strstr(svg, "style="));
		red |= strstr(svg, "fill=\"#c62828\"") != NULL;
		free(svg);
	}
	globfree(&g);
	assert_true(red);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* merge: the shards of a run as one results file; overlapping shards and other builds refused. */
static void test_merge_shards(void **state)
{
	const char *sel = "run -s memslots --checks";
	char args[512], *out;
	json_t *merged;
	json_error_t e;

	(void)state;
	for (int i = 1; i <= 2; i++) {
		snprintf(args, sizeof(args), "%s --shard %d/2 --json $MG_TMP/shard-%d.json", sel, i,
			 i);
		expect(0, "0 failed", args);
	}
	expect(0, "merged 2 shards",
	       "merge $MG_TMP/shard-1.json $MG_TMP/shard-2.json --json "
	       "$MG_TMP/merged.json");
	merged = json_load_file(test_tmp("merged.json"), 0, &e);
	assert_non_null(merged);
	assert_int_equal(json_array_size(json_object_get(merged, "shards")), 2);
	/* Every case of the unsharded selection, once. */
	assert_int_equal(memgate(&out, "list -s memslots | grep -c ' check '"), 0);
	assert_int_equal(json_array_size(json_object_get(merged, "cases")), atoi(out));
	free(out);
	json_decref(merged);
	/* compare reads it (a bad file is 2); of checks alone it has no perf case to compare. */
	expect(1, "nothing compared", "compare $MG_TMP/merged.json $MG_TMP/merged.json");
	expect(2, "is in an earlier shard too",
	       "merge $MG_TMP/shard-1.json $MG_TMP/shard-1.json --json "
	       "$MG_TMP/merged.json");
	expect(2, "/etc/hostname:1: '[' or '{' expected",
	       "merge /etc/hostname --json $MG_TMP/merged.json");
	assert_int_equal(system("echo '{\"cases\": []}' > $MG_TMP/shard-1.json"), 0);
	expect(2, "not memgate results", "merge $MG_TMP/shard-1.json --json $MG_TMP/merged.json");
	unlink(test_tmp("shard-1.json"));
	unlink(test_tmp("shard-2.json"));
	unlink(test_tmp("merged.json"));
}

/* --long brings the long cases back: the 200-disk boot is planned with it, not without. */
static void test_long_cases(void **state)
{
	char *out;

	(void)state;
	assert_int_equal(memgate(&out, "list -s rcu"), 0);
	assert_null(strstr(out, "rcu.perf.boot[disks=200"));
	free(out);
	expect(0, "rcu.perf.boot[disks=200,impl=idle]", "list -s rcu --long");
}
/* Is there an executable @name on PATH? */
static bool on_path(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/*
 * The qemu suite: --qemu is checked before anything runs (exit 2); no QEMU on PATH is a SKIP
 * that says what to install; a real QEMU (the install script brings Debian's) runs, and one
 * that quietly uses one thread is seen to.
 */
static void test_qemu_suite(void **state)
{
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL, args[512];
	long pus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *ram = "-s qemu -k '*backend=ram*' --quick --size 256M";

	(void)state;
	expect(2, "--qemu /nonexistent/qemu: No such file or directory",
	       "list --qemu /nonexistent/qemu");
	expect(2, "is not a QEMU system emulator", "run -s hw --qemu /bin/true");
	expect(2, "closed its output but did not exit within 10 s",
	       "list --qemu tests/fixtures/qemu-silent");
	assert_int_equal(setenv("PATH", "/nonexistent", 1), 0);
	expect(0, "qemu-system-x86_64 is not on PATH", "run -s qemu");
	assert_int_equal(setenv("PATH", saved ? saved : "/usr/bin:/bin", 1), 0);
	free(saved);
	if (!on_path("qemu-system-x86_64"))
		skip_because("no qemu-system-x86_64 on PATH (ci/install-deps.sh installs Debian's "
			     "qemu-system-x86)");
	/* More 2 MiB pages than are free: QEMU says so and exits; the pool is only read. */
	expect(0, "0 failed, 0 errors", "run -s qemu --checks");
	if (pus < 2)
		skip_because("one PU: QEMU's thread count cannot be told from one thread");
	/*
	 * Whether QEMU 7.2's two threads overlap is its arena race (docs/figures.md), so only the
	 * count of a QEMU that cannot overlap is certain: the one-thread wrapper's. That `ab`
	 * fails such a head is measured, not tested (README).
	 */
	snprintf(args, sizeof(args), "run %s", ram);
	expect(0, "qemu.tall.threads: median ", args);
	snprintf(args, sizeof(args), "run %s --qemu tests/fixtures/qemu-one-thread", ram);
	expect(0, "qemu.tall.threads: median 1 threads", args);
}

/* Processes whose command line holds @needle: what a boot left running. */
static unsigned int procs_with(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[8192];
		size_t len;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		for (size_t i = 0; i < len; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[len] = '\0';
		n += strstr(buf, needle) != NULL;
	}
	closedir(d);
	return n;
}

/*
 * The qemu suite's boots: bad options are refused before anything runs; a kernel QEMU cannot
 * load and a guest that panics are ERRORs that say why (QEMU's words, the guest's panic), and
 * no QEMU outlives them. The boot that passes is `make run`'s, not a test's: it takes seconds.
 */
static void test_qemu_boot(void **state)
{
	char kernel[PATH_MAX];
	char *out, *held;
	const char *garbage = test_tmp("not-an-initramfs");
	FILE *f = fopen(garbage, "w");

	(void)state;
	assert_non_null(f);
	fputs("not a cpio archive\n", f);
	fclose(f);
	expect(2, "--guest-kernel /nonexistent/vmlinuz: No such file",
	       "list -s qemu --guest-kernel /nonexistent/vmlinuz");
	expect(2, "--qemu-preload /nonexistent/trim.so: No such file",
	       "run -s qemu -k '*boot*' --qemu-preload /nonexistent/trim.so");
	expect(2, "--cut expects METRIC=VALUE", "run -s qemu -k '*boot*' --cut boot.disks_ms");
	expect(2, "--cut boot.init_ms: no planned case can stop a sample of that metric",
	       "run -s qemu -k '*boot*' --cut boot.init_ms=100");
	if (!on_path("qemu-system-x86_64"))
		skip_because("no qemu-system-x86_64 on PATH (ci/install-deps.sh installs Debian's "
			     "qemu-system-x86)");
	expect(1, "could not load kernel '/dev/null'",
	       "run -s qemu -k '*boot*disks=1*' -n 1 --warmup 0 --guest-kernel /dev/null "
	       "--guest-initrd /dev/null");
	snprintf(kernel, sizeof(kernel), "%s/guest/vmlinuz", test_build_dir());
	if (access(kernel, R_OK))
		skip_because("no guest kit in %s/guest (make builds it from the kernel package "
			     "ci/install-deps.sh keeps)",
			     test_build_dir());
	expect(1, "Kernel panic - not syncing",
	       "run -s qemu -k '*boot*disks=1*' -n 1 --warmup 0 --guest-initrd "
	       "$MG_TMP/not-an-initramfs");
	assert_int_equal(procs_with(garbage), 0);
	/* A bound no kernel boots within (ab's --cut for head): stopped, counted at it, PASS. */
	expect(0, "1 of the 1-disk boots stopped at 50 ms (--cut)",
	       "run -s qemu -k '*boot*disks=1*' -n 1 --warmup 0 --cut boot.disks_ms=50");
	/* ab gives head that bound from base's rounds (the rules' cut x base's median so far);
	 * head is a wrapper that writes down what it was asked. */
	write_text(test_tmp("cut.conf"),
		   "version = 1;\ntolerances = ( { suite = \"qemu\"; metric = "
		   "\"boot.disks_ms\"; cut = 1.0; why = \"test\"; } );\n");
	write_text(test_tmp("head.sh"), "#!/bin/sh\necho \"$*\" >>\"$MG_TMP/head-args\"\n"
					"exec \"$MG_BUILD/memgate\" \"$@\"\n");
	memgate(&out, "ab --base $MG_BUILD/memgate --head \"sh $MG_TMP/head.sh\" -s qemu -k "
		      "'*boot[[]disks=1]*' --rounds 2 --confirm-rounds 2 --rules $MG_TMP/cut.conf");
	held = slurp(test_tmp("head-args"));
	if (!held || !strstr(held, " --cut boot.disks_ms="))
		fail_msg("head's runs were not given a cut (ab said:\n%s)\n%s", out,
			 held ? held : "");
	free(held);
	free(out);
}

/*
 * memgate vm: its usage errors anywhere; with QEMU and the kit, a two-node guest that runs the
 * placement checks and brings their reports back nested, and one whose binding is planted
 * wrong, which fails naming the node and the pages.
 */
static void test_vm(void **state)
{
	char pack[PATH_MAX], args[1024];
	struct scratch s;
	char *json, *row;

	(void)state;
	expect(2, "vm needs a command", "vm");
	expect(2, "do not divide evenly", "vm --shape sockets=2,cpus=3 -- hw");
	expect(2, "'cores=2' is not sockets=N", "vm --shape cores=2 -- hw");
	expect(2, "at least 128 MiB a node", "vm --shape nodes=2,mem=200M -- hw");
	expect(2, "names a file in the guest", "vm -- run -s hw --json /tmp/x.json");
	expect(2, "white space, quotes or backslashes", "vm -- run -k 'a b'");
	expect(2, "a guest here has at most 8 of each",
	       "vm --shape-of 'synthetic:pack:16 core:1 pu:1' -- hw");
	expect(2, "--shape or --shape-of, not both", "vm --shape nodes=1 --shape-of x.xml -- hw");
	expect(2, "'nodes' is not sockets=N", "vm --shape nodes -- hw");
	if (!on_path("qemu-system-x86_64"))
		skip_because("no qemu-system-x86_64 on PATH (ci/install-deps.sh installs Debian's "
			     "qemu-system-x86)");
	snprintf(pack, sizeof(pack), "%s/guest/memgate.cpio", test_build_dir());
	if (access(pack, R_OK))
		skip_because("no guest kit in %s/guest (make builds it from the kernel package "
			     "ci/install-deps.sh keeps)",
			     test_build_dir());
	/* The sanitizers' runtime in a guest under TCG: minutes, and nothing vm adds to test. */
	if (test_under_asan())
		skip_because("an AddressSanitizer build is not booted in a guest");
	/* A guest that cannot start: the harness's failure, with the console's end. */
	expect(3, "Kernel panic", "vm --guest-initrd /dev/null -- hw");
	/* One that does not finish in time: killed, and said so. */
	expect(3, "did not finish within 1 s", "vm --timeout 1 -- hw");
	scratch_make(&s, "vm");
	snprintf(args, sizeof(args),
		 "vm --json %s --junit %s/r.xml -- run -s prealloc -s qemu -k '*.check.[pn][lou]*'",
		 s.a, s.dir);
	expect(0, "PASS  prealloc.check.placement[way=parallel]", args);
	json = text_read_file(s.a, 1 << 24);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"suite\": \"guest[sockets=2,nodes=2,cpus=2,mem=2048M]"
				     ".prealloc\""));
	assert_non_null(strstr(json, "\"node1.pages\": \"16384\""));
	/* The per-node pool check ran as root in the guest, whoever runs this test. */
	row = strstr(json, "\"name\": \"node_pool\"");
	assert_non_null(row);
	assert_non_null(strstr(row, "\"outcome\": \"PASS\""));
	/* QEMU's own NUMA-aware prealloc, packed into the guest with this memgate. */
	row = strstr(json, "\"name\": \"numa_prealloc\"");
	assert_non_null(row);
	assert_non_null(strstr(row, "\"outcome\": \"PASS\""));
	assert_non_null(strstr(json, "\"vm.accel\""));
	free(json);
	snprintf(args, sizeof(args), "%s/r.xml", s.dir);
	validate(args, "jenkins-xunit-junit-10.xsd");
	/* The two ways side by side, the accelerator named in the suite's table. */
	expect(0, "2 threads, under ",
	       "vm -- run -s prealloc -k '*regions?kind=anon-4k*' -n 2 --warmup 0 --size 256M");
	/* The planted binding: each region on the next node, which the check must see. */
	expect(1, "region 0, for node 0: 16384 of its 16384 pages on node 1",
	       "vm -- run -s prealloc -k '*placement*parallel*' --impl prealloc.node=next");
	snprintf(args, sizeof(args), "rm -rf %s", s.dir);
	assert_int_equal(system(args), 0);
}

/* The kvm suite: real memslot ioctls timed beside the reference where /dev/kvm is ours, a
 * SKIP naming why where it is not. */
static void test_kvm_suite(void **state)
{
	(void)state;
	/* Without KVM (or with it hidden): a SKIP naming why. */
	expect_without_kvm(0, "SKIP  kvm.perf.memslots[slots=125]", "run -s kvm -k '*slots=125*'");
	if (access("/dev/kvm", R_OK | W_OK))
		skip_because("/dev/kvm: %s", strerror(errno));
	expect(0, "ref.delete_oldest.p99: median",
	       "run -s kvm -k '*slots=125*' --quick -n 2 --warmup 0");
	expect(0, "kvm.insert.median: median",
	       "run -s kvm -k '*slots=125*' --quick -n 2 --warmup 0");
	expect(0, "guest.busy_accesses_per_s: median",
	       "run -s kvm -k '*busy*' --quick -n 2 --warmup 0");
}
/* The boot's vCPU: modelled wherever it is asked for, KVM's only where /dev/kvm works. */
static void test_boot_guest_paths(void **state)
{
	char dir[128], args[1024], path[192], *json, *out;
	const char *boot = "run -s rcu -k 'rcu.perf.boot[[]disks=1,*' -n 2 --warmup 0";
	bool kvm = access("/dev/kvm", R_OK | W_OK) == 0;
	int st;

	(void)state;
	if (test_under_asan())
		skip_because(
		    "under AddressSanitizer malloc is ASan's: the boot SKIPs (test_rcu_suite)");
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "guest")));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	snprintf(args, sizeof(args), "%s --guest modelled --json %s", boot, path);
	expect(0, "PASS  rcu.perf.boot[disks=1,", args);
	json = text_read_file(path, 1 << 24);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"guest\": \"modelled\""));
	assert_non_null(strstr(json, "\"guest.model_exit_ns\": \"2000\""));
	free(json);
	/* Asked for KVM: on a host without it the case says why it cannot. */
	snprintf(args, sizeof(args), "%s --guest kvm --json %s", boot, path);
	expect(0, kvm ? "PASS  rcu.perf.boot[disks=1," : "--guest kvm: /dev/kvm", args);
	json = text_read_file(path, 1 << 24);
	assert_non_null(json);
	if (kvm)
		assert_non_null(strstr(json, "\"guest\": \"kvm\""));
	free(json);
	/* By default: KVM's where it works, else modelled with a WARN saying so. */
	st = memgate(&out, "%s --guest-exit-ns 500", boot);
	assert_int_equal(st, 0);
	if (!kvm)
		assert_non_null(strstr(out, "WARN: /dev/kvm"));
	free(out);
	/* The side this host lacks, where it has KVM: hidden, it is asked for in vain, and the
	 * default is the model, with its WARN. */
	if (kvm) {
		snprintf(args, sizeof(args), "%s --guest kvm", boot);
		expect_without_kvm(0, "--guest kvm: /dev/kvm", args);
		expect_without_kvm(0, "WARN: /dev/kvm", boot);
	}
	expect(2, "--guest expects auto, kvm or modelled", "run --guest tcg");
	expect(2, "--guest-exit-ns expects a whole number", "run --guest-exit-ns 0");
	unlink(path);
	rmdir(dir);
}

#define POOL_2M "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

/* The first child of @pid (/proc/PID/task/PID/children), 0 while it has none. */
static pid_t first_child(pid_t pid)
{
	char path[64], *s;
	long c;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	s = text_read_file(path, 4096);
	c = s ? strtol(s, NULL, 10) : 0;
	free(s);
	return (pid_t)c;
}

/*
 * Jenkins aborts a build with SIGTERM, then SIGKILL. SIGKILL a run while its case child holds
 * the hugetlb lock and the pages it reserved: the child dies with it, and the very next
 * memgate command puts the pool back. The test is the orphans' reaper (a child subreaper), so it
 * sees how the case's child ended: killed, not at the end of its case.
 */
static void test_killed_run_restores(void **state)
{
	uint64_t before, during = 0;
	pid_t pid, child = 0;
	int status;

	(void)state;
	test_root_setup("it reserves hugetlb pages");
	if (text_read_u64(POOL_2M, &before))
		skip_because("no 2 MiB hugetlb pool on this kernel");
	pid = memgate_start(-1, -1,
			    (const char *[]){"run", "-s", "prealloc", "-k",
					     "prealloc.perf.startup[[]kind=hugetlb-2m]",
					     "--reserve-hugepages", NULL});
	/* Until the pool has grown and the case's child runs: at most a minute. */
	for (int i = 0; i < 6000 && !(child && during > before); i++) {
		const struct timespec tick = {0, 10000000};

		assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
		if (text_read_u64(POOL_2M, &during))
			during = 0;
		child = first_child(pid);
		nanosleep(&tick, NULL);
	}
	if (!child || during <= before) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("the run did not reserve (pool %" PRIu64 " -> %" PRIu64
			 ") and start its case",
			 before, during);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	expect(0, "put back up to", "run -s hw");
	assert_int_equal(text_read_u64(POOL_2M, &during), 0);
	assert_int_equal(during, before);
	/* It died with its parent: without that it would finish its case and exit 0. */
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (waitpid(-1, &status, WNOHANG) > 0)
		; /* the grandchildren it had, reparented here too */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* In a private mount namespace with a tmpfs over RESERVE_DIR: what a planted file gets. */
static int hostile_records_child(void)
{
	const char *dir = "/run/memgate", *rec = "/run/memgate/reservations";
	char cmd[600], *out;
	uint64_t before, after;
	int bad = 0;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    (mkdir(dir, 0755) && errno != EEXIST) || mount("tmpfs", dir, "tmpfs", 0, "mode=0755"))
		return 77; /* no namespace here: the caller skips */
	if (text_read_u64(POOL_2M, &before) || mkdir(rec, 0755))
		return 77;
	/* Forged (a delta no run makes), garbage, a link, another user's. */
	if (system("echo '2048 999999999 0' > /run/memgate/reservations/99990 && "
		   "echo hello > /run/memgate/reservations/99991 && "
		   "ln -s /etc/hostname /run/memgate/reservations/99992 && "
		   "echo '2048 8 0' > /run/memgate/reservations/99993 && "
		   "chown 65534 /run/memgate/reservations/99993"))
		return 77;
	snprintf(cmd, sizeof(cmd), "%s/memgate --version > %s/out 2>&1", test_build_dir(), dir);
	if (system(cmd) != 0)
		bad |= 1;
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	out = text_read_file(cmd, 1 << 16);
	for (const char *p = out; p && (p = strstr(p, "refused the reservation record")); p++)
		bad += 0x100;
	if (!out || strstr(out, "put back"))
		bad |= 2;
	printf("%s", out ? out : "(no output)\n");
	free(out);
	if (text_read_u64(POOL_2M, &after) || after != before)
		bad |= 4;
	/* A dangling link at the lock: refused, its target not made. */
	if (system("rm -rf /run/memgate/* && ln -s /run/memgate-target /run/memgate/hugetlb.lock"))
		return 77;
	snprintf(cmd, sizeof(cmd),
		 "%s/memgate run -s prealloc -k '*startup[[]kind=hugetlb-2m*' "
		 "--reserve-hugepages > /dev/null 2>&1",
		 test_build_dir());
	if (system(cmd) == 0 || access("/run/memgate-target", F_OK) == 0)
		bad |= 8;
	/* RESERVE_DIR writable by others: its records are not trusted. */
	if (system(
		"rm -rf /run/memgate/* && chmod 0777 /run/memgate && mkdir "
		"/run/memgate/reservations && echo '2048 8 0' > /run/memgate/reservations/99994"))
		return 77;
	snprintf(cmd, sizeof(cmd),
		 "%s/memgate --version 2>&1 | grep -q 'not a folder of this "
		 "user'",
		 test_build_dir());
	if (system(cmd) != 0 || access("/run/memgate/reservations/99994", F_OK))
		bad |= 16;
	return bad == 4 * 0x100 ? 0 : (bad & 0xff) | 32;
}

/*
 * Root only: the reservation records and the lock are trusted only as files of root's own
 * folder; a forged, garbage, linked or foreign record is refused with a message and no pool
 * changes; a planted link is never followed.
 */
static void test_hostile_records(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	test_root_setup("it plants files in " RESERVE_DIR);
	if (access(POOL_2M, F_OK))
		skip_because("no 2 MiB hugetlb pool on this kernel");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(hostile_records_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip_because("no private mount namespace here (unshare or mount refused)");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg(
		    "hostile records: status %d (1: memgate failed, 2: a pool put back, 4: the "
		    "pool changed, 8: a link followed or a run went on, 16: an open folder "
		    "trusted, 32: not four records refused)",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_usage),
	    cmocka_unit_test(test_prealloc_checks),
	    cmocka_unit_test(test_memslots_checks),
	    cmocka_unit_test(test_rcu_suite),
	    cmocka_unit_test(test_hw_text_and_json),
	    cmocka_unit_test(test_topologies),
	    cmocka_unit_test(test_run_hw_suite),
	    cmocka_unit_test(test_run_on_loaded_topology),
	    cmocka_unit_test(test_rules_cli),
	    cmocka_unit_test(test_ab_sides),
	    cmocka_unit_test(test_ab_hung_qemu_leaves_nothing),
	    cmocka_unit_test(test_history_cli),
	    cmocka_unit_test(test_nothing_compared),
	    cmocka_unit_test(test_report_files),
	    cmocka_unit_test(test_csv_for_plot),
	    cmocka_unit_test(test_no_false_pass),
	    cmocka_unit_test(test_interrupted_runs_report),
	    cmocka_unit_test(test_hostile_topologies),
	    cmocka_unit_test(test_closed_stdout),
	    cmocka_unit_test(test_lines_as_cases_end),
	    cmocka_unit_test(test_shards_partition),
	    cmocka_unit_test(test_host_records),
	    cmocka_unit_test(test_record_roundtrip),
	    cmocka_unit_test(test_html_report),
	    cmocka_unit_test(test_merge_shards),
	    cmocka_unit_test(test_long_cases),
	    cmocka_unit_test(test_qemu_suite),
	    cmocka_unit_test(test_qemu_boot),
	    cmocka_unit_test(test_vm),
	    cmocka_unit_test(test_kvm_suite),
	    cmocka_unit_test(test_boot_guest_paths),
	    cmocka_unit_test(test_killed_run_restores),
	    cmocka_unit_test(test_hostile_records),
	    cmocka_unit_test(test_counter_cli),
	    cmocka_unit_test(test_calibrate_cli),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
