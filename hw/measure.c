/* SPDX-License-Identifier: GPL-2.0-or-later */
/* measure.c - clocks, cycle counters, steal time and RSS readers for the cases. */
#include "hw/measure.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hw/tsc.h"
#include "util/text.h"
#include "util/util.h"

int64_t measure_thread_cpu_ns(void)
{
	return util_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int64_t measure_process_cpu_ns(void)
{
	return util_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

uint64_t measure_steal_ticks(void)
{
	unsigned long long f[8] = {0};
	FILE *f_stat = fopen("/proc/stat", "re");
	int n;

	if (!f_stat)
		return 0;
	/* "cpu  user nice system idle iowait irq softirq steal ...": steal is the 8th field. */
	n = fscanf(f_stat, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
		   &f[3], &f[4], &f[5], &f[6], &f[7]);
	fclose(f_stat);
	return n == 8 ? f[7] : 0;
}

void measure_span_begin(struct measure_span *s)
{
	s->steal_ticks = measure_steal_ticks();
	s->process_cpu_ns = measure_process_cpu_ns();
	s->thread_cpu_ns = measure_thread_cpu_ns();
	s->wall_ns = util_now_ns();
}

void measure_span_end(struct measure_span *s)
{
	/* Reverse order of begin(), so each span encloses the ones inside it. */
	s->wall_ns = util_now_ns() - s->wall_ns;
	s->thread_cpu_ns = measure_thread_cpu_ns() - s->thread_cpu_ns;
	s->process_cpu_ns = measure_process_cpu_ns() - s->process_cpu_ns;
	s->steal_ticks = measure_steal_ticks() - s->steal_ticks;
}

void measure_cycles_open(struct measure_cycles *c, bool want_perf)
{
	struct perf_event_attr attr;

	c->src = MEASURE_CYCLES_TSC;
	c->fd = -1;
	if (!want_perf)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_hv = 1;
	/* This thread, any CPU. Many VMs expose no PMU: the call fails and the TSC stands in. */
	c->fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd >= 0)
		c->src = MEASURE_CYCLES_PERF;
}

uint64_t measure_cycles_read(const struct measure_cycles *c)
{
	uint64_t v;

	if (c->src == MEASURE_CYCLES_TSC)
		return tsc_end();
	if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

const char *measure_cycles_name(const struct measure_cycles *c)
{
	return c->src == MEASURE_CYCLES_PERF ? "perf:cpu-cycles" : "tsc";
}

void measure_cycles_close(struct measure_cycles *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int measure_smaps(pid_t pid, struct measure_smaps *m)
{
	char path[64], line[512];
	bool heap = false;
	unsigned long long kib;
	FILE *f;

	memset(m, 0, sizeof(*m));
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line: "start-end perms offset dev inode [path]"; its fields
		 * follow, each a "Name:" first. */
		size_t word = strcspn(line, " ");

		if (word && line[word - 1] != ':')
			heap = strstr(line, "[heap]") != NULL;
		else if (heap && sscanf(line, "Rss: %llu kB", &kib) == 1)
			m->heap_kib += kib;
		else if (sscanf(line, "Anonymous: %llu kB", &kib) == 1)
			m->anon_kib += kib;
	}
	fclose(f);
	return 0;
}

int measure_rss(struct measure_rss *r)
{
	char *roll = text_read_file("/proc/self/smaps_rollup", 8192);
	struct mallinfo2 mi = mallinfo2();
	struct measure_smaps sm;
	struct rusage ru;

	memset(r, 0, sizeof(*r));
	if (!roll)
		return -errno;
	text_meminfo_kib(roll, "Rss", &r->rss_kib);
	text_meminfo_kib(roll, "Anonymous", &r->anon_kib);
	free(roll);
	if (!measure_smaps(0, &sm))
		r->heap_rss_kib = sm.heap_kib;
	if (!getrusage(RUSAGE_SELF, &ru))
		r->peak_rss_kib = (uint64_t)ru.ru_maxrss;
	r->malloc_arena = mi.arena;
	r->malloc_in_use = mi.uordblks;
	r->malloc_free = mi.fordblks;
	r->malloc_mmap = mi.hblkhd;
	return 0;
}
