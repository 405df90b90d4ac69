/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cli.c - build/memgate as a user runs it: exit statuses, output, reports, the suites' checks,
 * records of other hosts (the judging commands: test_cli_judge.c; QEMU, KVM
 * and guests: test_cli_qemu.c; hostile input and interrupted runs: test_cli_hostile.c). */
#include "tests/testutil.h"
#include "tests/expect.h"

static const struct expectation usage_expectations[] = {
    {0, "exit status:", "--help"},
    {0, "128+N", "run --help"},
    {2, "missing command", ""},
    {2, "unknown command 'frobnicate'", "frobnicate"},
    {2, "unexpected argument 'page'", "man page"},
    {2, "Try 'memgate run --help'", "run --bogus"},
    {2, "option '--suite' requires an argument", "list --suite"},
    /* Each command's own usage, from its table, and exit 0 (issue 37). */
    {0, "usage: memgate ab --base", "ab --help"},
    {0, "usage: memgate run [-s SUITE]...", "run -h"},
    {0, "usage: memgate model [--metrics M]", "model --help"},
    {0, "--reserve-hugepages", "calibrate -h"},
    {2, "--samples expects a whole number", "run -n abc"},
    {2, "--samples expects a whole number", "run -n 0"},
    {2, "unknown suite \"nosuch\"", "run -s nosuch"},
    {2, "no case matches", "run -k 'nothing*'"},
    {2, "--junit-style expects", "run --junit-style xunit"},
    {2, "unrecognized option", "hw --junit x.xml"},
    {2, "unexpected argument 'extra'", "list extra"},
    /* `list` gives each metric its own unit and the way it is better: KiB and counts are not
     * "ms" (issue 36). */
    {0, "none.boot_ms (ms, lower), none.anon_boot_kib (KiB, lower)", "list -s rcu"},
    {0, "none.batches (batches, lower)", "list -s rcu"},
    {0, "impl.threads (threads, higher)", "list -s prealloc"},
    {0, "impl.update_median (cycles, lower)", "list -s memslots --counter tsc"},
    {0, "impl.update_median (instructions, lower)", "list -s memslots --counter simulated"},
};

/* Usage errors, each command's --help, and what `list` says of the metrics. */
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
 * What --help says the default guest size is, a prealloc case takes: min(the help's figure, a
 * quarter of MemAvailable), as its size_mib property records.
 */
static void test_size_default(void **state)
{
	char *help, *out, args[512];
	const char *json = test_tmp("size.json"), *at;
	unsigned long said, avail_kib = 0, want;
	json_t *root;
	FILE *f;
	char line[256];

	(void)state;
	assert_int_equal(memgate(&help, "run --help"), 0);
	at = strstr(help, "(default: min(");
	assert_non_null(at);
	said = strtoul(at + strlen("(default: min("), NULL, 10);
	free(help);
	assert_true(said > 0);
	f = fopen("/proc/meminfo", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "MemAvailable: %lu kB", &avail_kib);
	fclose(f);
	if (avail_kib / 1024 / 4 < said * 3 / 2)
		skip_because("a quarter of MemAvailable (%lu MiB) is near the default: the size "
			     "depends on when it is read",
			     avail_kib / 1024 / 4);
	want = said;
	snprintf(args, sizeof(args),
		 "run -s prealloc -k 'prealloc.perf.startup[[]kind=anon-4k]' -n 1 --warmup 0 "
		 "--no-gates --json %s",
		 json);
	assert_int_equal(memgate(&out, "%s", args), 0);
	free(out);
	root = json_load_file(json, 0, NULL);
	assert_non_null(root);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_array_get(json_object_get(root, "cases"), 0), "properties"),
		"size_mib")),
	    (snprintf(line, sizeof(line), "%lu", want), line));
	json_decref(root);
	unlink(json);
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
	expect(3, "cannot write the file", "run -s hw -k '*pu_count*' --junit /dev/full");
	expect(2, "--junit: an empty path", "run -s hw --junit ''");
	snprintf(p, sizeof(p), "%s/r.xml", dir);
	snprintf(args, sizeof(args), "run -s hw --junit %s --json %s/../%s/r.xml", p, dir,
		 strrchr(dir, '/') + 1);
	expect(2, "name the same file", args);
	snprintf(args, sizeof(args), "run -s hw --json %s/nosuch/r.json", dir);
	expect(2, "does not exist", args);
	/* A link planted where an old memgate put its temporary: never followed. */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	test_write_file(victim, "precious\n");
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
	test_write_file(p, "");
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
		 "--warmup 0 --no-gates --csv %s/plots",
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
	test_write_file(path, "{\n  \"host\": {\n    \"cpus\": [1, 2]\n");
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

/*
 * The JUnit properties are the run's identity and the figures verdicts were judged on: each
 * gate's value, unit, threshold and verdict; no case's figures (those are in its output).
 */
static void test_junit_properties(void **state)
{
	static const char *const judged[] = {"value", "unit", "threshold", "verdict"};
	const char *xml = test_tmp("props.xml");
	char args[512], want[128], *text;
	size_t n = 0;

	(void)state;
	snprintf(args, sizeof(args), "run -s memslots -k 'memslots.lookup.*' --junit %s", xml);
	expect(A_VERDICT, "lookup_vs_linear[capacity=509]", args);
	text = slurp(xml);
	assert_non_null(text);
	for (const char *p = strstr(text, "<property "); p; p = strstr(p + 1, "<property "))
		n++;
	for (size_t i = 0; i < ARRAY_SIZE(judged); i++) {
		snprintf(want, sizeof(want), "\"gates.lookup_vs_linear[capacity=509].%s\"",
			 judged[i]);
		if (!strstr(text, want))
			fail_msg("no property %s among the %zu", want, n);
	}
	/* The suite's twelve facts at most, and four a gate: 4 gates of the lookups here. */
	if (n > 12 + 4 * 4 || strstr(text, "name=\"perf.") || strstr(text, ".median\""))
		fail_msg("%zu properties, some not a judged figure:\n%s", n, text);
	assert_non_null(strstr(text, "impl.hit_uniform"));
	free(text);
	unlink(xml);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_usage),
	    cmocka_unit_test(test_junit_properties),
	    cmocka_unit_test(test_prealloc_checks),
	    cmocka_unit_test(test_size_default),
	    cmocka_unit_test(test_memslots_checks),
	    cmocka_unit_test(test_rcu_suite),
	    cmocka_unit_test(test_hw_text_and_json),
	    cmocka_unit_test(test_topologies),
	    cmocka_unit_test(test_run_hw_suite),
	    cmocka_unit_test(test_run_on_loaded_topology),
	    cmocka_unit_test(test_report_files),
	    cmocka_unit_test(test_csv_for_plot),
	    cmocka_unit_test(test_shards_partition),
	    cmocka_unit_test(test_host_records),
	    cmocka_unit_test(test_record_roundtrip),
	    cmocka_unit_test(test_html_report),
	    cmocka_unit_test(test_merge_shards),
	    cmocka_unit_test(test_long_cases),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
