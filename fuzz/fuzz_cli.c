/* fuzz_cli.c - libFuzzer target: the command line. The input is the words of one command
 * (run, ab or compare by its first byte), separated by NUL or newline bytes. */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct option *const tables[] = {cli_run_options, cli_ab_options,
						      cli_compare_options, cli_list_options};
	static const char *const shorts[] = {"s:k:n:", "s:k:n:", "", "s:k:"};
	char *text, *argv[MAX_WORDS + 2];
	int argc = 0, which;
	struct cli c;

	if (size < 1)
		return 0;
	which = data[0] % 4;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	argv[argc++] = "memgate-command";
	for (char *w = text; w < text + size - 1 && argc < MAX_WORDS;) {
		size_t len = strcspn(w, "\n");

		w[len] = '\0';
		/* --help prints the usage and exits: the one path not for a fuzzer. */
		if (!strncmp(w, "--h", 3) || !strcmp(w, "-h")) {
			free(text);
			return 0;
		}
		argv[argc++] = w;
		w += len + 1;
	}
	argv[argc] = NULL;
	opterr = 0; /* getopt's complaints are not what this looks for */
	(void)cli_parse(&c, argc, argv, tables[which], shorts[which], 16);
	free(text);
	return 0;
}
