/* memgate.c - the command line's entry: the host, the rules, the plan, reports, dispatch. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "hw/reserve.h"
#include "reports/file.h"
#include "judge/ab.h"
#include "run/runner.h"
#include "suites/suites.h"
#include "util/text.h"
#include "util/util.h"

volatile sig_atomic_t cli_late_signal;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static struct sigaction saved_actions[ARRAY_SIZE(stop_signals)];

static void note_signal(int sig)
{
	cli_late_signal = sig;
}

void cli_signals_defer(void)
{
	struct sigaction sa = {.sa_handler = note_signal};

	cli_late_signal = 0;
	sigemptyset(&sa.sa_mask);
	for (size_t s = 0; s < ARRAY_SIZE(stop_signals); s++)
		sigaction(stop_signals[s], &sa, &saved_actions[s]);
}

void cli_signals_restore(void)
{
	for (size_t s = 0; s < ARRAY_SIZE(stop_signals); s++)
		sigaction(stop_signals[s], &saved_actions[s], NULL);
}

/* Detect the host or load SPEC; bad input is the user's (2), anything else the harness's (3). */
int cli_load_hw(struct hw_info *hw, const char *spec, const char *host_dir)
{
	struct mg_err err = {0};

	if (spec && host_dir)
		return cli_usage_error(
		    "--topology and --host each name what to plan from: give one");
	if (host_dir ? !hw_load_record(hw, host_dir, &err) : !hw_detect(hw, spec, &err))
		return 0;
	fprintf(stderr, "memgate: %s\n", err.msg);
	return spec || host_dir ? EXIT_USAGE : EXIT_HARNESS;
}

static int cmd_hw(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	int ret = cli_parse(&c, argc, argv, cli_hw_options, "", 0);

	if (ret || (ret = cli_load_hw(&hw, c.topology, c.host_dir)))
		return ret;
	if (c.record_dir) {
		struct mg_err err = {0};

		/* What memgate read of this host, for a bug report or the recorded matrix. */
		if (hw_record(&hw, c.record_dir, &err)) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = err.code == EINVAL ? EXIT_USAGE : EXIT_HARNESS;
		} else {
			fprintf(stderr, "memgate: recorded this host in %s\n", c.record_dir);
		}
		hw_release(&hw);
		return ret;
	}
	if (c.json_out)
		ret = hw_print_json(&hw, stdout) ? EXIT_HARNESS : EXIT_PASSED;
	else
		hw_print_text(&hw, stdout);
	hw_release(&hw);
	return ret;
}

int cli_expand(const struct cli *c, const struct hw_info *hw, struct case_inst **insts, size_t *n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct runner_filter f = {.suites = c->suites,
				  .n_suites = c->n_suites,
				  .glob = c->glob,
				  .names = c->names,
				  .n_names = c->n_names,
				  .kinds = c->checks_only ? 1u << CASE_CHECK : 0,
				  .shard = c->shards ? (unsigned int)c->shard - 1 : 0,
				  .shards = (unsigned int)c->shards};
	struct mg_err err = {0};
	int ret = runner_expand(suites, n_suites, hw, &c->opts, &f, insts, n, &err);

	if (ret)
		fprintf(stderr, "memgate: %s\n", err.msg);
	return ret == -ENOENT ? EXIT_USAGE : ret ? EXIT_HARNESS : 0;
}

/* --rules FILE, or the embedded rules; a bad file is bad input (2). */
int cli_load_rules(struct cli *c)
{
	struct mg_err err = {0};

	if (rules_load(&c->rules, c->rules_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	return 0;
}

/*
 * The qemu suite's binary: --qemu must name one (exit 2 when it does not, whatever runs);
 * without it, QEMU_DEFAULT_NAME on PATH is looked for when a planned case needs it, and its
 * absence is a reason those cases give when they SKIP.
 */
static int find_qemu(struct cli *c, const struct case_inst *insts, size_t n)
{
	struct mg_err err = {0};
	bool needed = false;

	for (size_t i = 0; i < n && !needed; i++)
		needed = insts[i].def->needs & NEEDS_QEMU;
	c->opts.qemu = &c->qemu;
	if (!c->qemu_path && !needed)
		return 0;
	if (qemu_find(&c->qemu, c->qemu_path, &err) ||
	    guest_kit_find(&c->kit, c->guest_kernel, c->guest_initrd, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	c->opts.kit = &c->kit;
	if (c->qemu_preload && access(c->qemu_preload, R_OK)) {
		fprintf(stderr, "memgate: --qemu-preload %s: %s\n", c->qemu_preload,
			strerror(errno));
		return EXIT_USAGE;
	}
	c->opts.qemu_preload = c->qemu_preload;
	return 0;
}

/* --cut names a metric some planned case can stop a sample of. */
static bool cut_planned(const struct cli *c, const struct case_inst *insts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (insts[i].def->cut_metric &&
		    !strcmp(insts[i].def->cut_metric, c->opts.cut_metric))
			return true;
	return false;
}

int cli_resolve_counter(struct cli *c)
{
	struct mg_err err = {0};

	if (counter_resolve(c->counter_set ? c->counter : COUNTER_TSC, &c->opts.counter, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_plan(struct cli *c, int argc, char **argv, const struct option *table, const char *shorts,
	     struct cli_plan *p)
{
	int ret = cli_parse(c, argc, argv, table, shorts, 0);

	memset(p, 0, sizeof(*p));
	if (ret || (ret = cli_load_rules(c)))
		return ret;
	if ((ret = cli_resolve_counter(c)) ||
	    (ret = cli_load_hw(&p->hw, c->topology, c->host_dir)) ||
	    (ret = cli_expand(c, &p->hw, &p->insts, &p->n)) ||
	    (ret = find_qemu(c, p->insts, p->n))) {
		cli_plan_release(c, p);
		return ret;
	}
	if (c->opts.cut_value > 0 && !cut_planned(c, p->insts, p->n)) {
		cli_plan_release(c, p);
		return cli_usage_error("--cut %s: no planned case can stop a sample of that metric "
				       "(list --json names the cases' cut_metric)",
				       c->opts.cut_metric);
	}
	/* A rule of --rules FILE that matches nothing is a typo, or a case this host lacks: say
	 * so, unless the selection narrowed the cases on purpose. The embedded rules cover
	 * every host and --long: they are not warned about. */
	if (c->rules_path && !c->glob && !c->n_names && !c->checks_only && !c->shards)
		rules_warn_unused(&c->rules, p->insts, p->n, stderr);
	return 0;
}

void cli_plan_release(struct cli *c, struct cli_plan *p)
{
	rules_release(&c->rules);
	free(p->insts);
	p->insts = NULL;
	p->n = 0;
	hw_release(&p->hw);
}

int cli_check_reports(const struct cli *c)
{
	struct mg_err err = {0};

	if ((c->junit && report_path_check(c->junit, "--junit", &err)) ||
	    (c->json_path && report_path_check(c->json_path, "--json", &err)) ||
	    (c->csv_dir && report_csv_check(c->csv_dir, &err)) ||
	    (c->html && report_html_check(c->html, &err))) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (!report_paths_distinct(c->junit, c->json_path))
		return cli_usage_error("--junit and --json name the same file (%s)", c->junit);
	if (!report_paths_distinct(c->html, c->junit) ||
	    !report_paths_distinct(c->html, c->json_path))
		return cli_usage_error("--html names the same file as --junit or --json (%s)",
				       c->html);
	return 0;
}

void cli_report_init(struct report_run *rep, const struct cli *c, const struct hw_info *hw,
		     const struct case_result *results, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(rep, 0, sizeof(*rep));
	rep->hw = hw;
	rep->results = results;
	rep->n = n;
	rep->version = MEMGATE_VERSION;
	rep->commit = MEMGATE_COMMIT;
	rep->label = c->label;
	rep->qemu = c->qemu.version;
	gmtime_r(&now, &tm);
	strftime(rep->timestamp, sizeof(rep->timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(rep->hostname, sizeof(rep->hostname) - 1);
	text_utf8_fix(rep->hostname, sizeof(rep->hostname));
}

int cli_write_reports(const struct cli *c, const struct report_run *rep)
{
	struct mg_err err = {0};
	int ret = 0;

	if (c->junit && report_junit_write(rep, c->style, c->junit, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (c->json_path && report_json_write(rep, c->json_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (c->csv_dir && report_csv_write(rep, c->csv_dir, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (c->html && report_html_write(rep, c->html, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	return ret;
}

/* The exit status a finished run earns: failures and errors of cases first. */
int cli_run_status(const struct case_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((results[i].outcome == OUTCOME_FAIL && !results[i].unstable) ||
		    results[i].outcome == OUTCOME_ERROR)
			return EXIT_FAILED;
	return EXIT_PASSED;
}

static int cmd_man(int argc, char **argv)
{
	if (argc > 1)
		return cli_usage_error("man takes no arguments (got '%s')", argv[1]);
	return cli_print_man(stdout);
}

/* The A/B protocol: what `memgate ab` asks a side first. */
static int cmd_ab_protocol(int argc, char **argv)
{
	struct cli c;
	/* A side's options, as its `run` takes them: a typo is refused before ab starts. */
	int ret = cli_parse(&c, argc, argv, cli_run_options, "s:k:n:", 0);

	if (ret)
		return ret;
	puts(AB_PROTOCOL_LINE);
	return EXIT_PASSED;
}

/* Every command: its word and what runs it with the words after memgate. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
    {"hw", cmd_hw},
    {"list", cli_cmd_list},
    {"run", cli_cmd_run},
    {"ab", cli_cmd_ab},
    {"calibrate", cli_cmd_calibrate},
    {"model", cli_cmd_model},
    {"compare", cli_cmd_compare},
    {"baseline", cli_cmd_baseline},
    {"merge", cli_cmd_merge},
    {"vm", cli_cmd_vm},
    {"rules", cli_cmd_rules},
    {"man", cmd_man},
    /* memgate's own, not shown: a counted case under callgrind, and ab's first question */
    {"case-exec", cli_cmd_case_exec},
    {"ab-protocol", cmd_ab_protocol},
};

#define COMMAND_WORDS                                                                              \
	"hw, list, run, ab, calibrate, model, compare, baseline, merge, vm, rules or man"

static int dispatch(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return cli_usage_error("%s", "missing command: " COMMAND_WORDS);
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
		return cli_print_usage();
	if (!strcmp(cmd, "--version")) {
		printf("memgate %s\n", MEMGATE_VERSION);
		return EXIT_PASSED;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return cli_usage_error("unknown command '%s': expected " COMMAND_WORDS, cmd);
}

int main(int argc, char **argv)
{
	int status;

	/* A closed stdout (`memgate run | head -1`) is an error to report, not a death: the
	 * reports are written all the same. */
	signal(SIGPIPE, SIG_IGN);
	/* Reports need a line-buffered stdout to interleave sanely with the children's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A memgate killed while it held hugetlb pages left a record: put them back now. */
	reserve_recover(stderr);
	status = dispatch(argc, argv);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr,
			"memgate: writing to stdout failed: what was printed is incomplete\n");
		if (status == EXIT_PASSED || status == EXIT_FAILED)
			status = EXIT_HARNESS;
	}
	return status;
}
