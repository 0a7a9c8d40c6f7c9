// SPDX-License-Identifier: GPL-2.0
/*
 * clear_user_test - the series' rep_stos_alternative(), run in userspace.
 *
 * upstream/series.sh assembles the function from the patched
 * arch/x86/lib/clear_page_64.S with stand-ins for the kernel's macros
 * (rep_stos_shim.h): ALTERNATIVE picks its replacement when built with
 * -DERMS=1, and _ASM_EXTABLE_UA() records (insn, fixup) pairs that the
 * SIGSEGV handler below applies as the kernel's exception fixup does:
 * a fault at a listed instruction resumes at its fixup.
 *
 * Checked, at every length 0..2200 and offsets 0..63, and at page and
 * 2 MiB sizes: the return value is 0, exactly [dst, dst + len) is zero,
 * 64 guard bytes on each side untouched.  Then faults: a clear that runs
 * into a PROT_NONE page after k writable bytes returns len - k, the
 * uncleared count __clear_user() reports, with the k bytes zero.
 * TAP on stdout; exit status 0 when every test passed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

struct ex_entry {
	uint64_t insn, fixup;
};

extern const struct ex_entry __start_fz_ex_table[], __stop_fz_ex_table[];
extern char rep_stos_alternative[];

#define GUARD	64
static int ntest, nfail;

static void tap(int ok, const char *name, const char *why)
{
	ntest++;
	if (!ok)
		nfail++;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", ntest, name,
	       ok ? "" : " # ", ok ? "" : why);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t rip = uc->uc_mcontext.gregs[REG_RIP];
	const struct ex_entry *e;

	(void)sig;
	(void)si;
	for (e = __start_fz_ex_table; e < __stop_fz_ex_table; e++) {
		if (e->insn == rip) {
			uc->uc_mcontext.gregs[REG_RIP] = e->fixup;
			return;
		}
	}
	/* a fault with no fixup: the kernel would oops */
	fprintf(stderr, "fault at %#lx (rep_stos_alternative+%#lx) with no fixup\n",
		(unsigned long)rip, (unsigned long)(rip - (uint64_t)rep_stos_alternative));
	_exit(3);
}

/* __clear_user()'s call: %rdi dst, %rcx len, %rax 0; returns %rcx. */
static unsigned long clear(void *dst, unsigned long len)
{
	asm volatile("call rep_stos_alternative"
		     : "+c" (len), "+D" (dst)
		     : "a" (0UL)
		     : "memory", "cc");
	return len;
}

static int check_range(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static int one(unsigned char *base, size_t off, size_t len, char *why)
{
	unsigned char *dst = base + GUARD + off;
	unsigned long left;

	memset(base, 0xaa, GUARD + off + len + GUARD);
	left = clear(dst, len);
	if (left) {
		sprintf(why, "len %zu off %zu: returned %lu", len, off, left);
		return 0;
	}
	if (!check_range(dst, len, 0) || !check_range(base, GUARD + off, 0xaa) ||
	    !check_range(dst + len, GUARD, 0xaa)) {
		sprintf(why, "len %zu off %zu: wrong bytes", len, off);
		return 0;
	}
	return 1;
}

int main(void)
{
	static const size_t big[] = { 4095, 4096, 4097, 65536, 2u << 20, (2u << 20) + 5 };
	long pg = sysconf(_SC_PAGESIZE);
	size_t region = (4u << 20) + 4 * pg, len, off, k, i;
	struct sigaction sa = { 0 };
	unsigned char *base, *edge;
	char why[128] = "";
	int ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	base = mmap(NULL, region, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 2;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);

	ok = 1;
	for (len = 0; ok && len <= 2200; len++)
		for (off = 0; ok && off < 64; off++)
			ok = one(base, off, len, why);
	tap(ok, "bytes_short_lengths_all_offsets", why);

	ok = 1;
	for (i = 0; ok && i < sizeof(big) / sizeof(big[0]); i++)
		for (off = 0; ok && off < 64; off += 7)
			ok = one(base, off, big[i], why);
	tap(ok, "bytes_page_and_2m_lengths", why);

	/* a PROT_NONE page at edge: k writable bytes before it */
	edge = base + 2 * pg;
	mprotect(edge, pg, PROT_NONE);
	ok = 1;
	for (k = 0; ok && k <= 1100; k += (k < 80 ? 1 : 13)) {
		for (len = k + 1; ok && len <= k + 3000; len += (len < k + 80 ? 1 : 97)) {
			unsigned long left;

			memset(edge - k - GUARD, 0xaa, k + GUARD);
			left = clear(edge - k, len);
			if (left != len - k || !check_range(edge - k, k, 0) ||
			    !check_range(edge - k - GUARD, GUARD, 0xaa)) {
				sprintf(why, "%zu writable of %zu: returned %lu, want %zu",
					k, len, left, len - k);
				ok = 0;
			}
		}
	}
	tap(ok, "fault_returns_the_uncleared_count", why);

	printf("1..%d\n", ntest);
	return nfail ? 1 : 0;
}
