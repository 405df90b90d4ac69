/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.h - two memgate builds measured in turn, case by case, in one run: the per-commit gate. */
#ifndef MG_JUDGE_AB_H
#define MG_JUDGE_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "judge/calibration.h"
#include "judge/compare.h"
#include "judge/history.h"
#include "judge/rules.h"
#include "util/err.h"

/* The protocol two builds speak: `memgate ab-protocol` prints this line. */
#define AB_PROTOCOL_LINE "memgate ab-protocol 1"

#define AB_MAX_ARGS 64

/* One side: a memgate binary and the run options for it alone. */
struct ab_side {
	const char *role;	 /* "base" or "head" */
	char spec[512];		 /* as given: "build/memgate --impl memslots.update=swap" */
	char *argv[AB_MAX_ARGS]; /* its words, as a POSIX shell splits them, into words[] */
	int argc;
	int bin; /* argv[bin] is the memgate: the subcommand goes after it (wrappers before) */
	char words[1024];
	char version[64]; /* what --version said */
	/* `MEMGATE vm [VM OPTIONS] [--]`: the side is a guest (a kernel of its own, say); its
	 * run's options go after argv[vm_end], the "--" (argc when there is none). */
	bool vm;
	int vm_end;
};

struct ab_opts {
	const char *const *common; /* options both sides' `run` and `list` get (-s, -k, ...) */
	int n_common;
	unsigned int rounds;	      /* first stage: every shared perf case */
	unsigned int confirm_rounds;  /* second stage: the cases of flagged metrics, fresh */
	unsigned int samples, warmup; /* per round, in each side's process */
	uint64_t seed;
	double timeout_s;    /* per side's process */
	bool timeout_given;  /* --timeout was given: it bounds a guest side's whole run too */
	const char *context; /* base and head, kernel and glibc: for every message */
	const struct rules *rules;
	const char *workdir;		 /* where the sides' result files go */
	const struct calibration *calib; /* this host class's noise (NULL: none calibrated) */
	bool qemu_only; /* the sides differ in their QEMU only (ab_sides_differ_in_qemu_only()):
			 * the qemu suite's reference figures are context, not judged */
	bool guests;	/* both sides are guests (ab_side.vm): a round is a boot of each,
			 * running every case; memgate's own figures are context */
	size_t gated_metrics; /* set by ab_run(): the family alpha is split over */
};

/* What `memgate ab` found. */
struct ab_outcome {
	struct compare_results verdicts; /* every shared metric */
	struct result_set extra;	 /* head's checks, and SKIPs of one-sided cases */
	unsigned int cases_compared;
	size_t perf_listed[2]; /* perf cases base and head listed for the selection */
	int interrupted;       /* the signal that stopped it, 0 when none */
	json_t *keep_lists[2]; /* the sides' lists and head's checks: the names above */
	struct hist_run keep_checks;
	struct hist_run keep_guests[2]; /* guests: each side's first run, named in the extras */
	/* guests: rounds whose guest did not boot or run its command (each an ERROR in extra), and
	 * the first one's words with its console's end, for the exit when nothing was measured */
	unsigned int boots_failed;
	char boot_error[1200];
};

/** ab_side_qemu() - @s's --qemu and --qemu-preload values, "" for the one not given. */
void ab_side_qemu(const struct ab_side *s, const char **qemu, const char **preload);

/**
 * ab_sides_differ_in_qemu_only() - are @a and @b the same memgate with the same options but
 * for --qemu and --qemu-preload, and different there? Then an A/B of them judges QEMU.
 */
bool ab_sides_differ_in_qemu_only(const struct ab_side *a, const struct ab_side *b);

/**
 * ab_side_parse() - split @spec ("BINARY [OPTIONS]") into @s. Returns 0 or -EINVAL with @err.
 */
int ab_side_parse(struct ab_side *s, const char *role, const char *spec, struct mg_err *err);

/**
 * ab_check_protocol() - does @s speak the A/B protocol? Returns 0, or -EPROTO with @err
 * saying what it is instead (not executable, not a memgate, a memgate too old).
 */
int ab_check_protocol(struct ab_side *s, const struct ab_opts *o, struct mg_err *err);

/**
 * ab_run() - the rounds: for every perf case both sides have, base and head in turn (base,
 * head, head, base, ...), each a fresh process of its binary; flagged metrics get fresh
 * rounds; then the run-wide correction. Head's checks run once. Fills @out (release it).
 * Returns 0, -EINTR when a signal stopped it (@out holds what was judged), or -errno with
 * @err when a side failed as a program (@out empty).
 */
int ab_run(struct ab_side *base, struct ab_side *head, const struct ab_opts *o,
	   struct ab_outcome *out, struct mg_err *err);

/**
 * ab_side_guest() - is @s `MEMGATE vm ...` (after ab_check_protocol() found the memgate)?
 * Sets @s->vm and @s->vm_end.
 */
bool ab_side_guest(struct ab_side *s);

/** ab_outcome_release() - free what ab_run() made. */
void ab_outcome_release(struct ab_outcome *out);

#endif
