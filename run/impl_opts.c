/* SPDX-License-Identifier: GPL-2.0-or-later */
/* impl_opts.c - the table of implementation choices; the names belong to the impl modules. */
#include "run/impl_opts.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "impl/memslots.h"
#include "impl/prealloc.h"
#include "impl/rcu.h"
#include "util/util.h"

struct impl_key {
	const char *key;
	const char *const *names; /* the values, as the owning module names them */
	unsigned int n_names;
	unsigned int def; /* index of the default: what landed upstream */
	const char *doc;
	unsigned int max_number; /* > 0: a whole number from 1 to this is also accepted */
};

/* Not enums of a module: "vcpus" means the guest's vCPU count, the caps are QEMU's. */
#define STR_(x) #x
#define STR(x) STR_(x)
static const char *const threads_values[] = {"vcpus"};
static const char *const cap_values[] = {STR(PREALLOC_CAP_DEFAULT), STR(PREALLOC_CAP_QEMU)};
/* Not the implementation's: where the placement check binds each region (next: a planted
 * wrong binding, which the check must catch). */
static const char *const node_values[] = {"own", "next"};

/* The largest thread count --impl takes: more than any host has PUs (the rule then uses
 * the PUs). */
#define NUMBER_MAX 4096

static const struct impl_key keys[] = {
    {"memslots.update", memslots_update_names, MEMSLOTS_UPDATES, MEMSLOTS_SHIFT,
     "how a changed slot is put back in order (shift: KVM since 2014)", 0},
    {"memslots.lookup", memslots_lookup_names, MEMSLOTS_LOOKUP_MODES, 3,
     "how a gfn finds its slot (binary+cache: KVM since December 2014)", 0},
    {"prealloc.method", prealloc_method_names, PREALLOC_METHODS, PREALLOC_POPULATE,
     "how pages are faulted in (populate: MADV_POPULATE_WRITE, falls back to touch)", 0},
    {"prealloc.threads", threads_values, ARRAY_SIZE(threads_values), 0,
     "threads asked for (vcpus: the guest's vCPU count, here the host's PUs), or N", NUMBER_MAX},
    {"prealloc.cap", cap_values, ARRAY_SIZE(cap_values), 0,
     "most threads used (32 proposed in 2025, 16 QEMU's today), or N", NUMBER_MAX},
    {"prealloc.node", node_values, ARRAY_SIZE(node_values), 0,
     "the node each region is bound to in the placement check (next: a planted wrong one)", 0},
    {"rcu.trim", rcu_trim_names, RCU_TRIM_POLICIES, RCU_TRIM_IDLE,
     "when the call_rcu thread calls malloc_trim (idle: what QEMU kept)", 0},
};

static_assert(ARRAY_SIZE(keys) <= IMPL_MAX_KEYS, "raise IMPL_MAX_KEYS");

static int key_index(const char *key, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].key) == len && !strncmp(keys[i].key, key, len))
			return (int)i;
	return -1;
}

static bool is_number(const char *s, unsigned int max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	return *s >= '1' && *s <= '9' && !*end && v <= max;
}

/* @k's names, the default first, @sep between them. */
static void list_values(const struct impl_key *k, const char *sep, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int j = 0; j < k->n_names && used < len; j++) {
		/* The default, then the older ones back from it, then the newer ones. */
		unsigned int v = j <= k->def ? k->def - j : j;

		used += (size_t)snprintf(buf + used, len - used, "%s%s", j ? sep : "", k->names[v]);
	}
}

int impl_opts_set(struct impl_opts *o, const char *assignment, struct mg_err *err)
{
	const char *eq = strchr(assignment, '=');
	int k = eq ? key_index(assignment, (size_t)(eq - assignment)) : -1;
	char list[256];

	if (k < 0)
		return mg_err_set(err, EINVAL, "--impl %s: expected KEY=VALUE with KEY one of %s%s",
				  assignment, keys[0].key,
				  ARRAY_SIZE(keys) > 1 ? ", ... (see --help)" : "");
	if (keys[k].max_number && is_number(eq + 1, keys[k].max_number)) {
		o->value[k] = eq + 1;
		return 0;
	}
	for (unsigned int j = 0; j < keys[k].n_names; j++) {
		if (!strcmp(keys[k].names[j], eq + 1)) {
			o->value[k] = keys[k].names[j];
			return 0;
		}
	}
	list_values(&keys[k], ", ", list, sizeof(list));
	if (keys[k].max_number)
		return mg_err_set(err, EINVAL,
				  "--impl %s: %s takes %s or a whole number from 1 to %u",
				  assignment, keys[k].key, list, keys[k].max_number);
	return mg_err_set(err, EINVAL, "--impl %s: %s takes %s", assignment, keys[k].key, list);
}

const char *impl_get(const struct impl_opts *o, const char *key)
{
	int k = key_index(key, strlen(key));

	if (k < 0)
		return "";
	return o && o->value[k] ? o->value[k] : keys[k].names[keys[k].def];
}

void impl_opts_describe(FILE *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char list[256];

		list_values(&keys[i], "|", list, sizeof(list));
		fprintf(out, "  %-18s%s%s\n  %-18s%s; default %s\n", keys[i].key, list,
			keys[i].max_number ? "|N" : "", "", keys[i].doc,
			keys[i].names[keys[i].def]);
	}
}

const char *impl_opts_key(unsigned int i)
{
	return i < ARRAY_SIZE(keys) ? keys[i].key : NULL;
}
