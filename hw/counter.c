/* SPDX-License-Identifier: GPL-2.0-or-later */
/* counter.c - TSC, PMU instruction and callgrind counters around a measured region. */
#include "hw/counter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#include "hw/tsc.h"
#include "util/util.h"

const char *counter_name(enum counter_kind k)
{
	static const char *const names[] = {"tsc", "instructions", "simulated", "auto"};

	return (size_t)k < ARRAY_SIZE(names) ? names[k] : "?";
}

const char *counter_unit(enum counter_kind k)
{
	return k == COUNTER_TSC ? "cycles" : "instructions";
}

int counter_parse(const char *s, enum counter_kind *k)
{
	for (enum counter_kind i = COUNTER_TSC; i <= COUNTER_AUTO; i++)
		if (!strcmp(s, counter_name(i))) {
			*k = i;
			return 0;
		}
	return -EINVAL;
}

/* This thread's user-space instructions, disabled until counter_start(). */
static int open_instructions(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

bool counter_pmu_works(char *why, size_t len)
{
	int fd = open_instructions();
	uint64_t v = 0;
	bool ok;

	if (fd < 0) {
		snprintf(why, len, "perf_event_open(instructions, user space): %s%s",
			 strerror(errno),
			 errno == ENOENT || errno == EOPNOTSUPP ? " (no PMU exposed to this host)"
			 : errno == EACCES || errno == EPERM
			     ? " (kernel.perf_event_paranoid forbids it; run as root or lower it)"
			     : "");
		return false;
	}
	/* Some hypervisors accept the event and never count: ask it to count something. */
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (volatile int i = 0; i < 1000; i++)
		;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ok = read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) && v > 0;
	if (!ok)
		snprintf(why, len, "perf_event_open(instructions) opened but counted nothing");
	close(fd);
	return ok;
}

bool counter_find_valgrind(char *path, size_t len)
{
	const char *p = getenv("PATH");

	while (p && *p) {
		size_t n = strcspn(p, ":");

		snprintf(path, len, "%.*s/valgrind", (int)n, p);
		if (n && !access(path, X_OK))
			return true;
		p += n + (p[n] == ':');
	}
	snprintf(path, len,
		 "valgrind is not on PATH (Debian's package valgrind; ci/install-deps.sh "
		 "installs it)");
	return false;
}

bool counter_under_valgrind(void)
{
	return RUNNING_ON_VALGRIND;
}

int counter_resolve(enum counter_kind asked, enum counter_kind *out, struct mg_err *err)
{
	char why[256], vg[4096];

	*out = asked;
	switch (asked) {
	case COUNTER_TSC:
		return 0;
	case COUNTER_INSTRUCTIONS:
		if (counter_pmu_works(why, sizeof(why)))
			return 0;
		return mg_err_set(err, ENOTSUP,
				  "--counter instructions: %s; --counter simulated counts "
				  "instructions under valgrind instead",
				  why);
	case COUNTER_SIMULATED:
		if (counter_find_valgrind(vg, sizeof(vg)))
			return 0;
		return mg_err_set(err, ENOTSUP, "--counter simulated: %s", vg);
	case COUNTER_AUTO:
	default:
		if (counter_pmu_works(why, sizeof(why)))
			*out = COUNTER_INSTRUCTIONS;
		else if (counter_find_valgrind(vg, sizeof(vg)))
			*out = COUNTER_SIMULATED;
		else
			*out = COUNTER_TSC;
		return 0;
	}
}

int counter_open(struct counter *c, enum counter_kind kind, const char *dump_base,
		 struct mg_err *err)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->fd = -1;
	if (kind == COUNTER_INSTRUCTIONS) {
		c->fd = open_instructions();
		if (c->fd < 0)
			return mg_err_set(err, errno, "perf_event_open(instructions): %s",
					  strerror(errno));
	} else if (kind == COUNTER_SIMULATED) {
		if (!RUNNING_ON_VALGRIND)
			return mg_err_set(
			    err, ENOTSUP,
			    "the simulated counter needs this process under callgrind");
		if (!dump_base || !dump_base[0] || strlen(dump_base) >= sizeof(c->dump_base) - 16)
			return mg_err_set(err, EINVAL, "the simulated counter has no dump file");
		snprintf(c->dump_base, sizeof(c->dump_base), "%s", dump_base);
	} else if (kind != COUNTER_TSC) {
		return mg_err_set(err, EINVAL, "counter %s cannot be opened", counter_name(kind));
	}
	return 0;
}

/*
 * Callgrind's client requests, each in a function of its own (valgrind.h's macros nest four
 * deep), inlined: a call would be counted in the figures they bracket.
 */
static inline __attribute__((always_inline)) void sim_collect_on(void)
{
	CALLGRIND_ZERO_STATS;
	CALLGRIND_TOGGLE_COLLECT;
}

static inline __attribute__((always_inline)) void sim_collect_off(void)
{
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS;
}

void counter_start(struct counter *c)
{
	switch (c->kind) {
	case COUNTER_INSTRUCTIONS:
		ioctl(c->fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(c->fd, PERF_EVENT_IOC_ENABLE, 0);
		break;
	case COUNTER_SIMULATED:
		/* Nothing counted before this point, and collection on from here. */
		sim_collect_on();
		break;
	default:
		c->t0 = tsc_begin();
		break;
	}
}

/* The value of event @name among @events (a callgrind `events:` line), or 0. */
static double event_value(const char *events, const char *values, const char *name)
{
	char ev[512], *save = NULL, *tok;
	const char *v = values;
	double got = 0;

	snprintf(ev, sizeof(ev), "%s", events);
	for (tok = strtok_r(ev, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *end;
		double x = strtod(v, &end);

		/* Trailing zeros are left out of a cost line: a missing value is 0. */
		if (end == v)
			x = 0;
		v = end;
		if (!strcmp(tok, name))
			got = x;
	}
	return got;
}

int counter_parse_dump(const char *text, struct counter_reading *r)
{
	char events[512] = "", values[512] = "";
	const char *line = text;

	while (line && *line) {
		size_t n = strcspn(line, "\n");

		if (!strncmp(line, "events:", 7))
			snprintf(events, sizeof(events), "%.*s", (int)(n - 7), line + 7);
		else if (!strncmp(line, "summary:", 8))
			snprintf(values, sizeof(values), "%.*s", (int)(n - 8), line + 8);
		else if (!strncmp(line, "totals:", 7) && !values[0])
			snprintf(values, sizeof(values), "%.*s", (int)(n - 7), line + 7);
		line += n + (line[n] == '\n');
	}
	if (!strstr(events, "Ir") || !values[0])
		return -EINVAL;
	r->value = event_value(events, values, "Ir");
	r->d1_misses = event_value(events, values, "D1mr") + event_value(events, values, "D1mw");
	r->ll_misses = event_value(events, values, "DLmr") + event_value(events, values, "DLmw");
	return 0;
}

int counter_stop(struct counter *c, struct counter_reading *r)
{
	uint64_t v = 0;
	char path[4200];
	int fd, ret;
	ssize_t got;

	memset(r, 0, sizeof(*r));
	switch (c->kind) {
	case COUNTER_INSTRUCTIONS:
		ioctl(c->fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return -EIO;
		r->value = (double)v;
		return 0;
	case COUNTER_SIMULATED:
		sim_collect_off();
		/* The dump is written before the request returns; this thread's is .N-01. */
		snprintf(path, sizeof(path), "%s.%u-01", c->dump_base, ++c->dumps);
		/* Its head, into a buffer of one size: a malloc of the file's size (which varies
		 * with the pid and the costs printed) would move the heap, and so the next misses.
		 */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		got = read(fd, c->head, sizeof(c->head) - 1);
		close(fd);
		unlink(path);
		if (got < 0)
			return -EIO;
		c->head[got] = '\0';
		ret = counter_parse_dump(c->head, r);
		return ret;
	default:
		r->value = (double)(tsc_end() - c->t0);
		return 0;
	}
}

void counter_close(struct counter *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void counter_span_begin(const struct counter *c, struct measure_span *s)
{
	if (c->kind == COUNTER_SIMULATED)
		memset(s, 0, sizeof(*s));
	else
		measure_span_begin(s);
}

void counter_span_end(const struct counter *c, struct measure_span *s)
{
	if (c->kind != COUNTER_SIMULATED)
		measure_span_end(s);
}
