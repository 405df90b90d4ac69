/* SPDX-License-Identifier: GPL-2.0-or-later */
/* oracle.c - the memslot model written for obviousness, and its random workload. */
#include "suites/memslots/oracle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Random slots live in a span of 1024 gfns per id: half full when every id is in use, so
 * creates and moves overlap often enough to exercise the refusals. */
#define SPAN_PER_ID 1024
#define MAX_NPAGES 1024

int oracle_init(struct oracle *o, unsigned int capacity)
{
	o->capacity = capacity;
	o->used = 0;
	o->by_id = calloc(capacity, sizeof(*o->by_id));
	o->used_ids = calloc(capacity, sizeof(*o->used_ids));
	if (!o->by_id || !o->used_ids) {
		oracle_release(o);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < capacity; i++)
		o->by_id[i].id = (int32_t)i;
	return 0;
}

void oracle_release(struct oracle *o)
{
	free(o->by_id);
	free(o->used_ids);
	o->by_id = NULL;
	o->used_ids = NULL;
}

static bool overlaps(const struct memslot *a, const struct memslot *b)
{
	return a->base_gfn < b->base_gfn + b->npages && b->base_gfn < a->base_gfn + a->npages;
}

static void forget_id(struct oracle *o, int id)
{
	for (unsigned int i = 0; i < o->used; i++) {
		if (o->used_ids[i] == id) {
			o->used_ids[i] = o->used_ids[--o->used];
			return;
		}
	}
}

int oracle_set(struct oracle *o, const struct memslot *new)
{
	struct memslot *cur;

	if (new->id < 0 || (unsigned int)new->id >= o->capacity)
		return -EINVAL;
	cur = &o->by_id[new->id];
	if (!new->npages) {
		if (!cur->npages)
			return -ENOENT;
		memset(cur, 0, sizeof(*cur));
		cur->id = new->id;
		forget_id(o, new->id);
		return 0;
	}
	if (new->base_gfn >= MEMSLOTS_GFN_LIMIT ||
	    new->base_gfn + new->npages > MEMSLOTS_GFN_LIMIT ||
	    new->base_gfn + new->npages < new->base_gfn)
		return -EINVAL;
	if (cur->npages && cur->npages != new->npages)
		return -EINVAL;
	for (unsigned int id = 0; id < o->capacity; id++)
		if ((int)id != new->id && o->by_id[id].npages &&overlaps(&o->by_id[id], new))
			return -EEXIST;
	if (!cur->npages)
		o->used_ids[o->used++] = new->id;
	*cur = *new;
	return 0;
}

int oracle_find(const struct oracle *o, uint64_t gfn)
{
	for (unsigned int id = 0; id < o->capacity; id++) {
		const struct memslot *m = &o->by_id[id];

		if (m->npages && gfn >= m->base_gfn && gfn < m->base_gfn + m->npages)
			return (int)id;
	}
	return -1;
}

const char *oracle_op_name(enum op_kind k)
{
	static const char *const names[] = {"create", "delete", "move",	   "change",
					    "resize", "bad-id", "overflow"};

	return names[k];
}

static int random_used_id(const struct oracle *o, struct stats_rng *rng)
{
	if (!o->used)
		return (int)stats_rng_below(rng, o->capacity);
	return o->used_ids[stats_rng_below(rng, o->used)];
}

/* An empty id when a few random tries find one (most do unless the set is nearly full). */
static int random_free_id(const struct oracle *o, struct stats_rng *rng)
{
	int id = 0;

	for (int tries = 0; tries < 8; tries++) {
		id = (int)stats_rng_below(rng, o->capacity);
		if (!o->by_id[id].npages)
			break;
	}
	return id;
}

static void random_range(const struct oracle *o, struct stats_rng *rng, struct memslot *op)
{
	op->base_gfn = stats_rng_below(rng, (uint64_t)o->capacity * SPAN_PER_ID);
	op->npages = 1 + stats_rng_below(rng, MAX_NPAGES);
	op->userspace_addr = (stats_rng_next(rng) & 0x00007ffffffff000ULL);
	op->flags = (uint32_t)stats_rng_below(rng, 4); /* LOG_DIRTY_PAGES, READONLY */
}

/* Ops that must be refused whatever the state: a bad id, a range past the limit, a resize. */
static bool invalid_op(const struct oracle *o, struct stats_rng *rng, struct memslot *op,
		       enum op_kind *kind)
{
	unsigned int r = (unsigned int)stats_rng_below(rng, 100);

	if (r < 3) {
		*kind = OP_BAD_ID;
		random_range(o, rng, op);
		op->id = r == 0 ? -1 : (int32_t)(o->capacity + stats_rng_below(rng, 3));
	} else if (r < 6) {
		*kind = OP_OVERFLOW;
		random_range(o, rng, op);
		op->id = random_free_id(o, rng);
		op->base_gfn = MEMSLOTS_GFN_LIMIT - stats_rng_below(rng, 16);
		op->npages = 32 + stats_rng_below(rng, 64);
	} else if (r < 9 && o->used) {
		*kind = OP_RESIZE;
		op->id = random_used_id(o, rng);
		*op = o->by_id[op->id];
		op->npages += 1 + stats_rng_below(rng, 8);
	} else {
		return false;
	}
	return true;
}

void oracle_random_op(const struct oracle *o, struct stats_rng *rng, unsigned int fill,
		      struct memslot *op, enum op_kind *kind)
{
	memset(op, 0, sizeof(*op));
	if (invalid_op(o, rng, op, kind))
		return;
	if (stats_rng_below(rng, 100) < fill || !o->used) {
		/* A full set turns this into an attempt on a used id: refused, as it must be. */
		*kind = OP_CREATE;
		random_range(o, rng, op);
		op->id = random_free_id(o, rng);
		return;
	}
	op->id = random_used_id(o, rng);
	switch (stats_rng_below(rng, 3)) {
	case 0:
		*kind = OP_DELETE;
		break;
	case 1:
		*kind = OP_MOVE;
		*op = o->by_id[op->id];
		op->base_gfn = stats_rng_below(rng, (uint64_t)o->capacity * SPAN_PER_ID);
		break;
	default:
		*kind = OP_CHANGE;
		*op = o->by_id[op->id];
		op->flags ^= 1 + (uint32_t)stats_rng_below(rng, 3);
		op->userspace_addr += 0x1000;
		break;
	}
}

void oracle_load(struct oracle *o, const struct memslot *slots, unsigned int n)
{
	for (unsigned int id = 0; id < o->capacity; id++) {
		memset(&o->by_id[id], 0, sizeof(o->by_id[id]));
		o->by_id[id].id = (int32_t)id;
	}
	o->used = 0;
	for (unsigned int i = 0; i < n; i++) {
		o->by_id[slots[i].id] = slots[i];
		o->used_ids[o->used++] = slots[i].id;
	}
}
