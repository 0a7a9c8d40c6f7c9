/* SPDX-License-Identifier: GPL-2.0 */
/* policy.h - the read path's policy (extents, loop, thresholds), shared with userspace. */
#ifndef _FASTZERO_POLICY_H
#define _FASTZERO_POLICY_H

/*
 * Everything here is a static inline function of plain arguments: the
 * driver calls it with what the kernel knows (boot_cpu_data, the live
 * preemption model, its parameters), userspace/clearbench (make calibrate)
 * and userspace/readmodel (make model) call it with what they measure, so
 * the model and the calibrator run the driver's policy, not a copy of it.
 */
#include <linux/sizes.h>		/* userspace: userspace/shim/linux/sizes.h */
#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#endif
#include "clear_loops.h"

/*
 * The extent a read clears between signal checks (and cond_resched() on
 * cooperative kernels); /dev/zero's is PAGE_SIZE.  chunk_size 0 sizes
 * extents in time, so that none takes longer than FZ_EXTENT_BUDGET_NS
 * on any memory: a timed probe, then a main extent the budget clears at
 * the rates this read measured, growing at most FZ_EXTENT_GROWTH times
 * what it timed in the mapping (a probe may hit lines the cache holds),
 * up to mainline clear_pages()'s batch, FZ_EXTENT_MAX.  A read of at
 * most FZ_EXTENT_WHOLE is one extent.  Any other chunk_size fixes them.
 * What the budget holds for and what not: docs/design-read.md.
 */
#define FZ_CHUNK_AUTO		0
#define FZ_EXTENT_ALIGN		4096UL		/* PAGE_SIZE on x86-64 */
#define FZ_EXTENT_BUDGET_NS	4000000ULL
#define FZ_EXTENT_PROBE		((unsigned long)SZ_16K)
#define FZ_EXTENT_WHOLE		((unsigned long)SZ_64K)
#define FZ_EXTENT_MIN		FZ_EXTENT_ALIGN
#define FZ_EXTENT_MAX		((unsigned long)SZ_32M)
#define FZ_EXTENT_GROWTH	8UL
#define FZ_CHUNK_MIN		FZ_EXTENT_ALIGN
#define FZ_CHUNK_MAX		((unsigned long)SZ_256M)

/**
 * fz_policy_first_extent() - bytes of the first extent of a read
 * @chunk_size: the chunk_size parameter, FZ_CHUNK_AUTO if not set
 *
 * Return: @chunk_size if set, else FZ_EXTENT_PROBE (a read of at most
 * FZ_EXTENT_WHOLE bytes is one extent).
 */
static inline unsigned long fz_policy_first_extent(unsigned long chunk_size)
{
	return chunk_size != FZ_CHUNK_AUTO ? chunk_size : FZ_EXTENT_PROBE;
}

/**
 * fz_policy_fit() - bytes FZ_EXTENT_BUDGET_NS clears at a measured rate
 * @bytes: bytes an extent cleared
 * @ns: nanoseconds it took
 *
 * Return: the budget's bytes at @bytes / @ns, clamped to FZ_EXTENT_MIN ..
 * FZ_EXTENT_MAX and rounded down to a page.
 */
static inline unsigned long fz_policy_fit(unsigned long bytes,
					  unsigned long long ns)
{
	/* bytes < 2^40 and the budget < 2^23: no overflow */
	unsigned long long fit = ns ? bytes * FZ_EXTENT_BUDGET_NS / ns :
				 FZ_EXTENT_MAX;

	if (fit < FZ_EXTENT_MIN)
		fit = FZ_EXTENT_MIN;
	if (fit > FZ_EXTENT_MAX)
		fit = FZ_EXTENT_MAX;
	return (unsigned long)fit & ~(FZ_EXTENT_ALIGN - 1);
}

/**
 * struct fz_extents - one read's extent sizing state (see above)
 * @chunk_size: the chunk_size parameter, FZ_CHUNK_AUTO if not set
 * @next: bytes of the read's next extent
 * @cap: what the budget clears at the rate of the read's last main extent
 * @timed: bytes the read cleared and timed since it entered this mapping
 * @part: bytes of the current extent cleared so far (an extent may span
 *	  iovec segments: its size depends on the bytes, not the cut)
 * @part_ns: nanoseconds they took
 * @probe: the next extent is a probe
 */
struct fz_extents {
	unsigned long chunk_size, next, cap, timed, part;
	unsigned long long part_ns;
	bool probe;
};

/* Nothing timed yet: @next is the first extent, and it is a probe. */
static inline void fz_policy_extents_restart(struct fz_extents *x,
					     unsigned long next)
{
	x->next = next;
	x->cap = FZ_EXTENT_MAX;
	x->timed = 0;
	x->part = 0;
	x->part_ns = 0;
	x->probe = true;
}

/**
 * fz_policy_extents_init() - the extent state at the start of a read
 * @x: the state
 * @chunk_size: the chunk_size parameter, FZ_CHUNK_AUTO if not set
 * @total: bytes the read asks for
 */
static inline void fz_policy_extents_init(struct fz_extents *x,
					  unsigned long chunk_size,
					  unsigned long total)
{
	unsigned long next = fz_policy_first_extent(chunk_size);

	if (chunk_size == FZ_CHUNK_AUTO && total <= FZ_EXTENT_WHOLE)
		next = FZ_EXTENT_WHOLE;
	x->chunk_size = chunk_size;
	fz_policy_extents_restart(x, next);
}

/**
 * fz_policy_extents_done() - size the next extent from the last one
 * @x: the state; @x->next is set
 * @bytes: bytes the last extent cleared; 0 changes nothing
 * @ns: nanoseconds it took (only the clear: no rescheduling)
 *
 * After a probe: a main extent, the budget at the probe's rate, at most
 * @x->cap and FZ_EXTENT_GROWTH times @x->timed.  After a main extent:
 * @x->cap from its rate, and a probe of at most that.
 */
static inline void fz_policy_extents_done(struct fz_extents *x,
					  unsigned long bytes,
					  unsigned long long ns)
{
	unsigned long fit, grow;

	if (x->chunk_size != FZ_CHUNK_AUTO) {
		x->next = x->chunk_size;
		return;
	}
	if (!bytes)
		return;
	fit = fz_policy_fit(bytes, ns);
	x->timed += bytes;
	if (x->probe) {
		grow = x->timed < FZ_EXTENT_MAX / FZ_EXTENT_GROWTH ?
		       (x->timed * FZ_EXTENT_GROWTH) & ~(FZ_EXTENT_ALIGN - 1) :
		       FZ_EXTENT_MAX;
		x->next = fit < x->cap ? fit : x->cap;
		if (x->next > grow)
			x->next = grow > FZ_EXTENT_MIN ? grow : FZ_EXTENT_MIN;
	} else {
		x->cap = fit;
		x->next = fit < FZ_EXTENT_PROBE ? fit : FZ_EXTENT_PROBE;
	}
	x->probe = !x->probe;
}

/**
 * fz_policy_extents_new_mapping() - the next extent starts in another mapping
 * @x: the state
 *
 * Nothing this read measured describes that memory: the next extent is a
 * probe, and the ramp starts over from it.
 */
static inline void fz_policy_extents_new_mapping(struct fz_extents *x)
{
	if (x->chunk_size != FZ_CHUNK_AUTO)
		return;
	fz_policy_extents_restart(x, FZ_EXTENT_PROBE);
}

/**
 * fz_policy_extents_room() - bytes the current extent may still clear
 * @x: the state
 *
 * Return: @x->next less what the extent's earlier pieces cleared.
 */
static inline unsigned long fz_policy_extents_room(const struct fz_extents *x)
{
	return x->next - x->part;
}

/**
 * fz_policy_extents_piece() - account one timed piece of the current extent
 * @x: the state
 * @bytes: bytes the piece cleared (one iovec segment's share); 0 changes
 *	   nothing, so an empty segment is as if it were not there
 * @ns: nanoseconds it took
 *
 * Once the pieces fill the extent, fz_policy_extents_done() sizes the
 * next one from all of them.
 */
static inline void fz_policy_extents_piece(struct fz_extents *x,
					   unsigned long bytes,
					   unsigned long long ns)
{
	x->part += bytes;
	x->part_ns += ns;
	if (x->part < x->next)
		return;
	fz_policy_extents_done(x, x->part, x->part_ns);
	x->part = 0;
	x->part_ns = 0;
}

/**
 * fz_policy_extent_why() - the extent policy in words, for debugfs
 * @chunk_size: the chunk_size parameter, FZ_CHUNK_AUTO if not set
 *
 * Return: a constant string.
 */
static inline const char *fz_policy_extent_why(unsigned long chunk_size)
{
	if (chunk_size != FZ_CHUNK_AUTO)
		return "set by chunk_size";
	return "a probe; then 4 ms at the rate the read measured, 4K..32M";
}

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

/*
 * Cold destinations.  A store that does not read the line in first
 * (CLZERO on AMD, MOVNTI on Intel) beats rep stos into memory the cache
 * does not hold and loses to it into memory it does.  A read cannot see
 * which its buffer is; the open file's reads can: reads that each start
 * where the last ended stream through memory, and once such a run reaches
 * nt_threshold it has written more than the cache keeps.  A ring the
 * cache holds restarts the run where it wraps and keeps rep stos.  The
 * numbers, and upstream's: docs/design-clear.md.
 */
#define FZ_COLD_THRESHOLD	((unsigned long)SZ_64K)

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

/**
 * fz_policy_nt_loop() - the non-temporal store, for reads of nt_threshold and more
 * @cold_loop: fz_policy_cold_loop()'s store, FZ_LOOP_AUTO for none
 *
 * Return: @cold_loop where there is one (CLZERO on AMD, MOVNTI on Intel),
 * else FZ_LOOP_NT (MOVNTI).
 */
static inline enum fz_loop fz_policy_nt_loop(enum fz_loop cold_loop)
{
	return cold_loop != FZ_LOOP_AUTO ? cold_loop : FZ_LOOP_NT;
}

/**
 * fz_policy_read_loop() - the clear loop for one read
 * @forced: the force_variant parameter, FZ_LOOP_AUTO if not set
 * @nt_threshold: the nt_threshold parameter, 0 for never
 * @cold_loop: fz_policy_cold_loop()'s store, FZ_LOOP_AUTO for none
 * @cold_threshold: the cold_threshold parameter, 0 for never
 * @total: bytes the read asks for
 * @streamed: bytes of the run of reads this one continues, this one
 *	      included (see above)
 *
 * Return: @forced if set; @cold_loop for a read of at least
 * @cold_threshold bytes whose run reached @nt_threshold; for any read of
 * at least @nt_threshold bytes, whatever its buffer, fz_policy_nt_loop();
 * else FZ_LOOP_AUTO (the loop the alternatives patched in).
 */
static inline enum fz_loop fz_policy_read_loop(enum fz_loop forced,
					       unsigned long nt_threshold,
					       enum fz_loop cold_loop,
					       unsigned long cold_threshold,
					       unsigned long total,
					       unsigned long streamed)
{
	if (forced != FZ_LOOP_AUTO)
		return forced;
	if (cold_loop != FZ_LOOP_AUTO && cold_threshold && nt_threshold &&
	    total >= cold_threshold && streamed >= nt_threshold)
		return cold_loop;
	if (nt_threshold && total >= nt_threshold)
		return fz_policy_nt_loop(cold_loop);
	return FZ_LOOP_AUTO;
}

#endif /* _FASTZERO_POLICY_H */
