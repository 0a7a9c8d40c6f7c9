/* SPDX-License-Identifier: GPL-2.0 */
/* cpu_policy.h - x86-64: the loop, thresholds and cold store for a CPU, shared with userspace. */
#ifndef _FASTZERO_CPU_POLICY_H
#define _FASTZERO_CPU_POLICY_H

/*
 * Static inline functions of plain arguments, as policy.h's: arch/x86/cpu.c
 * calls them with what the kernel reads of the CPU, userspace/clearbench
 * and readmodel with what CPUID tells them.
 */
#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#endif
#include <linux/sizes.h>
#include "clear_loops.h"

/* CPU vendors the thresholds distinguish (Hygon counts as AMD). */
enum fz_vendor {
	FZ_VENDOR_OTHER,
	FZ_VENDOR_INTEL,
	FZ_VENDOR_AMD,
};

/* FSRS in CPUID leaf 7 subleaf 1, EAX (X86_FEATURE_FSRS, cpufeatures.h) */
#define FZ_CPUID_7_1_EAX_FSRS	0x800u	/* bit 11 */

/**
 * struct fz_cpu - what the thresholds are derived from
 * @vendor: enum fz_vendor
 * @rep_good: X86_FEATURE_REP_GOOD (fast rep stos for long runs)
 * @erms: enhanced rep movsb/stosb
 * @fsrs: fast short rep stosb, as CPUID 7.1:EAX[11] reports it (not the
 *	  kernel's X86_FEATURE_FSRS, which 6.4+ also sets for AMD's FSRM)
 * @max_leaf: highest basic CPUID leaf
 * @max_ext_leaf: highest extended CPUID leaf
 * @llc_size: bytes of the last-level cache a thread sees (0: unknown)
 * @llc_per_thread: @llc_size divided by the threads sharing it
 * @llc_from: where @llc_size came from, for the reasons in debugfs
 * @fallback_kb: the kernel's x86_cache_size (/proc/cpuinfo "cache size")
 */
struct fz_cpu {
	enum fz_vendor vendor;
	bool rep_good, erms, fsrs;
	unsigned int max_leaf, max_ext_leaf;
	unsigned long llc_size, llc_per_thread;
	const char *llc_from;
	unsigned long fallback_kb;
};

/* cpuid(leaf, subleaf) into r[0..3] = eax, ebx, ecx, edx. */
typedef void (*fz_cpuid_fn)(unsigned int leaf, unsigned int sub,
			    unsigned int *r);

/**
 * fz_cpuid_cache_bytes() - size of a cache from its CPUID descriptor
 * @r: eax..edx of leaf 4 or 0x8000001d for one cache
 *
 * Return: ways x partitions x line size x sets, in bytes.
 */
static inline unsigned long fz_cpuid_cache_bytes(const unsigned int *r)
{
	return (unsigned long)((r[1] >> 22) + 1) * (((r[1] >> 12) & 0x3ff) + 1) *
	       ((r[1] & 0xfff) + 1) * (r[2] + 1);
}

/**
 * fz_cpuid_llc() - the highest-level data or unified cache of a leaf
 * @cpuid: how to run CPUID
 * @leaf: a deterministic cache parameters leaf: 4 (Intel), 0x8000001d (AMD)
 * @cpu: its llc_size and llc_per_thread (size / threads sharing) are set
 *
 * Return: true if the leaf described any such cache.
 */
static inline bool fz_cpuid_llc(fz_cpuid_fn cpuid, unsigned int leaf,
				struct fz_cpu *cpu)
{
	unsigned int r[4], sub, level, best = 0;

	for (sub = 0; sub < 16; sub++) {
		cpuid(leaf, sub, r);
		if (!(r[0] & 0x1f))	/* type 0: no more caches */
			break;
		level = (r[0] >> 5) & 7;
		if ((r[0] & 0x1f) == 2 || level <= best)	/* instruction cache */
			continue;
		best = level;
		cpu->llc_size = fz_cpuid_cache_bytes(r);
		cpu->llc_per_thread = cpu->llc_size / (((r[0] >> 14) & 0xfff) + 1);
	}
	return best;
}

/**
 * fz_policy_cpu_caches() - the last-level cache, as glibc finds it
 * @cpu: @vendor, @max_leaf, @max_ext_leaf and @fallback_kb set; the
 *	 llc_* fields are filled in
 * @cpuid: how to run CPUID (the kernel's cpuid_count(), or <cpuid.h>)
 *
 * The leaves glibc reads (handle_intel(), handle_amd() in glibc 2.40's
 * sysdeps/x86/dl-cacheinfo.h): Intel leaf 4; AMD leaf 0x8000001d (the L3
 * of one CCX, which its threads share), else leaf 0x80000006's L3, else
 * its L2 (some hypervisors zero 0x8000001d); anything else, or nothing
 * found, the kernel's x86_cache_size.  Modules cannot reach the kernel's
 * own cacheinfo (get_cpu_cacheinfo() is not exported in 6.1 to 7.3), and
 * x86_cache_size is the L2 on AMD, so CPUID is asked directly.
 */
static inline void fz_policy_cpu_caches(struct fz_cpu *cpu, fz_cpuid_fn cpuid)
{
	unsigned int r[4];

	cpu->llc_size = 0;
	cpu->llc_per_thread = 0;
	cpu->llc_from = "none";
	if (cpu->vendor == FZ_VENDOR_INTEL && cpu->max_leaf >= 4 &&
	    fz_cpuid_llc(cpuid, 4, cpu)) {
		cpu->llc_from = "CPUID 4";
	} else if (cpu->vendor == FZ_VENDOR_AMD &&
		   cpu->max_ext_leaf >= 0x8000001d &&
		   fz_cpuid_llc(cpuid, 0x8000001d, cpu)) {
		cpu->llc_per_thread = cpu->llc_size;	/* glibc: per CCX */
		cpu->llc_from = "CPUID 0x8000001d";
	} else if (cpu->vendor == FZ_VENDOR_AMD &&
		   cpu->max_ext_leaf >= 0x80000006) {
		cpuid(0x80000006, 0, r);
		cpu->llc_size = (unsigned long)(r[3] >> 18) << 19;
		cpu->llc_from = "CPUID 0x80000006 L3";
		if (!cpu->llc_size) {
			cpu->llc_size = (unsigned long)(r[2] >> 16) << 10;
			cpu->llc_from = "CPUID 0x80000006 L2";
		}
		cpu->llc_per_thread = cpu->llc_size;
	}
	if (!cpu->llc_size && cpu->fallback_kb) {
		cpu->llc_size = cpu->fallback_kb << 10;
		cpu->llc_per_thread = cpu->llc_size;
		cpu->llc_from = "x86_cache_size";
	}
}

/**
 * fz_policy_variant() - the clear_user variant the alternatives pick
 * @cpu: the CPU's features
 *
 * The order of FZ_CLEAR_USER_ALTERNATIVE() in clear.h (the last variant
 * whose feature is present wins); the driver checks at load that the
 * patching agrees, userspace uses it to model the driver.
 *
 * Return: FZ_LOOP_ERMS, FZ_LOOP_STOSQ or FZ_LOOP_UNROLLED.
 */
static inline enum fz_loop fz_policy_variant(const struct fz_cpu *cpu)
{
	if (cpu->erms)
		return FZ_LOOP_ERMS;
	if (cpu->rep_good)
		return FZ_LOOP_STOSQ;
	return FZ_LOOP_UNROLLED;
}

/* glibc's default rep_stosb_threshold (dl-cacheinfo.h). */
#define FZ_NT_THRESHOLD_MIN	0x4040UL	/* glibc's minimum_non_temporal_threshold */
#define FZ_ERMS_THRESHOLD_GLIBC	2048UL

/**
 * fz_policy_erms_threshold() - shortest clear the erms variant does with rep stosb
 * @cpu: the CPU's vendor and features
 * @why: if not NULL, set to the reason (debugfs fastzero/reasons)
 *
 * glibc's memset starts rep stosb at 2048 bytes (rep_stosb_threshold)
 * after vector stores; below the threshold fastzero has 8-byte movq
 * stores, so on AMD rep stosb pays off sooner, from 768 bytes (Zen 4;
 * `make calibrate` measures yours).  Elsewhere glibc's 2048.  With FSRS
 * in CPUID, 0; not the kernel's X86_FEATURE_FSRS, which 6.4+ sets from
 * AMD's FSRM where short rep stosb is slow.  Numbers:
 * docs/design-clear.md#fsrm-and-fsrs.
 *
 * Return: the threshold in bytes.
 */
static inline unsigned long fz_policy_erms_threshold(const struct fz_cpu *cpu,
						     const char **why)
{
	const char *reason;
	unsigned long thr;

	if (cpu->fsrs) {
		thr = 0;
		reason = "derived: FSRS (CPUID 7.1:EAX[11]), rep stosb is fast at every length";
	} else if (cpu->erms && cpu->vendor == FZ_VENDOR_AMD) {
		thr = FZ_ERMS_THRESHOLD_AMD;
		reason = "derived: AMD ERMS: rep stosb beats movq from 768 B (Zen 4)";
	} else if (cpu->erms) {
		thr = FZ_ERMS_THRESHOLD_GLIBC;
		reason = "derived: ERMS: glibc's rep_stosb_threshold";
	} else {
		thr = FZ_ERMS_THRESHOLD_GLIBC;
		reason = "derived: no ERMS (force_variant=erms only): glibc's default";
	}
	if (why)
		*why = reason;
	return thr;
}

/**
 * fz_policy_nt_threshold() - read size from which non-temporal stores are used
 * @cpu: the CPU's vendor, features and last-level cache
 * @clzero: the clzero variant passed its load-time self-test (clzero.c)
 * @why: if not NULL, set to the reason (debugfs fastzero/reasons)
 *
 * glibc's non_temporal_threshold (dl_init_cacheinfo()): a quarter of the
 * shared cache, at least 3/4 of a thread's share (the share alone without
 * ERMS), 64 MiB without cache info; memset uses it on Intel only, and so
 * do the rep stos variants here, but for AMD with a usable CLZERO: half
 * the shared cache, where CLZERO overtakes rep stos into a reused buffer
 * (Zen 4).  The unrolled loop takes glibc's threshold everywhere.  The
 * numbers: docs/design-clear.md; the store used: fz_policy_read_loop().
 *
 * Return: the threshold in bytes, 0 for never.
 */
static inline unsigned long fz_policy_nt_threshold(const struct fz_cpu *cpu,
						   bool clzero,
						   const char **why)
{
	bool rep_stos = fz_policy_variant(cpu) != FZ_LOOP_UNROLLED;
	unsigned long low = cpu->llc_per_thread / 4 * 3;
	unsigned long thr = cpu->llc_size / 4;
	bool floored = thr < low;
	const char *reason;

	if (floored || !cpu->erms)
		thr = low;
	if (rep_stos && cpu->vendor == FZ_VENDOR_AMD && clzero) {
		thr = cpu->llc_size / 2;
		reason = "derived: AMD, clzero usable: LLC / 2 (Zen 4 measured)";
		if (thr < 2 * FZ_NT_THRESHOLD_MIN) {
			thr = SZ_64M;
			reason = "derived: AMD, clzero usable, no cache size: 64 MiB";
		}
	} else if (rep_stos && cpu->vendor != FZ_VENDOR_INTEL) {
		thr = 0;
		reason = "derived: rep stos off Intel: never (glibc memset; Zen 4 measured)";
	} else if (thr < FZ_NT_THRESHOLD_MIN) {
		thr = SZ_64M;
		reason = "derived: no cache size found: glibc's 64 MiB";
	} else if (cpu->erms && floored) {
		reason = "derived: glibc's non_temporal_threshold, its floor: 3/4 LLC per thread";
	} else if (cpu->erms) {
		reason = "derived: glibc's non_temporal_threshold, LLC / 4";
	} else {
		reason = "derived: glibc's non-ERMS threshold, 3/4 LLC per thread";
	}
	if (why)
		*why = reason;
	return thr;
}

/**
 * fz_policy_cold_loop() - the store for destinations the cache does not hold
 * @cpu: the CPU's vendor
 * @clzero: the clzero variant passed its load-time self-test (clzero.c)
 * @why: if not NULL, set to the reason (debugfs fastzero/reasons)
 *
 * Return: FZ_LOOP_CLZERO on AMD where it runs, FZ_LOOP_NT on Intel,
 * FZ_LOOP_AUTO (no cold store: the patched variant) otherwise.
 */
static inline enum fz_loop fz_policy_cold_loop(const struct fz_cpu *cpu,
					       bool clzero, const char **why)
{
	const char *reason;
	enum fz_loop loop;

	if (cpu->vendor == FZ_VENDOR_AMD && clzero) {
		loop = FZ_LOOP_CLZERO;
		reason = "derived: AMD, clzero self-tested: 2.3x rep stosb cold (Zen 4)";
	} else if (cpu->vendor == FZ_VENDOR_INTEL) {
		loop = FZ_LOOP_NT;
		reason = "derived: Intel: movnti beats rep stosb cold (Ice Lake, measured)";
	} else {
		loop = FZ_LOOP_AUTO;
		reason = cpu->vendor == FZ_VENDOR_AMD ?
			 "derived: AMD, no usable clzero: rep stos (beats movnti on Zen 4)" :
			 "derived: neither Intel nor AMD: untested, rep stos";
	}
	if (why)
		*why = reason;
	return loop;
}

#endif /* _FASTZERO_CPU_POLICY_H */
