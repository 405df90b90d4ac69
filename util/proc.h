/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h - every child process memgate starts: the one place that forks. A child dies with
 * its parent, starts with default signal dispositions and an empty mask, and is watched
 * against a deadline: its pipes read as they fill, the tail of its stderr kept, a kill and a
 * reap when time runs out or a stop signal arrives. Also the stop signals themselves.
 */
#ifndef MG_UTIL_PROC_H
#define MG_UTIL_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "util/err.h"

/* What ends a run early with its reports written: Ctrl-C, kill, a lost terminal (a Jenkins
 * agent's), SIGQUIT. */
#define PROC_N_STOP_SIGNALS 4
extern const int proc_stop_signals[PROC_N_STOP_SIGNALS];

/*
 * The one owner of the stop signals. Between proc_stops_defer() and proc_stops_resume()
 * (nested: the outermost pair counts) a stop signal only sets proc_stop, for the code to
 * notice, stop what it started and write what it measured. Outside, a stop signal runs the
 * function proc_stops_on_fatal() named, then does what it did before.
 */
extern volatile sig_atomic_t proc_stop; /* the signal that came while deferred; 0: none */

/** proc_stops_defer() - from now on a stop signal only sets proc_stop (0 at the outermost). */
void proc_stops_defer(void);

/** proc_stops_resume() - undo one proc_stops_defer(); the outermost puts the old actions back. */
void proc_stops_resume(void);

/** proc_stops_on_fatal() - @fn runs (async-signal-safe) when a stop signal ends the process. */
void proc_stops_on_fatal(void (*fn)(void));

/* Where a child's standard stream goes. */
enum proc_stream {
	PROC_INHERIT = 0, /* the caller's own (the default) */
	PROC_NULL,	  /* /dev/null */
	PROC_PIPE,	  /* a pipe to the caller: stdin fed through proc.in, stdout read to
			   * on_out, stderr's tail kept in proc.tail */
	PROC_TO_ERR,	  /* stdout only: wherever stderr goes */
	PROC_FD,	  /* stdout and stderr only: the spec's out_fd / err_fd */
};

/* The bytes of a child's stderr a proc keeps: enough for a backtrace or an assertion. */
#define PROC_TAIL_BYTES 8192

struct proc_spec {
	/* Exec @argv (argv[0] found on PATH when it has no slash), or, with @argv NULL, call
	 * @fn in the child and exit with what it returns. @fn gets the write end of the data
	 * pipe when @data_pipe, -1 otherwise. */
	const char *const *argv;
	int (*fn)(void *arg, int data_fd);
	void *arg;
	enum proc_stream in, out, err;
	int out_fd, err_fd; /* for PROC_FD */
	bool data_pipe;	    /* a pipe from @fn to the caller's on_data */
	bool own_group;	    /* its own process group: a kill takes whatever it started too */
	bool close_others;  /* exec only: close every descriptor from 3 on first */
};

struct proc {
	pid_t pid;
	int pid_fd;		/* to poll for its end; -1 without pidfd_open */
	int in, out, data, err; /* the caller's ends of the pipes; -1 when none or closed */
	bool group, exited;
	int status;	     /* waitpid()'s, once exited */
	struct rusage usage; /* what it and its reaped children used, once exited (wait4()) */
	bool quiet_at_end;   /* every pipe had closed when a watch ended in a kill */
	int64_t started_ns;
	char tail[2 * PROC_TAIL_BYTES]; /* the last bytes of stderr (PROC_PIPE), not NUL-ended */
	size_t tail_len;
	/* Set by the caller after proc_start(), all optional: what arrived on stdout and on the
	 * data pipe; @on_tick is called before every wait and returns the longest wait it
	 * allows in ms, or -1 for no limit. */
	void (*on_out)(void *arg, const char *data, size_t n);
	void (*on_data)(void *arg, const char *data, size_t n);
	int (*on_tick)(void *arg);
	void *cb_arg;
};

/**
 * proc_start() - fork the child @s describes. It dies with the caller (PR_SET_PDEATHSIG,
 * surviving execve), with default dispositions for every signal the caller may have caught or
 * ignored. Nothing buffered in stdio is printed twice. Returns 0, or -errno with @err.
 */
int proc_start(struct proc *p, const struct proc_spec *s, struct mg_err *err);

/**
 * proc_watch() - read the child's pipes until it has exited and closed them, @deadline_ns
 * (util_now_ns()) passes or *@stop (may be NULL) is set, by a signal handler or another
 * thread: a stop is seen within 200 ms. Returns 0; or -ETIMEDOUT / -EINTR with the child (its
 * group when it has one) killed, reaped and what it wrote before the kill read.
 */
int proc_watch(struct proc *p, int64_t deadline_ns, const volatile sig_atomic_t *stop);

/** proc_kill() - SIGKILL the child (its group), reap it and read what is left in its pipes. */
void proc_kill(struct proc *p);

/** proc_close() - close the caller's ends of the pipes; the child must have been reaped. */
void proc_close(struct proc *p);

/**
 * proc_tail_text() - the last PROC_TAIL_BYTES of the child's stderr as text a console and a
 * report can show: a NUL would cut it short and an escape sequence would drive the reader's
 * terminal, so both, and every other control byte but newline and tab, become '?'. Returns a
 * malloc()ed string ("" when nothing came), NULL without memory.
 */
char *proc_tail_text(const struct proc *p);

/** proc_status_text() - "exited with status N" / "killed by signal N (SIGX)" into @buf. */
const char *proc_status_text(int status, char *buf, size_t len);

#endif
