/* SPDX-License-Identifier: GPL-2.0 */
/* arch.h - what each architecture's directory, arch/x86/ and arch/arm64/, gives the driver. */
#ifndef _FASTZERO_ARCH_H
#define _FASTZERO_ARCH_H

/*
 * driver/Kbuild puts arch/$(SRCARCH)/ on the include path.  Its clear.h
 * defines, over the loops of its clear_loops.S:
 *
 *   enum fz_loop, FZ_LOOP_NAMES  the loops; FZ_LOOP_AUTO (the one chosen at
 *                                load) and FZ_LOOP_NT (a non-temporal store)
 *                                exist on every architecture
 *   fz_arch_clear_user()         the stores of the loop chosen at load
 *   fz_arch_clear_user_loop()    the stores of one named loop
 *   fz_clear_user_selected()     the loop fz_arch_clear_user() runs
 *   fz_clear_cold_pages()        clear kernel pages the cache does not hold
 *
 * and its cpu_policy.h (included by policy.h) the rules that derive the
 * loop and thresholds from the CPU, shared with the userspace models.
 * The functions declared below are its cpu.c.
 */
#include <linux/uaccess.h>
#include "clear.h"

/*
 * What every clear_user() checks before its stores, on every architecture:
 * might_fault(), fail_usercopy's injected fault (the whole clear fails, as
 * _copy_to_user() does: fault-injection.rst), and access_ok().
 */
static __always_inline bool fz_clear_user_refused(void __user *to,
						  unsigned long n)
{
	might_fault();
	return should_fail_usercopy() || unlikely(!access_ok(to, n));
}

/**
 * fz_clear_user() - zero user memory with the loop the CPU does best
 * @to: user destination
 * @n: number of bytes to clear
 *
 * A drop-in for clear_user(): checked as it is, then the architecture's
 * loop chosen at load, with user access opened around its stores only;
 * a fault ends the clear through the exception table.
 *
 * Return: the number of bytes that were not cleared, 0 on success.  The
 * count is exact: bytes before the first inaccessible one are all cleared.
 */
static __always_inline unsigned long fz_clear_user(void __user *to,
						   unsigned long n)
{
	return fz_clear_user_refused(to, n) ? n : fz_arch_clear_user(to, n);
}

/**
 * fz_clear_user_loop() - zero user memory with one named loop
 * @loop: the strategy to use (force_variant, or the read's cold or nt store)
 * @to: user destination
 * @n: number of bytes to clear
 *
 * For the force_variant parameter: tests run every loop, including its
 * fault fixups, and benchmarks compare loops in one boot.
 *
 * Return: the number of bytes that were not cleared, 0 on success.
 */
static inline unsigned long fz_clear_user_loop(enum fz_loop loop,
					       void __user *to,
					       unsigned long n)
{
	return fz_clear_user_refused(to, n) ? n :
	       fz_arch_clear_user_loop(loop, to, n);
}

struct attribute;
struct seq_file;

/**
 * struct fz_arch_choice - what the CPU's rules chose at load
 * @nt_threshold: reads of at least this many bytes use FZ_LOOP_NT or the
 *	cold store (0: never)
 * @nt_why: the rule behind @nt_threshold, for debugfs
 * @cold_loop: the store for cold destinations, FZ_LOOP_AUTO for none
 * @cold_why: the rule behind @cold_loop, for debugfs
 */
struct fz_arch_choice {
	unsigned long nt_threshold;
	const char *nt_why;
	enum fz_loop cold_loop;
	const char *cold_why;
};

/**
 * fz_arch_init() - read the CPU, prove what needs proving, choose
 * @c: filled in
 *
 * Runs once at load, before the device exists.  A loop the CPU cannot be
 * trusted to run is refused here, with its reason, never the load.
 */
void fz_arch_init(struct fz_arch_choice *c);

/**
 * fz_arch_loop_refused() - whether force_variant may name a loop
 * @loop: the loop asked for
 *
 * Return: NULL if it may run on this CPU, else why not.
 */
const char *fz_arch_loop_refused(enum fz_loop loop);

/**
 * fz_arch_reasons_show() - the architecture's lines of debugfs fastzero/reasons
 * @m: the file
 */
void fz_arch_reasons_show(struct seq_file *m);

/*
 * Its attributes of policy/, after the common ones: FZ_ARCH_NR_POLICY_ATTRS
 * (clear.h) of them.
 */
extern struct attribute *fz_arch_policy_attrs[];

#endif /* _FASTZERO_ARCH_H */
