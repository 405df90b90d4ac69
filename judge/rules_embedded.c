/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules_embedded.c - ci/rules.conf compiled in, NUL-terminated: `memgate run` needs no file. */
#include "judge/rules.h"

/*
 * The assembler copies the file's bytes into .rodata (the Makefile makes this object depend
 * on ci/rules.conf). The path is the repository root's: make runs there.
 */
__asm__(".section .rodata\n"
	".global rules_embedded_text\n"
	".type rules_embedded_text, @object\n"
	"rules_embedded_text:\n"
	".incbin \"ci/rules.conf\"\n"
	".byte 0\n"
	".size rules_embedded_text, . - rules_embedded_text\n"
	".previous\n");
