/* SPDX-License-Identifier: GPL-2.0 */
/* policy.h - the read path's policy (extents, the loop for a read), shared with userspace. */
#ifndef _FASTZERO_POLICY_H
#define _FASTZERO_POLICY_H

/*
 * Everything here is a static inline function of plain arguments: the
 * driver calls it with what the kernel knows (the CPU, the live
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
#include "clear_loops.h"	/* arch/<arch>/: enum fz_loop */

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
#define FZ_EXTENT_ALIGN		4096UL		/* the smallest PAGE_SIZE */
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

/*
 * Cold destinations.  A store that does not read the line in first
 * (CLZERO on AMD, MOVNTI on Intel, DC ZVA on arm64) beats the usual loop
 * into memory the cache does not hold and loses to it into memory it
 * does (cpu_policy.h has each CPU's).  A read cannot see
 * which its buffer is; the open file's reads can: reads that each start
 * where the last ended stream through memory, and once such a run reaches
 * nt_threshold it has written more than the cache keeps.  A ring the
 * cache holds restarts the run where it wraps and keeps the usual loop.  The
 * numbers, and upstream's: docs/design-clear.md.
 */
#define FZ_COLD_THRESHOLD	((unsigned long)SZ_64K)

/**
 * fz_policy_nt_loop() - the non-temporal store, for reads of nt_threshold and more
 * @cold_loop: fz_policy_cold_loop()'s store, FZ_LOOP_AUTO for none
 *
 * Return: @cold_loop where there is one, else FZ_LOOP_NT.
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
 * else FZ_LOOP_AUTO (the loop chosen at load).
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

/* The loop and thresholds each CPU gets: arch/<arch>/cpu_policy.h. */
#include "cpu_policy.h"

#endif /* _FASTZERO_POLICY_H */
