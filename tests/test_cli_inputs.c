/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cli_inputs.c - the hostile pass over the surfaces that came after the last one: `vm
 * --shape` and `--shape-of`, calibration files, `--host` records, `ab`'s two sides and their
 * working folder, and the links of the HTML report. Each row is a row of docs/hostile.md. */
#include "tests/testutil.h"
#include "tests/expect.h"

/*
 * One hostile input: the shell @setup makes it in this program's folder ($MG_TMP; $MG_BUILD is
 * the build, the working folder the checkout), then `memgate @args` must exit @status with
 * @text in its output.
 */
struct hostile {
	const char *surface, *input;
	const char *setup;
	int status;
	const char *text;
	const char *args;
};

/* A recorded host to spoil: the AMD VM of this CI kind, copied. */
#define HOST_COPY "rm -rf $MG_TMP/h && cp -r tests/hosts/amd-turin-vm-nokvm $MG_TMP/h && "

static const struct hostile host_rows[] = {
    {"--host", "empty host.json", HOST_COPY ": > $MG_TMP/h/host.json", 2,
     "host.json:1: not memgate host facts", "hw --host $MG_TMP/h"},
    {"--host", "truncated host.json",
     HOST_COPY "head -c 300 tests/hosts/amd-turin-vm-nokvm/host.json > $MG_TMP/h/host.json", 2,
     "not memgate host facts (JSON)", "hw --host $MG_TMP/h"},
    {"--host", "oversized host.json (2 MB)",
     HOST_COPY "head -c 2000000 /dev/zero | tr '\\0' ' ' >> $MG_TMP/h/host.json", 2,
     "bytes, more than such a file holds", "hw --host $MG_TMP/h"},
    {"--host", "duplicated key",
     HOST_COPY "sed -i 's/\"can_bind\": true,/&\"can_bind\": false,/' $MG_TMP/h/host.json", 2,
     "duplicate object key", "hw --host $MG_TMP/h"},
    {"--host", "host.json a FIFO", HOST_COPY "rm $MG_TMP/h/host.json && mkfifo $MG_TMP/h/host.json",
     2, "host.json: a FIFO, not a regular file", "hw --host $MG_TMP/h"},
    {"--host", "host.json a link to a device", HOST_COPY "ln -sf /dev/zero $MG_TMP/h/host.json", 2,
     "host.json: a character device, not a regular file", "list --host $MG_TMP/h"},
    {"--host", "cpuid.raw a FIFO", HOST_COPY "rm $MG_TMP/h/cpuid.raw && mkfifo $MG_TMP/h/cpuid.raw",
     2, "cpuid.raw: a FIFO, not a regular file", "hw --host $MG_TMP/h"},
    {"--host", "topology.xml a folder",
     HOST_COPY "rm $MG_TMP/h/topology.xml && mkdir $MG_TMP/h/topology.xml", 2,
     "topology.xml: a folder, not a regular file", "hw --host $MG_TMP/h"},
    {"--host", "a dangling link", "rm -rf $MG_TMP/h && ln -s $MG_TMP/nothing $MG_TMP/h", 2,
     "host.json: No such file or directory", "hw --host $MG_TMP/h"},
    {"--host", "value out of range (online CPUs -1)",
     HOST_COPY "sed -i 's/\"online\": 2/\"online\": -1/' $MG_TMP/h/host.json", 2,
     "host.cpus.online must be from 1 to 16384", "hw --host $MG_TMP/h"},
    {"--host", "CPUs out of range (10^9 online)",
     HOST_COPY "sed -i 's/\"online\": 2/\"online\": 1000000000/' $MG_TMP/h/host.json", 2,
     "host.cpus.online must be from 1 to 16384", "list --host $MG_TMP/h"},
    {"--host", "TSC out of range (1e308 Hz)",
     HOST_COPY "sed -i 's/\"tsc_hz\": [0-9.e+]*/\"tsc_hz\": 1e308/' $MG_TMP/h/host.json", 2,
     "expected 0 (not measured) up to 100 GHz", "list --host $MG_TMP/h"},
    {"--host", "a path with .. and a name with spaces and quotes",
     "rm -rf \"$MG_TMP/a b'c\" $MG_TMP/x && mkdir $MG_TMP/x && "
     "cp -r tests/hosts/amd-turin-vm-nokvm \"$MG_TMP/a b'c\"",
     0, "a b'c", "hw --host \"$MG_TMP/x/../a b'c\""},
};

/* This host's calibration, made small once (two A/A runs of two rounds of the timer case) and
 * copied for each row, then spoiled in its folder; ab reads it before any round. */
#define CALIB                                                                                      \
	"{ [ -d $MG_TMP/c0 ] || $MG_BUILD/memgate calibrate --history $MG_TMP/c0 --runs 2 "        \
	"--rounds 2 -s hw -k 'hw.timer*' >/dev/null 2>&1; } && rm -rf $MG_TMP/c && "               \
	"cp -r $MG_TMP/c0 $MG_TMP/c && cd $MG_TMP/c/* && "
#define AB_CAL(dir)                                                                                \
	"ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate -s hw -k 'hw.timer*' --rounds 2 "    \
	"--confirm-rounds 2 --calibration " dir

static const struct hostile calib_rows[] = {
    {"--calibration", "empty", CALIB ": > calibration.json", 2,
     "calibration.json:1: '[' or '{' expected", AB_CAL("$MG_TMP/c")},
    {"--calibration", "truncated",
     CALIB "head -c 200 calibration.json > t && mv t calibration.json", 2, "premature end of input",
     AB_CAL("$MG_TMP/c")},
    {"--calibration", "oversized (17 MiB)", CALIB "truncate -s 17M calibration.json", 2,
     "bytes, more than such a file holds", AB_CAL("$MG_TMP/c")},
    {"--calibration", "duplicated key",
     CALIB "sed -i 's/\"rounds\": 2,/&\"rounds\": 3,/' calibration.json", 2, "duplicate object key",
     AB_CAL("$MG_TMP/c")},
    {"--calibration", "a FIFO", CALIB "rm calibration.json && mkfifo calibration.json", 2,
     "calibration.json: a FIFO, not a regular file", AB_CAL("$MG_TMP/c")},
    {"--calibration", "a link to a device", CALIB "ln -sf /dev/zero calibration.json", 2,
     "calibration.json: a character device, not a regular file", AB_CAL("$MG_TMP/c")},
    {"--calibration", "an older one a FIFO", CALIB "mkfifo calibration.1.json", 2,
     "calibration.1.json: a FIFO, not a regular file", AB_CAL("$MG_TMP/c")},
    {"--calibration", "a spread out of range (-1)",
     CALIB "sed -i 's/\"sd\": [^,]*/\"sd\": -1/' calibration.json", 2,
     "expected key, rounds (0 to 1000000000000), sd and width (0 to 10)", AB_CAL("$MG_TMP/c")},
    {"--calibration", "rounds out of range (1e300)",
     CALIB "sed -i 's/\"rounds\": 4,/\"rounds\": 1e300,/' calibration.json", 2,
     "expected key, rounds (0 to 1000000000000)", AB_CAL("$MG_TMP/c")},
    {"--calibration", "a path with .. and a name with spaces and quotes",
     "rm -rf \"$MG_TMP/c d'e\" $MG_TMP/x && mkdir $MG_TMP/x && $MG_BUILD/memgate calibrate "
     "--history \"$MG_TMP/c d'e\" --runs 2 --rounds 2 -s hw -k 'hw.timer*' >/dev/null 2>&1",
     A_VERDICT, "c d'e/", AB_CAL("\"$MG_TMP/x/../c d'e\"")},
    {"calibrate --history", "a file", "true", 2, "not a folder (a link, or a file)",
     "calibrate --history /etc/hostname -s hw -k 'hw.timer*'"},
    {"calibrate --history", "a link to a folder", "rm -f $MG_TMP/l && ln -s $MG_TMP $MG_TMP/l", 2,
     "not a folder (a link, or a file)", "calibrate --history $MG_TMP/l -s hw -k 'hw.timer*'"},
};

/* `memgate vm`: the shape is checked before anything boots, so no kit is needed here. */
static const struct hostile vm_rows[] = {
    {"vm --shape", "empty", "true", 2, "--shape: empty", "vm --shape '' -- run"},
    {"vm --shape", "duplicated key", "true", 2, "--shape: sockets given twice",
     "vm --shape sockets=2,sockets=4 -- run"},
    {"vm --shape", "value out of range", "true", 2, "at most 8 sockets and 8 nodes",
     "vm --shape sockets=9,cpus=9 -- run"},
    {"vm --shape", "size out of range", "true", 2, "mem=1T is not a size from 1M to 64G",
     "vm --shape mem=1T -- run"},
    {"vm --shape", "spaces and quotes", "true", 2, "sockets expects a number from 1 to 64",
     "vm --shape \"sockets=2 nodes='2'\" -- run"},
    {"vm --shape", "oversized (300 bytes)", "true", 2, "--shape: too long",
     "vm --shape $(printf 'sockets=2,%.0s' $(seq 30)) -- run"},
    {"vm --shape-of", "a FIFO", "rm -f $MG_TMP/t.xml && mkfifo $MG_TMP/t.xml", 2,
     "t.xml: a FIFO, not a regular file", "vm --shape-of $MG_TMP/t.xml -- run"},
    {"vm --shape-of", "a device", "true", 2, "/dev/zero: a character device",
     "vm --shape-of /dev/zero -- run"},
    {"vm --shape-of", "empty", "rm -f $MG_TMP/t.xml && : > $MG_TMP/t.xml", 2,
     "t.xml:1: not well-formed XML", "vm --shape-of $MG_TMP/t.xml -- run"},
    {"vm --shape-of", "truncated",
     "rm -f $MG_TMP/t.xml && head -c 2000 topologies/16em64t-4s2c2t.xml > $MG_TMP/t.xml", 2,
     "not well-formed XML", "vm --shape-of $MG_TMP/t.xml -- run"},
    {"vm --shape-of", "oversized (65 MiB)", "rm -f $MG_TMP/t.xml && truncate -s 65M $MG_TMP/t.xml",
     2, "bytes, more than such a file holds", "vm --shape-of $MG_TMP/t.xml -- run"},
    {"vm", "a command word with spaces and quotes", "true", 2,
     "white space, quotes or backslashes cannot pass", "vm -- run -k \"a 'b\""},
};

/* ab's sides: tests/fixtures/ab-side is the memgate but for one subcommand, where it hangs,
 * crashes or writes garbage. */
#define SIDE(sub, does) "'env MG_SIDE_SUB=" sub " MG_SIDE_DOES=" does " tests/fixtures/ab-side'"
#define AB(head) "ab --base $MG_BUILD/memgate --head " head " -s memslots -k '*growth*' --quick"

static const struct hostile ab_rows[] = {
    {"ab side", "answers the protocol with garbage", "true", 2, "does not speak the A/B protocol",
     AB(SIDE("ab-protocol", "garbage"))},
    {"ab side", "hangs on the protocol", "true", 2, "did not finish `ab-protocol` in 2 s",
     AB(SIDE("ab-protocol", "hang")) " --timeout 2"},
    {"ab side", "hangs listing its cases", "true", 1, "did not finish `list` in 2 s",
     AB(SIDE("list", "hang")) " --timeout 2"},
    {"ab side", "lists its cases as garbage", "true", 2, "`list --json` is not a JSON array",
     AB(SIDE("list", "garbage"))},
    {"ab side", "lists a duplicated key", "true", 2, "duplicate object key",
     AB(SIDE("list", "duplicate"))},
    {"ab side", "crashes listing its cases", "true", 1, "`list` was killed by signal 11",
     AB(SIDE("list", "crash"))},
    {"ab side", "hangs in its run", "true", 1, "did not finish `run` in 15 s; killed",
     AB(SIDE("run", "hang")) " --timeout 5"},
    {"ab side", "crashes in its run", "true", 1, "(signal 11)", AB(SIDE("run", "crash"))},
    {"ab side", "writes garbage as its results", "true", 1, "memslots.update.growth",
     AB(SIDE("run", "garbage"))},
    {"ab side", "a binary that is a folder", "true", 2, "could not be run (exit 127",
     AB("$MG_TMP")},
    {"ab side", "a path with .. and spaces and quotes",
     "rm -rf \"$MG_TMP/my b'in\" $MG_TMP/x && mkdir -p \"$MG_TMP/my b'in\" $MG_TMP/x && "
     "cp $MG_BUILD/memgate \"$MG_TMP/my b'in/\"",
     A_VERDICT, "1 cases compared",
     "ab --base $MG_BUILD/memgate --head \"'$MG_TMP/x/../my b'\\\\''in/memgate'\" -s memslots "
     "-k '*growth*' --quick"},
};

/* ab's working folder is made under $TMPDIR: one that is not a folder, said by name. */
static const struct hostile ab_tmpdir_rows[] = {
    {"ab folder", "$TMPDIR missing", "/nonexistent/tmp", 3, "/nonexistent/tmp",
     "ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate -s memslots -k '*growth*' --quick"},
    {"ab folder", "$TMPDIR a file", "/etc/hostname", 3, "/etc/hostname",
     "ab --base $MG_BUILD/memgate --head $MG_BUILD/memgate -s memslots -k '*growth*' --quick"},
};

/* The HTML page's links: a name that is no URL is escaped, a link in a report's place refused. */
static const struct hostile html_rows[] = {
    {"--html", "a name with spaces, '#' and quotes", "true", 0, "1 passed",
     "run -s hw -k 'hw.timer*' --html \"$MG_TMP/r #1 'q'.html\""},
    {"--html", "its files' folder a link", "rm -rf $MG_TMP/l-files && ln -s /tmp $MG_TMP/l-files",
     2, "l-files is a link", "run -s hw -k 'hw.timer*' --html $MG_TMP/l.html"},
    {"--junit", "a link in the report's place",
     "rm -f $MG_TMP/j.xml && ln -s /etc/hostname $MG_TMP/j.xml", 2, "a symbolic link",
     "run -s hw -k 'hw.timer*' --junit $MG_TMP/j.xml"},
};

static void run_rows(const struct hostile *rows, size_t n)
{
	setenv("MG_TMP", test_tmp_dir(), 1);
	setenv("MG_BUILD", test_build_dir(), 1);
	for (size_t i = 0; i < n; i++) {
		printf("# %s: %s\n", rows[i].surface, rows[i].input);
		if (system(rows[i].setup))
			fail_msg("%s, %s: the setup failed: %s", rows[i].surface, rows[i].input,
				 rows[i].setup);
		expect(rows[i].status, rows[i].text, rows[i].args);
	}
}

static void test_host_records(void **state)
{
	(void)state;
	run_rows(host_rows, ARRAY_SIZE(host_rows));
}

static void test_calibrations(void **state)
{
	(void)state;
	run_rows(calib_rows, ARRAY_SIZE(calib_rows));
}

static void test_vm_shapes(void **state)
{
	(void)state;
	run_rows(vm_rows, ARRAY_SIZE(vm_rows));
}

static void test_ab_sides(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char *saved = tmp ? strdup(tmp) : NULL;

	(void)state;
	run_rows(ab_rows, ARRAY_SIZE(ab_rows));
	test_tmp_dir();
	for (size_t i = 0; i < ARRAY_SIZE(ab_tmpdir_rows); i++) {
		setenv("TMPDIR", ab_tmpdir_rows[i].setup, 1);
		expect(ab_tmpdir_rows[i].status, ab_tmpdir_rows[i].text, ab_tmpdir_rows[i].args);
	}
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

static void test_html_links(void **state)
{
	char *page;

	(void)state;
	run_rows(html_rows, ARRAY_SIZE(html_rows));
	/* The page names its stylesheet as a URL, and the file is there under its own name. */
	page = slurp(test_tmp("r #1 'q'.html"));
	assert_non_null(page);
	assert_non_null(strstr(page, "href=\"r%20%231%20'q'-files/memgate.css\""));
	free(page);
	assert_int_equal(access(test_tmp("r #1 'q'-files/memgate.css"), R_OK), 0);
	/* Nothing was written through the links. */
	page = slurp("/etc/hostname");
	assert_non_null(page);
	assert_null(strstr(page, "testsuite"));
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_records), cmocka_unit_test(test_calibrations),
	    cmocka_unit_test(test_vm_shapes),	 cmocka_unit_test(test_ab_sides),
	    cmocka_unit_test(test_html_links),
	};

	return cmocka_run_group_tests_name("cli_inputs", tests, NULL, NULL);
}
