/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memslots.c - KVM's sorted memslot array and the three ways it was kept sorted (the 2014
 * memslot-sort thread). */
#include "impl/memslots.h"

#include "util/text.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KVM_CAP_NR_MEMSLOTS of today's kernels: the largest array this models. */
#define MEMSLOTS_MAX 32764

const char *const memslots_update_names[MEMSLOTS_UPDATES] = {
    [MEMSLOTS_HEAPSORT] = "heapsort",
    [MEMSLOTS_SWAP] = "swap",
    [MEMSLOTS_SHIFT] = "shift",
    [MEMSLOTS_SHIFT_POSTED] = "shift-posted",
};

const char *memslots_update_name(enum memslots_update u)
{
	return (unsigned int)u < MEMSLOTS_UPDATES ? memslots_update_names[u] : "?";
}

int memslots_update_parse(const char *name)
{
	return text_index(memslots_update_names, MEMSLOTS_UPDATES, name);
}

const char *memslots_order_name(enum memslots_order o)
{
	return o == MEMSLOTS_BY_SIZE ? "size" : "gfn";
}

/* Index: lookup * 2 + cache. */
const char *const memslots_lookup_names[MEMSLOTS_LOOKUP_MODES] = {
    "linear",
    "linear+cache",
    "binary",
    "binary+cache",
};

const char *memslots_lookup_name(enum memslots_lookup lookup, bool cache)
{
	return memslots_lookup_names[(lookup == MEMSLOTS_BINARY) * 2 + cache];
}

int memslots_lookup_parse(const char *name, enum memslots_lookup *lookup, bool *cache)
{
	int i = text_index(memslots_lookup_names, MEMSLOTS_LOOKUP_MODES, name);

	if (i < 0)
		return -EINVAL;
	*lookup = i >= 2 ? MEMSLOTS_BINARY : MEMSLOTS_LINEAR;
	*cache = i % 2;
	return 0;
}

/* Does @a belong strictly before @b? Non-empty slots come first, largest key first. */
static inline bool before(enum memslots_order order, const struct memslot *a,
			  const struct memslot *b)
{
	if (!a->npages)
		return false;
	if (!b->npages)
		return true;
	return order == MEMSLOTS_BY_SIZE ? a->npages > b->npages : a->base_gfn > b->base_gfn;
}

/* The kernel's sort() took a comparator without context: one per order, as KVM had one. */
static int cmp_by_size(const void *a, const void *b)
{
	return before(MEMSLOTS_BY_SIZE, a, b) ? -1 : before(MEMSLOTS_BY_SIZE, b, a) ? 1 : 0;
}

static int cmp_by_gfn(const void *a, const void *b)
{
	return before(MEMSLOTS_BY_GFN, a, b) ? -1 : before(MEMSLOTS_BY_GFN, b, a) ? 1 : 0;
}

static void empty_slot(struct memslot *m, int id)
{
	memset(m, 0, sizeof(*m));
	m->id = id;
}

int memslots_init(struct memslots *s, unsigned int capacity, enum memslots_order order,
		  enum memslots_update update, enum memslots_lookup lookup, bool cache)
{
	memset(s, 0, sizeof(*s));
	/* Binary search needs the array ordered by address. */
	if (!capacity || capacity > MEMSLOTS_MAX ||
	    (lookup == MEMSLOTS_BINARY && order != MEMSLOTS_BY_GFN))
		return -EINVAL;
	s->slots = calloc(capacity, sizeof(*s->slots));
	s->id_to_index = calloc(capacity, sizeof(*s->id_to_index));
	s->scratch = calloc(1, sizeof(*s->scratch));
	if (!s->slots || !s->id_to_index || !s->scratch) {
		memslots_release(s);
		return -ENOMEM;
	}
	s->capacity = capacity;
	s->order = order;
	s->update = update;
	s->lookup = lookup;
	s->cache = cache;
	s->last_used = -1;
	for (unsigned int i = 0; i < capacity; i++) {
		empty_slot(&s->slots[i], (int)i);
		s->id_to_index[i] = (int32_t)i;
	}
	return 0;
}

void memslots_release(struct memslots *s)
{
	free(s->slots);
	free(s->id_to_index);
	free(s->scratch);
	memset(s, 0, sizeof(*s));
}

const struct memslot *memslots_get(const struct memslots *s, int id)
{
	if (id < 0 || (unsigned int)id >= s->capacity)
		return NULL;
	return &s->slots[s->id_to_index[id]];
}

static void rebuild_index(struct memslots *s)
{
	/* KVM rebuilt all of id_to_index[] after every update, whichever strategy: O(n). */
	for (unsigned int i = 0; i < s->capacity; i++)
		s->id_to_index[s->slots[i].id] = (int32_t)i;
}

/* lib/sort.c's generic_swap of 2014: byte by byte, for elements of any size. */
static void swap_bytes(void *a, void *b, size_t size)
{
	unsigned char *x = a, *y = b;

	do {
		unsigned char t = *x;

		*x++ = *y;
		*y++ = t;
	} while (--size);
}

static void sift_down(char *base, size_t root, size_t n, size_t size,
		      int (*cmp)(const void *, const void *))
{
	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			return;
		/* Follow the child that sorts last: the heap keeps the "largest" on top. */
		if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
			child++;
		if (cmp(base + root * size, base + child * size) >= 0)
			return;
		swap_bytes(base + root * size, base + child * size, size);
		root = child;
	}
}

/* Heap sort, as the kernel's sort(): O(n log n) whatever the input, not stable. */
static void heap_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(base, i, n, size, cmp);
	for (size_t end = n; end-- > 1;) {
		swap_bytes(base, (char *)base + end * size, size);
		sift_down(base, 0, end, size, cmp);
	}
}

/* The code before the patch: overwrite the old slot, sort all of the array. */
static void apply_heapsort(struct memslots *s, const struct memslot *new)
{
	s->slots[s->id_to_index[new->id]] = *new;
	heap_sort(s->slots, s->capacity, sizeof(*s->slots),
		  s->order == MEMSLOTS_BY_SIZE ? cmp_by_size : cmp_by_gfn);
	rebuild_index(s);
}

/* v1: bubble the changed slot to its place with whole-struct swaps (two copies a step). */
static void apply_swap(struct memslots *s, const struct memslot *new)
{
	struct memslot *m = s->slots, tmp;
	unsigned int i = (unsigned int)s->id_to_index[new->id];

	m[i] = *new;
	for (;;) {
		if (i + 1 < s->capacity && before(s->order, &m[i + 1], &m[i])) {
			tmp = m[i];
			m[i] = m[i + 1];
			m[i + 1] = tmp;
			i++;
		} else if (i > 0 && before(s->order, &m[i], &m[i - 1])) {
			tmp = m[i];
			m[i] = m[i - 1];
			m[i - 1] = tmp;
			i--;
		} else {
			break;
		}
	}
	rebuild_index(s);
}

/* Same place in the order: the same npages (and, by gfn, the same base_gfn). */
static bool same_place(enum memslots_order order, const struct memslot *a, const struct memslot *b)
{
	return a->npages == b->npages && (order == MEMSLOTS_BY_SIZE || a->base_gfn == b->base_gfn);
}

/*
 * v2: shift each neighbour one step towards the hole and write the new slot once where it
 * stops, one copy a step instead of v1's swaps. @posted is v2 as first posted, which returned
 * before copying when the slot kept its place: a flags or userspace_addr change was lost.
 * Paolo's review asked for the copy; the landed code has it.
 */
static void apply_shift(struct memslots *s, const struct memslot *new, bool posted)
{
	struct memslot *m = s->slots;
	unsigned int i = (unsigned int)s->id_to_index[new->id];

	if (same_place(s->order, &m[i], new)) {
		if (!posted)
			m[i] = *new;
		return;
	}
	for (;;) {
		if (i + 1 < s->capacity && before(s->order, &m[i + 1], new)) {
			m[i] = m[i + 1];
			i++;
		} else if (i > 0 && before(s->order, new, &m[i - 1])) {
			m[i] = m[i - 1];
			i--;
		} else {
			m[i] = *new;
			break;
		}
	}
	rebuild_index(s);
}

/* Checks of KVM_SET_USER_MEMORY_REGION that apply whatever the strategy. */
int memslots_validate(const struct memslots *s, const struct memslot *new)
{
	const struct memslot *cur;

	if (new->id < 0 || (unsigned int)new->id >= s->capacity)
		return -EINVAL;
	cur = memslots_get(s, new->id);
	if (!new->npages)
		return cur->npages ? 0 : -ENOENT;
	if (new->base_gfn >= MEMSLOTS_GFN_LIMIT || new->npages > MEMSLOTS_GFN_LIMIT - new->base_gfn)
		return -EINVAL;
	if (cur->npages && cur->npages != new->npages)
		return -EINVAL; /* KVM refuses to resize a slot in place */
	if (cur->npages && cur->base_gfn == new->base_gfn)
		return 0; /* flags or userspace_addr only */
	for (unsigned int i = 0; i < s->used; i++) {
		const struct memslot *o = &s->slots[i];

		if (o->id != new->id &&new->base_gfn < o->base_gfn + o->npages &&
		    o->base_gfn < new->base_gfn + new->npages)
			return -EEXIST;
	}
	return 0;
}

void memslots_apply(struct memslots *s, const struct memslot *new)
{
	bool was_used = memslots_get(s, new->id)->npages != 0;
	/* A deleted slot is stored blank, as KVM cleared it. */
	*s->scratch = *new;
	if (!new->npages)
		empty_slot(s->scratch, new->id);
	switch (s->update) {
	case MEMSLOTS_HEAPSORT:
		apply_heapsort(s, s->scratch);
		break;
	case MEMSLOTS_SWAP:
		apply_swap(s, s->scratch);
		break;
	case MEMSLOTS_SHIFT:
	case MEMSLOTS_SHIFT_POSTED:
		apply_shift(s, s->scratch, s->update == MEMSLOTS_SHIFT_POSTED);
		break;
	}
	s->used += (new->npages != 0) - was_used;
}

int memslots_set(struct memslots *s, const struct memslot *new)
{
	int ret = memslots_validate(s, new);

	if (!ret)
		memslots_apply(s, new);
	return ret;
}

static bool contains(const struct memslot *m, uint64_t gfn)
{
	return gfn >= m->base_gfn && gfn - m->base_gfn < m->npages;
}

static int find_linear(const struct memslots *s, uint64_t gfn)
{
	for (unsigned int i = 0; i < s->used; i++)
		if (contains(&s->slots[i], gfn))
			return (int)i;
	return -1;
}

/* Slots by base_gfn, highest first: find the first whose base is at or below @gfn. */
static int find_binary(const struct memslots *s, uint64_t gfn)
{
	unsigned int start = 0, end = s->used;

	while (start < end) {
		unsigned int mid = start + (end - start) / 2;

		if (gfn >= s->slots[mid].base_gfn)
			end = mid;
		else
			start = mid + 1;
	}
	return start < s->used && contains(&s->slots[start], gfn) ? (int)start : -1;
}

int memslots_find(struct memslots *s, uint64_t gfn)
{
	int i;

	/* A guest touches the same few slots over and over: KVM checked the last one first. */
	if (s->cache && s->last_used >= 0 && (unsigned int)s->last_used < s->used &&
	    contains(&s->slots[s->last_used], gfn))
		return s->slots[s->last_used].id;
	i = s->lookup == MEMSLOTS_BINARY ? find_binary(s, gfn) : find_linear(s, gfn);
	if (i < 0)
		return -1;
	s->last_used = i;
	return s->slots[i].id;
}

int memslots_load(struct memslots *s, const struct memslot *slots, unsigned int n)
{
	unsigned char *seen;
	unsigned int k = n;

	if (n > s->capacity)
		return -EINVAL;
	seen = calloc(s->capacity, 1);
	if (!seen)
		return -ENOMEM;
	/* Check everything first: a refused load leaves the set as it was. */
	for (unsigned int i = 0; i < n; i++) {
		if (slots[i].id < 0 || (unsigned int)slots[i].id >= s->capacity ||
		    !slots[i].npages || seen[slots[i].id]) {
			free(seen);
			return -EINVAL;
		}
		seen[slots[i].id] = 1;
	}
	memcpy(s->slots, slots, n * sizeof(*slots));
	for (unsigned int id = 0; id < s->capacity; id++)
		if (!seen[id])
			empty_slot(&s->slots[k++], (int)id);
	free(seen);
	qsort(s->slots, s->capacity, sizeof(*s->slots),
	      s->order == MEMSLOTS_BY_SIZE ? cmp_by_size : cmp_by_gfn);
	rebuild_index(s);
	s->used = n;
	s->last_used = -1;
	return 0;
}

int memslots_check(const struct memslots *s, char *why, unsigned int len)
{
	for (unsigned int i = 0; i < s->capacity; i++) {
		const struct memslot *m = &s->slots[i];

		if (i + 1 < s->capacity && before(s->order, &s->slots[i + 1], m)) {
			snprintf(why, len, "index %u (id %d) sorts after index %u (id %d) by %s", i,
				 m->id, i + 1, s->slots[i + 1].id, memslots_order_name(s->order));
			return -EUCLEAN;
		}
		if ((i < s->used) != (m->npages != 0)) {
			snprintf(why, len, "index %u (id %d, %llu pages) but %u slots in use", i,
				 m->id, (unsigned long long)m->npages, s->used);
			return -EUCLEAN;
		}
		if (m->id < 0 || (unsigned int)m->id >= s->capacity ||
		    s->id_to_index[m->id] != (int32_t)i) {
			snprintf(why, len, "index %u holds id %d, id_to_index[%d] says %d", i,
				 m->id, m->id,
				 m->id >= 0 && (unsigned int)m->id < s->capacity
				     ? s->id_to_index[m->id]
				     : -1);
			return -EUCLEAN;
		}
	}
	return 0;
}
