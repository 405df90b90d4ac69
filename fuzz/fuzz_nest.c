/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_nest.c - libFuzzer target: what goes into a guest and what comes back. The same bytes
 * as a kernel image's boot header and as a kernel module's .modinfo (memgate vm --kernel
 * reads both), and as the guest's JSON and JUnit (split at a separator line), which memgate
 * vm nests into the host's reports: a result or an error naming the file, never a crash, a
 * hang or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/nest.h"
#include "run/kernel.h"

#define SEP "\n@@\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @len bytes of @text as a new temporary file, its name in @path; 0 or -1. */
static int temp_file(const char *text, size_t len, char *path, size_t path_len)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(path, path_len, "%s/memgate-fuzz-nest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nest_prop props[] = {{"vm.shape", "sockets=2,nodes=2"},
						 {"vm.accel", "tcg"}};
	const char *text = (const char *)data;
	const char *sep = memmem(text, size, SEP, strlen(SEP));
	size_t json_len = sep ? (size_t)(sep - text) : size;
	char json[256], junit[256], value[256], banner[256];
	struct mg_err err;

	vm_kernel_modinfo(data, size, "depends", value, sizeof(value));
	vm_kernel_modinfo(data, size, "vermagic", value, sizeof(value));
	if (temp_file(text, json_len, json, sizeof(json)))
		return 0;
	vm_kernel_version(json, value, sizeof(value), banner, sizeof(banner), &err);
	report_nest_json(json, "/dev/null", "guest[sockets=2,nodes=2]", props, 2, &err);
	unlink(json);
	if (sep &&
	    !temp_file(sep + strlen(SEP), size - json_len - strlen(SEP), junit, sizeof(junit))) {
		report_nest_junit(junit, "/dev/null", "guest[sockets=2,nodes=2]", props, 2, &err);
		unlink(junit);
	}
	return 0;
}
