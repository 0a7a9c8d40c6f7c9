/* SPDX-License-Identifier: GPL-2.0 */
/* loops.h - C entry points to driver/clear_loops.S for clearbench and readmodel. */
#ifndef _FASTZERO_LOOPS_H
#define _FASTZERO_LOOPS_H

#include <stddef.h>

#include "benchlib.h"
#include "clear_loops.h"

/* Clear @len bytes at @buf, @chunk bytes per loop call, @passes times. */
typedef void (*clear_fn)(char *buf, size_t len, size_t chunk,
			 unsigned long passes);

/*
 * The loops are not C functions: FZ_CALL_LOOP emits a direct call to a
 * literal symbol, so every loop gets its own copy of the chunk walk.
 */
#define DEFINE_CLEAR(sym)						\
static inline void run_##sym(char *buf, size_t len, size_t chunk,	\
			     unsigned long passes)			\
{									\
	unsigned long p;						\
	size_t off;							\
									\
	for (p = 0; p < passes; p++) {					\
		for (off = 0; off < len; off += chunk) {		\
			void *dst = buf + off;				\
			unsigned long n = BL_MIN(chunk, len - off);	\
									\
			FZ_CALL_LOOP(#sym, dst, n);			\
			if (n)						\
				bl_die(#sym ": %lu bytes left", n);	\
		}							\
	}								\
}

DEFINE_CLEAR(fz_clear_unrolled)
DEFINE_CLEAR(fz_clear_stosq)
DEFINE_CLEAR(fz_clear_erms)
DEFINE_CLEAR(fz_clear_stosb)
DEFINE_CLEAR(fz_clear_nt)

static const clear_fn loops[FZ_NR_LOOPS] = {
	[FZ_LOOP_UNROLLED]	= run_fz_clear_unrolled,
	[FZ_LOOP_STOSQ]		= run_fz_clear_stosq,
	[FZ_LOOP_ERMS]		= run_fz_clear_erms,
	[FZ_LOOP_STOSB]		= run_fz_clear_stosb,
	[FZ_LOOP_NT]		= run_fz_clear_nt,
};

static const char * const loop_names[FZ_NR_LOOPS] = FZ_LOOP_NAMES;

#endif /* _FASTZERO_LOOPS_H */
