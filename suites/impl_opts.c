/* impl_opts.c - the table of implementation choices and their defaults. */
#include "suites/impl_opts.h"

#include <errno.h>
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct impl_key {
	const char *key;
	const char *const *values;	/* NULL-terminated; the first is the default */
	const char *doc;
	unsigned int max_number;	/* > 0: a whole number from 1 to this is also accepted */
};

static const char *const memslots_update[] = {"shift", "swap", "heapsort", "shift-posted", NULL};
static const char *const memslots_lookup[] = {"binary+cache", "binary", "linear+cache", "linear",
					      NULL};
static const char *const prealloc_method[] = {"populate", "touch", "mlock", NULL};
static const char *const prealloc_threads[] = {"vcpus", NULL};
static const char *const prealloc_cap[] = {"32", "16", NULL};
static const char *const rcu_trim[] = {"idle", "every-batch", "none", NULL};

/* The default of each key is what landed upstream; the others are the references. */
static const struct impl_key keys[] = {
	{"memslots.update", memslots_update,
	 "how a changed slot is put back in order (shift: KVM since 2014)", 0},
	{"memslots.lookup", memslots_lookup,
	 "how a gfn finds its slot (binary+cache: KVM since December 2014)", 0},
	{"prealloc.method", prealloc_method,
	 "how pages are faulted in (populate: MADV_POPULATE_WRITE, falls back to touch)", 0},
	{"prealloc.threads", prealloc_threads,
	 "threads asked for (vcpus: the guest's vCPU count, here the host's PUs), or N", 4096},
	{"prealloc.cap", prealloc_cap,
	 "most threads used (32 proposed in 2025, 16 QEMU's today), or N", 4096},
	{"rcu.trim", rcu_trim,
	 "when the call_rcu thread calls malloc_trim (idle: what QEMU kept)", 0},
};

static_assert(sizeof(keys) / sizeof(keys[0]) <= IMPL_MAX_KEYS, "raise IMPL_MAX_KEYS");

static int key_index(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
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

int impl_opts_set(struct impl_opts *o, const char *assignment, struct mg_err *err)
{
	const char *eq = strchr(assignment, '=');
	int k = eq ? key_index(assignment, (size_t)(eq - assignment)) : -1;
	char list[256] = "";

	if (k < 0)
		return mg_err_set(err, EINVAL, "--impl %s: expected KEY=VALUE with KEY one of %s%s",
				  assignment, keys[0].key, sizeof(keys) > sizeof(keys[0])
								  ? ", ... (see --help)" : "");
	if (keys[k].max_number && is_number(eq + 1, keys[k].max_number)) {
		o->value[k] = eq + 1;
		return 0;
	}
	for (const char *const *v = keys[k].values; *v; v++) {
		if (!strcmp(*v, eq + 1)) {
			o->value[k] = *v;
			return 0;
		}
		strncat(list, list[0] ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, *v, sizeof(list) - strlen(list) - 1);
	}
	return mg_err_set(err, EINVAL, "--impl %s: %s takes %s%s", assignment, keys[k].key, list,
			  keys[k].max_number ? " or a whole number" : "");
}

const char *impl_get(const struct impl_opts *o, const char *key)
{
	int k = key_index(key, strlen(key));

	if (k < 0)
		return "";
	return o && o->value[k] ? o->value[k] : keys[k].values[0];
}

void impl_opts_describe(FILE *out)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		fprintf(out, "  %-18s", keys[i].key);
		for (const char *const *v = keys[i].values; *v; v++)
			fprintf(out, "%s%s", v == keys[i].values ? "" : "|", *v);
		if (keys[i].max_number)
			fprintf(out, "|N");
		fprintf(out, "\n  %-18s%s; default %s\n", "", keys[i].doc, keys[i].values[0]);
	}
}
