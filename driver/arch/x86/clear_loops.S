/* SPDX-License-Identifier: GPL-2.0 */
/* clear_loops.S - x86-64: the clearing loops, assembled into the module and into clearbench. */

#include "clear_loops.h"

/*
 * Each loop is written once, as a macro body taking \user: 1 builds the
 * module's user-access flavour, with STAC/CLAC and an exception-table entry
 * on every store; 0 the plain flavour clearbench times in userspace.  A fault on a wide
 * store restarts bytewise from the current %rdi (FZ_REFAULT), which then
 * faults on exactly the first inaccessible byte: the count returned in %rcx
 * is exact, like the kernel's clear_user() (a few bytes may be stored twice;
 * harmless).
 */

.macro FZ_EXTABLE user, from, to
.if \user
	_ASM_EXTABLE_UA(\from, \to)
.endif
.endm

/*
 * 64-byte rounds of eight \store instructions while at least 64 bytes are
 * left; a faulting store continues at \fixup.
 */
.macro FZ_ROUNDS64 store, user, fixup
	.p2align 4
.Lround\@:
10:	\store	%rax, (%rdi)
11:	\store	%rax, 8(%rdi)
12:	\store	%rax, 16(%rdi)
13:	\store	%rax, 24(%rdi)
14:	\store	%rax, 32(%rdi)
15:	\store	%rax, 40(%rdi)
16:	\store	%rax, 48(%rdi)
17:	\store	%rax, 56(%rdi)
	addq	$64, %rdi
	subq	$64, %rcx
	cmpq	$64, %rcx
	jae	.Lround\@
	FZ_EXTABLE \user, 10b, \fixup
	FZ_EXTABLE \user, 11b, \fixup
	FZ_EXTABLE \user, 12b, \fixup
	FZ_EXTABLE \user, 13b, \fixup
	FZ_EXTABLE \user, 14b, \fixup
	FZ_EXTABLE \user, 15b, \fixup
	FZ_EXTABLE \user, 16b, \fixup
	FZ_EXTABLE \user, 17b, \fixup
.endm

/*
 * The byte tail: %rcx bytes from %rdi, entered at \tail.  A fault here
 * ends the loop, at \done, with the exact count left in %rcx.
 */
.macro FZ_BYTES user, tail, done
\tail:
	testq	%rcx, %rcx
	jz	\done
.Lbyte\@:
19:	movb	%al, (%rdi)
	incq	%rdi
	decq	%rcx
	jnz	.Lbyte\@
.if \user
	jmp	\done		/* over the refault path that follows */
.endif
	FZ_EXTABLE \user, 19b, \done
.endm

/*
 * Where a faulting wide store continues (user flavour only): single bytes
 * from %rdi, which stop at \done on the first inaccessible one, as the
 * kernel's rep_stos_alternative does.  Upstream finishes the whole rest
 * bytewise, at most the 4 KiB /dev/zero clears per call; an extent is
 * up to a GiB, and the fault may have been resolved meanwhile (a racing
 * mprotect()), so after the 8 bytes a wide store covers, the loop goes
 * back to \wide, the top of the wide loop.  Every round makes 8 bytes
 * of progress or ends on a fault.
 */
.macro FZ_REFAULT user, entry, wide, done
\entry:
	movl	$8, %edx
.Lnext\@:
	testq	%rcx, %rcx
	jz	\done
21:	movb	%al, (%rdi)
	incq	%rdi
	decq	%rcx
	decl	%edx
	jnz	.Lnext\@
	jmp	\wide
	FZ_EXTABLE \user, 21b, \done
.endm

/* Unrolled stores: 64 bytes a round, then 8, then 1. */
.macro FZ_UNROLLED_BODY user
.Lwide\@:
	cmpq	$64, %rcx
	jb	.Lshort\@
	FZ_ROUNDS64 movq, \user, .Lrefault\@
.Lshort\@:
	cmpl	$8, %ecx
	jb	.Ltail\@
.Lword\@:
18:	movq	%rax, (%rdi)
	addq	$8, %rdi
	subl	$8, %ecx
	cmpl	$8, %ecx
	jae	.Lword\@
	FZ_EXTABLE \user, 18b, .Lrefault\@
	FZ_BYTES \user, .Ltail\@, .Ldone\@
.if \user
	FZ_REFAULT \user, .Lrefault\@, .Lwide\@, .Ldone\@
.endif
.Ldone\@:
.endm

/*
 * rep stosq for the qwords, then the byte tail.  A fault leaves %rcx
 * qwords and %edx bytes; the refault path restarts from the byte count.
 */
.macro FZ_STOSQ_BODY user
.Lwide\@:
	movq	%rcx, %rdx
	shrq	$3, %rcx
	andl	$7, %edx
20:	rep stosq
	movl	%edx, %ecx
	FZ_BYTES \user, .Ltail\@, .Ldone\@
.if \user
.Lqfault\@:
	leaq	(%rdx, %rcx, 8), %rcx
	FZ_REFAULT \user, .Lrefault\@, .Lwide\@, .Ldone\@
.endif
.Ldone\@:
	FZ_EXTABLE \user, 20b, .Lqfault\@
.endm

/* rep stosb for every length: exact on a fault by construction. */
.macro FZ_STOSB_BODY user
30:	rep stosb
31:
	FZ_EXTABLE \user, 30b, 31b
.endm

/* rep stosb from fz_erms_threshold bytes up, where its start-up cost pays. */
.macro FZ_ERMS_BODY user
	cmpq	fz_erms_threshold(%rip), %rcx
	jb	.Lshort\@
40:	rep stosb
	jmp	.Ldone\@
.Lshort\@:
	FZ_UNROLLED_BODY \user
.Ldone\@:
	FZ_EXTABLE \user, 40b, .Ldone\@
.endm

/* Non-temporal 64-byte rounds, an sfence, then the unrolled loop for the rest. */
.macro FZ_NT_BODY user
	cmpq	$64, %rcx
	jb	.Lrest\@
	FZ_ROUNDS64 movnti, \user, .Lfence\@
.Lfence\@:
	sfence
.Lrest\@:
	FZ_UNROLLED_BODY \user
.endm

/*
 * clzero: AMD's CLZERO (CPUID 0x80000008:EBX[0]) zeroes the whole 64-byte
 * line that holds the address in %rax, without reading it in first.  The
 * head is eight movq stores over the first 64 bytes (they cover the bytes
 * up to the first line boundary; the overlap is stored twice, harmless),
 * the whole lines go to clzero, the tail below 64 bytes to the unrolled
 * loop, and one sfence orders the weakly-ordered CLZERO stores before the
 * function returns (AMD APM vol. 3, CLZERO; the same fence 7.x's
 * clear_pages() callers get after MOVNTI).  Lengths below 128 bytes take
 * the unrolled loop alone.
 *
 * A fault on a head store or on clzero continues in the unrolled loop at
 * the current %rdi (the line or the start), which faults there again and
 * makes the count exact with its own refault path.  clzero's
 * exception-table entry is of the kind that passes the trap number in
 * %rax (EX_TYPE_FAULT, ex_handler_fault() in arch/x86/mm/extable.c): an
 * invalid opcode (#UD: a CPU or emulator that does not execute CLZERO,
 * whatever CPUID says; do_trap() in arch/x86/kernel/traps.c runs
 * fixup_exception() for kernel-mode traps) ends the clear with the
 * remaining count, so the driver's load-time self-test sees it.
 */
.macro FZ_CLZERO_BODY user
	cmpq	$128, %rcx
	jb	.Lrest\@
50:	movq	%rax, (%rdi)
51:	movq	%rax, 8(%rdi)
52:	movq	%rax, 16(%rdi)
53:	movq	%rax, 24(%rdi)
54:	movq	%rax, 32(%rdi)
55:	movq	%rax, 40(%rdi)
56:	movq	%rax, 48(%rdi)
57:	movq	%rax, 56(%rdi)
	/* on to the next line boundary: 1..64 bytes done */
	leaq	FZ_CLZERO_LINE(%rdi), %rdx
	andq	$-FZ_CLZERO_LINE, %rdx
	addq	%rdi, %rcx
	subq	%rdx, %rcx
	movq	%rdx, %rdi
.Lline\@:
	movq	%rdi, %rax
#ifndef FZ_CLZERO_EMULATE
58:	.byte	0x0f, 0x01, 0xfc	/* clzero (%rax): binutils < 2.28 lack it */
#else
	/* userspace test build only: the line as clzero would clear it */
	andq	$-FZ_CLZERO_LINE, %rax
	.irp	o, 0, 8, 16, 24, 32, 40, 48, 56
	movq	$0, \o(%rax)
	.endr
#endif
	addq	$FZ_CLZERO_LINE, %rdi
	subq	$FZ_CLZERO_LINE, %rcx
	cmpq	$FZ_CLZERO_LINE, %rcx
	jae	.Lline\@
	xorl	%eax, %eax
.if \user
	jmp	.Lrest\@
.Ltrap\@:
	cmpl	$X86_TRAP_UD, %eax
	je	.Ldone\@		/* not executed: %rcx bytes left */
.Lfault\@:
	xorl	%eax, %eax
.endif
.Lrest\@:
	FZ_UNROLLED_BODY \user
.Ldone\@:
	sfence
	FZ_EXTABLE \user, 50b, .Lfault\@
	FZ_EXTABLE \user, 51b, .Lfault\@
	FZ_EXTABLE \user, 52b, .Lfault\@
	FZ_EXTABLE \user, 53b, .Lfault\@
	FZ_EXTABLE \user, 54b, .Lfault\@
	FZ_EXTABLE \user, 55b, .Lfault\@
	FZ_EXTABLE \user, 56b, .Lfault\@
	FZ_EXTABLE \user, 57b, .Lfault\@
.if \user
	_ASM_EXTABLE_FAULT(58b, .Ltrap\@)
.endif
.endm

/* One function per loop and flavour; %eax is the zero every loop stores. */
.macro FZ_LOOP_FUNC name, body, user
SYM_FUNC_START(\name)
.if \user
	ASM_STAC
.endif
	xorl	%eax, %eax
	\body \user
.if \user
	ASM_CLAC
.endif
	RET
SYM_FUNC_END(\name)
.endm

	.text
#if FZ_USER_VARIANTS
FZ_LOOP_FUNC fz_clear_user_unrolled, FZ_UNROLLED_BODY, 1
FZ_LOOP_FUNC fz_clear_user_stosq, FZ_STOSQ_BODY, 1
FZ_LOOP_FUNC fz_clear_user_erms, FZ_ERMS_BODY, 1
FZ_LOOP_FUNC fz_clear_user_stosb, FZ_STOSB_BODY, 1
FZ_LOOP_FUNC fz_clear_user_nt, FZ_NT_BODY, 1
FZ_LOOP_FUNC fz_clear_user_clzero, FZ_CLZERO_BODY, 1
/* fz_clear_pages()'s unrolled variant, on kernels without clear_pages() */
FZ_LOOP_FUNC fz_clear_unrolled, FZ_UNROLLED_BODY, 0
/* fz_clear_kernel_clzero(): cold kernel memory, once the self-test passed */
FZ_LOOP_FUNC fz_clear_clzero, FZ_CLZERO_BODY, 0
/* fz_clear_cold_pages() on Intel: movnti */
FZ_LOOP_FUNC fz_clear_nt, FZ_NT_BODY, 0
#else
FZ_LOOP_FUNC fz_clear_unrolled, FZ_UNROLLED_BODY, 0
FZ_LOOP_FUNC fz_clear_stosq, FZ_STOSQ_BODY, 0
FZ_LOOP_FUNC fz_clear_erms, FZ_ERMS_BODY, 0
FZ_LOOP_FUNC fz_clear_stosb, FZ_STOSB_BODY, 0
FZ_LOOP_FUNC fz_clear_nt, FZ_NT_BODY, 0
FZ_LOOP_FUNC fz_clear_clzero, FZ_CLZERO_BODY, 0
#endif

	.data
	.balign 8
	.globl	fz_erms_threshold
	.type	fz_erms_threshold, @object
fz_erms_threshold:
	.quad	FZ_ERMS_THRESHOLD_AMD	/* the driver derives it at load (policy.h) */
	.size	fz_erms_threshold, 8

#ifndef __KERNEL__
	.section .note.GNU-stack, "", @progbits
#endif
