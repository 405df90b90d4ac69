/* SPDX-License-Identifier: GPL-2.0-or-later */
/* counter.h - what a CPU-bound region costs: TSC cycles, retired instructions, simulated counts. */
#ifndef MG_HW_COUNTER_H
#define MG_HW_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/measure.h"
#include "util/err.h"

/*
 * The counters a CPU-bound case can be measured with (`--counter`):
 *   tsc           reference cycles, fenced: wall time at the TSC rate, so it moves with the
 *                 load, the frequency and the layout the process happened to get;
 *   instructions  user-space instructions retired, from the PMU (perf_event_open): the same
 *                 work counts the same on a loaded machine, where the host exposes a PMU;
 *   simulated     instructions, D1 and LL misses counted by valgrind's callgrind around
 *                 exactly the region (client requests), on a fixed cache geometry: no PMU
 *                 needed, the same on every run of the same binary.
 * auto resolves to instructions where the PMU answers, else simulated where valgrind is
 * installed, else tsc.
 */
enum counter_kind {
	COUNTER_TSC,
	COUNTER_INSTRUCTIONS,
	COUNTER_SIMULATED,
	COUNTER_AUTO, /* only as asked: counter_resolve() turns it into one of the above */
};

/* The cache geometry every simulated run uses, whatever the host has: I1 and D1 32 KiB 8-way,
 * LL 8 MiB 16-way, 64-byte lines. The host's own would make counts differ between hosts. */
#define COUNTER_SIM_I1 "--I1=32768,8,64"
#define COUNTER_SIM_D1 "--D1=32768,8,64"
#define COUNTER_SIM_LL "--LL=8388608,16,64"

/* What of a callgrind dump is read: its header, which holds the summary: line. */
#define COUNTER_DUMP_HEAD 8192

/* One reading of a region. The misses are counted only by the simulated counter (else 0). */
struct counter_reading {
	double value; /* cycles or instructions */
	double d1_misses, ll_misses;
};

struct counter {
	enum counter_kind kind;
	int fd;			      /* the perf event (instructions); -1 otherwise */
	uint64_t t0;		      /* the TSC at counter_start() */
	unsigned int dumps;	      /* callgrind dumps made so far: the next is dump_base.N+1 */
	char dump_base[4096];	      /* callgrind's --callgrind-out-file (simulated) */
	char head[COUNTER_DUMP_HEAD]; /* a dump's head, where its summary: line is */
};

/** counter_name() - "tsc", "instructions", "simulated", "auto". */
const char *counter_name(enum counter_kind k);

/** counter_unit() - what a reading counts: "cycles" (tsc) or "instructions". */
const char *counter_unit(enum counter_kind k);

/** counter_parse() - the kind named @s. Returns 0, or -EINVAL when @s names none. */
int counter_parse(const char *s, enum counter_kind *k);

/**
 * counter_pmu_works() - does perf_event_open count this thread's user-space instructions?
 * When not, @why (of @len bytes) says what the kernel answered.
 */
bool counter_pmu_works(char *why, size_t len);

/**
 * counter_find_valgrind() - the valgrind on PATH into @path (of @len bytes). Returns true when
 * there is one; false with @path holding why not.
 */
bool counter_find_valgrind(char *path, size_t len);

/**
 * counter_resolve() - the counter @asked means on this host: auto as documented above, the
 * others as they are when they can count here. Returns 0 with @out, or -ENOTSUP with @err
 * saying why the counter asked for cannot count here and what to use instead.
 */
int counter_resolve(enum counter_kind asked, enum counter_kind *out, struct mg_err *err);

/** counter_under_valgrind() - is this process running under valgrind? */
bool counter_under_valgrind(void);

/**
 * counter_open() - a counter of @kind (not auto). For simulated, this process must run under
 * callgrind with --callgrind-out-file=@dump_base and --collect-atstart=no. Returns 0, or
 * -errno with @err.
 */
int counter_open(struct counter *c, enum counter_kind kind, const char *dump_base,
		 struct mg_err *err);

/** counter_start() - begin a measured region. */
void counter_start(struct counter *c);

/**
 * counter_stop() - end the region begun by counter_start(): its count into @r. Returns 0, or
 * -errno when the count could not be read (a simulated dump that is missing or unreadable).
 */
int counter_stop(struct counter *c, struct counter_reading *r);

/**
 * counter_span_begin() - measure_span_begin() of @s around a counted region, but under the
 * simulated counter none: reading /proc/stat touches as many bytes as its figures have digits,
 * which would move the next misses, and no time can be stolen from a simulated count.
 */
void counter_span_begin(const struct counter *c, struct measure_span *s);

/** counter_span_end() - the end of counter_span_begin()'s span. */
void counter_span_end(const struct counter *c, struct measure_span *s);

/** counter_close() - release what counter_open() took. */
void counter_close(struct counter *c);

/**
 * counter_parse_dump() - the totals of one callgrind dump in @text: Ir, D1 misses (D1mr +
 * D1mw) and LL data misses (DLmr + DLmw) into @r. Returns 0, or -EINVAL when @text has no
 * `events:` line naming Ir or no `summary:`/`totals:` line.
 */
int counter_parse_dump(const char *text, struct counter_reading *r);

#endif
