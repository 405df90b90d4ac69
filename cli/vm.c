/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c - `memgate vm`: a memgate command inside a QEMU guest of a chosen NUMA shape, with this
 * very build and its libraries; a run's reports come back with the guest's suites named
 * guest[SHAPE].SUITE and its shape and accelerator as properties (run/vm.c, reports/nest.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "reports/nest.h"
#include "run/kernel.h"
#include "run/vm.h"
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

/* The guest's console as it comes: memgate's own lines, and the kernel's errors. */
static void echo_line(void *arg, const char *line)
{
	(void)arg;
	if (strncmp(line, "memgate-guest: ", 15) || strstr(line, ": error "))
		printf("%s\n", line);
	fflush(stdout);
}

/* The command in the guest: @c's words, with a run's reports and, under TCG, no gates. */
static int guest_command(const struct cli *c, bool kvm, const char **argv, size_t max)
{
	size_t n = 0;
	bool run = c->n_args > 0 && !strcmp(c->args[0], "run");

	for (int i = 0; i < c->n_args; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(guest_report_options); k++)
			if (!strncmp(c->args[i], guest_report_options[k],
				     strlen(guest_report_options[k])))
				return cli_usage_error(
				    "vm: '%s' names a file in the guest: give memgate vm its "
				    "--json "
				    "and --junit, where the guest's reports come back",
				    c->args[i]);
		if (n + 8 < max)
			argv[n++] = c->args[i];
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
 * SUITE guest[SHAPE], case vm.boot, saying  with the console's end, so that Jenkins
 * shows the failure rather than last build's files. Returns EXIT_HARNESS.
 */
static int failure_reports(struct cli *c, const char *prefix, const char *why, const char *tail,
			   const struct nest_prop *props, size_t n_props)
{
	static const struct case_def boot = {
	    .name = "boot",
	    .group = "vm",
	    .kind = CASE_CHECK,
	    .doc = "the guest boots, runs the command and sends its reports back"};
	struct result_set rows;
	struct report_run rep;
	struct case_result *r;
	struct session ss;

	if ((!c->cfg.junit && !c->cfg.json_path) || result_set_init(&rows, 1))
		return EXIT_HARNESS;
	r = result_set_add(&rows, NULL, prefix, "boot", &boot);
	if (r && !session_open(&ss, &c->cfg)) {
		case_result_set_outcome(r, OUTCOME_ERROR, why);
		r->stderr_tail = tail && *tail ? strdup(tail) : NULL;
		for (size_t i = 0; i < n_props; i++)
			case_result_add_prop(r, props[i].name, props[i].value);
		session_report_init(&ss, &rep, rows.results, rows.n);
		session_write_reports(&c->cfg, &rep);
		session_report_release(&rep);
		session_close(&ss);
	}
	result_set_release(&rows);
	return EXIT_HARNESS;
}

/* The guest's reports as the host's --json and --junit; 0, or  filled and EXIT_HARNESS. */
static int nest_reports(const struct cli *c, const struct vm_result *r, const char *prefix,
			const struct nest_prop *props, size_t n_props, char *why, size_t len)
{
	struct mg_err err = {0};

	if ((c->cfg.json_path && !r->json[0]) || (c->cfg.junit && !r->junit[0])) {
		snprintf(why, len, "the guest's command exited %d and its %s did not come back",
			 r->exit, c->cfg.json_path && !r->json[0] ? "JSON" : "JUnit");
		return EXIT_HARNESS;
	}
	if ((c->cfg.json_path &&
	     report_nest_json(r->json, c->cfg.json_path, prefix, props, n_props, &err)) ||
	    (c->cfg.junit &&
	     report_nest_junit(r->junit, c->cfg.junit, prefix, props, n_props, &err))) {
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

/* The end of a vm however it went: its folder (an unpacked kernel, the initramfs, the reports)
 * removed, the stop signals as they were. Returns @ret. */
static int vm_end(const char *dir, struct vm_result *r, struct vm_kernel *k, int ret)
{
	tmpdir_remove(dir);
	proc_stops_resume();
	free(r);
	free(k);
	return ret;
}

int cli_cmd_vm(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct qemu_bin qemu;
	struct guest_kit kit;
	struct vm_spec s = {.on_line = echo_line, .interrupted = &proc_stop};
	struct vm_result *r = NULL;
	struct vm_kernel *k = NULL;
	struct mg_err err = {0};
	char pack[PATH_MAX], dir[PATH_MAX], shape[128], prefix[200], exit_text[16], why[900],
	    kvm_archive[PATH_MAX + 16], accel[200];
	const char *args[MAX_SUITE_ARGS + 8];
	int ret = cli_parse(&c, argc, argv, "vm");

	if (ret)
		return ret;
	if (c.shape && c.shape_of)
		return cli_usage_error("vm: --shape or --shape-of, not both");
	if (!c.shape_of && vm_shape_parse(c.shape	? c.shape
					  : c.vm_kernel ? VM_KERNEL_SHAPE
							: VM_DEFAULT_SHAPE,
					  &s.shape, &err))
		return cli_usage_error("%s", err.msg);
	if (!c.vm_kernel && (c.vm_modules || c.vm_no_icount))
		return cli_usage_error("vm: --%s goes with --kernel",
				       c.vm_modules ? "modules" : "no-icount");
	if (c.n_args == 0)
		return cli_usage_error(
		    "vm needs a command to run in the guest: memgate vm -- run ...");
	if ((ret = session_check_reports(&c.cfg)))
		return ret;
	if ((ret = session_load_host(&hw, NULL, NULL)))
		return ret;
	s.kvm = hw_kvm_boots_stock_guests(&hw);
	if (c.shape_of && (ret = shape_of(c.shape_of, &hw, &s.shape))) {
		hw_release(&hw);
		return ret;
	}
	hw_release(&hw);
	if ((ret = guest_command(&c, s.kvm, args, ARRAY_SIZE(args))))
		return ret;
	if (vm_args_check(args, &err))
		return cli_usage_error("vm: %s", err.msg);
	if (qemu_find(&qemu, c.cfg.qemu_path, &err))
		return cli_usage_error("%s", err.msg);
	if (!qemu.path[0]) {
		fprintf(stderr, "memgate vm: %s\n", qemu.why);
		return EXIT_USAGE;
	}
	if (guest_kit_find(&kit, c.cfg.guest_kernel, c.cfg.guest_initrd, &err))
		return cli_usage_error("%s", err.msg);
	if (!kit.kernel[0] || vm_pack_find(pack, sizeof(pack), &err)) {
		fprintf(stderr, "memgate vm: %s\n", kit.kernel[0] ? err.msg : kit.why);
		return EXIT_USAGE;
	}
	/* A folder of this run's own for the initramfs and the reports, removed at the end. */
	r = calloc(1, sizeof(*r));
	k = calloc(1, sizeof(*k));
	if (!r || !k || (ret = tmpdir_make(dir, sizeof(dir), "vm"))) {
		fprintf(stderr, "memgate vm: a folder for the guest's files in %s ($TMPDIR): %s\n",
			tmpdir_base(), strerror(r && k ? -ret : ENOMEM));
		free(r);
		free(k);
		return EXIT_HARNESS;
	}
	/* From here a stop signal is noticed, and the folder goes whatever happens. */
	proc_stops_defer();
	vm_shape_name(&s.shape, shape, sizeof(shape));
	snprintf(prefix, sizeof(prefix), "guest[%s]", shape);
	snprintf(accel, sizeof(accel), "%s", s.kvm ? "kvm" : "tcg");
	if (c.vm_kernel) {
		snprintf(kvm_archive, sizeof(kvm_archive), "%s/kvm.cpio", dir);
		if (vm_kernel_open(k, c.vm_kernel, c.vm_modules, dir, &err) ||
		    vm_kernel_kvm_archive(k, kvm_archive, &err) || proc_stop) {
			if (!proc_stop)
				fprintf(stderr, "memgate vm: %s\n", err.msg);
			return vm_end(dir, r, k, proc_stop ? 128 + proc_stop : EXIT_USAGE);
		}
		snprintf(kit.kernel, sizeof(kit.kernel), "%s", k->image);
		snprintf(prefix, sizeof(prefix), "guest[kernel=%s]", k->version);
		s.extra = kvm_archive;
		s.kvm_in_guest = true;
		s.icount = !s.kvm && !c.vm_no_icount;
		snprintf(accel, sizeof(accel), "nested KVM under %s",
			 s.kvm	    ? "KVM"
			 : s.icount ? "TCG (icount shift=0, sleep=off)"
				    : "TCG");
	}
	s.cpu = c.vm_cpu ? c.vm_cpu : s.icount ? VM_ICOUNT_CPU : NULL;
	s.qemu = qemu.path;
	s.kit = &kit;
	s.pack = pack;
	s.args = args;
	s.workdir = dir;
	s.timeout_s = c.timeout_set ? c.cfg.opts.timeout_s : VM_DEFAULT_TIMEOUT_S;
	if (c.vm_kernel)
		printf("memgate vm: kernel %s (%s; KVM %s), %s, %s, QEMU %s\n", k->version,
		       c.vm_kernel, k->kvm, shape, accel, qemu.version);
	printf("memgate vm: %s, %s (%s), QEMU %s\n", shape, s.kvm ? "KVM" : "TCG",
	       s.kvm ? "it boots the kit here"
	       : s.icount
		   ? "no KVM here that boots a stock guest; icount: the guest's figures "
		     "count instructions"
		   : "no KVM here that boots a stock guest: timing figures are reported, not "
		     "gated",
	       qemu.version);
	fflush(stdout);
	if (c.vm_dry_run) {
		printf(
		    "memgate vm: --dry-run: the options, QEMU, the kit%s checked; nothing booted\n",
		    c.vm_kernel ? ", the kernel and its KVM" : "");
		return vm_end(dir, r, k, proc_stop ? 128 + proc_stop : EXIT_PASSED);
	}
	ret = vm_run(&s, r, &err);
	snprintf(exit_text, sizeof(exit_text), "%d", r->exit);
	/* Every guest's four, then what a kernel of the user's adds. */
	const struct nest_prop all_props[] = {
	    {"vm.shape", shape},
	    {"vm.accel", accel},
	    {"vm.gated", s.kvm ? "yes" : "no: under TCG the guest's timing is not the hardware's"},
	    {"vm.exit", exit_text},
	    {"vm.clock", s.icount ? "icount" : "host"},
	    {"vm.figures", s.icount ? VM_ICOUNT_FIGURES : "the host's time, as the guest sees it"},
	    {"vm.kernel", k->version},
	    {"vm.kernel_banner", k->banner},
	    {"vm.kernel_image", c.vm_kernel ? c.vm_kernel : ""},
	    {"vm.kvm", k->kvm},
	};
	const size_t every_guest = 4;
	const struct nest_prop *props = all_props;
	size_t n_props = c.vm_kernel ? ARRAY_SIZE(all_props) : every_guest;

	/* Every console line was shown as it came: the error says what ended it. */
	if (ret)
		snprintf(why, sizeof(why), "%s", err.msg);
	else
		ret = nest_reports(&c, r, prefix, props, n_props, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "memgate vm: %s\n", why);
		failure_reports(&c, prefix, why, r->boot.tail, props, n_props);
		ret = proc_stop ? 128 + proc_stop : EXIT_HARNESS;
	} else {
		printf("memgate vm: the guest's command exited %d in %.1f s of QEMU\n", r->exit,
		       r->boot.wall_ms / 1e3);
		ret = r->exit;
	}
	return vm_end(dir, r, k, ret);
}
