/* SPDX-License-Identifier: GPL-2.0 */
/* clear.h - x86-64: the ALTERNATIVE-selected clear_user() over the loops in clear_loops.S. */
#ifndef _FASTZERO_CLEAR_H
#define _FASTZERO_CLEAR_H

#include <linux/kernel.h>
#include <linux/kmsan-checks.h>
#include <linux/uaccess.h>
#include <asm/alternative.h>
#include <asm/cpufeatures.h>
#include "clear_loops.h"
#include "compat.h"

/*
 * Which loop clears user memory.  ALTERNATIVE_2 patches the call once, when
 * the module is loaded (module_finalize() applies .altinstructions); the last
 * variant whose feature the CPU has wins:
 *
 *  - unrolled:  CPUs whose rep stos is microcoded slowly (no REP_GOOD).
 *  - rep_stosq: REP_GOOD, fast rep stos for long runs, but without ERMS a
 *               byte-granular rep stosb is not enhanced; the tail is bytewise.
 *  - erms:      ERMS, rep stosb is the fastest way to clear long runs, but its
 *               start-up cost loses to the unrolled loop below
 *               fz_erms_threshold bytes, so short lengths take that loop.
 *               With fast short rep stosb (FSRS as CPUID 7.1:EAX[11] reports
 *               it) the threshold is 0: one rep stosb for every length.
 *
 * There is no variant keyed on X86_FEATURE_FSRS, which the kernel's own
 * clear_user() uses (6.4+: rep stosb at every length, else no rep stos at
 * all): since 6.4 init_amd() also sets that bit on every CPU with FSRM
 * ("AMD FSRM also implies FSRS"), and on such a CPU (Zen 4, measured:
 * README) a 128-byte rep stosb takes 3.2x the unrolled loop.  The erms
 * variant with a threshold read from CPUID serves both kinds of CPU.
 */
#define FZ_CLEAR_USER_ALTERNATIVE(unrolled, stosq, erms)		\
	ALTERNATIVE_2(unrolled,						\
		      stosq, X86_FEATURE_REP_GOOD,			\
		      erms, X86_FEATURE_ERMS)

/**
 * fz_arch_clear_user() - fz_clear_user()'s stores: the patched-in loop
 * @to: user destination, checked by fz_clear_user()
 * @n: number of bytes to clear
 *
 * SMAP is opened around the stores only (STAC/CLAC inside the loop), and a
 * fault ends the clear through the exception table.
 *
 * Return: the number of bytes that were not cleared, exact.
 */
static __always_inline unsigned long fz_arch_clear_user(void __user *to,
							unsigned long n)
{
	FZ_LOOP_ASM(FZ_CLEAR_USER_ALTERNATIVE("call fz_clear_user_unrolled",
					      "call fz_clear_user_stosq",
					      "call fz_clear_user_erms"),
		    to, n, ASM_CALL_CONSTRAINT);
	return n;
}

/**
 * fz_clear_user_selected() - the clear_user loop the alternatives patched in
 *
 * Runs the same ALTERNATIVE_2 as fz_arch_clear_user(), with each variant loading
 * its own enum fz_loop value, so what it reports is what the patching chose.
 *
 * Return: FZ_LOOP_UNROLLED, FZ_LOOP_STOSQ or FZ_LOOP_ERMS.
 */
static inline enum fz_loop fz_clear_user_selected(void)
{
	unsigned int loop;

	asm(FZ_CLEAR_USER_ALTERNATIVE("movl %1, %0", "movl %2, %0",
				      "movl %3, %0")
	    : "=r" (loop)
	    : "i" (FZ_LOOP_UNROLLED), "i" (FZ_LOOP_STOSQ),
	      "i" (FZ_LOOP_ERMS));
	return loop;
}

/**
 * fz_arch_clear_user_loop() - fz_clear_user_loop()'s stores: one named loop
 * @loop: the strategy to use, whatever the CPU
 * @to: user destination, checked by fz_clear_user_loop()
 * @n: number of bytes to clear
 *
 * Every loop runs on any CPU but clzero, which force_variant takes only
 * once clzero.c's self-test passed.
 *
 * Return: the number of bytes that were not cleared.
 */
static inline unsigned long fz_arch_clear_user_loop(enum fz_loop loop,
						    void __user *to,
						    unsigned long n)
{
	switch (loop) {
	case FZ_LOOP_UNROLLED:
		FZ_CALL_LOOP("fz_clear_user_unrolled", to, n, ASM_CALL_CONSTRAINT);
		break;
	case FZ_LOOP_STOSQ:
		FZ_CALL_LOOP("fz_clear_user_stosq", to, n, ASM_CALL_CONSTRAINT);
		break;
	case FZ_LOOP_ERMS:
		FZ_CALL_LOOP("fz_clear_user_erms", to, n, ASM_CALL_CONSTRAINT);
		break;
	case FZ_LOOP_STOSB:
		FZ_CALL_LOOP("fz_clear_user_stosb", to, n, ASM_CALL_CONSTRAINT);
		break;
	case FZ_LOOP_NT:
		FZ_CALL_LOOP("fz_clear_user_nt", to, n, ASM_CALL_CONSTRAINT);
		break;
	case FZ_LOOP_CLZERO:	/* only once clzero.c's self-test passed */
		FZ_CALL_LOOP("fz_clear_user_clzero", to, n, ASM_CALL_CONSTRAINT);
		break;
	default:
		return fz_arch_clear_user(to, n);
	}
	return n;
}

/**
 * fz_clear_pages() - clear a kernel page range with the CPU's best stores
 * @addr: start address of the range, in the kernel's direct map
 * @npages: number of pages
 *
 * The kernel's clear_pages() where it has one (7.x).  Before that (6.12)
 * the same ALTERNATIVE_2 as 7.x's, with fastzero's own unrolled loop from
 * clear_loops.S (its plain flavour) where 7.x calls
 * __clear_pages_unrolled(): rep stosq on REP_GOOD, rep stosb on ERMS.  No
 * short-length concern here: the range is whole pages, at least 4 KiB,
 * where rep stosb wins on every ERMS CPU measured (README).  The caller
 * bounds @npages for preemption latency as 7.x's callers must
 * (PROCESS_PAGES_NON_PREEMPT_BATCH, 32 MiB).
 *
 * Does no exception handling: the range must be mapped and writable.
 */
static inline void fz_clear_pages(void *addr, unsigned int npages)
{
#ifdef FZ_HAVE_KERNEL_CLEAR_PAGES
	clear_pages(addr, npages);
#else
	unsigned long len = (unsigned long)npages << PAGE_SHIFT;
	unsigned long zero = 0;

	kmsan_unpoison_memory(addr, len);
	asm volatile(ALTERNATIVE_2("call fz_clear_unrolled",
				   "shrq $3, %%rcx; rep stosq", X86_FEATURE_REP_GOOD,
				   "rep stosb", X86_FEATURE_ERMS)
		     : "+c" (len), "+D" (addr), "+a" (zero), ASM_CALL_CONSTRAINT
		     : : "rdx", "cc", "memory");
#endif
}

/**
 * fz_clear_kernel_clzero() - clear cold kernel memory with CLZERO
 * @addr: start of the range, mapped and writable
 * @len: bytes to clear, any length and alignment
 *
 * The plain flavour of clear_loops.S's clzero loop: a movq head, CLZERO for
 * every whole 64-byte line, the unrolled loop for the tail, one sfence
 * before it returns.  CLZERO zeroes a line without reading it in, so a
 * destination that is not in the cache costs no read-for-ownership (Zen 4,
 * userspace: 2.3x rep stosb for cold 1-16 MiB clears, docs/design-clear.md).  Callers
 * use it only when fz_clzero_usable(): the CPU ran it at load.  Does no
 * exception handling.
 */
static inline void fz_clear_kernel_clzero(void *addr, unsigned long len)
{
	kmsan_unpoison_memory(addr, len);
	FZ_CALL_LOOP("fz_clear_clzero", addr, len, ASM_CALL_CONSTRAINT);
}

/**
 * fz_clear_cold_pages() - clear a kernel page range the cache does not hold
 * @addr: start address of the range, in the kernel's direct map
 * @npages: number of pages
 * @cold_loop: fz_policy_cold_loop()'s store: FZ_LOOP_CLZERO (only once
 *	clzero.c's self-test passed), FZ_LOOP_NT, or FZ_LOOP_AUTO
 *
 * For memory that is new to the cache, such as a huge folio fresh from
 * the allocator: CLZERO or MOVNTI, which do not read the lines in first
 * (policy.h: 2.3x rep stosb on Zen 4), else fz_clear_pages().  Both end
 * with an sfence.  Does no exception handling.
 */
static inline void fz_clear_cold_pages(void *addr, unsigned int npages,
				       enum fz_loop cold_loop)
{
	unsigned long len = (unsigned long)npages << PAGE_SHIFT;

	switch (cold_loop) {
	case FZ_LOOP_CLZERO:
		fz_clear_kernel_clzero(addr, len);
		break;
	case FZ_LOOP_NT:
		kmsan_unpoison_memory(addr, len);
		FZ_CALL_LOOP("fz_clear_nt", addr, len, ASM_CALL_CONSTRAINT);
		break;
	default:
		fz_clear_pages(addr, npages);
	}
}

/* clzero.c: the clzero variant, proven at load (fz_clzero_init()) or refused */
enum fz_clzero_state {
	FZ_CLZERO_UNTESTED,
	FZ_CLZERO_REFUSED,
	FZ_CLZERO_USABLE,
};

bool fz_clzero_usable(void);
bool fz_clzero_refused(void);
void fz_clzero_init(bool forced);
const char *fz_clzero_reason(void);
const char *fz_clzero_state_name(void);

/* cpu.c: policy/'s erms_threshold_source and clzero (arch.h) */
#define FZ_ARCH_NR_POLICY_ATTRS	2

#endif /* _FASTZERO_CLEAR_H */
