/* SPDX-License-Identifier: GPL-2.0 */
/* clear.h - arm64: clear_user() with the loop chosen at load, over the loops in clear_loops.S. */
#ifndef _FASTZERO_CLEAR_H
#define _FASTZERO_CLEAR_H

#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <asm/cpufeature.h>
#include <asm/page.h>
#include "clear_loops.h"
#include "compat.h"

/*
 * Which loop clears user memory: alternative_has_cap_likely() is a branch
 * patched once, as the kernel's own __arch_clear_user() selects MOPS
 * (7.x's arch/arm64/lib/clear_user.S; 6.12's has only an sttr loop):
 *
 *  - mops:     FEAT_MOPS, where the CPU implements memset itself and picks
 *              its own stores for every length; the very instructions 7.x's
 *              clear_user() runs there, so on 7.x the gain is the extents.
 *  - unrolled: every other CPU: 16-byte stp pairs, twice what the kernel's
 *              8-byte sttr loop stores per instruction.
 *
 * DC ZVA (dc_zva) is the store for cold destinations (cpu_policy.h).
 */

/* The DC ZVA block, 0 where DC ZVA is prohibited or unusable (cpu.c). */
extern unsigned long fz_zva_block;

/*
 * The privileged-store loops run with PAN off, as the kernel's own
 * privileged user accesses do (uaccess_enable_privileged(): futex,
 * atomics); MOPS's unprivileged T forms need only TTBR0 (SW PAN), as
 * __clear_user() gives its sttr loop.  __uaccess_mask_ptr() keeps a
 * speculated pointer out of the kernel's half.
 */
static __always_inline unsigned long fz_clear_user_mops_call(void __user *to,
							     unsigned long n)
{
	uaccess_ttbr0_enable();
	n = fz_clear_user_mops(__uaccess_mask_ptr(to), n);
	uaccess_ttbr0_disable();
	return n;
}

static __always_inline unsigned long
fz_clear_user_privileged(enum fz_loop loop, void __user *to, unsigned long n)
{
	to = __uaccess_mask_ptr(to);
	uaccess_enable_privileged();
	if (loop == FZ_LOOP_ZVA && READ_ONCE(fz_zva_block))
		n = fz_clear_user_zva(to, n, READ_ONCE(fz_zva_block));
	else if (loop == FZ_LOOP_NT)
		n = fz_clear_user_nt(to, n);
	else
		n = fz_clear_user_unrolled(to, n);
	uaccess_disable_privileged();
	return n;
}

/**
 * fz_arch_clear_user() - fz_clear_user()'s stores: the loop chosen at load
 * @to: user destination, checked by fz_clear_user()
 * @n: number of bytes to clear
 *
 * User access is opened around the stores only, and a fault ends the
 * clear through the exception table.
 *
 * Return: the number of bytes that were not cleared, exact.
 */
static __always_inline unsigned long fz_arch_clear_user(void __user *to,
							unsigned long n)
{
	if (fz_arm64_mops_patched())
		return fz_clear_user_mops_call(to, n);
	return fz_clear_user_privileged(FZ_LOOP_UNROLLED, to, n);
}

/**
 * fz_clear_user_selected() - the loop fz_arch_clear_user() runs
 *
 * Return: FZ_LOOP_MOPS or FZ_LOOP_UNROLLED.
 */
static inline enum fz_loop fz_clear_user_selected(void)
{
	return fz_arm64_mops_patched() ? FZ_LOOP_MOPS :
							     FZ_LOOP_UNROLLED;
}

/**
 * fz_arch_clear_user_loop() - fz_clear_user_loop()'s stores: one named loop
 * @loop: the strategy to use; mops and dc_zva only where cpu.c allowed
 *	  them (fz_arch_loop_refused())
 * @to: user destination, checked by fz_clear_user_loop()
 * @n: number of bytes to clear
 *
 * Return: the number of bytes that were not cleared.
 */
static inline unsigned long fz_arch_clear_user_loop(enum fz_loop loop,
						    void __user *to,
						    unsigned long n)
{
	switch (loop) {
	case FZ_LOOP_MOPS:
		return fz_clear_user_mops_call(to, n);
	case FZ_LOOP_UNROLLED:
	case FZ_LOOP_NT:
	case FZ_LOOP_ZVA:
		return fz_clear_user_privileged(loop, to, n);
	default:
		return fz_arch_clear_user(to, n);
	}
}

/**
 * fz_clear_pages() - clear a kernel page range
 * @addr: start address of the range, in the kernel's linear map
 * @npages: number of pages
 *
 * The kernel's clear_page() for each page (arch/arm64/lib/clear_page.S:
 * DC ZVA, MOPS on 7.x where the CPU has it); arm64 has no clear_pages().
 * The caller bounds @npages for preemption latency.
 */
static inline void fz_clear_pages(void *addr, unsigned int npages)
{
	unsigned int i;

	for (i = 0; i < npages; i++)
		clear_page(addr + i * PAGE_SIZE);
}

/**
 * fz_clear_cold_pages() - clear a kernel page range the cache does not hold
 * @addr: start address of the range, in the kernel's linear map
 * @npages: number of pages
 * @cold_loop: fz_policy_cold_loop()'s store: FZ_LOOP_ZVA (only where DC
 *	ZVA is usable), FZ_LOOP_NT, or FZ_LOOP_AUTO
 *
 * Does no exception handling.
 */
static inline void fz_clear_cold_pages(void *addr, unsigned int npages,
				       enum fz_loop cold_loop)
{
	unsigned long len = (unsigned long)npages << PAGE_SHIFT;

	switch (cold_loop) {
	case FZ_LOOP_ZVA:
		if (READ_ONCE(fz_zva_block)) {
			fz_clear_zva(addr, len, READ_ONCE(fz_zva_block));
			break;
		}
		fallthrough;
	case FZ_LOOP_NT:
		fz_clear_nt(addr, len);
		break;
	default:
		fz_clear_pages(addr, npages);
	}
}

/* arm64 adds no attributes to policy/ (arch.h). */
#define FZ_ARCH_NR_POLICY_ATTRS	0

#endif /* _FASTZERO_CLEAR_H */
