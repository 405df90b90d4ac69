/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dispatch.c - a radix tree over guest pages, rebuilt per commit as QEMU's dispatch is. */
#include "impl/dispatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NODE_ENTRIES (1u << DISPATCH_NODE_BITS)
#define ENTRY_NIL ((1u << 26) - 1)
#define SECTIONS_MIN 16
#define PAGE_SHIFT 12
#define MAGIC 0x44495350u
#define POISON 0x6b

static int reserve_nodes(struct dispatch *d, unsigned int *hint, unsigned int need)
{
	unsigned int want = d->nodes_used + need;
	struct dispatch_node *nodes;

	if (want <= d->nodes_alloc)
		return 0;
	if (want < *hint)
		want = *hint;
	nodes = realloc(d->nodes, (size_t)want * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	d->nodes = nodes;
	d->nodes_alloc = want;
	*hint = want;
	return 0;
}

/* A new node, every entry empty: leaves point at the unassigned section, inner ones nowhere. */
static unsigned int new_node(struct dispatch *d, bool leaf)
{
	struct dispatch_entry empty = {leaf ? 0 : 1, leaf ? DISPATCH_UNASSIGNED : ENTRY_NIL};
	unsigned int n = d->nodes_used++;

	for (unsigned int i = 0; i < NODE_ENTRIES; i++)
		d->nodes[n].e[i] = empty;
	return n;
}

/*
 * Point pages [*page, *page + *pages) at @section below entry @e of level @level: a run that
 * starts on an entry's boundary and covers it becomes one leaf there, the rest descends.
 * The nodes are reserved beforehand, so @e stays valid while new ones are taken.
 */
static void set_pages(struct dispatch *d, struct dispatch_entry *e, uint64_t *page, uint64_t *pages,
		      unsigned int section, int level)
{
	uint64_t step = 1ULL << (level * DISPATCH_NODE_BITS);
	unsigned int node;

	if (e->skip && e->ptr == ENTRY_NIL)
		e->ptr = new_node(d, level == 0);
	node = e->ptr;
	for (unsigned int i = (*page >> (level * DISPATCH_NODE_BITS)) % NODE_ENTRIES;
	     *pages && i < NODE_ENTRIES; i++) {
		struct dispatch_entry *child = &d->nodes[node].e[i];

		if (*page % step == 0 && *pages >= step) {
			*child = (struct dispatch_entry){0, section};
			*page += step;
			*pages -= step;
		} else {
			set_pages(d, child, page, pages, section, level - 1);
		}
	}
}

static int add_section(struct dispatch *d, const struct dispatch_range *r)
{
	if (d->sections_used == d->sections_alloc) {
		unsigned int n = d->sections_alloc ? 2 * d->sections_alloc : SECTIONS_MIN;
		struct dispatch_section *s = realloc(d->sections, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		d->sections = s;
		d->sections_alloc = n;
	}
	/* A dummy covers everything: QEMU's are 2^64 bytes. */
	d->sections[d->sections_used++] =
	    (struct dispatch_section){.size = {r ? r->size : 0, r ? 0 : 1},
				      .owner = r ? r->owner : NULL,
				      .view = d,
				      .offset_in_space = r ? r->start : 0};
	return 0;
}

struct dispatch *dispatch_build(const struct dispatch_range *ranges, unsigned int n,
				unsigned int *hint)
{
	struct dispatch *d = calloc(1, sizeof(*d));
	int ret = d ? 0 : -ENOMEM;

	if (d)
		d->root = (struct dispatch_entry){1, ENTRY_NIL};
	for (unsigned int i = 0; !ret && i < DISPATCH_DUMMY_SECTIONS; i++)
		ret = add_section(d, NULL);
	for (unsigned int i = 0; !ret && i < n; i++) {
		uint64_t page = ranges[i].start >> PAGE_SHIFT, pages = ranges[i].size >> PAGE_SHIFT;

		ret = add_section(d, &ranges[i]);
		if (!ret)
			ret = reserve_nodes(d, hint, 3 * DISPATCH_LEVELS);
		if (!ret)
			set_pages(d, &d->root, &page, &pages, d->sections_used - 1,
				  DISPATCH_LEVELS - 1);
	}
	if (ret) {
		if (d)
			dispatch_free(d);
		return NULL;
	}
	d->magic = MAGIC;
	return d;
}

int dispatch_find(const struct dispatch *d, uint64_t addr)
{
	struct dispatch_entry e = d->root;
	uint64_t page = addr >> PAGE_SHIFT;

	if (d->magic != MAGIC)
		return -1;
	for (int level = DISPATCH_LEVELS - 1; e.skip; level--) {
		if (e.ptr == ENTRY_NIL || level < 0)
			return DISPATCH_UNASSIGNED;
		e = d->nodes[e.ptr].e[(page >> (level * DISPATCH_NODE_BITS)) % NODE_ENTRIES];
	}
	return (int)e.ptr;
}

void dispatch_free(struct dispatch *d)
{
	free(d->nodes);
	free(d->sections);
	memset(d, POISON, sizeof(*d));
	free(d);
}
