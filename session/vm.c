/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - `memgate vm` from start to end (session/vm.h). */
#include "session/vm.h"
#include "session/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/nest.h"
#include "run/kernel.h"
#include "run/vm.h"
#include "util/proc.h"
#include "util/tmpdir.h"
#include "util/util.h"

/* Report options of the guest's own command: its files are the guest's, and memgate vm names
 * the host's. */
static const char *const guest_report_options[] = {"--json", "--junit", "--html", "--csv"};

/* A kernel of the user's: the default shape, one CPU (under icount, one vCPU runs the whole
 * guest in one sequence) and room for the kvm suite's 32,764 slots of the kernel's own. */
#define VM_KERNEL_SHAPE "sockets=1,nodes=1,cpus=1,mem=2G"

/*
 * The guest's CPU under icount: TCG's max (svm for nested KVM) without RDRAND and RDSEED,
 * which under TCG return the host's random numbers. With them the guest kernel's RNG (slab
 * freelist order, KASLR, hash seeds) differs every boot and so does its work: two boots of
 * 6.1 moved a median by up to 7%. Without them its entropy comes from its own timing, which
 * icount makes the same every boot, and two boots give the same counts, every figure.
 */
#define VM_ICOUNT_CPU "max,rdrand=off,rdseed=off"

/* What the figures of a guest under icount are, in its reports. */
#define VM_ICOUNT_FIGURES                                                                          \
	"instruction-proportional figures under emulation, not wall times: under TCG's icount "    \
	"the guest's clock and TSC advance 1 ns per instruction executed, so a TSC difference "    \
	"counts the guest's instructions (exact: two boots of a kernel give the same counts, "     \
	"without RDRAND and RDSEED, which would bring the host's randomness in); cache "           \
	"and TLB effects, memory latency and the host's speed are not modelled"

/* One vm under way: what it boots, where its files go, what it is called. */
struct vm_job {
	struct vm_spec s;
	struct qemu_bin qemu;
	struct guest_kit kit;
	struct vm_result r;
	struct vm_kernel k;
	char pack[PATH_MAX], dir[PATH_MAX], shape[128], prefix[200], accel[200];
	char kvm_archive[PATH_MAX + 16];
	const char *args[MAX_SUITE_ARGS + 8];
};

/* The guest's console as it comes: memgate's own lines, and the kernel's errors. */
static void echo_line(void *arg, const char *line)
{
	(void)arg;
	if (strncmp(line, "memgate-guest: ", 15) || strstr(line, ": error "))
		printf("%s\n", line);
	fflush(stdout);
}

/* The command in the guest: @vm's words, with a run's reports and, under TCG, no gates. */
static int guest_command(const struct session_vm *vm, bool kvm, const char **argv, size_t max)
{
	size_t n = 0;
	bool run = vm->n_args > 0 && !strcmp(vm->args[0], "run");

	for (int i = 0; i < vm->n_args; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(guest_report_options); k++)
			if (!strncmp(vm->args[i], guest_report_options[k],
				     strlen(guest_report_options[k])))
				return session_usage_error(
				    "vm: '%s' names a file in the guest: give memgate vm its "
				    "--json and --junit, where the guest's reports "
				    "come back",
				    vm->args[i]);
		if (n + 8 < max)
			argv[n++] = vm->args[i];
	}
	if (run) {
		argv[n++] = "--json";
		argv[n++] = VM_GUEST_JSON;
		argv[n++] = "--junit";
		argv[n++] = VM_GUEST_JUNIT;
		if (!kvm)
			argv[n++] = "--no-gates";
	}
	argv[n] = NULL;
	return 0;
}

/*
 * When the guest's own reports cannot be had: --junit and --json of one ERROR row,
 * SUITE guest[SHAPE], case vm.boot, saying @why with the console's end, so that Jenkins
 * shows the failure rather than last build's files. Returns EXIT_HARNESS.
 */
static int failure_reports(const struct session_config *cfg, const char *prefix, const char *why,
			   const char *tail, const struct nest_prop *props, size_t n_props)
{
	static const struct case_def boot = {
	    .name = "boot",
	    .group = "vm",
	    .kind = CASE_CHECK,
	    .doc = "the guest boots, runs the command and sends its reports back"};
	struct session_config own = *cfg;
	struct result_set rows;
	struct report_run rep;
	struct case_result *r;
	struct session ss;

	if ((!cfg->junit && !cfg->json_path) || result_set_init(&rows, 1))
		return EXIT_HARNESS;
	r = result_set_add(&rows, NULL, prefix, "boot", &boot);
	if (r && !session_open(&ss, &own)) {
		case_result_set_outcome(r, OUTCOME_ERROR, why);
		r->stderr_tail = tail && *tail ? strdup(tail) : NULL;
		for (size_t i = 0; i < n_props; i++)
			case_result_add_prop(r, props[i].name, props[i].value);
		session_report_init(&ss, &rep, rows.results, rows.n);
		session_write_reports(cfg, &rep);
		session_report_release(&rep);
		session_close(&ss);
	}
	result_set_release(&rows);
	return EXIT_HARNESS;
}

/* The guest's reports as the host's --json and --junit; 0, or @why filled and EXIT_HARNESS. */
static int nest_reports(const struct session_config *cfg, const struct vm_result *r,
			const char *prefix, const struct nest_prop *props, size_t n_props,
			char *why, size_t len)
{
	struct mg_err err = {0};

	if ((cfg->json_path && !r->json[0]) || (cfg->junit && !r->junit[0])) {
		snprintf(why, len, "the guest's command exited %d and its %s did not come back",
			 r->exit, cfg->json_path && !r->json[0] ? "JSON" : "JUnit");
		return EXIT_HARNESS;
	}
	if ((cfg->json_path &&
	     report_nest_json(r->json, cfg->json_path, prefix, props, n_props, &err)) ||
	    (cfg->junit && report_nest_junit(r->junit, cfg->junit, prefix, props, n_props, &err))) {
		snprintf(why, len, "the guest's reports: %s", err.msg);
		return EXIT_HARNESS;
	}
	return 0;
}

/* --shape-of: @spec's sockets and nodes, scaled to what @host can give; 0 or an exit status. */
static int shape_of(const char *spec, const struct hw_info *host, struct guest_numa *out)
{
	struct hw_info machine;
	struct mg_err err = {0};
	int ret = session_load_host(&machine, spec, NULL);

	if (ret)
		return ret;
	if (vm_shape_of(&machine, host->meminfo_available_kib >> 10, out, &err)) {
		fprintf(stderr, "memgate vm: --shape-of %s\n", err.msg);
		ret = EXIT_USAGE;
	}
	hw_release(&machine);
	return ret;
}

/* The guest's shape, the accelerator this host gives it, and the command it runs. */
static int plan_guest(const struct session_config *cfg, const struct session_vm *vm,
		      struct vm_job *j)
{
	struct mg_err err = {0};
	struct hw_info hw;
	int ret;

	if (!vm->shape_of && vm_shape_parse(vm->shape	 ? vm->shape
					    : vm->kernel ? VM_KERNEL_SHAPE
							 : VM_DEFAULT_SHAPE,
					    &j->s.shape, &err))
		return session_usage_error("vm: %s", err.msg);
	if ((ret = session_check_reports(cfg)) || (ret = session_load_host(&hw, NULL, NULL)))
		return ret;
	j->s.kvm = hw_kvm_boots_stock_guests(&hw);
	ret = vm->shape_of ? shape_of(vm->shape_of, &hw, &j->s.shape) : 0;
	hw_release(&hw);
	if (ret || (ret = guest_command(vm, j->s.kvm, j->args, ARRAY_SIZE(j->args))))
		return ret;
	if (vm_args_check(j->args, &err))
		return session_usage_error("vm: %s", err.msg);
	return 0;
}

/* The QEMU, the kit and this memgate packed for the guest. */
static int find_parts(const struct session_config *cfg, struct vm_job *j)
{
	struct mg_err err = {0};

	if (qemu_find(&j->qemu, cfg->qemu_path, &err))
		return session_usage_error("vm: %s", err.msg);
	if (!j->qemu.path[0]) {
		fprintf(stderr, "memgate vm: %s\n", j->qemu.why);
		return EXIT_USAGE;
	}
	if (guest_kit_find(&j->kit, cfg->guest_kernel, cfg->guest_initrd, &err))
		return session_usage_error("vm: %s", err.msg);
	if (!j->kit.kernel[0] || vm_pack_find(j->pack, sizeof(j->pack), &err)) {
		fprintf(stderr, "memgate vm: %s\n", j->kit.kernel[0] ? err.msg : j->kit.why);
		return EXIT_USAGE;
	}
	return 0;
}

/* --kernel: the user's kernel unpacked in the run's folder, its KVM modules archived for the
 * guest; the guest named by the kernel's release, under icount unless told otherwise. */
static int open_kernel(const struct session_vm *vm, struct vm_job *j)
{
	struct mg_err err = {0};

	snprintf(j->kvm_archive, sizeof(j->kvm_archive), "%s/kvm.cpio", j->dir);
	if (vm_kernel_open(&j->k, vm->kernel, vm->modules, j->dir, &err) ||
	    vm_kernel_kvm_archive(&j->k, j->kvm_archive, &err) || proc_stop) {
		if (!proc_stop)
			fprintf(stderr, "memgate vm: %s\n", err.msg);
		return proc_stop ? 128 + proc_stop : EXIT_USAGE;
	}
	snprintf(j->kit.kernel, sizeof(j->kit.kernel), "%s", j->k.image);
	snprintf(j->prefix, sizeof(j->prefix), "guest[kernel=%s]", j->k.version);
	j->s.extra = j->kvm_archive;
	j->s.kvm_in_guest = true;
	j->s.icount = !j->s.kvm && !vm->no_icount;
	snprintf(j->accel, sizeof(j->accel), "nested KVM under %s",
		 j->s.kvm      ? "KVM"
		 : j->s.icount ? "TCG (icount shift=0, sleep=off)"
			       : "TCG");
	return 0;
}

/* What is about to boot, on stdout. */
static void announce(const struct session_vm *vm, const struct vm_job *j)
{
	if (vm->kernel)
		printf("memgate vm: kernel %s (%s; KVM %s), %s, %s, QEMU %s\n", j->k.version,
		       vm->kernel, j->k.kvm, j->shape, j->accel, j->qemu.version);
	printf("memgate vm: %s, %s (%s), QEMU %s\n", j->shape, j->s.kvm ? "KVM" : "TCG",
	       j->s.kvm ? "it boots the kit here"
	       : j->s.icount
		   ? "no KVM here that boots a stock guest; icount: the guest's figures "
		     "count instructions"
		   : "no KVM here that boots a stock guest: timing figures are reported, not "
		     "gated",
	       j->qemu.version);
	fflush(stdout);
}

/* The guest booted and its reports nested in the host's; the exit status. */
static int boot_and_report(const struct session_config *cfg, const struct session_vm *vm,
			   struct vm_job *j)
{
	struct mg_err err = {0};
	char exit_text[16], why[900];
	int ret = vm_run(&j->s, &j->r, &err);

	snprintf(exit_text, sizeof(exit_text), "%d", j->r.exit);
	/* Every guest's four, then what a kernel of the user's adds. */
	const struct nest_prop props[] = {
	    {"vm.shape", j->shape},
	    {"vm.accel", j->accel},
	    {"vm.gated",
	     j->s.kvm ? "yes" : "no: under TCG the guest's timing is not the hardware's"},
	    {"vm.exit", exit_text},
	    {"vm.clock", j->s.icount ? "icount" : "host"},
	    {"vm.figures",
	     j->s.icount ? VM_ICOUNT_FIGURES : "the host's time, as the guest sees it"},
	    {"vm.kernel", j->k.version},
	    {"vm.kernel_banner", j->k.banner},
	    {"vm.kernel_image", vm->kernel ? vm->kernel : ""},
	    {"vm.kvm", j->k.kvm},
	};
	const size_t every_guest = 4, n_props = vm->kernel ? ARRAY_SIZE(props) : every_guest;

	/* Every console line was shown as it came: the error says what ended it. */
	if (ret)
		snprintf(why, sizeof(why), "%s", err.msg);
	else
		ret = nest_reports(cfg, &j->r, j->prefix, props, n_props, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "memgate vm: %s\n", why);
		failure_reports(cfg, j->prefix, why, j->r.boot.tail, props, n_props);
		return proc_stop ? 128 + proc_stop : EXIT_HARNESS;
	}
	printf("memgate vm: the guest's command exited %d in %.1f s of QEMU\n", j->r.exit,
	       j->r.boot.wall_ms / 1e3);
	return j->r.exit;
}

/* --dry-run: everything checked and said, nothing booted. The exit status. */
static int dry_run(const struct session_vm *vm)
{
	printf("memgate vm: --dry-run: the options, QEMU, the kit%s checked; nothing booted\n",
	       vm->kernel ? ", the kernel and its KVM" : "");
	return proc_stop ? 128 + proc_stop : EXIT_PASSED;
}

int session_vm(const struct session_config *cfg, const struct session_vm *vm)
{
	struct vm_job *j = calloc(1, sizeof(*j));
	int ret;

	if (!j)
		return EXIT_HARNESS;
	j->s = (struct vm_spec){.on_line = echo_line, .interrupted = &proc_stop};
	if ((ret = plan_guest(cfg, vm, j)) || (ret = find_parts(cfg, j))) {
		free(j);
		return ret;
	}
	/* A folder of this run's own for the initramfs and the reports, removed at the end. */
	if ((ret = tmpdir_make(j->dir, sizeof(j->dir), "vm"))) {
		fprintf(stderr, "memgate vm: a folder for the guest's files in %s ($TMPDIR): %s\n",
			tmpdir_base(), strerror(-ret));
		free(j);
		return EXIT_HARNESS;
	}
	/* From here a stop signal is noticed, and the folder goes whatever happens. */
	proc_stops_defer();
	vm_shape_name(&j->s.shape, j->shape, sizeof(j->shape));
	snprintf(j->prefix, sizeof(j->prefix), "guest[%s]", j->shape);
	snprintf(j->accel, sizeof(j->accel), "%s", j->s.kvm ? "kvm" : "tcg");
	ret = vm->kernel ? open_kernel(vm, j) : 0;
	if (!ret) {
		j->s.cpu = vm->cpu ? vm->cpu : j->s.icount ? VM_ICOUNT_CPU : NULL;
		j->s.qemu = j->qemu.path;
		j->s.kit = &j->kit;
		j->s.pack = j->pack;
		j->s.args = j->args;
		j->s.workdir = j->dir;
		j->s.timeout_s = cfg->timeout_set ? cfg->opts.timeout_s : VM_DEFAULT_TIMEOUT_S;
		announce(vm, j);
		ret = vm->dry_run ? dry_run(vm) : boot_and_report(cfg, vm, j);
	}
	tmpdir_remove(j->dir);
	proc_stops_resume();
	free(j);
	return ret;
}
