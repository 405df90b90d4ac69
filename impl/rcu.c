/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rcu.c - grace periods, readers, and the call_rcu thread with its batching and trims. */
#include "impl/rcu.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/text.h"
#include "util/util.h"

const char *const rcu_trim_names[RCU_TRIM_POLICIES] = {
    [RCU_TRIM_NONE] = "none",
    [RCU_TRIM_EVERY_BATCH] = "every-batch",
    [RCU_TRIM_IDLE] = "idle",
};

const char *rcu_trim_name(enum rcu_trim t)
{
	return (unsigned int)t < RCU_TRIM_POLICIES ? rcu_trim_names[t] : "?";
}

int rcu_trim_parse(const char *name)
{
	return text_index(rcu_trim_names, RCU_TRIM_POLICIES, name);
}

/* ---- events: a flag with a condition variable, set by one side and waited on by the other */

struct event {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool set;
};

/* clang-format off */
#define EVENT_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false}
/* clang-format on */

static void event_set(struct event *e)
{
	pthread_mutex_lock(&e->lock);
	e->set = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void event_reset(struct event *e)
{
	pthread_mutex_lock(&e->lock);
	e->set = false;
	pthread_mutex_unlock(&e->lock);
}

static void event_wait(struct event *e)
{
	pthread_mutex_lock(&e->lock);
	while (!e->set)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

/* ---- readers and grace periods ------------------------------------------------------------ */

/*
 * A full barrier. ThreadSanitizer cannot model standalone fences, so its build orders the
 * same points with a seq_cst read-modify-write of one shared word: every barrier then
 * synchronises with the one before it, which it can see (on x86 both are a locked
 * instruction or mfence: full barriers).
 */
#if defined(__SANITIZE_THREAD__)
static unsigned long fence_word;
#define smp_mb() ((void)__atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST))
#else
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* Bit 0 set: a reader's counter is a snapshot of this, so 0 always means "not reading". */
#define RCU_GP_LOCKED 1UL
#define RCU_GP_CTR 2UL

struct rcu_reader {
	unsigned long ctr;  /* 0 outside a section, else rcu_gp_ctr when it entered */
	bool waiting;	    /* synchronize_rcu() waits for this reader: wake it on unlock */
	unsigned int depth; /* nesting */
	struct rcu_reader *next;
};

static unsigned long rcu_gp_ctr = RCU_GP_LOCKED;
static __thread struct rcu_reader reader;
static struct rcu_reader *readers;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static struct event gp_event = EVENT_INIT;

void rcu_register_thread(void)
{
	pthread_mutex_lock(&registry_lock);
	reader.next = readers;
	readers = &reader;
	pthread_mutex_unlock(&registry_lock);
}

void rcu_unregister_thread(void)
{
	pthread_mutex_lock(&registry_lock);
	for (struct rcu_reader **p = &readers; *p; p = &(*p)->next) {
		if (*p == &reader) {
			*p = reader.next;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

void rcu_read_lock(void)
{
	if (reader.depth++ > 0)
		return;
	__atomic_store_n(&reader.ctr, __atomic_load_n(&rcu_gp_ctr, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	/* Pairs with the fence in synchronize_rcu() before it reads the counters: either the
	 * writer sees this counter, or this reader sees everything published before the flip. */
	smp_mb();
}

void rcu_read_unlock(void)
{
	if (--reader.depth > 0)
		return;
	/* Release: every read of the section is done before the writer can see it ended. */
	__atomic_store_n(&reader.ctr, 0, __ATOMIC_RELEASE);
	/* Pairs with the fence in wait_for_readers() between setting "waiting" and reading the
	 * counter: either it sees ctr == 0, or this sees waiting and wakes it. */
	smp_mb();
	if (__atomic_load_n(&reader.waiting, __ATOMIC_RELAXED)) {
		__atomic_store_n(&reader.waiting, false, __ATOMIC_RELAXED);
		event_set(&gp_event);
	}
}

/* A reader that entered before the flip to @gp and has not left yet. */
static bool reader_old(const struct rcu_reader *r, unsigned long gp)
{
	unsigned long v = __atomic_load_n(&r->ctr, __ATOMIC_ACQUIRE);

	return v && v != gp;
}

/* With registry_lock held; drops it while sleeping so that readers can come and go. */
static void wait_for_readers(unsigned long gp)
{
	for (;;) {
		bool old = false;

		event_reset(&gp_event);
		for (struct rcu_reader *r = readers; r; r = r->next)
			__atomic_store_n(&r->waiting, true, __ATOMIC_RELAXED);
		/* Pairs with the fence in rcu_read_unlock(). */
		smp_mb();
		for (struct rcu_reader *r = readers; r; r = r->next) {
			if (reader_old(r, gp))
				old = true;
			else
				__atomic_store_n(&r->waiting, false, __ATOMIC_RELAXED);
		}
		if (!old)
			return;
		pthread_mutex_unlock(&registry_lock);
		event_wait(&gp_event);
		pthread_mutex_lock(&registry_lock);
	}
}

void synchronize_rcu(void)
{
	unsigned long gp;

	pthread_mutex_lock(&sync_lock);
	pthread_mutex_lock(&registry_lock);
	/* Pairs with the fence in rcu_read_lock(): what the caller unpublished before this is
	 * visible to any reader that enters after the flip below. */
	smp_mb();
	gp = __atomic_load_n(&rcu_gp_ctr, __ATOMIC_RELAXED) + RCU_GP_CTR;
	__atomic_store_n(&rcu_gp_ctr, gp, __ATOMIC_RELAXED);
	wait_for_readers(gp);
	pthread_mutex_unlock(&registry_lock);
	pthread_mutex_unlock(&sync_lock);
}

/* ---- call_rcu: a queue many threads fill and one thread drains ---------------------------- */

static struct {
	pthread_mutex_t lock; /* the list; producers hold it for a few stores */
	struct rcu_head *head, *tail;
	unsigned long count; /* queued and not yet taken by a batch */
	struct event ready;  /* set on every enqueue: the thread may have gone idle */
	pthread_t thread;
	bool running, stop;
	bool idle; /* the thread found the queue empty after its sleep and waits for a call */
	enum rcu_trim trim;
	pthread_mutex_t *big_lock;
	struct rcu_stats stats; /* written by the thread, read under stats_lock */
	pthread_mutex_t stats_lock;
} calls = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .ready = EVENT_INIT,
    .stats_lock = PTHREAD_MUTEX_INITIALIZER,
};

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	head->func = func;
	head->next = NULL;
	pthread_mutex_lock(&calls.lock);
	if (calls.tail)
		calls.tail->next = head;
	else
		calls.head = head;
	calls.tail = head;
	calls.count++;
	pthread_mutex_unlock(&calls.lock);
	event_set(&calls.ready);
}

static unsigned long queued(void)
{
	unsigned long n;

	pthread_mutex_lock(&calls.lock);
	n = calls.count;
	pthread_mutex_unlock(&calls.lock);
	return n;
}

/* Take @n callbacks off the front: exactly those queued before synchronize_rcu() began. */
static struct rcu_head *take(unsigned long n)
{
	struct rcu_head *first, *last;

	pthread_mutex_lock(&calls.lock);
	first = last = calls.head;
	for (unsigned long i = 1; i < n; i++)
		last = last->next;
	calls.head = last->next;
	if (!calls.head)
		calls.tail = NULL;
	last->next = NULL;
	pthread_mutex_unlock(&calls.lock);
	return first;
}

/* Which file defines @sym as the process resolves it, or NULL. */
static const char *defined_in(const char *sym)
{
	void *addr = dlsym(RTLD_DEFAULT, sym);
	Dl_info info;

	return addr && dladdr(addr, &info) && info.dli_fname ? info.dli_fname : NULL;
}

const char *rcu_trim_unsupported(void)
{
	static char why[512];
	const char *malloc_file = defined_in("malloc");
	const char *libc_file = defined_in("gnu_get_libc_version");

	if (!malloc_file || !libc_file)
		return "cannot tell which library provides malloc (dladdr found none)";
	if (!strcmp(malloc_file, libc_file))
		return NULL;
	snprintf(why, sizeof(why),
		 "malloc comes from %s, not the C library (%s): that allocator "
		 "has no malloc_trim",
		 malloc_file, libc_file);
	return why;
}

static void trim(bool idle)
{
	int64_t t0 = util_now_ns();

	malloc_trim(RCU_TRIM_PAD);
	pthread_mutex_lock(&calls.stats_lock);
	calls.stats.trims++;
	calls.stats.trims_not_idle += !idle;
	calls.stats.trim_ns += (uint64_t)(util_now_ns() - t0);
	pthread_mutex_unlock(&calls.stats_lock);
}

/*
 * Nothing queued after the nap: trim if the policy is idle, then sleep until a call comes.
 * Returns false when the thread is to stop instead.
 */
static bool idle_until_called(void)
{
	event_reset(&calls.ready);
	if (queued() != 0)
		return true;
	if (calls.trim == RCU_TRIM_IDLE)
		trim(true);
	if (__atomic_load_n(&calls.stop, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&calls.idle, true, __ATOMIC_RELEASE);
	event_wait(&calls.ready);
	__atomic_store_n(&calls.idle, false, __ATOMIC_RELEASE);
	return true;
}

/*
 * QEMU's batching rule: sleep 10 ms, then run a batch if RCU_CALL_MIN_SIZE callbacks are
 * queued or RCU_BATCH_SLEEPS sleeps have passed. A queue still empty after a sleep makes
 * the thread wait for the next call_rcu(), and that is when the landed form trims: so a
 * busy producer, whose callbacks keep arriving within the 10 ms, is never trimmed under.
 * Returns the batch size, 0 to stop.
 */
static unsigned long wait_for_batch(void)
{
	struct timespec nap = {0, RCU_BATCH_SLEEP_NS};
	unsigned long n = queued();
	int tries = 0;

	while (n == 0 || (n < RCU_CALL_MIN_SIZE && ++tries <= RCU_BATCH_SLEEPS)) {
		if (__atomic_load_n(&calls.stop, __ATOMIC_ACQUIRE) && n == 0)
			return 0;
		/* The only sleeps of the model: the rule itself sleeps 10 ms. */
		nanosleep(&nap, NULL);
		if (n == 0 && !idle_until_called())
			return 0;
		n = queued();
	}
	return n;
}

static void *call_rcu_thread(void *arg)
{
	unsigned long n;

	(void)arg;
	while ((n = wait_for_batch())) {
		struct rcu_head *h;
		int64_t t0;

		pthread_mutex_lock(&calls.lock);
		calls.count -= n;
		pthread_mutex_unlock(&calls.lock);
		synchronize_rcu();
		/* QEMU runs callbacks holding the BQL: they free memory other code may walk. */
		t0 = util_now_ns();
		if (calls.big_lock)
			pthread_mutex_lock(calls.big_lock);
		/* Counted before the callbacks run: one of them may be drain_call_rcu()'s, and its
		 * caller may read the counts as soon as it has run. */
		pthread_mutex_lock(&calls.stats_lock);
		calls.stats.big_lock_wait_ns += (uint64_t)(util_now_ns() - t0);
		calls.stats.batches++;
		calls.stats.callbacks += n;
		pthread_mutex_unlock(&calls.stats_lock);
		for (h = take(n); h;) {
			struct rcu_head *next = h->next;

			h->func(h);
			h = next;
		}
		if (calls.big_lock)
			pthread_mutex_unlock(calls.big_lock);
		if (calls.trim == RCU_TRIM_EVERY_BATCH)
			trim(queued() == 0);
	}
	return NULL;
}

int rcu_start(enum rcu_trim trim_policy, pthread_mutex_t *big_lock)
{
	int ret;

	if (calls.running)
		return -EBUSY;
	calls.trim = trim_policy;
	calls.big_lock = big_lock;
	calls.stop = false;
	calls.idle = false;
	memset(&calls.stats, 0, sizeof(calls.stats));
	ret = pthread_create(&calls.thread, NULL, call_rcu_thread, NULL);
	if (ret)
		return -ret;
	calls.running = true;
	return 0;
}

void rcu_stop(void)
{
	if (!calls.running)
		return;
	__atomic_store_n(&calls.stop, true, __ATOMIC_RELEASE);
	event_set(&calls.ready);
	pthread_join(calls.thread, NULL);
	calls.running = false;
}

struct drain {
	struct rcu_head head; /* first: the callback gets it back as the whole struct */
	struct event done;
};

static void drain_done(struct rcu_head *head)
{
	event_set(&((struct drain *)head)->done);
}

void drain_call_rcu(void)
{
	struct drain d = {.done = EVENT_INIT};

	/* The queue runs in order: when this one has run, so has everything before it. */
	call_rcu(&d.head, drain_done);
	event_wait(&d.done);
}

void rcu_get_stats(struct rcu_stats *out)
{
	pthread_mutex_lock(&calls.stats_lock);
	*out = calls.stats;
	pthread_mutex_unlock(&calls.stats_lock);
}

bool rcu_wait_idle(unsigned int timeout_ms)
{
	const struct timespec tick = {0, 1000000};

	/* Polled, as the trims are: the flag is set only once the queue was found empty. */
	for (unsigned int waited = 0;; waited++) {
		if (__atomic_load_n(&calls.idle, __ATOMIC_ACQUIRE) && queued() == 0)
			return true;
		if (waited >= timeout_ms)
			return false;
		nanosleep(&tick, NULL);
	}
}

bool rcu_wait_trims(uint64_t n, unsigned int timeout_ms)
{
	const struct timespec tick = {0, 1000000};
	struct rcu_stats st;

	/* Polled: a trim is rare, and the stats lock is the thread's only shared state. */
	for (unsigned int waited = 0;; waited++) {
		rcu_get_stats(&st);
		if (st.trims >= n)
			return true;
		if (waited >= timeout_ms)
			return false;
		nanosleep(&tick, NULL);
	}
}
