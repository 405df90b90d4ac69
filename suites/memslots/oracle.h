/* SPDX-License-Identifier: GPL-2.0-or-later */
/* oracle.h - the plain model memslot strategies are checked against, and random ops. */
#ifndef MG_SUITES_MEMSLOTS_ORACLE_H
#define MG_SUITES_MEMSLOTS_ORACLE_H

#include "impl/memslots.h"
#include "util/stats.h"

/* Slots by id, nothing sorted, nothing indexed: obviously right, and slow. */
struct oracle {
	unsigned int capacity;
	struct memslot *by_id; /* [capacity]; npages 0: empty */
	int *used_ids;	       /* the non-empty ids, in no order, for picking one at random */
	unsigned int used;
};

/** oracle_init() - an empty oracle of @capacity ids. Returns 0 or -ENOMEM. */
int oracle_init(struct oracle *o, unsigned int capacity);
/** oracle_release() - free what oracle_init() made. */
void oracle_release(struct oracle *o);

/**
 * oracle_set() - the specification of memslots_set(): same return codes, same effect.
 */
int oracle_set(struct oracle *o, const struct memslot *new);

/**
 * oracle_load() - make the oracle hold exactly the @n non-empty @slots, which the caller laid out
 * without overlaps (memslots_load()'s twin, without its O(n^2) checks).
 */
void oracle_load(struct oracle *o, const struct memslot *slots, unsigned int n);

/** oracle_find() - the id of the slot holding @gfn, or -1, by scanning every id. */
int oracle_find(const struct oracle *o, uint64_t gfn);

enum op_kind {
	OP_CREATE,
	OP_DELETE,
	OP_MOVE,
	OP_CHANGE,
	OP_RESIZE,
	OP_BAD_ID,
	OP_OVERFLOW,
	OP_KINDS
};

/**
 * oracle_random_op() - a random KVM_SET_USER_MEMORY_REGION for the state of @o: mostly
 * valid creates, deletes, moves and flag changes, some that must be refused (overlaps,
 * resizes, bad ids, ranges past the guest address space). @fill (0..100) is the share of
 * creates among the valid kinds, to drive a set towards full or empty.
 */
void oracle_random_op(const struct oracle *o, struct stats_rng *rng, unsigned int fill,
		      struct memslot *op, enum op_kind *kind);

/** oracle_op_name() - "create", "delete", ... for messages. */
const char *oracle_op_name(enum op_kind k);

#endif
