/* SPDX-License-Identifier: GPL-2.0 */
/*
 * clear_loops.h - x86-64: the clearing loops' contract, shared by the driver and userspace.
 *
 * The loops themselves live in clear_loops.S and are assembled unchanged into
 * the module and into userspace/clearbench, so the benchmark measures exactly
 * the instructions the driver executes.
 *
 * Calling convention of every loop (not the C ABI; call them from inline asm):
 *   in:  %rdi = destination, %rcx = length in bytes
 *   out: %rcx = bytes left uncleared (non-zero only after a user fault)
 *   clobbers: %rax, %rdx, %rdi, flags; no stack use beyond the return address.
 *
 * The module assembles the fz_clear_user_*() entry points: the loops
 * bracketed by STAC/CLAC with an exception-table entry on every store.
 * Userspace assembles the same loops as plain fz_clear_*() functions.
 */
#ifndef _FASTZERO_CLEAR_LOOPS_H
#define _FASTZERO_CLEAR_LOOPS_H

/*
 * erms_threshold on AMD, the value fz_erms_threshold holds until the load
 * derives it (policy.h): rep stosb overtook the movq loop at 640-768 B
 * (Zen 4).  Plain, for the assembler.
 */
#define FZ_ERMS_THRESHOLD_AMD	768
/* The line one CLZERO clears (AMD APM vol. 3). */
#define FZ_CLZERO_LINE		64

#ifdef __ASSEMBLER__

#ifdef __KERNEL__
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/smap.h>
#include <asm/trapnr.h>
#define FZ_USER_VARIANTS	1
#else
/* Userspace builds -include userspace/kasm.h for SYM_FUNC_START/END and RET. */
#define FZ_USER_VARIANTS	0
#endif

#else /* !__ASSEMBLER__ */

/**
 * enum fz_loop - the clearing strategies implemented in clear_loops.S
 * @FZ_LOOP_AUTO: none chosen: the loop the alternatives patched in (a
 *	force_variant of "auto", or no cold store)
 * @FZ_LOOP_UNROLLED: 8 x movq per 64-byte iteration, then words and bytes
 * @FZ_LOOP_STOSQ: rep stosq for the qwords, a byte tail for the rest
 * @FZ_LOOP_ERMS: rep stosb from fz_erms_threshold bytes up, unrolled below
 * @FZ_LOOP_STOSB: rep stosb for every length (fast-short-rep CPUs)
 * @FZ_LOOP_NT: non-temporal movnti stores and one sfence (cache bypass)
 * @FZ_LOOP_CLZERO: AMD's CLZERO, one 64-byte line per instruction without
 *	reading it in, movq head and unrolled tail, one sfence (cold memory);
 *	the driver uses it only after its load-time self-test ran it
 * @FZ_NR_LOOPS: number of strategies
 */
enum fz_loop {
	FZ_LOOP_AUTO = -1,
	FZ_LOOP_UNROLLED,
	FZ_LOOP_STOSQ,
	FZ_LOOP_ERMS,
	FZ_LOOP_STOSB,
	FZ_LOOP_NT,
	FZ_LOOP_CLZERO,
	FZ_NR_LOOPS,
};

/* Names as shown in sysfs and in benchmark output, indexed by enum fz_loop. */
#define FZ_LOOP_NAMES { "unrolled", "rep_stosq", "erms", "rep_stosb", "nt", "clzero" }
/* The same, for force_variant's description. */
#define FZ_LOOP_LIST	"unrolled, rep_stosq, erms, rep_stosb (every length), nt, clzero (once its load-time self-test passed)"

/* Lengths below this use the unrolled loop in the ERMS variant. */
extern unsigned long fz_erms_threshold;

/*
 * Run @insn, which calls one of the loops (possibly through an ALTERNATIVE),
 * on (@dst, @len): @len is updated in place to the bytes left uncleared.
 * @extra adds output constraints (the kernel passes ASM_CALL_CONSTRAINT).
 * Userspace callers must build with -mno-red-zone: the call pushes a return
 * address below the stack pointer.
 */
#define FZ_LOOP_ASM(insn, dst, len, extra...)				\
	({								\
		asm volatile(insn					\
			     : "+c" (len), "+D" (dst), ##extra		\
			     : : "rax", "rdx", "cc", "memory");		\
	})

/* Call loop @fn, a string such as "fz_clear_stosb". */
#define FZ_CALL_LOOP(fn, dst, len, extra...)				\
	FZ_LOOP_ASM("call " fn, dst, len, ##extra)

#endif /* __ASSEMBLER__ */
#endif /* _FASTZERO_CLEAR_LOOPS_H */
