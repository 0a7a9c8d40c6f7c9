/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kasm.h - userspace stand-ins for the kernel assembler macros that
 * driver/arch/x86/clear_loops.S uses; passed with -include when clearbench
 * assembles that file, so the benchmark runs the driver's own loops.
 */
#ifndef _FASTZERO_KASM_H
#define _FASTZERO_KASM_H

#define SYM_FUNC_START(name)	.globl name; .type name, %function; \
				.p2align 4; name:
#define SYM_FUNC_END(name)	.size name, .-name
#define RET			ret

#endif /* _FASTZERO_KASM_H */
