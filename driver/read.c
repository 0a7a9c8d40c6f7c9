// SPDX-License-Identifier: GPL-2.0
/* read.c - read and read_iter: extents, exact faults, signals, NOWAIT. */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>
#include "clear.h"
#include "fastzero.h"
#include "stats.h"

unsigned long fz_chunk_size = FZ_CHUNK_AUTO;
unsigned long fz_nt_threshold;	/* set at load (main.c) */
int fz_forced_loop = FZ_LOOP_AUTO;

/* The loop for a read of @total bytes (policy.h). */
static int fz_read_loop(size_t total)
{
	return fz_policy_loop(READ_ONCE(fz_forced_loop),
			      READ_ONCE(fz_nt_threshold), total);
}

static unsigned long fz_clear_chunk(int loop, void __user *to, unsigned long n)
{
	if (likely(loop == FZ_LOOP_AUTO))
		return fz_clear_user(to, n);
	return fz_clear_user_loop(loop, to, n);
}

static_assert(FZ_EXTENT_ALIGN == PAGE_SIZE);

/* Clearing rate of recent large extents in bytes per microsecond (EWMA). */
static unsigned long fz_rate = FZ_RATE_INITIAL;

/**
 * fz_read_extent() - bytes a read clears between signal checks
 * @why: if not NULL, set to the reason, for sysfs
 *
 * Return: chunk_size if set, else the extent for the preemption model the
 * kernel runs (fz_policy_extent() in policy.h).
 */
size_t fz_read_extent(const char **why)
{
	return fz_policy_extent(READ_ONCE(fz_chunk_size),
				preempt_model_preemptible(),
				READ_ONCE(fz_rate), why);
}

/* A clock reading for an extent worth timing (the rate sizes extents), else 0. */
static u64 fz_time_start(size_t n)
{
	return n >= FZ_EXTENT_COOP ? local_clock() : 0;
}

static void fz_time_end(u64 t0, size_t done)
{
	if (t0)
		WRITE_ONCE(fz_rate, fz_policy_rate(READ_ONCE(fz_rate), done,
						   local_clock() - t0));
}

/*
 * The semantics are /dev/zero's read_zero(), chunk size aside: a fault
 * returns the bytes cleared before it, or -EFAULT if there are none; a
 * pending signal ends the read after the current chunk.
 */
ssize_t fz_read(struct file *file, char __user *buf, size_t count,
		loff_t *ppos)
{
	size_t chunk_max = fz_read_extent(NULL);
	int loop = fz_read_loop(count);
	size_t cleared = 0;

	fz_stat_inc(FZ_STAT_READ_CALLS);
	while (count) {
		size_t chunk = min(count, chunk_max);
		u64 t0 = fz_time_start(chunk);
		size_t left = fz_clear_chunk(loop, buf + cleared, chunk);

		fz_time_end(t0, chunk - left);
		cleared += chunk - left;
		if (unlikely(left)) {
			fz_stat_inc(FZ_STAT_READ_FAULTS);
			if (!cleared)
				return -EFAULT;
			break;
		}
		count -= chunk;

		if (signal_pending(current)) {
			if (count)
				fz_stat_inc(FZ_STAT_READ_SIGNALS);
			break;
		}
		cond_resched();
	}
	fz_stat_add(FZ_STAT_READ_BYTES, cleared);
	return cleared;
}

/*
 * Zero up to @max bytes of the iterator's current user segment and advance
 * past them.  Sets *@fault when the segment ran into inaccessible memory.
 */
static size_t fz_zero_user_segment(int loop, struct iov_iter *iter,
				   size_t max, bool *fault)
{
	size_t len = min(fz_iter_user_len(iter), max);
	size_t left = fz_clear_chunk(loop, fz_iter_user_addr(iter), len);

	iov_iter_advance(iter, len - left);
	*fault = left;
	return len - left;
}

/*
 * Zero up to @max bytes of any iterator.  User memory goes through
 * fz_clear_user(); kernel-backed iterators (bvecs of io_uring fixed
 * buffers) through iov_iter_zero().
 */
static size_t fz_zero_iter(int loop, struct iov_iter *iter, size_t max,
			   bool *fault)
{
	size_t n;

	if (user_backed_iter(iter))
		return fz_zero_user_segment(loop, iter, max, fault);

	n = iov_iter_zero(max, iter);
	*fault = !n;
	return n;
}

/*
 * The semantics are /dev/zero's read_iter_zero(): partial counts on a
 * fault or a signal, -EAGAIN instead of rescheduling under IOCB_NOWAIT.
 */
ssize_t fz_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	size_t chunk_max = fz_read_extent(NULL);
	int loop = fz_read_loop(iov_iter_count(iter));
	size_t written = 0;

	fz_stat_inc(FZ_STAT_READ_CALLS);
	while (iov_iter_count(iter)) {
		u64 t0 = fz_time_start(min(iov_iter_count(iter), chunk_max));
		size_t done;
		bool fault;

		done = fz_zero_iter(loop, iter, chunk_max, &fault);
		fz_time_end(t0, done);
		written += done;
		if (unlikely(fault)) {
			fz_stat_inc(FZ_STAT_READ_FAULTS);
			if (!written)
				return -EFAULT;
			break;
		}
		/*
		 * An empty segment, which the advance skipped: /dev/zero's
		 * iov_iter_zero() steps over those before it clears, so a
		 * signal is looked for only after bytes were cleared.
		 */
		if (unlikely(!done))
			continue;
		if (signal_pending(current)) {
			if (iov_iter_count(iter))
				fz_stat_inc(FZ_STAT_READ_SIGNALS);
			if (!written)
				return -ERESTARTSYS;
			break;
		}
		if (!need_resched())
			continue;
		if (iocb->ki_flags & IOCB_NOWAIT) {
			if (!written)
				return -EAGAIN;
			break;
		}
		cond_resched();
	}
	fz_stat_add(FZ_STAT_READ_BYTES, written);
	return written;
}
