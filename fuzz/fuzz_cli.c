/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_cli.c - libFuzzer target: the command line. The input is the words of one command (any
 * of memgate's, by its first byte), separated by NUL or newline bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *argv[MAX_WORDS + 2];
	int argc = 0;
	size_t n = 0;
	struct cli c;

	if (size < 1)
		return 0;
	while (cli_commands[n].name)
		n++;
	if (!n)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	argv[argc++] = (char *)cli_commands[data[0] % n].name;
	for (char *w = text; w < text + size - 1 && argc < MAX_WORDS;) {
		size_t len = strcspn(w, "\n");

		w[len] = '\0';
		/* --help prints the usage: test_options covers it; a fuzzer's time is better spent
		 * on the values. */
		if (!strncmp(w, "--h", 3) || !strcmp(w, "-h")) {
			free(text);
			return 0;
		}
		argv[argc++] = w;
		w += len + 1;
	}
	argv[argc] = NULL;
	(void)cli_parse(&c, argc, argv, cli_commands[data[0] % n].name);
	free(text);
	return 0;
}
