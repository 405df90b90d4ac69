/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - inside the command line: its options, the parsed command, what the commands share. */
#ifndef MG_CLI_CLI_H
#define MG_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session/ab.h"
#include "session/model.h"
#include "session/session.h"

#define MEMGATE_VERSION "0.1.0"
/* The source it was built from: the Makefile passes `git describe`, or "unknown". */
#ifndef MEMGATE_COMMIT
#define MEMGATE_COMMIT "unknown"
#endif

/* Not an exit status: --help was printed; main() exits 0 (EXIT_* are in session/session.h). */
#define EXIT_HELP 256

/* Sampling defaults: 15 samples give a median whose bootstrap interval is a few MADs wide;
 * the quick mode keeps 5, enough to see a crash or a gross regression. */
#define DEFAULT_SAMPLES 15
#define DEFAULT_WARMUP 3
#define QUICK_SAMPLES 5
#define QUICK_WARMUP 1
#define DEFAULT_TIMEOUT_S 600
/* Baselines: the newest runs of this host class that a run is judged against. */
#define DEFAULT_BASELINE_RUNS 5

struct cli {
	struct session_config cfg; /* what a session is asked to do (session/session.h) */
	bool any_host;		   /* compare: accept base runs of another host class */
	const char *calibration;   /* ab: a history whose host class folder holds
				    * calibration.json; calibrate: --history */
	unsigned long runs;	   /* calibrate: A/A runs */
	const char *base, *head;   /* ab: the sides */
	unsigned long rounds, confirm_rounds;
	bool rounds_set;
	const char *args[MAX_SUITE_ARGS]; /* positional: compare's files */
	int n_args;
	const char *record_dir; /* hw --record: where to write this host */
	const char *shape;	/* vm --shape */
	const char *shape_of;	/* vm --shape-of: a topology whose shape the guest takes */
	const char *vm_kernel;	/* vm --kernel: a kernel of the user's, with KVM in the guest */
	const char *vm_modules; /* vm --modules: its modules */
	const char *vm_cpu;	/* vm --guest-cpu */
	bool vm_no_icount;	/* vm --no-icount */
	bool vm_dry_run;	/* vm --dry-run: everything checked, nothing booted */
	bool help;		/* -h, --help: the command's usage was asked for */
	bool json_out;		/* hw, list: --json */
	bool warmup_set, timeout_set;
	/* case-exec: the result pipe, the case's deadline, callgrind's dump file */
	unsigned long fd;
	long long deadline_ns;
	const char *dump;
	/* model: the modelled runs, and the spreads of --spread (none: its defaults) */
	struct model_params model;
	double spreads[16];
	size_t n_spreads;
};

/* What an option does with its argument (options.c). */
enum cli_opt_kind {
	CO_FLAG,   /* sets a bool of struct cli */
	CO_STRING, /* keeps its argument in a const char * of struct cli */
	CO_LIST,   /* adds its argument to a list of struct cli, counted in a size_t */
	CO_ULONG,  /* a whole number from min to max into an unsigned long of struct cli */
	CO_UINT,   /* the same into an unsigned int */
	CO_CALL,   /* parsed by ->set */
};

/* One option of a command: its names, its argument, its text, and what it sets. */
struct cli_opt {
	const char *name;	/* the long option, without "--" */
	char short_name;	/* its letter, 0 for none */
	const char *arg;	/* what it takes, as usage names it ("SUITE", "jenkins|ant"); NULL:
				 * a flag. Completion offers the words of "a|b", files for FILE,
				 * PATH, LIB and SPEC, folders for DIR, the suites for SUITE. */
	const char *help;	/* what it does (and its default); "\n" continues it */
	enum cli_opt_kind kind; /* what it does with the argument */
	bool required;		/* the command refuses to run without it (usage shows no []) */
	bool repeat;		/* may be given again (usage shows "..."): lists, --impl */
	size_t field, count;	/* offsetof(struct cli, ...) it sets; CO_LIST: its count */
	unsigned long min, max; /* CO_ULONG, CO_UINT: the range */
	/* CO_CALL: parse @arg of option @opt ("--size") into @c; 0 or -EINVAL, having said why */
	int (*set)(struct cli *c, const char *opt, const char *arg);
};

/* A command: its word, its table, what runs it. */
struct cli_command {
	const char *name;
	const char *args;    /* its arguments after the options, as usage shows them */
	const char *summary; /* what it does, for --help and memgate(1); "\n" continues */
	const struct cli_opt *const *opts; /* its options (options.def), NULL-terminated */
	int max_args;			   /* arguments it takes */
	bool stop_at_arg;		   /* options end at the first argument (vm's command) */
	bool hidden; /* memgate's own: not in --help, memgate(1) or the completion */
	int (*run)(int argc, char **argv); /* the words after `memgate`; an exit status */
};

/* Every command, in the order --help lists them; ends with an entry without a name. */
extern const struct cli_command cli_commands[];

/** cli_command() - the command named @name, or NULL. */
const struct cli_command *cli_command(const char *name);

/** cli_print_usage() - the usage text and the implementations on stdout; returns EXIT_PASSED. */
int cli_print_usage(void);

/** cli_print_help() - @cmd's usage, made from its table, on @f: `memgate CMD --help`. */
void cli_print_help(const struct cli_command *cmd, FILE *f);

/** cli_print_man() - memgate(1) in roff on @f, made from the tables; an exit status. */
int cli_print_man(FILE *f);

/** cli_print_completion() - the bash completion of memgate on @f, from the tables. */
int cli_print_completion(FILE *f);

/** cli_usage_error() - "memgate: MESSAGE" and a hint on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * cli_parse() - the options of @command from its own table (an option of another command is
 * refused), its arguments after them. Returns 0; EXIT_HELP when --help printed its usage (the
 * command returns it: main() exits 0); or an exit status, the usage error said.
 */
int cli_parse(struct cli *c, int argc, char **argv, const char *command);

/** cli_ab_request() - what ab and calibrate were asked, from @c as cli_parse() left it. */
struct session_ab cli_ab_request(const struct cli *c);

/* The commands: each takes its arguments after the command word, returns an exit status. */
/** cli_cmd_hw() - `memgate hw`: the host described, as text or JSON, or recorded. */
int cli_cmd_hw(int argc, char **argv);
/** cli_cmd_man() - `memgate man`: memgate(1) in roff on stdout. */
int cli_cmd_man(int argc, char **argv);
/** cli_cmd_completion() - `memgate completion`: the bash completion on stdout. */
int cli_cmd_completion(int argc, char **argv);
/** cli_cmd_ab_protocol() - `memgate ab-protocol`: the A/B protocol line, its options checked. */
int cli_cmd_ab_protocol(int argc, char **argv);
/** cli_cmd_list() - `memgate list`: the planned cases and their gates. */
int cli_cmd_list(int argc, char **argv);
/** cli_cmd_run() - `memgate run`: a session planned and run (session/session.h). */
int cli_cmd_run(int argc, char **argv);
/** cli_cmd_model() - `memgate model`: the A/B procedures' A/A rate and power, modelled. */
int cli_cmd_model(int argc, char **argv);

/** cli_cmd_calibrate() - `memgate calibrate`: this host class's A/A noise, filed in a history. */
int cli_cmd_calibrate(int argc, char **argv);

/** cli_cmd_case_exec() - `memgate case-exec`: one case in this process (see runner.c). */
int cli_cmd_case_exec(int argc, char **argv);
/** cli_cmd_rules() - `memgate rules`: the rules in effect, as text. */
int cli_cmd_rules(int argc, char **argv);
/** cli_cmd_ab() - `memgate ab`: is head slower than base, round by round. */
int cli_cmd_ab(int argc, char **argv);
/** cli_cmd_compare() - `memgate compare`: a results file judged against earlier ones. */
int cli_cmd_compare(int argc, char **argv);
/** cli_cmd_baseline() - `memgate baseline add`: a results file filed in a history. */
int cli_cmd_baseline(int argc, char **argv);
/** cli_cmd_merge() - `memgate merge`: the shards' results files as one. */
int cli_cmd_merge(int argc, char **argv);
/** cli_cmd_vm() - `memgate vm`: a memgate command inside a NUMA guest, its reports nested. */
int cli_cmd_vm(int argc, char **argv);

#endif
