/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rep_stos_shim.h - the kernel macros rep_stos_alternative() uses, for
 * assembling it in userspace (clear_user_test.c says how it is run).
 * ERMS=1 assembles ALTERNATIVE's replacement, ERMS=0 its original.
 */
#define SYM_FUNC_START(name)	.text; .globl name; .type name, @function; name:
#define SYM_FUNC_END(name)	.size name, . - name
#define EXPORT_SYMBOL(name)
#define ANNOTATE_NOENDBR
#define RET			ret
#define X86_FEATURE_ERMS	0
#define _ASM_EXTABLE_UA(from, to) \
	.pushsection fz_ex_table, "a"; .quad from, to; .popsection

.section .note.GNU-stack, "", @progbits

.macro ALTERNATIVE oldinstr, newinstr, feature
.if ERMS
	\newinstr
.else
	\oldinstr
.endif
.endm
