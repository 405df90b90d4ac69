/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu.h - the host's QEMU: which binary, its version, and one timed launch of it over QMP. */
#ifndef MG_RUN_QEMU_H
#define MG_RUN_QEMU_H

#include <limits.h>
#include <stdbool.h>

#include "util/err.h"

struct qemu_bin {
	char path[PATH_MAX]; /* "" when there is none */
	char version[128];   /* the first line of `-version` after "QEMU emulator version " */
	char why[600];	     /* when there is none: why, and what to do */
};

/* The system emulator for this machine, as Debian's qemu-system-x86 installs it. */
#define QEMU_DEFAULT_NAME "qemu-system-x86_64"

/**
 * qemu_find() - the binary @path names, or with @path NULL the first QEMU_DEFAULT_NAME on
 * PATH, with its version. A @path that is missing, not executable or not a QEMU (no version
 * line) is -ENOENT, -EACCES or -EINVAL with @err saying which; nothing on PATH is 0 with
 * @q->path empty and @q->why saying what to install.
 */
int qemu_find(struct qemu_bin *q, const char *path, struct mg_err *err);

/* Polls kept of QEMU's resident memory during a launch: at 1 ms, 2 s of start-up, then every
 * other one dropped and the interval doubled whenever the trace is full. */
#define QEMU_TRACE 2048

/* What one launch did. */
struct qemu_launch {
	double wall_ms;		/* fork to reaped */
	double cpu_ms;		/* the CPU time of all its threads, user and system (wait4) */
	unsigned int max_touch; /* the most of its preallocation threads alive at once before
				 * QMP spoke: tasks named "touch_pages" (-name debug-threads=on) */
	bool greeted;		/* QMP's greeting came */
	int status;		/* waitpid()'s status */
	char output[1024];	/* the tail of QEMU's stderr: its own error text */
	char placement[2048];	/* qemu_launch_placed(): numa_maps's bound mappings */
	/* QEMU's resident memory, VmRSS + HugetlbPages of /proc/PID/status (hugetlb pages are
	 * not in VmRSS), KiB, at each poll from its start to QMP's greeting (the last entry is
	 * read at the greeting), with the poll's time since the launch, ms. */
	unsigned int n_trace;
	double trace_ms[QEMU_TRACE];
	unsigned long trace_kib[QEMU_TRACE];
};

/**
 * qemu_launch() - run @q with nothing but one memory backend, `-object @object`, and QMP on
 * stdio fed the capabilities handshake and `quit`, as a management layer starts a guest and
 * stops it at once: `-machine none -nodefaults -nographic -monitor none -qmp stdio`. QEMU dies with
 * the calling process (PR_SET_PDEATHSIG) and is killed after
 * @timeout_s. Returns 0 when it exited 0; -EIO when it exited otherwise (its error text is in
 * @out->output and @err), -ETIMEDOUT, or another -errno with @err.
 */
int qemu_launch(const struct qemu_bin *q, const char *object, double timeout_s,
		struct qemu_launch *out, struct mg_err *err);

/**
 * qemu_fill_ms() - how long @l took to make resident the middle three quarters of @bytes (from
 * the last poll under @bytes/8 above the least seen, QEMU's own, to the first at 7/8), times 4/3:
 * its preallocation's time, from the memory itself. An upper bound on the true fill: each end is
 * the poll before a crossing or the first after, so a late poll lengthens it, never shortens it.
 * Negative when the trace never reached 7/8 (nothing preallocated by the greeting).
 */
double qemu_fill_ms(const struct qemu_launch *l, unsigned long long bytes);

/**
 * qemu_launch_placed() - qemu_launch() with the -object of each of @objects (NULL-ended),
 * which quits only once it has read, at QMP's greeting (every backend preallocated by then),
 * the lines of QEMU's /proc/PID/numa_maps whose policy is not the default into
 * @out->placement: where each bound backend's pages are. The same returns.
 */
int qemu_launch_placed(const struct qemu_bin *q, const char *const *objects, double timeout_s,
		       struct qemu_launch *out, struct mg_err *err);

#endif
