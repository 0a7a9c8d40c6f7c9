// SPDX-License-Identifier: GPL-2.0
/*
 * proof.c - the clear loops proven at load on a real user page.
 *
 * The clzero self-test runs on a kernel buffer, so it shows neither that
 * the user flavours' STAC/CLAC let the stores reach a user page under SMAP
 * nor that a fault on a user page ends the loop with the exact count.  At
 * every load, in the loading process's own address space, two pages are
 * mapped, the second PROT_NONE, and each loop that may run clears across
 * the boundary: it must return exactly the bytes past the boundary, leave
 * zeros up to it and the poison before the start.  clzero is proven only
 * where its self-test let it run (not under QEMU's TCG, which executes it
 * as #UD), and is refused if it does not hold; any other loop that does
 * not hold makes the load fail.  The result is in the kernel log and in policy/user_path_proof.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "clear.h"
#include "fastzero.h"

#define FZ_PROOF_POISON	0xa5

/* Where a clear starts before the boundary, and how long it is. */
static const struct {
	unsigned int before, len;
} fz_proof_cases[] = {
	{ 3 * 64 + 13, PAGE_SIZE },	/* partial head, whole lines, fault */
	{ 5 * 64, 5 * 64 + 64 },	/* line-aligned up to the boundary */
	{ 1, 4096 + 1 },		/* one byte, then the fault */
};

static const char * const fz_proof_names[FZ_NR_LOOPS] = FZ_LOOP_NAMES;
static char fz_proof_result[256] = "not run";

/* One loop, one case: NULL if it held, else what went wrong. */
static const char *fz_proof_case(enum fz_loop loop, unsigned long base,
				 unsigned char *kbuf, unsigned int before,
				 unsigned int len)
{
	unsigned long start = PAGE_SIZE - before, left;
	unsigned int i;

	memset(kbuf, FZ_PROOF_POISON, PAGE_SIZE);
	if (copy_to_user((void __user *)base, kbuf, PAGE_SIZE))
		return "could not poison the page";
	left = fz_clear_user_loop(loop, (void __user *)(base + start), len);
	if (left != len - before)
		return "wrong count left";
	if (copy_from_user(kbuf, (void __user *)base, PAGE_SIZE))
		return "could not read the page back";
	for (i = 0; i < PAGE_SIZE; i++)
		if (kbuf[i] != (i >= start ? 0 : FZ_PROOF_POISON))
			return "wrong bytes";
	return NULL;
}

/* Every case for @loop; NULL if all held. */
static const char *fz_proof_loop(enum fz_loop loop, unsigned long base,
				 unsigned char *kbuf)
{
	const char *err = NULL;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fz_proof_cases) && !err; i++)
		err = fz_proof_case(loop, base, kbuf, fz_proof_cases[i].before,
				    fz_proof_cases[i].len);
	return err;
}

/*
 * Two pages of the loading process, the second PROT_NONE: an anonymous
 * mapping of both, inaccessible, then the first made writable in place.
 */
static unsigned long fz_proof_map(void)
{
	unsigned long base, first;

	base = vm_mmap(NULL, 0, 2 * PAGE_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(base))
		return base;
	first = vm_mmap(NULL, base, PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0);
	if (first != base) {
		vm_munmap(base, 2 * PAGE_SIZE);
		return IS_ERR_VALUE(first) ? first : -EFAULT;
	}
	return base;
}

/**
 * fz_user_proof() - prove the clear loops on a user page at load
 *
 * Runs after fz_clzero_init(), before the thresholds and the cold store are
 * derived from whether clzero may run.
 *
 * Return: 0, or -EIO when a loop other than clzero failed the proof (the
 * load fails), or an errno from setting it up.
 */
int fz_user_proof(void)
{
	size_t pos = 0, n = sizeof(fz_proof_result);
	const char *err = NULL;
	unsigned char *kbuf;
	unsigned long base;
	enum fz_loop loop;
	int ret = 0;

	if (!current->mm) {
		strscpy(fz_proof_result, "not run: the loading task has no user memory", n);
		pr_info("user-path proof: %s\n", fz_proof_result);
		return 0;
	}
	kbuf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	base = fz_proof_map();
	if (IS_ERR_VALUE(base)) {
		kfree(kbuf);
		return (int)base;
	}
	pos = scnprintf(fz_proof_result, n, "passed:");
	for (loop = 0; loop < FZ_NR_LOOPS && !ret; loop++) {
		if (loop == FZ_LOOP_CLZERO && !fz_clzero_usable()) {
			pos += scnprintf(fz_proof_result + pos, n - pos,
					 " (clzero not run: %s)", fz_clzero_reason());
			continue;
		}
		err = fz_proof_loop(loop, base, kbuf);
		if (!err) {
			pos += scnprintf(fz_proof_result + pos, n - pos, " %s",
					 fz_proof_names[loop]);
			continue;
		}
		scnprintf(fz_proof_result, n, "failed: %s: %s across a PROT_NONE page",
			  fz_proof_names[loop], err);
		if (loop == FZ_LOOP_CLZERO)
			fz_clzero_refuse("refused: the user-path proof failed (user_path_proof)");
		else
			ret = -EIO;
	}
	vm_munmap(base, 2 * PAGE_SIZE);
	kfree(kbuf);
	if (ret || err)
		pr_err("user-path proof: %s\n", fz_proof_result);
	else
		pr_info("user-path proof: %s\n", fz_proof_result);
	return ret;
}

/**
 * fz_user_proof_result() - what the load-time user-path proof found
 *
 * Return: "passed: <loops>", "failed: <loop>: <what>" or "not run: ...".
 */
const char *fz_user_proof_result(void)
{
	return fz_proof_result;
}
