/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_rcu.c - the RCU's promises, under stress; built a second time with ThreadSanitizer. */
#include "tests/testutil.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <string.h>

#include "impl/rcu.h"

#define MAGIC_LIVE 0x600dcafe
#define POISON 0x6b

struct obj {
	struct rcu_head head; /* first: callbacks get the object back */
	unsigned int magic;
	unsigned long id; /* unique: a freed and reused object has another */
	unsigned long payload[6];
};

static unsigned long next_id;

static struct obj *shared;
static unsigned long seen_freed;
static int stop_writers;

/* Sections per reader; every 256th sleeps 2 ms inside, as a preempted reader would: long
 * enough for the writers and the call_rcu thread to get a CPU meanwhile. */
#define READER_SECTIONS 20000

static void free_obj(struct rcu_head *h)
{
	/* Poison before freeing: a reader still holding it would see the poison. */
	memset(h, POISON, sizeof(struct obj));
	free(h);
}

static void *reader_main(void *arg)
{
	unsigned long reads = 0;

	(void)arg;
	rcu_register_thread();
	while (reads < READER_SECTIONS) {
		struct obj *o;
		unsigned long id;

		rcu_read_lock();
		rcu_read_lock(); /* nesting is allowed */
		o = rcu_dereference(shared);
		id = o ? __atomic_load_n(&o->id, __ATOMIC_RELAXED) : 0;
		/* Now and then get preempted inside the section, as readers are: a broken grace
		 * period frees the object meanwhile, and the checks below see the poison. */
		if ((reads & 255) == 0)
			nanosleep(&(struct timespec){0, 2000000}, NULL);
		for (int i = 0; o && i < 6 * 64; i++)
			if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != MAGIC_LIVE ||
			    o->payload[i % 6] != (unsigned long)(i % 6))
				__atomic_fetch_add(&seen_freed, 1, __ATOMIC_RELAXED);
		if (o && __atomic_load_n(&o->id, __ATOMIC_RELAXED) != id)
			__atomic_fetch_add(&seen_freed, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
		rcu_read_unlock();
		reads++;
	}
	rcu_unregister_thread();
	return (void *)reads;
}

static void *writer_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_writers, __ATOMIC_ACQUIRE)) {
		struct obj *o = malloc(sizeof(*o)), *old;

		o->magic = MAGIC_LIVE;
		o->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
		for (int k = 0; k < 6; k++)
			o->payload[k] = (unsigned long)k;
		old = __atomic_exchange_n(&shared, o, __ATOMIC_ACQ_REL);
		if (old)
			call_rcu(&old->head, free_obj);
	}
	return NULL;
}

static void test_readers_never_see_freed(void **state)
{
	pthread_t r[3], w[2];

	(void)state;
	assert_int_equal(rcu_start(RCU_TRIM_NONE, NULL), 0);
	stop_writers = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, reader_main, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, writer_main, NULL);
	/* The writers replace the object for as long as the readers read. */
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	__atomic_store_n(&stop_writers, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	drain_call_rcu();
	assert_int_equal(seen_freed, 0);
	free_obj(&shared->head);
	shared = NULL;
	rcu_stop();
}

static int in_section, may_leave, sync_done;

static void *holder_main(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	__atomic_store_n(&in_section, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&may_leave, __ATOMIC_ACQUIRE))
		sched_yield();
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

static void *syncer_main(void *arg)
{
	(void)arg;
	synchronize_rcu();
	__atomic_store_n(&sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* synchronize_rcu() does not return while a reader that was inside before it is inside. */
static void test_synchronize_waits(void **state)
{
	pthread_t holder, syncer;
	struct timespec pause = {0, 50000000};

	(void)state;
	in_section = may_leave = sync_done = 0;
	pthread_create(&holder, NULL, holder_main, NULL);
	while (!__atomic_load_n(&in_section, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_create(&syncer, NULL, syncer_main, NULL);
	/* 50 ms is plenty for a wrong synchronize_rcu() to return; a right one cannot. */
	nanosleep(&pause, NULL);
	assert_int_equal(__atomic_load_n(&sync_done, __ATOMIC_ACQUIRE), 0);
	__atomic_store_n(&may_leave, 1, __ATOMIC_RELEASE);
	pthread_join(syncer, NULL);
	pthread_join(holder, NULL);
	assert_int_equal(sync_done, 1);
}

#define PRODUCERS 4
#define PER_PRODUCER 5000

struct counted {
	struct rcu_head head;
	int index;
};

static int runs[PRODUCERS * PER_PRODUCER];

static void count_run(struct rcu_head *h)
{
	__atomic_fetch_add(&runs[((struct counted *)h)->index], 1, __ATOMIC_RELAXED);
	free(h);
}

static void *producer_main(void *arg)
{
	int base = *(int *)arg;

	for (int i = 0; i < PER_PRODUCER; i++) {
		struct counted *c = malloc(sizeof(*c));

		c->index = base + i;
		call_rcu(&c->head, count_run);
	}
	return NULL;
}

/* Each callback runs exactly once, and drain_call_rcu() returns after all earlier ones. */
static void test_callbacks_once_and_drain(void **state)
{
	pthread_t p[PRODUCERS];
	int base[PRODUCERS];

	(void)state;
	memset(runs, 0, sizeof(runs));
	assert_int_equal(rcu_start(RCU_TRIM_NONE, NULL), 0);
	for (int i = 0; i < PRODUCERS; i++) {
		base[i] = i * PER_PRODUCER;
		pthread_create(&p[i], NULL, producer_main, &base[i]);
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	drain_call_rcu();
	for (int i = 0; i < PRODUCERS * PER_PRODUCER; i++)
		if (__atomic_load_n(&runs[i], __ATOMIC_RELAXED) != 1)
			fail_msg("callback %d ran %d times", i, runs[i]);
	rcu_stop();
}

static void enqueue(int n)
{
	for (int i = 0; i < n; i++) {
		struct counted *c = malloc(sizeof(*c));

		c->index = 0;
		call_rcu(&c->head, count_run);
	}
}

/*
 * The batching rule on a known arrival pattern: 30 at once make one batch (the thread wakes
 * on the first, sleeps 10 ms, finds 30); 5 more wait out the five sleeps and make one more.
 */
static void test_batching_rule(void **state)
{
	struct rcu_stats st;

	(void)state;
	assert_int_equal(rcu_start(RCU_TRIM_NONE, NULL), 0);
	enqueue(RCU_CALL_MIN_SIZE);
	drain_call_rcu(); /* its own callback joins a batch too */
	rcu_get_stats(&st);
	assert_int_equal(st.callbacks, RCU_CALL_MIN_SIZE + 1);
	assert_int_equal(st.batches, 1);
	enqueue(5);
	drain_call_rcu();
	rcu_get_stats(&st);
	assert_int_equal(st.callbacks, RCU_CALL_MIN_SIZE + 1 + 6);
	assert_int_equal(st.batches, 2);
	rcu_stop();
}

/* every-batch trims once per batch; idle trims only with an empty queue; none never. */
static void test_trim_policies(void **state)
{
	struct rcu_stats st;

	(void)state;
	for (int p = RCU_TRIM_NONE; p <= RCU_TRIM_IDLE; p++) {
		assert_int_equal(rcu_start((enum rcu_trim)p, NULL), 0);
		for (int round = 0; round < 3; round++) {
			enqueue(40);
			drain_call_rcu();
		}
		/*
		 * The idle trim comes when the thread finds the queue empty after its 10 ms
		 * sleep; on a loaded machine that moment can come after the rounds: wait for it
		 * (2 s at most), as a booted guest's QEMU would.
		 */
		if (p == RCU_TRIM_IDLE)
			rcu_wait_trims(1, 2000);
		rcu_stop();
		rcu_get_stats(&st);
		if (p == RCU_TRIM_NONE)
			assert_int_equal(st.trims, 0);
		if (p == RCU_TRIM_EVERY_BATCH)
			assert_int_equal(st.trims, st.batches);
		if (p == RCU_TRIM_IDLE) {
			assert_true(st.trims >= 1);
			assert_int_equal(st.trims_not_idle, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_readers_never_see_freed),
	    cmocka_unit_test(test_synchronize_waits),
	    cmocka_unit_test(test_callbacks_once_and_drain),
	    cmocka_unit_test(test_batching_rule),
	    cmocka_unit_test(test_trim_policies),
	};

	return cmocka_run_group_tests_name("rcu", tests, NULL, NULL);
}
