/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - inside the command line: its options, the parsed command, what the commands share. */
#ifndef MG_CLI_CLI_H
#define MG_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session/ab.h"
#include "session/bisect.h"
#include "session/model.h"
#include "session/vm.h"
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

/* What the commands without a session struct of their own are asked. */
struct cli_hw {
	const char *record_dir; /* --record: where to write this host */
	bool json;		/* --json */
};
struct cli_list {
	bool json; /* --json: what `memgate ab` reads of a side */
};
struct cli_compare {
	bool any_host; /* --any-host: accept base runs of another host class */
};
struct cli_case_exec {
	unsigned long fd;      /* --fd: the result pipe */
	long long deadline_ns; /* --deadline-ns: the case's deadline */
	const char *dump;      /* --dump: callgrind's dump file */
};
struct cli_model {
	struct model_params params; /* the modelled runs */
	double spreads[16];	    /* --spread (none: its defaults) */
	size_t n_spreads;
};

/*
 * A parsed command line. Each option writes into the struct of the command that takes it:
 * cfg is the job a session runs (every command that opens one), ab the A/B that ab and
 * calibrate hand the session, vm memgate vm's guest, and the rest their command's own.
 */
struct cli {
	bool help;		      /* -h, --help: the command's usage was asked for */
	struct session_config cfg;    /* the job (session/session.h) */
	struct session_ab ab;	      /* ab, calibrate (session/ab.h) */
	struct session_vm vm;	      /* vm (session/vm.h) */
	struct session_bisect bisect; /* bisect (session/bisect.h) */
	struct cli_hw hw;
	struct cli_list list;
	struct cli_compare compare;
	struct cli_case_exec exec;
	struct cli_model model;
	/* Positional: compare's and merge's files, baseline's words, vm's command. */
	const char *args[MAX_SUITE_ARGS];
	int n_args;
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
	/* The struct of struct cli its own options write into (OWN()), beside cfg; 0, 0: cfg alone
	 */
	size_t own_at, own_size;
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
/** cli_cmd_bisect() - `memgate bisect`: the first bad commit of a regression. */
int cli_cmd_bisect(int argc, char **argv);

/** cli_cmd_compare() - `memgate compare`: a results file judged against earlier ones. */
int cli_cmd_compare(int argc, char **argv);
/** cli_cmd_baseline() - `memgate baseline add`: a results file filed in a history. */
int cli_cmd_baseline(int argc, char **argv);
/** cli_cmd_merge() - `memgate merge`: the shards' results files as one. */
int cli_cmd_merge(int argc, char **argv);
/** cli_cmd_vm() - `memgate vm`: a memgate command inside a NUMA guest, its reports nested. */
int cli_cmd_vm(int argc, char **argv);

#endif
