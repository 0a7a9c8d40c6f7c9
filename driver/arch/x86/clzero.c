// SPDX-License-Identifier: GPL-2.0
/*
 * clzero.c - x86-64: the clzero variant, proven at load by running it, or refused.
 *
 * CPUID alone is not trusted for CLZERO: QEMU's TCG (7.2, 11.1) executes
 * it as an invalid opcode and filters it from the guest's CPUID, but any
 * hypervisor or CPUID override may advertise what the CPU does not run.
 * So at load, where CPUID reports it or force_variant=clzero asks for it,
 * the user-access flavour of the loop runs on kernel memory: its CLZERO
 * has an exception-table entry that catches every trap, #UD included
 * (exc_invalid_op() -> do_error_trap() -> do_trap() ->
 * do_trap_no_signal(), which calls fixup_exception() for a kernel-mode
 * trap: arch/x86/kernel/traps.c in 6.1, 6.12 and 7.x), so a CPU that does
 * not execute it ends the loop early instead of oopsing.  The bytes are
 * then checked, and the loop is run across the end of a vmalloc() page
 * into its guard page, which is never mapped: the fault must end it with
 * the exact count, through the fixups that end it on a user page (a
 * kernel-mode #PF on a kernel address reaches fixup_exception() through
 * bad_area_nosemaphore(), as copy_from_kernel_nofault()'s do).  Kernel
 * memory, not a user page: the test needs nothing of the loading task
 * (its address space, limits or signals), so every load on a CPU decides
 * the same.  The variant is used only if CPUID has it and the self-test
 * passed; otherwise policy/clzero says refused, with the reason in
 * debugfs (fastzero/reasons) and, when force_variant asked for it, in one
 * line of the kernel log.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/asm.h>
#include <asm/cpufeature.h>
#include <asm/trapnr.h>
#include "clear.h"

/* Where the self-test clears: a partial head and tail around whole lines. */
#define FZ_CLZERO_TEST_BUF	1024
#define FZ_CLZERO_TEST_OFF	13
#define FZ_CLZERO_TEST_LEN	700
#define FZ_CLZERO_POISON	0xa5

/* Where a clear starts before the unmapped page, and how long it is. */
static const struct {
	unsigned int before, len;
} fz_clzero_fault_cases[] = {
	{ 3 * FZ_CLZERO_LINE + 13, PAGE_SIZE },	/* partial head, whole lines, fault */
	{ 5 * FZ_CLZERO_LINE, 6 * FZ_CLZERO_LINE },		/* line-aligned up to the end */
	{ 1, PAGE_SIZE + 1 },			/* one byte, then the fault */
};

static enum fz_clzero_state fz_clzero_state;
static const char *fz_clzero_why = "not tested yet";

/**
 * fz_clzero_usable() - whether the clzero variant may run
 *
 * Return: true only after the load-time self-test passed on a CPU whose
 * CPUID reports CLZERO.
 */
bool fz_clzero_usable(void)
{
	return READ_ONCE(fz_clzero_state) == FZ_CLZERO_USABLE;
}

/**
 * fz_clzero_refused() - whether a request for the clzero variant is refused
 *
 * Return: false before fz_clzero_init() ran (force_variant given at load
 * is decided there), else !fz_clzero_usable().
 */
bool fz_clzero_refused(void)
{
	return READ_ONCE(fz_clzero_state) != FZ_CLZERO_UNTESTED &&
	       !fz_clzero_usable();
}

/*
 * One CLZERO on the line holding @line, alone, with an exception-table
 * entry that passes the trap number in %rax (EX_TYPE_FAULT): the
 * instruction's own verdict, which the loop hides (its fixup for any trap
 * but #UD carries on with movq stores, and the bytes come out right).
 *
 * Return: -1 if it ran without a trap, else the trap number.
 */
static int fz_clzero_line(void *line)
{
	unsigned long ax = (unsigned long)line;

	asm volatile("1:	.byte 0x0f, 0x01, 0xfc\n"	/* clzero (%rax) */
		     "2:\n"
		     _ASM_EXTABLE_FAULT(1b, 2b)
		     : "+a" (ax) : : "memory");
	return ax == (unsigned long)line ? -1 : (int)ax;
}

/* The buffer holds zeros in [@start, @end) and the poison elsewhere. */
static bool fz_clzero_bytes_ok(const unsigned char *buf, unsigned int start,
			       unsigned int end)
{
	unsigned int i;

	for (i = 0; i < FZ_CLZERO_TEST_BUF; i++)
		if (buf[i] != (i >= start && i < end ? 0 : FZ_CLZERO_POISON))
			return false;
	return true;
}

/*
 * One clear that runs from @before bytes ahead of the end of @page into
 * the unmapped page after it: exactly the bytes past the end left, zeros
 * up to the end, the poison before the start.  NULL if it held.
 */
static const char *fz_clzero_fault_case(unsigned char *page,
					unsigned int before, unsigned int len)
{
	unsigned int start = PAGE_SIZE - before, i;
	unsigned long left = len;
	void __user *to;

	memset(page, FZ_CLZERO_POISON, PAGE_SIZE);
	/*
	 * The user flavour on a kernel address, as x86's
	 * __put_kernel_nofault() runs __put_user_size() on a __force-cast
	 * kernel pointer: the instructions and fixups a user page gets,
	 * STAC/CLAC harmless.
	 */
	to = (void __force __user *)(page + start);
	FZ_CALL_LOOP("fz_clear_user_clzero", to, left, ASM_CALL_CONSTRAINT);
	if (left != len - before)
		return "refused: the self-test left a wrong count at an unmapped page";
	for (i = 0; i < PAGE_SIZE; i++)
		if (page[i] != (i >= start ? 0 : FZ_CLZERO_POISON))
			return "refused: the self-test left wrong bytes at an unmapped page";
	return NULL;
}

/* Every fault case on a vmalloc() page, whose guard page follows it. */
static const char *fz_clzero_fault_test(void)
{
	const char *err = NULL;
	unsigned char *page;
	unsigned int i;

	page = vmalloc(PAGE_SIZE);
	if (!page)
		return "refused: no memory for the load-time self-test";
	for (i = 0; i < ARRAY_SIZE(fz_clzero_fault_cases) && !err; i++)
		err = fz_clzero_fault_case(page, fz_clzero_fault_cases[i].before,
					   fz_clzero_fault_cases[i].len);
	vfree(page);
	return err;
}

/*
 * Run CLZERO on every whole line of a kernel buffer, one at a time, then
 * the loop over a partial head and tail, then across the end of a page
 * into an unmapped one; the state and reason (*@why) it earns.  Any trap
 * but the fault expected, any wrong byte and any wrong count refuse the
 * variant.
 */
static enum fz_clzero_state fz_clzero_selftest(const char **why)
{
	static char reason[128];
	unsigned int start = FZ_CLZERO_TEST_OFF;
	unsigned int end = FZ_CLZERO_TEST_OFF + FZ_CLZERO_TEST_LEN;
	unsigned int first = ALIGN(start, FZ_CLZERO_LINE), last = ALIGN_DOWN(end, FZ_CLZERO_LINE);
	unsigned long left = FZ_CLZERO_TEST_LEN;
	unsigned char *buf;
	void __user *to;
	unsigned int i;
	int trap = -1;

	/* kmalloc(1024) is 64-byte aligned: the lines are the buffer's own */
	buf = kmalloc(FZ_CLZERO_TEST_BUF, GFP_KERNEL);
	if (!buf) {
		*why = "refused: no memory for the load-time self-test";
		return FZ_CLZERO_REFUSED;
	}
	memset(buf, FZ_CLZERO_POISON, FZ_CLZERO_TEST_BUF);
	for (i = first; i < last && trap < 0; i += FZ_CLZERO_LINE)
		trap = fz_clzero_line(buf + i);
	if (trap == X86_TRAP_UD) {
		*why = "refused: the load-time self-test trapped (#UD: CLZERO not executed)";
		goto refuse;
	}
	if (trap >= 0) {
		snprintf(reason, sizeof(reason),
			 "refused: the load-time self-test trapped (trap %d)", trap);
		*why = reason;
		goto refuse;
	}
	if (!fz_clzero_bytes_ok(buf, first, last)) {
		*why = "refused: the load-time self-test left wrong bytes (CLZERO alone)";
		goto refuse;
	}
	memset(buf, FZ_CLZERO_POISON, FZ_CLZERO_TEST_BUF);
	/* the user flavour on a kernel address (fz_clzero_fault_case()) */
	to = (void __force __user *)(buf + start);
	FZ_CALL_LOOP("fz_clear_user_clzero", to, left, ASM_CALL_CONSTRAINT);
	if (left) {
		snprintf(reason, sizeof(reason),
			 "refused: the load-time self-test left %lu of %u bytes",
			 left, FZ_CLZERO_TEST_LEN);
		*why = reason;
		goto refuse;
	}
	if (!fz_clzero_bytes_ok(buf, start, end)) {
		*why = "refused: the load-time self-test left wrong bytes";
		goto refuse;
	}
	kfree(buf);
	*why = fz_clzero_fault_test();
	if (*why)
		return FZ_CLZERO_REFUSED;
	if (!boot_cpu_has(X86_FEATURE_CLZERO)) {
		*why = "refused: the self-test passed, but CPUID does not report CLZERO";
		return FZ_CLZERO_REFUSED;
	}
	*why = "usable: CPUID reports CLZERO and the load-time self-test passed, faults too";
	return FZ_CLZERO_USABLE;

refuse:
	kfree(buf);
	return FZ_CLZERO_REFUSED;
}

/**
 * fz_clzero_init() - decide at load whether the clzero variant may run
 * @forced: force_variant=clzero was given
 *
 * Runs the self-test where CPUID reports CLZERO or @forced asks for it;
 * fz_clzero_reason() says what it found.
 */
void fz_clzero_init(bool forced)
{
	const char *why = "not tested: CPUID does not report CLZERO";
	enum fz_clzero_state state = FZ_CLZERO_REFUSED;

	if (boot_cpu_has(X86_FEATURE_CLZERO) || forced)
		state = fz_clzero_selftest(&why);
	WRITE_ONCE(fz_clzero_why, why);
	WRITE_ONCE(fz_clzero_state, state);
}

/**
 * fz_clzero_reason() - whether the clzero variant may run, and why
 *
 * Return: "usable: ..." or "refused: ..." (the clzero line of debugfs fastzero/reasons).
 */
const char *fz_clzero_reason(void)
{
	return READ_ONCE(fz_clzero_why);
}

/**
 * fz_clzero_state_name() - policy/clzero: whether the clzero loop may run
 *
 * Return: "usable", "refused" or "untested" (CPUID does not report it).
 */
const char *fz_clzero_state_name(void)
{
	if (fz_clzero_usable())
		return "usable";
	return strncmp(fz_clzero_reason(), "refused", 7) ? "untested" : "refused";
}
