/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_cli_qemu.c - build/memgate with a real QEMU and KVM: the qemu and kvm suites, guest boots,
 * memgate vm, and ab leaving no QEMU behind. */
#include "tests/testutil.h"
#include "tests/expect.h"

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

/* Reap whatever this process (a subreaper) inherited; fail if any is still running after 5 s. */
static void expect_no_orphans(void)
{
	int status;

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
	expect_no_orphans();
}

/* Write @text to @path, replacing it. */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The rest of the test needs Debian's QEMU on PATH: skip it otherwise, saying what installs it. */
static void need_qemu(void)
{
	if (system("command -v qemu-system-x86_64 >/dev/null 2>&1"))
		skip_because("no qemu-system-x86_64 on PATH (ci/install-deps.sh installs Debian's "
			     "qemu-system-x86)");
}

/* The rest of the test needs the guest kit's @file: skip it otherwise, saying how to build it. */
static void need_guest_kit(const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/guest/%s", test_build_dir(), file);
	if (access(path, R_OK))
		skip_because("no guest kit in %s/guest (make builds it from the kernel package "
			     "ci/install-deps.sh keeps)",
			     test_build_dir());
}

/*
 * The qemu suite: --qemu is checked before anything runs (exit 2); no QEMU on PATH is a SKIP
 * that says what to install; a real QEMU (the install script brings Debian's) runs, and one
 * that quietly uses one thread is seen to.
 */
static void test_qemu_suite(void **state)
{
	const char *path = getenv("PATH");
	char *saved = path ? strdup(path) : NULL, args[512], want[96];
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
	need_qemu();
	/* More 2 MiB pages than are free: QEMU says so and exits; the pool is only read. */
	expect(0, "0 failed, 0 errors", "run -s qemu --checks");
	if (pus < 2)
		skip_because("one PU: QEMU's thread count cannot be told from one thread");
	/*
	 * The threads QEMU preallocated with: its touch_pages threads, two of two here on every
	 * round (they are all alive before any starts); the one-thread wrapper's QEMU runs none,
	 * and populates on its main thread. That `ab` fails such a head is measured, not tested
	 * (README).
	 */
	snprintf(args, sizeof(args), "run %s", ram);
	snprintf(want, sizeof(want), "qemu.tall.threads: median %ld threads", pus < 16 ? pus : 16);
	expect(0, want, args);
	snprintf(args, sizeof(args), "run %s --qemu tests/fixtures/qemu-one-thread", ram);
	expect(0, "qemu.tall.threads: median 1 threads", args);
	/* A QEMU whose preallocation is faked (asked, it does not): its launches differ from the
	 * one without prealloc by less than writing the memory takes, and its backend is not
	 * resident when QMP speaks: an ERROR of the measurement naming the QEMU, never a PASS. */
	snprintf(args, sizeof(args), "run %s --qemu tests/fixtures/qemu-no-prealloc", ram);
	expect(1, "preallocation of 1024 MiB was not resident when QMP spoke in", args);
}

/*
 * The second QEMU ci/install-deps.sh keeps beside Debian's (bookworm-backports' 10.0, unpacked
 * under /var/cache/memgate; make passes it as MEMGATE_QEMU_NEW): the qemu suite's checks and
 * its ram prealloc case run on it, and the report names its version, not the host's QEMU's.
 * What its figures must be is issue 38's.
 */
static void test_second_qemu(void **state)
{
	const char *q = getenv("MEMGATE_QEMU_NEW");
	char args[1024], cmd[1100], line[256] = "", want[300];
	const char *v;
	FILE *f;

	(void)state;
	if (!q || !*q)
		skip_because("no second QEMU: as root, ci/install-deps.sh unpacks "
			     "bookworm-backports' qemu-system-x86 beside Debian's");
	snprintf(cmd, sizeof(cmd), "'%s' --version", q);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	v = strstr(line, "version ");
	assert_non_null(v);
	snprintf(want, sizeof(want), "QEMU %.*s", (int)strcspn(v + 8, " \n"), v + 8);
	snprintf(args, sizeof(args), "run -s qemu --checks --qemu '%s'", q);
	expect(0, "0 failed, 0 errors", args);
	snprintf(args, sizeof(args),
		 "run -s qemu -k '*backend=ram*' --quick --size 256M --qemu '%s'", q);
	expect(0, want, args);
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
	/* A boot round is two TCG boots a side: ab gives an undecided boot 4 more, not 10. */
	expect(0, "\"ab_confirm_rounds\": 4", "list -s qemu -k '*boot*' --json");
	need_qemu();
	expect(1, "could not load kernel '/dev/null'",
	       "run -s qemu -k '*boot*disks=1*' -n 1 --warmup 0 --guest-kernel /dev/null "
	       "--guest-initrd /dev/null");
	need_guest_kit("vmlinuz");
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
	char args[1024];
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
	need_qemu();
	need_guest_kit("memgate.cpio");
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

/* A shell command line; its exit status. */
static int run_shell(void *arg)
{
	int st = system((const char *)arg);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 126;
}

/* The cloud kernel package ci/install-deps.sh keeps for the kit into @out; false if none. */
static bool kit_kernel_package(char *out, size_t len)
{
	const char *cache =
	    getenv("MEMGATE_CACHE") ? getenv("MEMGATE_CACHE") : "/var/cache/memgate";
	char cmd[1200], *got;

	snprintf(cmd, sizeof(cmd),
		 "ls %s/linux-image-*-cloud-amd64_*.deb 2>/dev/null | head -n 1 >'%s'", cache,
		 test_tmp("kernel-deb"));
	if (system(cmd))
		return false;
	got = text_read_file(test_tmp("kernel-deb"), 4096);
	if (!got || !got[0]) {
		free(got);
		return false;
	}
	got[strcspn(got, "\n")] = '\0';
	snprintf(out, len, "%s", got);
	free(got);
	return true;
}

/* @name's exit status, as its subshell wrote it. */
static int status_of(const char *name)
{
	char *s = text_read_file(test_tmp(name), 64);
	int st = s ? atoi(s) : -1;

	free(s);
	return st;
}

static void expect_in_file(const char *name, const char *text)
{
	char *out = text_read_file(test_tmp(name), 1 << 24);

	if (!out || !strstr(out, text))
		fail_msg("%s lacks \"%s\":\n%s", name, text, out ? out : "(nothing)");
	free(out);
}

/*
 * memgate vm --kernel: a kernel of the user's booted with the kit, KVM loaded in it and the
 * kvm suite run there, nested KVM under TCG with icount (with /dev/kvm hidden where the host
 * has it); each missing part an ERROR naming it: a CPU without svm or vmx, a kernel with no
 * KVM; a kernel memgate cannot use refused before any boot. The three guests boot at once,
 * the two that fail without icount (it makes a boot about four times longer).
 */
static void test_vm_kernel(void **state)
{
	char deb[1024], cmd[6000], why[128], *json;
	const char *mhz;
	int st;

	(void)state;
	expect(2, "--modules goes with --kernel", "vm --modules /tmp -- run -s kvm");
	need_qemu();
	need_guest_kit("memgate.cpio");
	if (test_under_asan())
		skip_because("an AddressSanitizer build is not booted in a guest");
	expect(2, "--kernel /nonexistent/bzImage: No such file",
	       "vm --kernel /nonexistent/bzImage -- run -s kvm");
	expect(2, "not an x86 boot image", "vm --kernel README.md -- run -s kvm");
	expect(2, "no lib/modules/",
	       "vm --kernel build/guest/vmlinuz --modules tests -- run -s kvm");
	if (!kit_kernel_package(deb, sizeof(deb)))
		skip_because("no linux-image-*-cloud-amd64 package in /var/cache/memgate "
			     "(ci/install-deps.sh keeps one)");
	snprintf(
	    cmd, sizeof(cmd),
	    "B=%s/memgate T=%s D='%s'; "
	    "($B vm --kernel \"$D\" --json $T/k.json -- run -s kvm "
	    "-k 'kvm.perf.memslots?slots=1?' -n 1 --warmup 0 >$T/k.out 2>&1; echo $? >$T/k.st) & "
	    "($B vm --kernel \"$D\" --guest-cpu Nehalem --no-icount -- run -s kvm >$T/flag.out "
	    "2>&1; "
	    "echo $? >$T/flag.st) & "
	    "($B vm --kernel $(dirname $B)/guest/vmlinuz --no-icount -- run -s kvm >$T/dev.out "
	    "2>&1; "
	    "echo $? >$T/dev.st) & wait",
	    test_build_dir(), test_tmp_dir(), deb);
	if (!access("/dev/kvm", R_OK | W_OK)) {
		st = test_without_dev(run_shell, cmd, why, sizeof(why));
		if (st < 0)
			skip_because("/dev/kvm cannot be hidden here (%s): nested KVM under TCG is "
				     "this test's",
				     why);
	} else {
		st = run_shell(cmd);
	}
	assert_int_equal(st, 0);
	assert_int_equal(status_of("k.st"), 0);
	expect_in_file("k.out", "PASS  kvm.perf.memslots[slots=1]");
	expect_in_file("k.json", ".kvm\"");
	expect_in_file("k.json", "\"suite\": \"guest[kernel=");
	expect_in_file("k.json",
		       "\"vm.accel\": \"nested KVM under TCG (icount shift=0, sleep=off)\"");
	expect_in_file("k.json", "\"vm.clock\": \"icount\"");
	expect_in_file("k.json",
		       "instruction-proportional figures under emulation, not wall times");
	/* The guest's TSC is its instruction count: 1 GHz by its own clock, which counts them. */
	json = text_read_file(test_tmp("k.json"), 1 << 24);
	assert_non_null(json);
	mhz = strstr(json, "\"tsc_mhz\": \"");
	assert_non_null(mhz);
	if (atof(mhz + strlen("\"tsc_mhz\": \"")) < 999 ||
	    atof(mhz + strlen("\"tsc_mhz\": \"")) > 1001)
		fail_msg("the guest's TSC under icount: %.40s", mhz);
	free(json);
	assert_int_equal(status_of("flag.st"), 3);
	expect_in_file("flag.out",
		       "the guest's CPU has no virtualisation flag (neither svm nor vmx");
	assert_int_equal(status_of("dev.st"), 3);
	expect_in_file("dev.out", "/dev/kvm is absent: the kernel has no KVM built in and no "
				  "modules came with it");
}

/*
 * vm --kernel with a .deb leaves nothing in $TMPDIR, whatever the outcome: an ab of two guests
 * that do not run their cases (a CPU without svm or vmx) ends with exit 3, each side's boot an
 * ERROR in the JUnit, no QEMU left; a vm killed with SIGKILL while its guest runs leaves its
 * folder (106 MB unpacked), which the next memgate removes.
 */
static void test_vm_kernel_leaves_nothing(void **state)
{
	char deb[1024], cmd[8000];
	const char *tmp = test_tmp("vm-tmp");

	(void)state;
	need_qemu();
	need_guest_kit("memgate.cpio");
	if (test_under_asan())
		skip_because("an AddressSanitizer build is not booted in a guest");
	if (!kit_kernel_package(deb, sizeof(deb)))
		skip_because("no linux-image-*-cloud-amd64 package in /var/cache/memgate "
			     "(ci/install-deps.sh keeps one)");
	assert_int_equal(mkdir(tmp, 0700), 0);
	snprintf(cmd, sizeof(cmd),
		 "B=%s/memgate T=%s D='%s'; S=\"$B vm --kernel '$D' --guest-cpu Nehalem "
		 "--no-icount --\"; TMPDIR=$T/vm-tmp $B ab --base \"$S\" --head \"$S\" -s kvm "
		 "--junit $T/fail.xml >$T/fail.out 2>&1; echo $? >$T/fail.st",
		 test_build_dir(), test_tmp_dir(), deb);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(system(cmd), 0);
	expect_no_orphans();
	assert_int_equal(status_of("fail.st"), 3);
	expect_in_file("fail.xml", "round 1, base");
	expect_in_file("fail.xml", "round 1, head");
	expect_in_file("fail.xml", "no virtualisation flag");
	expect_in_file("fail.out", "nothing measured: round 1, base's guest");
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", tmp);
	if (system(cmd))
		fail_msg("ab of failing guests left files in $TMPDIR: %s", tmp);
	/* SIGKILL once the package is unpacked, then another memgate. */
	snprintf(cmd, sizeof(cmd),
		 "B=%s/memgate D='%s'; export TMPDIR='%s'; $B vm --kernel \"$D\" -- run -s kvm "
		 ">/dev/null 2>&1 & p=$!; i=0; "
		 "while ! ls -d $TMPDIR/memgate-vm.*/kernel-deb >/dev/null 2>&1 && [ $i -lt 600 ]; "
		 "do sleep 0.1; i=$((i + 1)); done; kill -9 $p; wait $p; "
		 "ls -d $TMPDIR/memgate-vm.*/kernel-deb >/dev/null && "
		 "$B vm --dry-run --kernel \"$D\" -- run -s kvm >/dev/null && test -z \"$(ls -A "
		 "$TMPDIR)\"",
		 test_build_dir(), deb, tmp);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	if (system(cmd))
		fail_msg("a killed vm's folder was not removed by the next memgate");
	expect_no_orphans();
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ab_hung_qemu_leaves_nothing),
	    cmocka_unit_test(test_qemu_suite),
	    cmocka_unit_test(test_second_qemu),
	    cmocka_unit_test(test_qemu_boot),
	    cmocka_unit_test(test_vm),
	    cmocka_unit_test(test_vm_kernel),
	    cmocka_unit_test(test_vm_kernel_leaves_nothing),
	    cmocka_unit_test(test_kvm_suite),
	    cmocka_unit_test(test_boot_guest_paths),
	};

	return cmocka_run_group_tests_name("cli_qemu", tests, NULL, NULL);
}
