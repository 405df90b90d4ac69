/* SPDX-License-Identifier: GPL-2.0-or-later */
/* measure.h - what a sample records: wall and CPU time, cycles, steal, memory footprint. */
#ifndef MG_HW_MEASURE_H
#define MG_HW_MEASURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/** measure_thread_cpu_ns() - CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID). */
int64_t measure_thread_cpu_ns(void);

/** measure_process_cpu_ns() - CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID). */
int64_t measure_process_cpu_ns(void);

/**
 * measure_steal_ticks() - the host-wide steal time from /proc/stat, in USER_HZ ticks: time
 * the hypervisor ran something else while a vCPU of ours wanted to run. 0 when unreadable.
 */
uint64_t measure_steal_ticks(void);

/* One timed region: begin() stores start values, end() turns them into deltas. */
struct measure_span {
	int64_t wall_ns;
	int64_t thread_cpu_ns;
	int64_t process_cpu_ns;
	uint64_t steal_ticks; /* > 0: the VM lost a CPU during the span; mark the sample */
};

/** measure_span_begin() - start @s: the wall clock, thread and process CPU time, steal now. */
void measure_span_begin(struct measure_span *s);

/** measure_span_end() - turn @s's start values into what passed since measure_span_begin(). */
void measure_span_end(struct measure_span *s);

enum measure_cycle_src {
	MEASURE_CYCLES_TSC,  /* reference cycles at the TSC rate, fenced */
	MEASURE_CYCLES_PERF, /* core cycles of this thread, perf_event_open */
};

struct measure_cycles {
	enum measure_cycle_src src;
	int fd; /* perf event, -1 for the TSC */
};

/**
 * measure_cycles_open() - a cycle counter: hardware cycles of this thread through
 * perf_event_open when @want_perf and the host has them, otherwise the TSC. Never fails;
 * measure_cycles_name() says which one was chosen, and results must record it.
 */
void measure_cycles_open(struct measure_cycles *c, bool want_perf);

/** measure_cycles_read() - the counter now (fenced for the TSC). */
uint64_t measure_cycles_read(const struct measure_cycles *c);

/** measure_cycles_name() - "tsc" or "perf:cpu-cycles". */
const char *measure_cycles_name(const struct measure_cycles *c);

/** measure_cycles_close() - close @c's perf event, if it has one. */
void measure_cycles_close(struct measure_cycles *c);

/* Memory footprint, all in KiB except the malloc figures (bytes). */
struct measure_rss {
	uint64_t rss_kib;	/* smaps_rollup Rss */
	uint64_t anon_kib;	/* smaps_rollup Anonymous */
	uint64_t heap_rss_kib;	/* Rss of the [heap] mapping (brk arena) */
	uint64_t peak_rss_kib;	/* getrusage ru_maxrss */
	uint64_t malloc_arena;	/* mallinfo2 arena: bytes obtained with brk */
	uint64_t malloc_in_use; /* mallinfo2 uordblks */
	uint64_t malloc_free;	/* mallinfo2 fordblks */
	uint64_t malloc_mmap;	/* mallinfo2 hblkhd: bytes in mmapped chunks */
};

/* What /proc/PID/smaps says of a process, in KiB. */
struct measure_smaps {
	uint64_t heap_kib; /* Rss of the [heap] mapping (brk arena) */
	uint64_t anon_kib; /* Anonymous of every mapping */
};

/**
 * measure_smaps() - the one reader of /proc/PID/smaps: @pid's heap RSS and anonymous memory
 * (@pid 0: this process). Returns 0 or -errno (the process is gone, or no smaps).
 */
int measure_smaps(pid_t pid, struct measure_smaps *m);

/** measure_rss() - read the footprint of this process. Returns 0 or -errno. */
int measure_rss(struct measure_rss *r);

#endif
