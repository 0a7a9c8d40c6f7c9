/* SPDX-License-Identifier: GPL-2.0 */
/* read_loop.h - the read path's extent loop, run by read.c and by the host test of its extents. */
#ifndef _FASTZERO_READ_LOOP_H
#define _FASTZERO_READ_LOOP_H

#include "policy.h"
#ifndef __KERNEL__
#include <errno.h>
#include <sys/cdefs.h>		/* __always_inline */
#include <sys/types.h>
#endif

/*
 * What the loop asks of where it runs, @ctx being that caller's: read.c's
 * iov_iter, clear loops, ktime_get_ns(), VMA lookup, signals and
 * rescheduling, or the host test's segments, memory and clock.  Every
 * member is called with a constant table, so the compiler calls each
 * directly.
 */
struct fz_read_env {
	/* bytes the read has still to clear */
	size_t (*count)(void *ctx);
	/* bytes of the current segment from its position, at most @max */
	size_t (*seg_len)(void *ctx, size_t max);
	/*
	 * @n, cut where the mapping of the position ends; that mapping's
	 * start in *@vm_start (left 0: unknown)
	 */
	size_t (*in_vma)(void *ctx, size_t n, unsigned long *vm_start);
	/* clear @n bytes from the position, advance; *@fault: it faulted */
	size_t (*zero)(void *ctx, const struct fz_extents *x, size_t n,
		       bool *fault);
	unsigned long long (*clock)(void *ctx);
	/* after bytes were cleared: end the read now (a signal pending)? */
	bool (*stop)(void *ctx);
	/* reschedule if the CPU is wanted; true: end the read instead (IOCB_NOWAIT) */
	bool (*resched)(void *ctx);
};

/*
 * One read's extents (policy.h): a probe, then a main extent that takes
 * FZ_EXTENT_BUDGET_NS at the rates this read measured, ramping up from
 * the probe, and so on; an extent may be cut into pieces by segments.
 */
struct fz_extent {
	struct fz_extents x;
	unsigned long vm_start;	/* the mapping the extent is in; 0: unknown */
	bool one;		/* the whole read is one extent */
};

/*
 * A main extent ends where the mapping holding its first byte ends: the
 * probe before it measured that mapping's memory, and past its end may be
 * memory of another kind (a device mapping after RAM), which the next
 * probe measures.  Probes (at most FZ_EXTENT_PROBE) and a read that is one
 * extent have no next probe and are not looked up.
 */
static __always_inline size_t fz_read_in_vma(const struct fz_extent *e,
					     const struct fz_read_env *env,
					     void *ctx, size_t n,
					     unsigned long *vm_start)
{
	*vm_start = 0;
	if (e->one || n <= FZ_EXTENT_PROBE)
		return n;
	return env->in_vma(ctx, n, vm_start);
}

/*
 * Bytes the next piece of the current extent clears: what the extent has
 * room for, at most the current segment and the mapping its first byte is
 * in; *@want is what it would be without the mapping.  An extent goes on
 * into the next segment where that is in the same mapping; a piece that
 * starts in another mapping than the extent's earlier pieces ends the
 * extent before it, as a mapping's end does.
 */
static __always_inline size_t fz_read_step(struct fz_extent *e,
					   const struct fz_read_env *env,
					   void *ctx, size_t *want)
{
	unsigned long vm_start;
	size_t n;

	*want = env->seg_len(ctx, fz_policy_extents_room(&e->x));
	n = fz_read_in_vma(e, env, ctx, *want, &vm_start);
	if (vm_start && e->x.part && e->vm_start && vm_start != e->vm_start) {
		fz_policy_extents_new_mapping(&e->x);
		*want = env->seg_len(ctx, e->x.next);
		n = fz_read_in_vma(e, env, ctx, *want, &vm_start);
	}
	if (vm_start)
		e->vm_start = vm_start;
	return n;
}

/**
 * fz_read_extents() - clear a read's bytes, extent by extent
 * @env: the caller's environment
 * @ctx: its state, passed to every @env call
 * @chunk_size: the chunk_size parameter (FZ_CHUNK_AUTO: extents in time)
 * @faulted: set when the read ran into inaccessible memory
 *
 * The clock is read only around pieces that more bytes follow: a
 * preempted piece measures long, and the next extent is shorter for it.
 * A pending signal, and IOCB_NOWAIT where the CPU is wanted, are looked
 * at only after a piece cleared bytes, so the read returns those.
 *
 * Return: the bytes cleared, or -EFAULT if a fault came before any.
 */
static __always_inline ssize_t fz_read_extents(const struct fz_read_env *env,
					       void *ctx,
					       unsigned long chunk_size,
					       bool *faulted)
{
	size_t total = env->count(ctx), written = 0;
	struct fz_extent e;

	fz_policy_extents_init(&e.x, chunk_size, total);
	e.vm_start = 0;
	e.one = e.x.next >= total;
	*faulted = false;
	while (env->count(ctx)) {
		size_t left = env->count(ctx), want, done;
		size_t n = fz_read_step(&e, env, ctx, &want);
		unsigned long long t0 = n && left > n ? env->clock(ctx) : 0;
		bool fault;

		done = env->zero(ctx, &e.x, n, &fault);
		if (t0)
			fz_policy_extents_piece(&e.x, done, env->clock(ctx) - t0);
		if (n < want)
			fz_policy_extents_new_mapping(&e.x);
		written += done;
		if (fault) {
			*faulted = true;
			return written ? (ssize_t)written : -EFAULT;
		}
		/*
		 * An empty segment, which the advance skipped: /dev/zero's
		 * iov_iter_zero() steps over those before it clears, so a
		 * signal is looked for only after bytes were cleared.
		 */
		if (!done)
			continue;
		if (env->stop(ctx) || env->resched(ctx))
			break;
	}
	return written;
}

#endif /* _FASTZERO_READ_LOOP_H */
