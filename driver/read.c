// SPDX-License-Identifier: GPL-2.0
/* read.c - read and read_iter: extents, exact faults, signals, NOWAIT. */

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uio.h>
#include "clear.h"
#include "fastzero.h"
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
 * read follow its own measured rate (policy.h, fz_extent_end()) and end
 * where a mapping does (fz_extent_in_vma()).
 */
size_t fz_read_extent(const char **why)
{
	unsigned long chunk_size = READ_ONCE(fz_chunk_size);

	if (why)
		*why = fz_policy_extent_why(chunk_size);
	return fz_policy_first_extent(chunk_size);
}

/*
 * One read's extents (policy.h): a probe, then a main extent that takes
 * FZ_EXTENT_BUDGET_NS at the rates this read measured, ramping up from
 * the probe, and so on.  The clock is read only around extents that another one
 * follows, and is ktime_get_ns(): a task that migrates mid-extent sees no
 * skew between CPUs' clocks; one that is preempted measures long, and its
 * next extent is the shorter for it.
 */
struct fz_extent {
	struct fz_extents x;
	u64 t0;
	unsigned long vm_start;	/* the mapping the extent is in; 0: unknown */
};

static void fz_extent_init(struct fz_extent *e, size_t total)
{
	fz_policy_extents_init(&e->x, READ_ONCE(fz_chunk_size), total);
	e->t0 = 0;
	e->vm_start = 0;
}

/* Before clearing @n of the @left bytes the read still has to do. */
static void fz_extent_start(struct fz_extent *e, size_t n, size_t left)
{
	e->t0 = n && left > n ? ktime_get_ns() : 0;
}

/*
 * After clearing @done bytes (before any cond_resched()) of an extent the
 * VMA lookup cut from @want to @n bytes: the next byte is in another
 * mapping, whose memory nothing measured yet.
 */
static void fz_extent_end(struct fz_extent *e, size_t done, size_t n,
			  size_t want)
{
	if (e->t0)
		fz_policy_extents_piece(&e->x, done, ktime_get_ns() - e->t0);
	if (n < want)
		fz_policy_extents_new_mapping(&e->x);
}

/*
 * A main extent ends where the mapping holding its first byte ends: the
 * probe before it measured that mapping's memory, and past its end may be
 * memory of another kind (a device mapping after RAM), which the next
 * probe measures.  Probes (at most FZ_EXTENT_PROBE) are not looked up.
 * Best effort, without waiting for the lock: under a concurrent mmap()
 * or munmap() of the same process the extent is left as it is, and a
 * process that remaps its own buffer during the read can still place
 * other memory under an extent (the price of a lock-free lookup: the
 * latency it adds is that process's own and its CPU's, at most one
 * FZ_EXTENT_MAX extent of the slower memory).
 */
static size_t fz_extent_in_vma(const char __user *to, size_t n,
			       unsigned long *vm_start)
{
	unsigned long addr = (unsigned long)to;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	*vm_start = 0;
	if (n <= FZ_EXTENT_PROBE || !mm || !mmap_read_trylock(mm))
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

/*
 * The semantics are /dev/zero's read_zero(), chunk size aside: a fault
 * returns the bytes cleared before it, or -EFAULT if there are none; a
 * pending signal ends the read after the current chunk.
 */
ssize_t fz_read(struct file *file, char __user *buf, size_t count,
		loff_t *ppos)
{
	unsigned long run;
	enum fz_loop loop = fz_read_loop(file, (unsigned long)buf, count, &run);
	struct fz_extent e;
	size_t cleared = 0;

	fz_extent_init(&e, count);
	fz_stat_inc(FZ_STAT_READ_CALLS);
	while (count) {
		size_t want = min(count, e.x.next);
		unsigned long vm_start;
		size_t chunk = fz_extent_in_vma(buf + cleared, want, &vm_start);
		size_t left;

		fz_extent_start(&e, chunk, count);
		left = fz_clear_chunk(loop, buf + cleared, chunk);
		fz_extent_end(&e, chunk - left, chunk, want);
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
	fz_read_streamed(file, (unsigned long)buf, (unsigned long)buf + cleared,
			 run, cleared);
	fz_stat_add(FZ_STAT_READ_BYTES, cleared);
	return cleared;
}

/*
 * Zero up to @max bytes of the iterator's current user segment and advance
 * past them.  Sets *@fault when the segment ran into inaccessible memory.
 */
static size_t fz_zero_user_segment(enum fz_loop loop, struct iov_iter *iter,
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
static size_t fz_zero_iter(enum fz_loop loop, struct iov_iter *iter, size_t max,
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
 * Bytes the next piece of the current extent clears: what the extent has
 * room for, at most the iterator's current user segment and the VMA its
 * first byte is in (fz_extent_in_vma()); *@want is what it would be
 * without the VMA.  An extent goes on into the next segment where that is
 * in the same mapping; a piece that starts in another mapping than the
 * extent's earlier pieces ends the extent before it, as a VMA end does.
 */
static size_t fz_iter_step(struct fz_extent *e, const struct iov_iter *iter,
			   size_t *want)
{
	unsigned long vm_start;
	size_t n;

	if (!user_backed_iter(iter)) {
		*want = min_t(size_t, iov_iter_count(iter),
			      fz_policy_extents_room(&e->x));
		return *want;
	}
	*want = min_t(size_t, fz_iter_user_len(iter),
		      fz_policy_extents_room(&e->x));
	n = fz_extent_in_vma(fz_iter_user_addr(iter), *want, &vm_start);
	if (vm_start && e->x.part && e->vm_start && vm_start != e->vm_start) {
		fz_policy_extents_new_mapping(&e->x);
		*want = min_t(size_t, fz_iter_user_len(iter), e->x.next);
		n = fz_extent_in_vma(fz_iter_user_addr(iter), *want, &vm_start);
	}
	if (vm_start)
		e->vm_start = vm_start;
	return n;
}

/*
 * The semantics are /dev/zero's read_iter_zero(): partial counts on a
 * fault or a signal, -EAGAIN instead of rescheduling under IOCB_NOWAIT.
 */
ssize_t fz_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	unsigned long start = user_backed_iter(iter) && iov_iter_count(iter) ?
			      (unsigned long)fz_iter_user_addr(iter) : 0;
	unsigned long run, end = start;
	enum fz_loop loop = fz_read_loop(iocb->ki_filp, start, iov_iter_count(iter), &run);
	size_t written = 0;
	struct fz_extent e;

	fz_extent_init(&e, iov_iter_count(iter));
	fz_stat_inc(FZ_STAT_READ_CALLS);
	while (iov_iter_count(iter)) {
		size_t left = iov_iter_count(iter), done, want;
		size_t step = fz_iter_step(&e, iter, &want);
		unsigned long at;
		bool fault;

		fz_extent_start(&e, step, left);
		at = start ? (unsigned long)fz_iter_user_addr(iter) : 0;
		done = fz_zero_iter(loop, iter, step, &fault);
		if (done)
			end = at + done;
		fz_extent_end(&e, done, step, want);
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
	fz_read_streamed(iocb->ki_filp, start, end, run, written);
	fz_stat_add(FZ_STAT_READ_BYTES, written);
	return written;
}
