/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_guest.c - the guest kit's console lines, finding the kit, and a boot's ends: done, a
 * guest that panics, one that never speaks, one that saw too few disks. The boots here are
 * of a stand-in QEMU (a shell script that prints what a guest would); test_cli boots the
 * real one. No timing is asserted. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/guest.h"
#include "util/util.h"
#include "testutil.h"

static void test_console_lines(void **state)
{
	struct guest_console c;

	(void)state;
	guest_console_init(&c);
	assert_true(c.init_s < 0 && c.disks == -1 && !c.done);
	assert_int_equal(guest_console_line(&c, "[    0.95] acpi PNP0A03:00: fail to add"),
			 GUEST_OTHER);
	assert_int_equal(guest_console_line(&c, "memgate-guest: init uptime=1.65\r"), GUEST_INIT);
	assert_float_equal(c.init_s, 1.65, 1e-9);
	assert_int_equal(guest_console_line(&c, "memgate-guest: modules uptime=2.09"),
			 GUEST_MODULES);
	assert_int_equal(guest_console_line(&c, "memgate-guest: disks=60 uptime=12.84"),
			 GUEST_DISKS);
	assert_int_equal(c.disks, 60);
	assert_float_equal(c.disks_s, 12.84, 1e-9);
	assert_int_equal(guest_console_line(&c, "memgate-guest: idle uptime=12.9"), GUEST_IDLE);
	assert_string_equal(c.kvm_ext, "");
	assert_int_equal(guest_console_line(&c, "memgate-guest: kvm svm uptime=13.25"), GUEST_KVM);
	assert_string_equal(c.kvm_ext, "svm");
	assert_float_equal(c.kvm_s, 13.25, 1e-9);
	assert_int_equal(guest_console_line(&c, "memgate-guest: done"), GUEST_DONE);
	assert_true(c.done);
	assert_string_equal(c.error, "");
}

static void test_console_errors(void **state)
{
	static const char *const bad[] = {
	    "memgate-guest: init uptime=",
	    "memgate-guest: init uptime=1.5s",
	    "memgate-guest: init uptime=-1",
	    "memgate-guest: disks=x uptime=1",
	    "memgate-guest: disks=3",
	    "memgate-guest: disks=3 uptime=1 more",
	    "memgate-guest: hello",
	    "memgate-guest: modules at=1",
	    "memgate-guest: disks=99999999 uptime=1",
	    "memgate-guest: kvm uptime=1",
	    "memgate-guest: kvm smx uptime=1",
	    "memgate-guest: kvm svmx uptime=1",
	    "memgate-guest: kvm vmx up=1",
	};
	struct guest_console c;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		guest_console_init(&c);
		if (guest_console_line(&c, bad[i]) != GUEST_ERROR)
			fail_msg("\"%s\" was read as a good line", bad[i]);
		assert_non_null(strstr(c.error, "the guest's init said"));
	}
	/* The guest's own error: the first is kept. */
	guest_console_init(&c);
	assert_int_equal(
	    guest_console_line(&c, "memgate-guest: error only 54 of 60 disks after 30 s"),
	    GUEST_ERROR);
	assert_int_equal(guest_console_line(&c, "memgate-guest: error insmod sd_mod.ko"),
			 GUEST_ERROR);
	assert_string_equal(c.error, "the guest: only 54 of 60 disks after 30 s");
	/* guest/init's KVM errors are long: kept whole. */
	guest_console_init(&c);
	assert_int_equal(guest_console_line(
			     &c, "memgate-guest: error kvm: the guest's CPU has no virtualisation "
				 "flag (neither svm nor vmx in /proc/cpuinfo): no KVM can run in "
				 "it"),
			 GUEST_ERROR);
	assert_non_null(
	    strstr(c.error, "(neither svm nor vmx in /proc/cpuinfo): no KVM can run in it"));
}

static void test_kit_find(void **state)
{
	struct guest_kit k;
	struct mg_err err = {0};
	const char *file = test_tmp("kernel");
	FILE *f = fopen(file, "w");

	(void)state;
	assert_non_null(f);
	fclose(f);
	assert_int_equal(guest_kit_find(&k, "/nonexistent/vmlinuz", NULL, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "--guest-kernel /nonexistent/vmlinuz"));
	assert_int_equal(guest_kit_find(&k, file, "/nonexistent/initrd", &err), -ENOENT);
	assert_non_null(strstr(err.msg, "--guest-initrd"));
	/* Both named: used as they are (whether they boot is the case's to find out). */
	assert_int_equal(guest_kit_find(&k, file, file, &err), 0);
	assert_string_equal(k.kernel, file);
	/* Nothing named: the kit beside this program, which has none (build/tests/guest/). */
	assert_int_equal(guest_kit_find(&k, NULL, NULL, &err), 0);
	assert_string_equal(k.kernel, "");
	assert_non_null(strstr(k.why, "no guest kit in"));
	assert_non_null(strstr(k.why, "make"));
}

/* A stand-in QEMU: a script that ignores its arguments and runs @body. */
static const char *fake_qemu(const char *name, const char *body)
{
	const char *path = test_tmp(name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	return path;
}

static int boot(const char *qemu, double timeout_s, struct guest_boot *b, struct mg_err *err)
{
	static const struct guest_kit kit = {.kernel = "/nonexistent/k",
					     .initrd = "/nonexistent/i"};
	struct guest_boot_spec s = {.qemu = qemu, .kit = &kit, .disks = 2, .timeout_s = timeout_s};

	return guest_boot(&s, b, err);
}

static void test_boot_done(void **state)
{
	/* As QEMU does: SIGTERM (sent at "done") is a clean exit. */
	const char *q = fake_qemu("done.sh", "trap 'exit 0' TERM\n"
					     "echo 'memgate-guest: init uptime=0.50'\n"
					     "echo 'memgate-guest: disks=2 uptime=0.75'\n"
					     "echo 'memgate-guest: done'\n"
					     "while :; do sleep 0.05; done");
	struct guest_boot b;
	struct mg_err err = {0};

	(void)state;
	assert_int_equal(boot(q, 30, &b, &err), 0);
	assert_int_equal(b.con.disks, 2);
	assert_true(b.con.done);
	assert_true(b.init_ms > 0 && b.disks_ms >= b.init_ms);
	/* The shell's memory was read when its "guest" said so. */
	assert_true(b.at_disks.read && b.after_idle.read);
	assert_true(b.after_idle.anon_kib > 0);
	assert_true(b.minflt > 0);
	assert_non_null(strstr(b.argv_text, "-append console=ttyS0"));
	assert_non_null(strstr(b.argv_text, "virtio-scsi-pci,id=scsi1,bus=br0,addr=0x2"));
}

/* Boots that fail: the fake QEMU's script, the error that says so, and the console's count. */
static const struct {
	const char *name, *script;
	double timeout_s;
	int ret;
	const char *says[2]; /* in the error */
	const char *tail;    /* in the console's end (NULL: anything) */
	int disks;	     /* as the guest said (-1: it did not) */
} failed_boots[] = {
    {"panic.sh",
     "echo '[ 1.2] Kernel panic - not syncing: No working init found.'\n"
     "echo 'qemu: guest reset' >&2\n"
     "exit 0",
     30,
     -EIO,
     {"before the guest's init said done", "qemu: guest reset"},
     "Kernel panic - not syncing",
     -1},
    {"hang.sh", "exec sleep 60", 0.5, -ETIMEDOUT, {"its init never started"}, NULL, -1},
    {"few.sh",
     "trap 'exit 0' TERM\n"
     "echo 'memgate-guest: init uptime=0.5'\n"
     "echo 'memgate-guest: error only 1 of 2 disks after 1 s'\n"
     "echo 'memgate-guest: disks=1 uptime=1.5'\n"
     "echo 'memgate-guest: done'\n"
     "while :; do sleep 0.05; done",
     30,
     -EIO,
     {"the guest: only 1 of 2 disks after 1 s"},
     NULL,
     1},
};

static void test_boot_failures(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(failed_boots); i++) {
		const char *q = fake_qemu(failed_boots[i].name, failed_boots[i].script);
		struct guest_boot b;
		struct mg_err err = {0};

		assert_int_equal(boot(q, failed_boots[i].timeout_s, &b, &err), failed_boots[i].ret);
		for (size_t j = 0; j < ARRAY_SIZE(failed_boots[i].says); j++)
			if (failed_boots[i].says[j] && !strstr(err.msg, failed_boots[i].says[j]))
				fail_msg("%s: \"%s\" is not in \"%s\"", failed_boots[i].name,
					 failed_boots[i].says[j], err.msg);
		if (failed_boots[i].tail)
			assert_non_null(strstr(b.tail, failed_boots[i].tail));
		assert_int_equal(b.con.disks, failed_boots[i].disks);
	}
}

/* --cut: a boot whose disks have not all shown by the cut is stopped there (and counted at the
 * bound by its case); one past its disks by then runs to its end. */
static void test_boot_cut(void **state)
{
	static const struct guest_kit kit = {.kernel = "/nonexistent/k",
					     .initrd = "/nonexistent/i"};
	const char *slow = fake_qemu("slow.sh", "echo 'memgate-guest: init uptime=0.5'\n"
						"exec sleep 60");
	const char *held = fake_qemu("held.sh", "trap 'exit 0' TERM\n"
						"echo 'memgate-guest: init uptime=0.5'\n"
						"echo 'memgate-guest: disks=2 uptime=0.6'\n"
						"sleep 1\n"
						"echo 'memgate-guest: done'\n"
						"while :; do sleep 0.05; done");
	struct guest_boot_spec s = {
	    .qemu = slow, .kit = &kit, .disks = 2, .timeout_s = 30, .cut_s = 0.3};
	struct guest_boot b;
	struct mg_err err = {0};

	(void)state;
	assert_int_equal(guest_boot(&s, &b, &err), -ECANCELED);
	assert_true(b.cut);
	assert_non_null(strstr(err.msg, "cut at 0.3 s"));
	assert_true(b.wall_ms < 30e3);
	s.qemu = held;
	assert_int_equal(guest_boot(&s, &b, &err), 0);
	assert_false(b.cut);
	assert_true(b.con.done);
	assert_int_equal(b.con.disks, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_console_lines), cmocka_unit_test(test_console_errors),
	    cmocka_unit_test(test_kit_find),	  cmocka_unit_test(test_boot_done),
	    cmocka_unit_test(test_boot_failures), cmocka_unit_test(test_boot_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
