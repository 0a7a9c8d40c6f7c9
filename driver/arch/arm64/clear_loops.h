/* SPDX-License-Identifier: GPL-2.0 */
/*
 * clear_loops.h - arm64: the clearing loops' contract, shared by the driver and userspace.
 *
 * The loops live in clear_loops.S, assembled into the module and, as plain
 * functions, into userspace.  They are C functions (AAPCS64):
 *   in:  x0 = destination, x1 = length in bytes, x2 = the DC ZVA block
 *        (fz_clear_*_zva() only)
 *   out: x0 = bytes left uncleared (non-zero only after a user fault)
 *
 * The module's fz_clear_user_*() entry points carry an exception-table
 * entry on every store (USER(), asm/asm-uaccess.h); clear.h opens user
 * access around them.  Userspace gets fz_clear_*().
 */
#ifndef _FASTZERO_CLEAR_LOOPS_H
#define _FASTZERO_CLEAR_LOOPS_H

/*
 * DC ZVA blocks the zva loop takes: DCZID_EL0.BS gives 4 << BS bytes, up
 * to 2 KiB (Arm ARM D23.2); below 16 a block is less than one stp.
 */
#define FZ_ZVA_BLOCK_MIN	16
#define FZ_ZVA_BLOCK_MAX	2048

#ifdef __ASSEMBLER__

#ifdef __KERNEL__
#include <linux/linkage.h>
#include <asm/asm-uaccess.h>
#define FZ_USER_VARIANTS	1
#else
#define FZ_USER_VARIANTS	0
#endif

#else /* !__ASSEMBLER__ */

/**
 * enum fz_loop - the clearing strategies implemented in clear_loops.S
 * @FZ_LOOP_AUTO: none chosen: the loop fz_clear_user() runs (mops where the
 *	CPU has FEAT_MOPS, else unrolled)
 * @FZ_LOOP_UNROLLED: stp xzr, xzr: 64 bytes a round at 64-byte alignment
 * @FZ_LOOP_NT: the same with stnp, the non-temporal hint
 * @FZ_LOOP_MOPS: FEAT_MOPS's SETPT/SETMT/SETET, the CPU's own memset
 * @FZ_LOOP_ZVA: DC ZVA for every whole block, stp for the head and tail:
 *	writes a block without reading it in (cold memory)
 * @FZ_NR_LOOPS: number of strategies
 */
enum fz_loop {
	FZ_LOOP_AUTO = -1,
	FZ_LOOP_UNROLLED,
	FZ_LOOP_NT,
	FZ_LOOP_MOPS,
	FZ_LOOP_ZVA,
	FZ_NR_LOOPS,
};

/* Names as shown in sysfs and in benchmark output, indexed by enum fz_loop. */
#define FZ_LOOP_NAMES	{ "unrolled", "nt", "mops", "dc_zva" }
/* The same, for force_variant's description. */
#define FZ_LOOP_LIST	"unrolled, nt, mops (FEAT_MOPS), dc_zva (DC ZVA permitted)"

#ifdef __KERNEL__
#include <linux/compiler_types.h>

unsigned long fz_clear_user_unrolled(void __user *to, unsigned long n);
unsigned long fz_clear_user_nt(void __user *to, unsigned long n);
unsigned long fz_clear_user_mops(void __user *to, unsigned long n);
unsigned long fz_clear_user_zva(void __user *to, unsigned long n,
				unsigned long block);
#endif

unsigned long fz_clear_unrolled(void *to, unsigned long n);
unsigned long fz_clear_nt(void *to, unsigned long n);
unsigned long fz_clear_mops(void *to, unsigned long n);
unsigned long fz_clear_zva(void *to, unsigned long n, unsigned long block);

#endif /* __ASSEMBLER__ */
#endif /* _FASTZERO_CLEAR_LOOPS_H */
