/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_hw.c - detection on this host, topologies from XML and synthetic strings, bad input. */
#include "tests/testutil.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "hw/hw.h"
#include "util/util.h"

static void test_host(void **state)
{
	struct hw_info a, b;
	struct mg_err err;

	(void)state;
	assert_int_equal(hw_detect(&a, NULL, &err), 0);
	assert_int_equal(a.source, HW_SOURCE_HOST);
	assert_true(a.can_bind);
	assert_int_equal(a.n_pus, sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(a.n_numa >= 1 && a.n_cores >= 1 && a.n_packages >= 1);
	assert_true(a.meminfo_total_kib > 0);
	assert_true(a.thp_mode[0] != '\0');
	assert_int_equal(strlen(a.fingerprint_hash), 16);
	/* The fingerprint keys baselines: two detections of one host must agree exactly. */
	assert_int_equal(hw_detect(&b, NULL, &err), 0);
	assert_string_equal(a.fingerprint, b.fingerprint);
	assert_string_equal(a.fingerprint_hash, b.fingerprint_hash);
	hw_release(&a);
	hw_release(&b);
}

struct expected_topo {
	const char *file;
	unsigned int packages, numa, cores, pus;
	const char *cpu_model;
};

/* Counts read off the files' object trees (grep -c 'type="PU"' and so on). */
static const struct expected_topo shared_topologies[] = {
    {"16em64t-4s2c2t.xml", 4, 1, 8, 16, "unknown"},
    {"24em64t-2n6c2t-pci.xml", 2, 2, 12, 24, "unknown"},
    {"32em64t-2n8c2t-pci-noio.xml", 2, 2, 16, 32, "Intel(R) Xeon(R) CPU E5-2650 0 @ 2.00GHz"},
    {"kvm-epyc-1n2c-hugepages.xml", 1, 1, 2, 2, "AMD EPYC"},
};

static void test_shared_xml(void **state)
{
	(void)state;
	if (access(TOPO_DIR, R_OK))
		skip_because(TOPO_DIR " not found (run from the checkout)");
	for (size_t i = 0; i < ARRAY_SIZE(shared_topologies); i++) {
		const struct expected_topo *e = &shared_topologies[i];
		char path[256];
		struct hw_info hw;
		struct mg_err err = {0};

		snprintf(path, sizeof(path), TOPO_DIR "/%s", e->file);
		if (hw_detect(&hw, path, &err))
			fail_msg("%s: %s", path, err.msg);
		assert_int_equal(hw.source, HW_SOURCE_XML);
		assert_false(hw.can_bind);
		assert_int_equal(hw.n_packages, e->packages);
		assert_int_equal(hw.n_numa, e->numa);
		assert_int_equal(hw.n_cores, e->cores);
		assert_int_equal(hw.n_pus, e->pus);
		assert_string_equal(hw.cpu_model, e->cpu_model);
		assert_true(strstr(hw.fingerprint, "pkg") != NULL);
		hw_release(&hw);
	}
}

static void test_synthetic(void **state)
{
	struct hw_info hw;
	struct mg_err err;

	(void)state;
	assert_int_equal(hw_detect(&hw, "synthetic:pack:2 [numa] core:4 pu:2", &err), 0);
	assert_int_equal(hw.source, HW_SOURCE_SYNTHETIC);
	assert_false(hw.can_bind);
	assert_int_equal(hw.n_packages, 2);
	assert_int_equal(hw.n_numa, 2);
	assert_int_equal(hw.n_cores, 8);
	assert_int_equal(hw.n_pus, 16);
	assert_int_equal(hw.nodes[1].n_pus, 8);
	assert_int_equal(hw.nodes[1].first_pu, 8);
	hw_release(&hw);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_bad_input(void **state)
{
	char path[128];
	int fd = mkstemp(test_tmp_template(path, sizeof(path), "topo"));
	struct hw_info hw;
	struct mg_err err;
	char want[300];

	(void)state;
	close(fd);
	/* Malformed: the error names the file and the line, as a compiler would. */
	write_file(
	    path,
	    "<?xml version=\"1.0\"?>\n<topology>\n  <object type=\"Machine\">\n</topology>\n");
	assert_int_equal(hw_detect(&hw, path, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:4: not well-formed XML", path);
	if (!strstr(err.msg, want))
		fail_msg("got \"%s\", want it to contain \"%s\"", err.msg, want);
	/* Well-formed, but not a topology. */
	write_file(path, "<?xml version=\"1.0\"?>\n\n<testsuites/>\n");
	assert_int_equal(hw_detect(&hw, path, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: expected an hwloc topology", path);
	assert_non_null(strstr(err.msg, want));
	unlink(path);
	assert_int_equal(hw_detect(&hw, path, &err), -ENOENT);
	assert_int_equal(hw_detect(&hw, "synthetic:pack:x", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "synthetic topology"));
}

/* Without /dev/kvm: no KVM, no KVM boots, the module still named from /sys; 0 when so. */
static int detect_without_kvm(void *arg)
{
	const char *module = arg;
	struct hw_info hw;
	struct mg_err err;
	int r = 0;

	if (hw_detect(&hw, NULL, &err))
		return 1;
	if (hw.kvm != HW_PROBE_NO || !strstr(hw.kvm_detail, "No such file"))
		r = 2;
	else if (hw_kvm_boots_stock_guests(&hw))
		r = 3;
	else if (strcmp(hw.kvm_module, module))
		r = 4;
	hw_release(&hw);
	return r;
}

/* Which KVM a recorded host had, and whether the boot cases may use it: kvm_pvm runs only PVM
 * guests (a stock kernel stalls in its decompressor there), so its guests get TCG. */
static void test_kvm_module(void **state)
{
	static const struct {
		const char *record, *module;
		bool boots;
	} hosts[] = {
	    {"tests/hosts/amd-epyc-vm-kvm-pvm", "kvm_pvm", false},
	    {"tests/hosts/intel-2s-sandybridge-kvm", "kvm_intel", true},
	    {"tests/hosts/amd-turin-vm-nokvm", "", false},
	};
	struct hw_info hw;
	struct mg_err err;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
		if (hw_load_record(&hw, hosts[i].record, &err))
			fail_msg("%s: %s", hosts[i].record, err.msg);
		assert_string_equal(hw.kvm_module, hosts[i].module);
		assert_int_equal(hw_kvm_boots_stock_guests(&hw), hosts[i].boots);
		hw_release(&hw);
	}
	/* This host: the module named is the one loaded, whether or not /dev/kvm opens. */
	assert_int_equal(hw_detect(&hw, NULL, &err), 0);
	if (hw.kvm_module[0]) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/module/%s", hw.kvm_module);
		assert_int_equal(access(path, F_OK), 0);
	} else {
		/* No module known: KVM is taken at its word. */
		assert_int_equal(hw_kvm_boots_stock_guests(&hw), hw.kvm == HW_PROBE_YES);
	}
	/* The other side of the fact on this host: /dev/kvm hidden in a namespace of our own. */
	if (hw.kvm == HW_PROBE_YES) {
		char why[128];
		int r = test_without_dev(detect_without_kvm, hw.kvm_module, why, sizeof(why));

		if (r >= 0)
			assert_int_equal(r, 0);
		else
			printf("# not checked without /dev/kvm: %s\n", why);
	}
	hw_release(&hw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host),       cmocka_unit_test(test_shared_xml),
	    cmocka_unit_test(test_synthetic),  cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_kvm_module),
	};

	return cmocka_run_group_tests_name("hw", tests, NULL, NULL);
}
