/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cli_judge.c - build/memgate's judging commands as a user runs them: rules, ab, baselines,
 * counters, calibration, and never a PASS where nothing was compared. */
#include "tests/testutil.h"
#include "tests/expect.h"

/* The rules: printed, replaced, refused with file and line when bad. */
static void test_rules_cli(void **state)
{
	char dir[128], bad[192], good[192], args[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(test_tmp_template(dir, sizeof(dir), "rules")));
	expect(0, "impl_vs_heapsort[capacity=128]", "rules");
	expect(0, "the embedded rules (6 files, 15 gates", "rules");
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
    {2, "ab needs --base", "ab --head $MG_BUILD/memgate"},
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

/*
 * Results as history: a run compares clean against itself and fails against its double; a run of
 * another host class is refused; `baseline add` files a run, `run --baseline` finds it, and a
 * heap-sort head fails against it.
 */
static void test_history_cli(void **state)
{
	struct scratch s;
	char args[1024], other[192];
	const char *sel = "-s memslots -k 'memslots.update.growing?capacity=128*' -n 8 --no-gates";
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
static void samples_of(const char *path, const char *unit, char *buf, size_t len)
{
	json_t *root = json_load_file(path, 0, NULL), *c, *m;
	size_t used = 0, i, k;

	assert_non_null(root);
	buf[0] = '\0';
	for (i = 0; (c = json_array_get(json_object_get(root, "cases"), i)); i++)
		for (k = 0; (m = json_array_get(json_object_get(c, "metrics"), k)); k++) {
			json_t *v;

			if (strcmp(json_string_value(json_object_get(m, "unit")), unit))
				continue;

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
 * simulated under valgrind (a reason without it), and two simulated runs' instruction counts
 * identical. No count is asserted: only that the same build counts the same instructions.
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
	/* The instructions, exact; not the simulated cache misses, which follow how the threads
	 * interleave (a loaded agent moved read_lock_unlock.d1_misses between two runs). */
	samples_of(s.a, "instructions", sa, sizeof(sa));
	samples_of(s.b, "instructions", sb, sizeof(sb));
	assert_string_equal(sa, sb);
	assert_non_null(strstr(sa, ":call_rcu "));
	samples_of(s.a, "misses", sa, sizeof(sa));
	assert_non_null(strstr(sa, "call_rcu.ll_misses "));
	snprintf(args, sizeof(args), "compare %s %s", s.a, s.b);
	expect(0, NULL, args);
	/* A/B of simulated counts: two rounds, exact. */
	expect(0, "every round the same: the mean is exact (simulated counts)",
	       "ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate -s rcu -k '*ops*' --counter "
	       "simulated");
	snprintf(args, sizeof(args), "rm -rf %s", s.dir);
	assert_int_equal(system(args), 0);
}

/* calibrate files a host class's noise; ab reads it, says when it uses it, refuses a bad one. */
static void test_calibrate_cli(void **state)
{
	char dir[128], args[1024], cmd[1400], file[1200], older[1300];
	const char *sel = "-s memslots -k '*update.growth*' -n 1 --warmup 0";
	char *out, *path, *end;

	(void)state;
	expect(2, "--rounds expects an even number",
	       "ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate --rounds 3");
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
	snprintf(
	    args, sizeof(args),
	    "ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate %s --rounds 2 --confirm-rounds 2 "
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
	/* A second calibration keeps the first beside it, and ab says it combines the two. */
	assert_int_equal(memgate(&out, "calibrate --history %s --runs 2 --rounds 2 %s", dir, sel),
			 0);
	free(out);
	snprintf(older, sizeof(older), "%.*s.1.json", (int)strlen(file) - 5, file);
	assert_int_equal(access(older, R_OK), 0);
	expect_judged("and the 1 before it", args);
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
	const char *sel = "-s memslots -k 'memslots.update.growing?capacity=128*' -n 4 --no-gates";
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

/* Both sides memgate vm, a kernel each (made-up guests: tests/fixtures/guest-memgate): a round
 * is a boot of each; under icount the counts are exact and judged at 1%; the slot counts only
 * one kernel allows are reported; memgate's own reference is context. */
/* How many cases of the results file @path have figures whose verdict is @verdict. */
static size_t count_verdicts(const char *path, const char *verdict)
{
	json_t *root = json_load_file(path, 0, NULL), *c;
	size_t i, n = 0;

	assert_non_null(root);
	json_array_foreach(json_object_get(root, "cases"), i, c)
	{
		json_t *v = json_object_get(json_object_get(c, "figures"), "verdict");

		n += json_is_string(v) && !strcmp(json_string_value(v), verdict);
	}
	json_decref(root);
	return n;
}

static void test_ab_guests(void **state)
{
	char cmd[1024], *out;
	int st;

	(void)state;
	st = memgate(&out, "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
			   "--head 'tests/fixtures/guest-memgate vm --kernel tree-5.10 --' -s kvm");
	check_output(
	    "ab of 6.1 and 5.10 guests", "", st, 1,
	    "REGRESSION: kvm.insert.median of kvm.perf.memslots[slots=509]: head 179000 vs "
	    "base 25000 instructions",
	    strdup(out));
	check_output(
	    "ab of 6.1 and 5.10 guests", "", st, 1,
	    "only base's guest (kernel 6.1.0-tree, KVM_CAP_NR_MEMSLOTS 32764) ran it, not "
	    "head's guest (kernel 5.10.0-tree, KVM_CAP_NR_MEMSLOTS 509): reported, not judged",
	    out);
	/* The reverse improves; the same kernel twice is exact. */
	snprintf(cmd, sizeof(cmd),
		 "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-5.10 --' "
		 "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' -s kvm --json %s",
		 test_tmp("guests.json"));
	expect(0, "2 cases compared, 6 metrics judged", cmd);
	/* The one metric that changed: 509 slots' inserts, as its verdict's figures say. */
	assert_int_equal(count_verdicts(test_tmp("guests.json"), "improved"), 1);
	expect(0, "every round the same: the mean is exact (instruction counts under icount)",
	       "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
	       "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' -s kvm");
	/* 2% more instructions: caught, at the 1% of counts. */
	st = memgate(&out,
		     "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
		     "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1-slower --' -s kvm");
	check_output("ab of a 6.1 guest and a slower one", "", st, 1,
		     "1.02x as slow or large (lower is better) (95% CI 1.02..1.02), tolerance 1%",
		     strdup(out));
	check_output("ab of a 6.1 guest and a slower one", "", st, 1,
		     "reported, not gated: ref.insert.median of kvm.perf.memslots[slots=509]", out);
	/* Not under icount on one side: TSC cycles, as on the host. */
	expect(0,
	       "ref.insert.median of kvm.perf.memslots[slots=509]: head 25450 vs base 25450 cycles",
	       "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
	       "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1-noise --' -s kvm");
	expect(2, "--head is a guest (memgate vm ...) and --base is not",
	       "ab --base build/memgate "
	       "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' -s kvm");
	expect(2, "--kernel nosuch: No such file",
	       "ab --base 'tests/fixtures/guest-memgate vm --kernel nosuch --' "
	       "--head 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' -s kvm");
}

/*
 * ab of guests that do not run their cases (made-up guests): a head whose kernel is missing is
 * refused before base's guest boots; a guest that hangs is stopped at ab's --timeout (and
 * vm's margin) and is its round's ERROR; guests that report a failed boot are each an ERROR
 * in the JUnit, and the exit is the boot's, 3, with its console's end.
 */
static void test_ab_guest_failures(void **state)
{
	char *out;
	int st;

	(void)state;
	st = memgate(&out, "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
			   "--head 'tests/fixtures/guest-memgate vm --kernel nosuch --' -s kvm");
	assert_int_equal(st, 2);
	assert_non_null(strstr(out,
			       "--head tests/fixtures/guest-memgate vm --kernel nosuch --: "
			       "its guest would not boot (vm --dry-run exited with status 2)"));
	assert_null(strstr(out, "round 1"));
	free(out);
	st = memgate(&out,
		     "ab --base 'tests/fixtures/guest-memgate vm --kernel tree-6.1 --' "
		     "--head 'tests/fixtures/guest-memgate vm --kernel hang --' -s kvm --timeout 1 "
		     "--junit $MG_TMP/hang.xml");
	assert_int_equal(st, 3);
	assert_non_null(strstr(out, "ERROR ab.boot.head"));
	assert_non_null(strstr(out, "its guest did not finish in 11 s; killed"));
	free(out);
	out = text_read_file(test_tmp("hang.xml"), 1 << 20);
	assert_non_null(out);
	assert_non_null(strstr(out, "round 1, head"));
	free(out);
	st = memgate(&out, "ab --base 'tests/fixtures/guest-memgate vm --kernel noboot --' "
			   "--head 'tests/fixtures/guest-memgate vm --kernel noboot --' -s kvm "
			   "--junit $MG_TMP/noboot.xml");
	assert_int_equal(st, 3);
	assert_non_null(strstr(out, "ERROR ab.boot.base"));
	assert_non_null(strstr(out, "ERROR ab.boot.head"));
	assert_non_null(strstr(out, "nothing measured: round 1, base's guest"));
	assert_non_null(strstr(out, "the end of its console:\nmemgate-guest: init uptime=3.08"));
	assert_null(strstr(out, "round 2"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules_cli),	      cmocka_unit_test(test_ab_sides),
	    cmocka_unit_test(test_history_cli),	      cmocka_unit_test(test_nothing_compared),
	    cmocka_unit_test(test_no_false_pass),     cmocka_unit_test(test_counter_cli),
	    cmocka_unit_test(test_calibrate_cli),     cmocka_unit_test(test_ab_guests),
	    cmocka_unit_test(test_ab_guest_failures),
	};

	return cmocka_run_group_tests_name("cli_judge", tests, NULL, NULL);
}
