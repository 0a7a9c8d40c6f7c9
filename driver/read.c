// SPDX-License-Identifier: GPL-2.0
/* read.c - read_iter: the extent loop on user memory and bvecs, exact faults, signals, NOWAIT. */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uio.h>
#include "arch.h"
#include "fastzero.h"
#include "read_loop.h"
#include "stats.h"

unsigned long fz_chunk_size = FZ_CHUNK_AUTO;
unsigned long fz_nt_threshold;	/* set at load (main.c) */
enum fz_loop fz_forced_loop = FZ_LOOP_AUTO;

/*
 * What this open file's reads have done to user memory, to judge whether
 * the next one clears memory the cache holds (policy.h,
 * fz_policy_read_loop()): where the last read ended, and how many bytes
 * the reads before it cleared in one run, each starting where the one
 * before it ended.  Racing readers of the same file (threads, a forked
 * child) can only make the judgement wrong, never unsafe.
 */
struct fz_stream {
	unsigned long end;
	unsigned long streamed;
};

/**
 * fz_read_open() - set up an open file's read state
 * @file: the file being opened; misc_open() left the miscdevice in
 *	  @file->private_data, which nothing else here reads
 *
 * Return: 0, or -ENOMEM.
 */
int fz_read_open(struct file *file)
{
	struct fz_stream *st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return -ENOMEM;
	file->private_data = st;
	return 0;
}

/**
 * fz_read_release() - free an open file's read state
 * @file: the file being released
 */
void fz_read_release(struct file *file)
{
	kfree(file->private_data);
}

/*
 * The loop for a read of @total bytes from @start (0: not user memory),
 * and in *@run the bytes the file's reads streamed up to @start (0 when
 * the read does not start where the last one ended).
 */
static enum fz_loop fz_read_loop(struct file *file, unsigned long start,
				 size_t total, unsigned long *run)
{
	struct fz_stream *st = file->private_data;

	*run = start && READ_ONCE(st->end) == start ? READ_ONCE(st->streamed) : 0;
	return fz_policy_read_loop(READ_ONCE(fz_forced_loop),
				   READ_ONCE(fz_nt_threshold),
				   READ_ONCE(fz_cold_loop),
				   READ_ONCE(fz_cold_threshold), total,
				   start ? *run + total : 0);
}

/* After a read from @start cleared @cleared bytes, ending at @end. */
static void fz_read_streamed(struct file *file, unsigned long start,
			     unsigned long end, unsigned long run,
			     size_t cleared)
{
	struct fz_stream *st = file->private_data;

	if (!start || !cleared)
		return;
	WRITE_ONCE(st->streamed, run + cleared);
	WRITE_ONCE(st->end, end);
}

static unsigned long fz_clear_chunk(enum fz_loop loop, void __user *to,
				    unsigned long n)
{
	if (likely(loop == FZ_LOOP_AUTO))
		return fz_clear_user(to, n);
	return fz_clear_user_loop(loop, to, n);
}

static_assert(FZ_EXTENT_ALIGN == PAGE_SIZE);

/**
 * fz_read_extent() - bytes of the first extent of every read, for sysfs
 * @why: if not NULL, set to how the extents are sized
 *
 * Return: chunk_size if set, else FZ_EXTENT_PROBE: later extents of a
 * read follow its own measured rate and end where a mapping does
 * (read_loop.h, fz_read_extents()).
 */
size_t fz_read_extent(const char **why)
{
	unsigned long chunk_size = READ_ONCE(fz_chunk_size);

	if (why)
		*why = fz_policy_extent_why(chunk_size);
	return fz_policy_first_extent(chunk_size);
}

/*
 * The VMA lookup for fz_read_in_vma() (read_loop.h).  Best effort, without
 * waiting for the lock: under a concurrent mmap() or munmap() of the same
 * process the extent is left as it is, and a process that remaps its own
 * buffer during the read can still place other memory under an extent
 * (the price of a lock-free lookup: the latency it adds is that process's
 * own and its CPU's, at most one FZ_EXTENT_MAX extent of the slower
 * memory).  Reads the loop does not look up (one extent, probes) never
 * touch the mmap_lock, as /dev/zero's do not.
 */
static size_t fz_extent_in_vma(const char __user *to, size_t n,
			       unsigned long *vm_start)
{
	unsigned long addr = (unsigned long)to;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	if (!mm || !mmap_read_trylock(mm))
		return n;
	vma = vma_lookup(mm, addr);
	if (vma) {
		*vm_start = vma->vm_start;
		if (vma->vm_end - addr < n)
			n = vma->vm_end - addr;
	}
	mmap_read_unlock(mm);
	return n;
}

/* One read_iter(), as fz_read_extents() sees it. */
struct fz_read_ctx {
	struct iov_iter *iter;
	enum fz_loop loop;
	bool nowait;
	unsigned long end;	/* where the last user piece ended */
};

static size_t fz_env_count(void *ctx)
{
	return iov_iter_count(((struct fz_read_ctx *)ctx)->iter);
}

static size_t fz_env_seg_len(void *ctx, size_t max)
{
	const struct iov_iter *iter = ((struct fz_read_ctx *)ctx)->iter;

	if (!user_backed_iter(iter))
		return min(iov_iter_count(iter), max);
	return min(fz_iter_user_len(iter), max);
}

static size_t fz_env_in_vma(void *ctx, size_t n, unsigned long *vm_start)
{
	const struct iov_iter *iter = ((struct fz_read_ctx *)ctx)->iter;

	if (!user_backed_iter(iter))
		return n;
	return fz_extent_in_vma(fz_iter_user_addr(iter), n, vm_start);
}

/*
 * User memory goes through fz_clear_user() (or the loop the read chose),
 * one segment's piece at a time; kernel-backed iterators (bvecs of
 * io_uring fixed buffers) through iov_iter_zero().
 */
static size_t fz_env_zero(void *ctx, const struct fz_extents *x, size_t n,
			  bool *fault)
{
	struct fz_read_ctx *c = ctx;
	void __user *to;
	size_t left;

	if (!user_backed_iter(c->iter)) {
		n = iov_iter_zero(n, c->iter);
		*fault = !n;
		return n;
	}
	to = fz_iter_user_addr(c->iter);
	left = fz_clear_chunk(c->loop, to, n);
	iov_iter_advance(c->iter, n - left);
	*fault = left;
	if (n > left)
		c->end = (unsigned long)to + n - left;
	return n - left;
}

static unsigned long long fz_env_clock(void *ctx)
{
	return ktime_get_ns();
}

static bool fz_env_stop(void *ctx)
{
	if (!signal_pending(current))
		return false;
	if (fz_env_count(ctx))
		fz_stat_inc(FZ_STAT_READ_SIGNALS);
	return true;
}

static bool fz_env_resched(void *ctx)
{
	if (!need_resched())
		return false;
	if (((struct fz_read_ctx *)ctx)->nowait)
		return true;
	cond_resched();
	return false;
}

static const struct fz_read_env fz_read_env = {
	.count		= fz_env_count,
	.seg_len	= fz_env_seg_len,
	.in_vma		= fz_env_in_vma,
	.zero		= fz_env_zero,
	.clock		= fz_env_clock,
	.stop		= fz_env_stop,
	.resched	= fz_env_resched,
};

/*
 * read(), readv() and io_uring all come here, read() through the VFS's
 * new_sync_read() with a ubuf iterator: one extent loop
 * (fz_read_extents()).  The semantics are /dev/zero's read_iter_zero(),
 * extent size aside: partial counts on a fault or a signal, and under
 * IOCB_NOWAIT the bytes cleared where it would reschedule.
 */
ssize_t fz_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct fz_read_ctx c = {
		.iter	= iter,
		.nowait	= iocb->ki_flags & IOCB_NOWAIT,
	};
	unsigned long start = user_backed_iter(iter) && iov_iter_count(iter) ?
			      (unsigned long)fz_iter_user_addr(iter) : 0;
	unsigned long run;
	bool faulted;
	ssize_t ret;

	c.loop = fz_read_loop(iocb->ki_filp, start, iov_iter_count(iter), &run);
	c.end = start;
	fz_stat_inc(FZ_STAT_READ_CALLS);
	ret = fz_read_extents(&fz_read_env, &c, READ_ONCE(fz_chunk_size), &faulted);
	if (faulted)
		fz_stat_inc(FZ_STAT_READ_FAULTS);
	if (ret < 0)
		return ret;
	fz_read_streamed(iocb->ki_filp, start, c.end, run, ret);
	fz_stat_add(FZ_STAT_READ_BYTES, ret);
	return ret;
}
