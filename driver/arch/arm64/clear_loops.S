/* SPDX-License-Identifier: GPL-2.0 */
/* clear_loops.S - arm64: the clearing loops, assembled into the module and into userspace. */

#include "clear_loops.h"

#ifndef __KERNEL__
#define USER(l, x...)	x
#endif

/*
 * Each loop is written once, as a macro body taking \user: 1 builds the
 * module's flavour, with an exception-table entry on every store (USER(),
 * as arch/arm64/lib/clear_user.S has); 0 the plain flavour.  Every store
 * but MOPS's is naturally aligned, so none straddles a page: the first
 * that faults is the first whose bytes are not all accessible, and the
 * count left, end - x0, is exact.  x3 holds the end throughout.
 */

.macro FZ_ST user, fixup, insn:vararg
.if \user
USER(\fixup, \insn)
.else
	\insn
.endif
.endm

/*
 * Clear [x0, \lim) with \pair (stp or stnp) rounds: bytes to 16-byte
 * alignment, pairs to 64, 64-byte rounds of four \pair at offsets (a
 * round never crosses a page, so its first store is the one that faults),
 * then pairs and a tail.  Fewer than 16 bytes go bytewise.  x5 is scratch.
 */
.macro FZ_UPTO user, pair, lim, fixup
	sub	x5, \lim, x0
	cmp	x5, #16
	b.lo	.Lbytes\@
	tbz	x0, #0, 1f
	FZ_ST	\user, \fixup, strb	wzr, [x0], #1
1:	tbz	x0, #1, 2f
	FZ_ST	\user, \fixup, strh	wzr, [x0], #2
2:	tbz	x0, #2, 3f
	FZ_ST	\user, \fixup, str	wzr, [x0], #4
3:	tbz	x0, #3, .Lalign\@
	FZ_ST	\user, \fixup, str	xzr, [x0], #8
.Lalign\@:
	tst	x0, #63
	b.eq	.Lrounds\@
	sub	x5, \lim, x0
	cmp	x5, #16
	b.lo	.Ltail\@
	FZ_ST	\user, \fixup, stp	xzr, xzr, [x0]
	add	x0, x0, #16
	b	.Lalign\@
	.p2align 4
.Lrounds\@:
	sub	x5, \lim, x0
	cmp	x5, #64
	b.lo	.Lpairs\@
	FZ_ST	\user, \fixup, \pair	xzr, xzr, [x0]
	FZ_ST	\user, \fixup, \pair	xzr, xzr, [x0, #16]
	FZ_ST	\user, \fixup, \pair	xzr, xzr, [x0, #32]
	FZ_ST	\user, \fixup, \pair	xzr, xzr, [x0, #48]
	add	x0, x0, #64
	b	.Lrounds\@
.Lpairs\@:
	sub	x5, \lim, x0
	cmp	x5, #16
	b.lo	.Ltail\@
	FZ_ST	\user, \fixup, \pair	xzr, xzr, [x0]
	add	x0, x0, #16
	b	.Lpairs\@
.Ltail\@:
	sub	x5, \lim, x0
	tbz	x5, #3, 5f
	FZ_ST	\user, \fixup, str	xzr, [x0], #8
5:	tbz	x5, #2, 6f
	FZ_ST	\user, \fixup, str	wzr, [x0], #4
6:	tbz	x5, #1, 7f
	FZ_ST	\user, \fixup, strh	wzr, [x0], #2
7:	tbz	x5, #0, .Ldone\@
	FZ_ST	\user, \fixup, strb	wzr, [x0], #1
	b	.Ldone\@
.Lbytes\@:
	cbz	x5, .Ldone\@
8:	FZ_ST	\user, \fixup, strb	wzr, [x0], #1
	subs	x5, x5, #1
	b.ne	8b
.Ldone\@:
.endm

.macro FZ_UNROLLED_BODY user, fixup
	FZ_UPTO	\user, stp, x3, \fixup
.endm

.macro FZ_NT_BODY user, fixup
	FZ_UPTO	\user, stnp, x3, \fixup
.endm

/*
 * DC ZVA zeroes one block of x2 bytes without reading it (the cache line
 * is allocated, not fetched).  Clears shorter than two blocks, and the
 * head and tail around whole blocks, take the stp loop.
 */
.macro FZ_ZVA_BODY user, fixup
	cmp	x1, x2, lsl #1
	b.lo	.Lshort\@
	sub	x4, x2, #1
	add	x4, x0, x4
	neg	x5, x2
	and	x4, x4, x5
	FZ_UPTO	\user, stp, x4, \fixup
.Lblock\@:
	sub	x5, x3, x0
	cmp	x5, x2
	b.lo	.Lshort\@
	FZ_ST	\user, \fixup, dc	zva, x0
	add	x0, x0, x2
	b	.Lblock\@
.Lshort\@:
	FZ_UPTO	\user, stp, x3, \fixup
.endm

/*
 * FEAT_MOPS: the prologue, main and epilogue of the CPU's own memset, as
 * 7.x's __arch_clear_user() runs them, and their fixup: a fault in the
 * main or epilogue part may leave the registers in the "option A" form,
 * where x0 + x1 is the position (C clear), else x0 is (Arm ARM C6.2.294).
 * The user flavour has the unprivileged T forms, which need no PAN change;
 * the plain one the privileged forms, for kernel memory and for EL0.
 */
.macro FZ_MOPS_BODY user, fixup
	.arch_extension mops
.if \user
	FZ_ST	\user, \fixup, setpt	[x0]!, x1!, xzr
	FZ_ST	\user, .Lmain\@, setmt	[x0]!, x1!, xzr
	FZ_ST	\user, .Lmain\@, setet	[x0]!, x1!, xzr
.else
	setp	[x0]!, x1!, xzr
	setm	[x0]!, x1!, xzr
	sete	[x0]!, x1!, xzr
.endif
	b	.Ldone\@
.Lmain\@:
	b.cs	\fixup
	add	x0, x0, x1
	b	\fixup
.Ldone\@:
.endm

/* A loop as a C function: x3 = end; 0 returned, or end - x0 after a fault. */
.macro FZ_LOOP_FUNC name, body, user
SYM_FUNC_START(\name)
	add	x3, x0, x1
	\body	\user, .Lfault\@
	mov	x0, #0
	ret
.Lfault\@:
	sub	x0, x3, x0
	ret
SYM_FUNC_END(\name)
.endm

	.text
#if FZ_USER_VARIANTS
FZ_LOOP_FUNC fz_clear_user_unrolled, FZ_UNROLLED_BODY, 1
FZ_LOOP_FUNC fz_clear_user_nt, FZ_NT_BODY, 1
FZ_LOOP_FUNC fz_clear_user_mops, FZ_MOPS_BODY, 1
FZ_LOOP_FUNC fz_clear_user_zva, FZ_ZVA_BODY, 1
#endif
FZ_LOOP_FUNC fz_clear_unrolled, FZ_UNROLLED_BODY, 0
FZ_LOOP_FUNC fz_clear_nt, FZ_NT_BODY, 0
FZ_LOOP_FUNC fz_clear_mops, FZ_MOPS_BODY, 0
FZ_LOOP_FUNC fz_clear_zva, FZ_ZVA_BODY, 0
