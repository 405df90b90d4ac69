/* SPDX-License-Identifier: GPL-2.0-or-later */
/* impl_opts.c - the implementation choices of a run, checked against the suites' keys. */
#include "run/impl_opts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const struct impl_key *key_named(const struct impl_key *const *keys, size_t n,
					const char *key, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(keys[i]->key) == len && !strncmp(keys[i]->key, key, len))
			return keys[i];
	return NULL;
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

/* @o's choice for @k, set to @value: a slot of its own the first time. 0 or -ENOSPC. */
static int choose(struct impl_opts *o, const struct impl_key *k, const char *value,
		  struct mg_err *err)
{
	size_t i = 0;

	while (i < o->n && o->key[i] != k)
		i++;
	if (i == IMPL_MAX_KEYS)
		return mg_err_set(err, ENOSPC, "--impl %s: more than %d keys", k->key,
				  IMPL_MAX_KEYS);
	o->key[i] = k;
	o->value[i] = value;
	o->n += i == o->n;
	return 0;
}

int impl_opts_set(struct impl_opts *o, const struct impl_key *const *keys, size_t n,
		  const char *assignment, struct mg_err *err)
{
	const char *eq = strchr(assignment, '=');
	const struct impl_key *k =
	    eq ? key_named(keys, n, assignment, (size_t)(eq - assignment)) : NULL;
	char list[256];

	if (!k)
		return mg_err_set(err, EINVAL, "--impl %s: expected KEY=VALUE with KEY one of %s%s",
				  assignment, n ? keys[0]->key : "(none)",
				  n > 1 ? ", ... (see --help)" : "");
	if (k->max_number && is_number(eq + 1, k->max_number))
		return choose(o, k, eq + 1, err);
	for (unsigned int j = 0; j < k->n_names; j++)
		if (!strcmp(k->names[j], eq + 1))
			return choose(o, k, k->names[j], err);
	list_values(k, ", ", list, sizeof(list));
	if (k->max_number)
		return mg_err_set(err, EINVAL,
				  "--impl %s: %s takes %s or a whole number from 1 to %u",
				  assignment, k->key, list, k->max_number);
	return mg_err_set(err, EINVAL, "--impl %s: %s takes %s", assignment, k->key, list);
}

const char *impl_get(const struct impl_opts *o, const struct impl_key *key)
{
	for (size_t i = 0; o && i < o->n; i++)
		if (o->key[i] == key)
			return o->value[i];
	return key->names[key->def];
}

void impl_opts_describe(const struct impl_key *const *keys, size_t n, FILE *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct impl_key *k = keys[i];
		char list[256];

		list_values(k, "|", list, sizeof(list));
		fprintf(out, "  %-18s%s%s\n  %-18s%s; default %s\n", k->key, list,
			k->max_number ? "|N" : "", "", k->doc, k->names[k->def]);
	}
}
