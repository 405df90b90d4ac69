/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memslots.h - KVM's memslot array of 2014: sorted slots, id_to_index[], three update codes. */
#ifndef MG_IMPL_MEMSLOTS_H
#define MG_IMPL_MEMSLOTS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One slot, as KVM's struct kvm_memory_slot holds what userspace set. 32 bytes: the copy and
 * swap costs of the strategies scale with it, as they did with the kernel's larger struct.
 */
struct memslot {
	uint64_t base_gfn;
	uint64_t npages; /* 0: the slot is empty */
	uint64_t userspace_addr;
	uint32_t flags;
	int32_t id;
};

enum memslots_order {
	MEMSLOTS_BY_SIZE, /* npages, largest first: KVM until December 2014 */
	MEMSLOTS_BY_GFN,  /* base_gfn, highest first: KVM from December 2014 */
};

enum memslots_update {
	MEMSLOTS_HEAPSORT,     /* copy in place, heap-sort everything, rebuild the index */
	MEMSLOTS_SWAP,	       /* v1: bubble the changed slot by swapping neighbours */
	MEMSLOTS_SHIFT,	       /* v2 as landed: shift neighbours, write the slot once */
	MEMSLOTS_SHIFT_POSTED, /* v2 as posted: returns early when npages is unchanged */
};
#define MEMSLOTS_UPDATES 4

enum memslots_lookup {
	MEMSLOTS_LINEAR, /* scan the used slots, either order */
	MEMSLOTS_BINARY, /* binary search: gfn order only */
};

/* Guest physical addresses of 52 bits in 4 KiB pages: gfns below 2^40. */
#define MEMSLOTS_GFN_LIMIT (1ULL << 40)

struct memslots {
	unsigned int capacity; /* slots, and so ids 0..capacity-1 */
	unsigned int used;     /* non-empty slots: they come first */
	enum memslots_order order;
	enum memslots_update update;
	enum memslots_lookup lookup;
	bool cache;		 /* try the last slot found before searching */
	int last_used;		 /* index of that slot, -1 when none */
	struct memslot *slots;	 /* [capacity], sorted, empty slots at the tail */
	int32_t *id_to_index;	 /* [capacity] */
	struct memslot *scratch; /* [1], the kernel's kmemdup of the changed slot */
};

/**
 * memslots_init() - an empty set of @capacity slots (ids 0..capacity-1, all empty) kept in
 * @order and updated with @update. Returns 0, -EINVAL (a capacity of 0 or over 32764,
 * binary lookup with size order) or -ENOMEM; on error nothing needs releasing.
 */
int memslots_init(struct memslots *s, unsigned int capacity, enum memslots_order order,
		  enum memslots_update update, enum memslots_lookup lookup, bool cache);

/** memslots_release() - free the arrays. */
void memslots_release(struct memslots *s);

/**
 * memslots_set() - KVM_SET_USER_MEMORY_REGION on slot @new->id: create (the slot was empty),
 * delete (@new->npages == 0), move (new base_gfn, same npages) or change flags and
 * userspace_addr (same base_gfn and npages).
 * Returns 0, or leaves the set unchanged and returns -EINVAL (id out of range, a range past
 * MEMSLOTS_GFN_LIMIT, a resize), -EEXIST (the range overlaps another slot) or -ENOENT
 * (delete or change of an empty slot).
 */
int memslots_set(struct memslots *s, const struct memslot *new);

/** memslots_validate() - the checks of memslots_set() alone; returns what it would. */
int memslots_validate(const struct memslots *s, const struct memslot *new);

/**
 * memslots_apply() - the update step alone, for a change memslots_validate() accepted: what
 * the 2014 patches changed and measured (KVM's update_memslots()).
 */
void memslots_apply(struct memslots *s, const struct memslot *new);

/** memslots_find() - the id of the slot holding @gfn, or -1. Updates the cache. */
int memslots_find(struct memslots *s, uint64_t gfn);

/** memslots_get() - the slot with @id (empty when npages is 0), or NULL for a bad id. */
const struct memslot *memslots_get(const struct memslots *s, int id);

/**
 * memslots_load() - replace the contents with the @n non-empty @slots (distinct ids, no
 * overlaps: the caller checked), sorted once. Sets up the state a long run of updates
 * would leave, without paying for the run. Returns 0, or leaves the set unchanged and
 * returns -EINVAL (more slots than the capacity, an id out of range or repeated, an empty
 * slot) or -ENOMEM. */
int memslots_load(struct memslots *s, const struct memslot *slots, unsigned int n);

/**
 * memslots_check() - the invariants: sorted by the order's key, empty slots at the tail,
 * used matching them, id_to_index[] consistent. Returns 0 or -EUCLEAN with @why filled.
 */
int memslots_check(const struct memslots *s, char *why, unsigned int len);

/* Names for the command line and reports, in enum order, and their inverse (-1 for an
 * unknown name). */
extern const char *const memslots_update_names[MEMSLOTS_UPDATES];
/** memslots_update_name() - "heapsort", "swap" or "shift" for @u. */
const char *memslots_update_name(enum memslots_update u);
/** memslots_order_name() - "size" or "gfn" for @o. */
const char *memslots_order_name(enum memslots_order o);
/** memslots_update_parse() - the update strategy @name names, or -1. */
int memslots_update_parse(const char *name);

/* Lookup modes: "linear", "binary", either with "+cache"; index lookup * 2 + cache. */
#define MEMSLOTS_LOOKUP_MODES 4
extern const char *const memslots_lookup_names[MEMSLOTS_LOOKUP_MODES];
/** memslots_lookup_name() - "linear", "binary", either with "+cache", for @lookup and @cache. */
const char *memslots_lookup_name(enum memslots_lookup lookup, bool cache);

/** memslots_lookup_parse() - the lookup and cache @name says; 0 or -EINVAL. */
int memslots_lookup_parse(const char *name, enum memslots_lookup *lookup, bool *cache);

#endif
