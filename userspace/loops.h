/* SPDX-License-Identifier: GPL-2.0 */
/* loops.h - C entry points to driver/arch/x86/clear_loops.S for clearbench and readmodel. */
#ifndef _FASTZERO_LOOPS_H
#define _FASTZERO_LOOPS_H

#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <string.h>

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
DEFINE_CLEAR(fz_clear_clzero)

static const clear_fn loops[FZ_NR_LOOPS] = {
	[FZ_LOOP_UNROLLED]	= run_fz_clear_unrolled,
	[FZ_LOOP_STOSQ]		= run_fz_clear_stosq,
	[FZ_LOOP_ERMS]		= run_fz_clear_erms,
	[FZ_LOOP_STOSB]		= run_fz_clear_stosb,
	[FZ_LOOP_NT]		= run_fz_clear_nt,
	[FZ_LOOP_CLZERO]	= run_fz_clear_clzero,
};

static const char * const loop_names[FZ_NR_LOOPS] = FZ_LOOP_NAMES;

/* clearbench-clzero-emul: clzero's line stores emulated (clear_loops.S) */
#ifdef FZ_CLZERO_EMULATE
#define FZ_CLZERO_EMULATED	1
#else
#define FZ_CLZERO_EMULATED	0
#endif

static sigjmp_buf loop_probe_env;

static void loop_probe_sigill(int sig)
{
	(void)sig;
	siglongjmp(loop_probe_env, 1);
}

/*
 * Whether this CPU runs loop @l; if not, *@why says why.  Every loop but
 * clzero uses baseline x86-64 instructions.  clzero needs CPUID
 * 0x80000008:EBX[0], and CPUID alone is not trusted (a hypervisor may
 * advertise what the CPU does not run): the loop is also run once, on a
 * stack buffer, under a SIGILL handler.
 */
static inline bool loop_runs(enum fz_loop l, const char **why)
{
	static int known[FZ_NR_LOOPS];	/* 0: not asked, 1: runs, 2: not */
	static const char *reason[FZ_NR_LOOPS];
	unsigned int a, b, c, d;
	struct sigaction sa, old;
	char probe[512] __attribute__((aligned(64)));
	volatile bool ran = false;

	if (l != FZ_LOOP_CLZERO || FZ_CLZERO_EMULATED)
		return true;
	if (!known[l]) {
		known[l] = 2;
		if (!__get_cpuid(0x80000008, &a, &b, &c, &d) || !(b & 1)) {
			reason[l] = "this CPU has no clzero (CPUID 0x80000008:EBX[0] clear)";
		} else {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = loop_probe_sigill;
			sigaction(SIGILL, &sa, &old);
			if (!sigsetjmp(loop_probe_env, 1)) {
				loops[l](probe, sizeof(probe), sizeof(probe), 1);
				ran = true;
			}
			sigaction(SIGILL, &old, NULL);
			known[l] = ran ? 1 : 2;
			if (!ran)
				reason[l] = "CPUID reports clzero, but it raised SIGILL";
		}
	}
	if (why)
		*why = reason[l];
	return known[l] == 1;
}

#endif /* _FASTZERO_LOOPS_H */
