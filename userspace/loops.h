/* SPDX-License-Identifier: GPL-2.0 */
/* loops.h - C entry points to the driver's clear_loops.S for clearbench and readmodel. */
#ifndef _FASTZERO_LOOPS_H
#define _FASTZERO_LOOPS_H

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

static const char * const loop_names[FZ_NR_LOOPS] = FZ_LOOP_NAMES;

static sigjmp_buf loop_probe_env;

static inline void loop_probe_sigill(int sig)
{
	(void)sig;
	siglongjmp(loop_probe_env, 1);
}

/* Run loop @fn once on a stack buffer under a SIGILL handler: it ran. */
static inline bool loop_probe(clear_fn fn)
{
	char probe[512] __attribute__((aligned(64)));
	struct sigaction sa, old;
	volatile bool ran = false;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = loop_probe_sigill;
	sigaction(SIGILL, &sa, &old);
	if (!sigsetjmp(loop_probe_env, 1)) {
		fn(probe, sizeof(probe), sizeof(probe), 1);
		ran = true;
	}
	sigaction(SIGILL, &old, NULL);
	return ran;
}

#if defined(__x86_64__)
#include <cpuid.h>

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

/* clearbench-clzero-emul: clzero's line stores emulated (clear_loops.S) */
#ifdef FZ_CLZERO_EMULATE
#define FZ_CLZERO_EMULATED	1
#else
#define FZ_CLZERO_EMULATED	0
#endif

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

	if (l != FZ_LOOP_CLZERO || FZ_CLZERO_EMULATED)
		return true;
	if (!known[l]) {
		known[l] = 2;
		if (!__get_cpuid(0x80000008, &a, &b, &c, &d) || !(b & 1)) {
			reason[l] = "this CPU has no clzero (CPUID 0x80000008:EBX[0] clear)";
		} else if (loop_probe(loops[l])) {
			known[l] = 1;
		} else {
			reason[l] = "CPUID reports clzero, but it raised SIGILL";
		}
	}
	if (why)
		*why = reason[l];
	return known[l] == 1;
}


/* The loops the sections compare: the string store, the short-length variant, the cold one. */
#define BL_LOOP_STRING		FZ_LOOP_STOSB
/* readmodel: /dev/zero's candidates (erms is rep_stosb for 4 KiB chunks), every store */
#define BL_ZERO_LOOPS		{ FZ_LOOP_UNROLLED, FZ_LOOP_STOSQ, FZ_LOOP_STOSB }
#define BL_LIMIT_LOOPS		{ FZ_LOOP_UNROLLED, FZ_LOOP_STOSQ, FZ_LOOP_STOSB, \
				  FZ_LOOP_NT, FZ_LOOP_CLZERO }
#define BL_LOOP_SHORT		FZ_LOOP_ERMS
#define BL_LOOP_COLD		FZ_LOOP_CLZERO

#elif defined(__aarch64__)
#include <sys/auxv.h>

#include "fzcpu.h"

/* The DC ZVA block the zva loop takes: the driver's rule (cpu_policy.h). */
static inline unsigned long bl_zva_block(void)
{
	struct fz_cpu cpu;

	fz_read_cpu(&cpu);
	return fz_policy_zva_block(&cpu);
}

/* The loops are C functions here: one chunk walk, the loop a pointer. */
static inline void run_chunks(unsigned long (*fn)(void *, unsigned long),
			      const char *name, char *buf, size_t len,
			      size_t chunk, unsigned long passes)
{
	unsigned long p, n;
	size_t off;

	for (p = 0; p < passes; p++)
		for (off = 0; off < len; off += chunk) {
			n = fn(buf + off, BL_MIN(chunk, len - off));
			if (n)
				bl_die("%s: %lu bytes left", name, n);
		}
}

static inline unsigned long zva_fn(void *to, unsigned long n)
{
	static unsigned long block;

	if (!block)
		block = bl_zva_block();
	return fz_clear_zva(to, n, block);
}

#define DEFINE_CLEAR(sym, fn)						\
static inline void run_##sym(char *buf, size_t len, size_t chunk,	\
			     unsigned long passes)			\
{									\
	run_chunks(fn, #sym, buf, len, chunk, passes);			\
}

DEFINE_CLEAR(fz_clear_unrolled, fz_clear_unrolled)
DEFINE_CLEAR(fz_clear_nt, fz_clear_nt)
DEFINE_CLEAR(fz_clear_mops, fz_clear_mops)
DEFINE_CLEAR(fz_clear_zva, zva_fn)

static const clear_fn loops[FZ_NR_LOOPS] = {
	[FZ_LOOP_UNROLLED]	= run_fz_clear_unrolled,
	[FZ_LOOP_NT]		= run_fz_clear_nt,
	[FZ_LOOP_MOPS]		= run_fz_clear_mops,
	[FZ_LOOP_ZVA]		= run_fz_clear_zva,
};

#ifndef HWCAP2_MOPS
#define HWCAP2_MOPS		(1UL << 43)
#endif

/*
 * Whether this CPU runs loop @l; if not, *@why says why: mops needs
 * HWCAP2_MOPS and is run once under a SIGILL handler as well, dc_zva a
 * block DCZID_EL0 permits.
 */
static inline bool loop_runs(enum fz_loop l, const char **why)
{
	static int known[FZ_NR_LOOPS];	/* 0: not asked, 1: runs, 2: not */
	static const char *reason[FZ_NR_LOOPS];

	if (l == FZ_LOOP_ZVA && !bl_zva_block()) {
		if (why)
			*why = "DC ZVA is prohibited here (DCZID_EL0)";
		return false;
	}
	if (l != FZ_LOOP_MOPS)
		return true;
	if (!known[l]) {
		known[l] = 2;
		if (!(getauxval(AT_HWCAP2) & HWCAP2_MOPS))
			reason[l] = "this CPU has no FEAT_MOPS (HWCAP2_MOPS clear)";
		else if (loop_probe(loops[l]))
			known[l] = 1;
		else
			reason[l] = "HWCAP2 reports FEAT_MOPS, but it raised SIGILL";
	}
	if (why)
		*why = reason[l];
	return known[l] == 1;
}

#define BL_LOOP_STRING		FZ_LOOP_MOPS
/* /dev/zero's candidates: 6.12's sttr loop is nearest the stp one, 7.x's MOPS */
#define BL_ZERO_LOOPS		{ FZ_LOOP_UNROLLED, FZ_LOOP_MOPS }
#define BL_LIMIT_LOOPS		{ FZ_LOOP_UNROLLED, FZ_LOOP_NT, FZ_LOOP_MOPS, FZ_LOOP_ZVA }
#define BL_LOOP_SHORT		FZ_LOOP_MOPS
#define BL_LOOP_COLD		FZ_LOOP_ZVA
#define FZ_CLZERO_EMULATED	0

#else
#error "the benchmarks know x86-64 and arm64"
#endif

#endif /* _FASTZERO_LOOPS_H */
