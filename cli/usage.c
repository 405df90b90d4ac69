/* SPDX-License-Identifier: GPL-2.0-or-later */
/* usage.c - what the option tables give besides the parser: the usage of memgate and of each
 * command (--help), memgate(1) in roff, and the bash completion. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "Regression tests and perf gates for the guest-memory paths of a QEMU/KVM hypervisor.\n";

static const char exit_text[] =
    "  0  every case, gate and comparison passed (or was skipped, with its reason)\n"
    "  1  a check, gate or comparison failed, or a case crashed or timed out\n"
    "     (an ab verdict that is UNSTABLE, undecided or noisier than calibrated, is a\n"
    "     JUnit failure of type unstable, which Jenkins shows yellow, and exits 0)\n"
    "  2  bad usage or bad input (options, topology, rules or results files, a side of\n"
    "     ab that is not a memgate speaking its protocol)\n"
    "  3  the harness itself failed\n"
    "  128+N  interrupted by signal N; the reports hold what was measured\n";

/* "-s, --suite SUITE" or "    --quick": an option as its usage line names it. */
static void opt_words(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(buf, len, "    --%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
}

/* The synopsis of @cmd: "memgate run [-s SUITE]... [--quick] ..." from column @col, wrapped
 * before column 92, the continuation lines indented by @indent. */
static void synopsis(const struct cli_command *cmd, FILE *f, size_t col, const char *indent)
{
	col += (size_t)fprintf(f, "memgate %s", cmd->name);
	for (const struct cli_opt *const *p = cmd->opts; *p; p++) {
		const struct cli_opt *o = *p;
		char word[160];
		size_t len;

		if (!strcmp(o->name, "help"))
			continue;
		if (o->required)
			snprintf(word, sizeof(word), "--%s %s", o->name, o->arg);
		else if (o->short_name && o->arg)
			snprintf(word, sizeof(word), "[-%c %s]%s", o->short_name, o->arg,
				 o->repeat ? "..." : "");
		else
			snprintf(word, sizeof(word), "[--%s%s%s]%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "", o->repeat ? "..." : "");
		len = strlen(word);
		if (col + 1 + len > 92)
			col = (size_t)fprintf(f, "\n%s", indent) - 1;
		col += (size_t)fprintf(f, " %s", word);
	}
	if (cmd->args)
		fprintf(f, " %s", cmd->args);
	fputc('\n', f);
}

/* The options of @cmd, one or more lines each: the option, its text from column 28. */
static void options_text(const struct cli_command *cmd, FILE *f)
{
	for (const struct cli_opt *const *p = cmd->opts; *p; p++) {
		const struct cli_opt *o = *p;
		char words[160];
		const char *h = o->help;

		opt_words(o, words, sizeof(words));
		if (strlen(words) + 2 > 26)
			fprintf(f, "  %s\n%28s", words, "");
		else
			fprintf(f, "  %-26s", words);
		for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n%28s", (int)(nl - h), h, "");
		fprintf(f, "%s\n", h);
	}
}

void cli_print_help(const struct cli_command *cmd, FILE *f)
{
	fputs("usage: ", f);
	synopsis(cmd, f, 7, "         ");
	fprintf(f, "\n%s\n\noptions:\n", cmd->summary);
	options_text(cmd, f);
	if (!strcmp(cmd->name, "run") || !strcmp(cmd->name, "list") ||
	    !strcmp(cmd->name, "case-exec")) {
		fputs("\nimplementations under test (--impl KEY=VALUE; the first value is the "
		      "default):\n",
		      f);
		session_impl_describe(f);
	}
	fprintf(f, "\nexit status:\n%s", exit_text);
}

int cli_print_usage(void)
{
	printf("usage: memgate [--help] [--version] COMMAND [OPTIONS]\n\n%s\ncommands:\n", intro);
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		const char *s = k->summary;

		if (k->hidden)
			continue;
		printf("  %-11s", k->name);
		for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1)
			printf("%.*s\n%13s", (int)(nl - s), s, "");
		printf("%s\n", s);
	}
	printf("\n`memgate COMMAND --help` (or -h) prints a command's options; memgate(1) has "
	       "them all.\n\nexit status:\n%s\nimplementations under test (--impl KEY=VALUE; "
	       "the first value is the default):\n",
	       exit_text);
	session_impl_describe(stdout);
	return EXIT_PASSED;
}

/* One line of text as roff: backslashes and hyphens escaped, a leading dot or quote kept from
 * being read as a request. */
static void roff_line(FILE *f, const char *s, size_t len)
{
	if (len && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
	fputc('\n', f);
}

/* @text (lines) as roff lines. */
static void roff_text(FILE *f, const char *text)
{
	for (const char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		roff_line(f, p, (size_t)(nl - p));
		if (!*nl)
			break;
	}
}

/* What memgate made in memory (a synopsis, the implementations) as roff lines. */
static int roff_made(FILE *f, void (*make)(const void *arg, FILE *m), const void *arg)
{
	char *text = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&text, &size);

	if (!m)
		return -1;
	make(arg, m);
	if (fclose(m)) {
		free(text);
		return -1;
	}
	roff_text(f, text);
	free(text);
	return 0;
}

static void make_synopsis(const void *arg, FILE *m)
{
	synopsis(arg, m, 0, "    ");
}

static void make_implementations(const void *arg, FILE *m)
{
	(void)arg;
	session_impl_describe(m);
}

int cli_print_man(FILE *f)
{
	int bad = 0;

	fprintf(f,
		".\\\" memgate(1), generated by `memgate man` from its option tables\n"
		".TH MEMGATE 1 \"\" \"memgate %s\" \"User Commands\"\n"
		".SH NAME\n"
		"memgate \\- regression tests and perf gates for the guest-memory paths of a "
		"QEMU/KVM hypervisor\n"
		".SH SYNOPSIS\n.nf\n",
		MEMGATE_COMMIT);
	for (const struct cli_command *k = cli_commands; k->name; k++)
		if (!k->hidden)
			bad |= roff_made(f, make_synopsis, k);
	fputs(".fi\n.SH DESCRIPTION\n", f);
	roff_text(f, intro);
	fputs("Each command takes its own options, listed below and by\n"
	      ".B memgate COMMAND \\-\\-help\\fR.\n.SH COMMANDS\n",
	      f);
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		if (k->hidden)
			continue;
		fprintf(f, ".SS %s\n", k->name);
		roff_text(f, k->summary);
		for (const struct cli_opt *const *p = k->opts; *p; p++) {
			const struct cli_opt *o = *p;
			char words[160];

			opt_words(o, words, sizeof(words));
			fputs(".TP\n.B ", f);
			roff_line(f, words[0] == ' ' ? words + 4 : words,
				  strlen(words[0] == ' ' ? words + 4 : words));
			roff_text(f, o->help);
		}
	}
	fputs(".SH EXIT STATUS\n.nf\n", f);
	roff_text(f, exit_text);
	fputs(".fi\n.SH IMPLEMENTATIONS UNDER TEST\n"
	      "Chosen with \\-\\-impl KEY=VALUE; the first value is the default.\n"
	      ".nf\n",
	      f);
	bad |= roff_made(f, make_implementations, NULL);
	fputs(".fi\n.SH FILES\n"
	      ".TP\n.I /run/memgate/hugetlb.lock\n"
	      "the host-wide lock memgate takes before it changes a hugetlb pool\n"
	      ".TP\n.I /run/memgate/reservations/PID\n"
	      "what a running memgate added to a pool, taken back by the next one if it was "
	      "killed\n"
	      ".TP\n.I PREFIX/share/bash-completion/completions/memgate\n"
	      "the bash completion, made by \\fBmemgate completion\\fR\n"
	      ".SH SEE ALSO\n"
	      ".BR qemu-system-x86_64 (1),\n"
	      ".BR valgrind (1),\n"
	      ".BR perf_event_open (2)\n",
	      f);
	return bad || ferror(f) ? EXIT_HARNESS : EXIT_PASSED;
}

/* What bash offers after @o: files, folders, suite names, or the words of "a|b|c". */
static void complete_arg(const struct cli_opt *o, FILE *f)
{
	const char *a = o->arg;

	if (strchr(a, '|')) {
		fputs("COMPREPLY=($(compgen -W '", f);
		for (; *a; a++)
			fputc(*a == '|' ? ' ' : *a, f);
		fputs("' -- \"$cur\"))", f);
	} else if (!strcmp(a, "SUITE")) {
		size_t n;
		const struct suite_def *const *s = session_suites(&n);

		fputs("COMPREPLY=($(compgen -W '", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s%s", i ? " " : "", s[i]->name);
		fputs("' -- \"$cur\"))", f);
	} else if (!strcmp(a, "DIR")) {
		fputs("COMPREPLY=($(compgen -d -- \"$cur\"))", f);
	} else if (strstr(a, "FILE") || !strcmp(a, "PATH") || !strcmp(a, "LIB") ||
		   !strcmp(a, "SPEC")) {
		fputs("COMPREPLY=($(compgen -f -- \"$cur\"))", f);
	} else {
		fputs("COMPREPLY=()", f);
	}
}

int cli_print_completion(FILE *f)
{
	fputs(
	    "# bash completion for memgate(1), generated by `memgate completion` from its option\n"
	    "# tables; make install puts it in share/bash-completion/completions/memgate.\n"
	    "_memgate()\n{\n"
	    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	    "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W '--help --version",
	    f);
	for (const struct cli_command *k = cli_commands; k->name; k++)
		if (!k->hidden)
			fprintf(f, " %s", k->name);
	fputs("' -- \"$cur\"))\n\t\treturn\n\tfi\n\tcase ${COMP_WORDS[1]} in\n", f);
	for (const struct cli_command *k = cli_commands; k->name; k++) {
		if (k->hidden)
			continue;
		fprintf(f, "\t%s)\n\t\tcase $prev in\n", k->name);
		for (const struct cli_opt *const *p = k->opts; *p; p++) {
			const struct cli_opt *o = *p;

			if (!o->arg)
				continue;
			fputs("\t\t", f);
			if (o->short_name)
				fprintf(f, "-%c|", o->short_name);
			fprintf(f, "--%s) ", o->name);
			complete_arg(o, f);
			fputs("; return ;;\n", f);
		}
		fputs("\t\tesac\n\t\tCOMPREPLY=($(compgen -W '", f);
		for (const struct cli_opt *const *p = k->opts; *p; p++)
			fprintf(f, "%s--%s", p == k->opts ? "" : " ", (*p)->name);
		fputs("' -- \"$cur\"))\n", f);
		/* Files where the command takes them (compare's, merge's, baseline's). */
		if (k->max_args)
			fputs("\t\t[[ $cur == -* ]] || COMPREPLY+=($(compgen -f -- \"$cur\"))\n",
			      f);
		fputs("\t\t;;\n", f);
	}
	fputs("\tesac\n}\ncomplete -F _memgate memgate\n", f);
	return ferror(f) ? EXIT_HARNESS : EXIT_PASSED;
}
