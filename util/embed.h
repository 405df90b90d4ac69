/* SPDX-License-Identifier: GPL-2.0-or-later */
/* embed.h - a file of the tree compiled into the binary as a NUL-terminated string. */
#ifndef MG_UTIL_EMBED_H
#define MG_UTIL_EMBED_H

/*
 * EMBED_TEXT(sym, "path") - const char sym[]: the bytes of the file at path, from the tree's
 * top (make runs there), and a NUL. The assembler copies them into .rodata; make knows
 * nothing of it, so the Makefile makes the object depend on the file.
 */
#define EMBED_TEXT(sym, path)                                                                      \
	__asm__(".section .rodata\n"                                                               \
		".global " #sym "\n"                                                               \
		".type " #sym ", @object\n" #sym ":\n"                                             \
		".incbin \"" path "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".size " #sym ", . - " #sym "\n"                                                   \
		".previous\n");                                                                    \
	extern const char sym[]

#endif
