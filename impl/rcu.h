/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rcu.h - a userspace RCU in the manner of QEMU's util/rcu.c, with its call_rcu thread. */
#ifndef MG_IMPL_RCU_H
#define MG_IMPL_RCU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Like QEMU's, this RCU is the process's: one grace-period counter, one list of readers,
 * one call_rcu thread. rcu_start() and rcu_stop() bracket its use.
 */

enum rcu_trim {
	RCU_TRIM_NONE,	      /* never malloc_trim */
	RCU_TRIM_EVERY_BATCH, /* malloc_trim(4 MiB) after each batch: the patch in the 2017
				 malloc_trim thread */
	RCU_TRIM_IDLE,	      /* only when the queue is empty, before sleeping: what QEMU kept */
};
#define RCU_TRIM_POLICIES 3

/* The policies' names, in enum order, for --impl rcu.trim and the reports. */
extern const char *const rcu_trim_names[RCU_TRIM_POLICIES];

/** rcu_trim_name() - "none", "every-batch" or "idle". */
const char *rcu_trim_name(enum rcu_trim t);

/** rcu_trim_parse() - the policy named @name, or -1 when it names none. */
int rcu_trim_parse(const char *name);

/* The batching rule: wait for this many callbacks, or this many sleeps of this length. */
#define RCU_CALL_MIN_SIZE 30
#define RCU_BATCH_SLEEPS 5
#define RCU_BATCH_SLEEP_NS 10000000
/* What the trims keep at the top of the heap (QEMU's argument). */
#define RCU_TRIM_PAD (4u << 20)

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

struct rcu_stats {
	uint64_t batches; /* synchronize_rcu() + callbacks runs */
	uint64_t callbacks;
	uint64_t trims;
	uint64_t trims_not_idle;   /* trims with callbacks still queued */
	uint64_t trim_ns;	   /* time inside malloc_trim */
	uint64_t big_lock_wait_ns; /* the RCU thread waiting for the big lock */
};

/**
 * rcu_start() - start the call_rcu thread with @trim, running callbacks under @big_lock
 * (may be NULL). Returns 0 or -errno (-EBUSY when already started). The trim policies run
 * whatever the allocator; where rcu_trim_unsupported() says why, their malloc_trim calls
 * are counted but give nothing back.
 */
int rcu_start(enum rcu_trim trim, pthread_mutex_t *big_lock);

/** rcu_stop() - run what is queued, stop the thread. Call without the big lock. */
void rcu_stop(void);

/** rcu_register_thread() - make the calling thread a reader; before its first read lock. */
void rcu_register_thread(void);

/** rcu_unregister_thread() - the calling thread reads no more; outside any read section. */
void rcu_unregister_thread(void);

/** rcu_read_lock() - enter a read-side critical section; nests; never blocks. */
void rcu_read_lock(void);

/** rcu_read_unlock() - leave it. */
void rcu_read_unlock(void);

/**
 * synchronize_rcu() - wait until every reader that was inside a critical section when it
 * began has left it. Must not be called inside one.
 */
void synchronize_rcu(void);

/** call_rcu() - run @func(@head) after a grace period, on the call_rcu thread. */
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));

/** drain_call_rcu() - wait until every callback queued before it has run. No big lock held. */
void drain_call_rcu(void);

/** rcu_get_stats() - what the call_rcu thread did since rcu_start(). */
void rcu_get_stats(struct rcu_stats *out);

/**
 * rcu_wait_trims() - wait until the call_rcu thread has trimmed @n times in all, at most
 * @timeout_ms: an idle trim comes when the thread finds the queue empty after its sleep,
 * which on a loaded machine can be well after the last callback ran. Returns whether it did.
 */
bool rcu_wait_trims(uint64_t n, unsigned int timeout_ms);

/**
 * rcu_wait_idle() - wait, at most @timeout_ms, until the call_rcu thread has run everything
 * queued, found the queue empty after its sleep (and, under the idle policy, trimmed) and waits
 * for the next call_rcu(). Call it after drain_call_rcu(): the thread is then past the batch
 * that drained. Returns whether it got there.
 */
bool rcu_wait_idle(unsigned int timeout_ms);

/**
 * rcu_trim_unsupported() - NULL when malloc_trim works here, else why not: the process's
 * malloc comes from another library than the C library's (jemalloc or tcmalloc linked or
 * LD_PRELOADed), whose malloc_trim would trim an arena nothing allocates from. QEMU's
 * configure turns CONFIG_MALLOC_TRIM off with those allocators for the same reason.
 */
const char *rcu_trim_unsupported(void);

/* Publish and read a pointer: the store releases what was written before it, the load
 * consumes it (acquire here: what C11 compilers give for consume). */
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define rcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)

#endif
