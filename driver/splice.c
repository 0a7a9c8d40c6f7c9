// SPDX-License-Identifier: GPL-2.0
/* splice.c - splice from the device (zero pages lent to pipes) and to it (a null sink). */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/pipe_fs_i.h>
#include <linux/sizes.h>
#include <linux/splice.h>
#include "fastzero.h"
#include "stats.h"

/*
 * splice_read() and sendfile() fill the pipe with references to zeroed
 * memory instead of clearing pipe pages: the commit that gave /dev/zero
 * copy_splice_read() (1b057bd800c3) calls this "an optimization for
 * another day".
 *
 * Lifetime.  A pipe buffer holds no reference to the module, only to its
 * page: an open /dev/fastzero pins the module, the pipe it was spliced
 * into does not, and the pipe may be read, tee()d, spliced on to a socket
 * or passed to another process long after the module is gone.  So nothing
 * in a buffer points into the module: the ops are the kernel's own
 * nosteal_pipe_buf_ops (fs/splice.c: generic get/release, no ->try_steal,
 * no ->confirm), and each buffer holds a real reference on the page it
 * points to.  The pages are the module's own, allocated zeroed at load;
 * fz_splice_exit() drops the module's reference and the last pipe or skb
 * to let go frees them, through the page allocator, not through module code.
 *
 * Why not ZERO_PAGE(0): a reference count on the global zero page would
 * make every CPU's splice write the same cache line, and any future bug
 * that writes into a spliced page (the Dirty Pipe class, CVE-2022-0847)
 * would corrupt the page every reader of every zero-filled mapping sees.
 * The module's pages are written by nobody: without ->try_steal a
 * SPLICE_F_MOVE consumer copies them, and splice_to_pipe() leaves
 * PIPE_BUF_FLAG_CAN_MERGE clear, so write(2) to the pipe starts a new
 * buffer instead of appending to one of these.
 *
 * Size.  Each buffer covers up to the lent page's size: 4 KiB, or with
 * splice_huge=1 the 2 MiB compound page when it could be allocated (every
 * consumer handles a buffer longer than a page on a compound page, as
 * skb_splice_bits() already makes them: README, "splice").
 * vfs_splice_read() caps a call at the pipe's free slots times PAGE_SIZE,
 * so one buffer then carries what up to 512 did, and a consumer that only
 * drops the buffers (/dev/null) runs up to 9x faster; one that copies the
 * data reads it from up to 2 MiB instead of one cache-hot 4 KiB page,
 * which costs it (0.6x for the copy itself, measured natively), so 4 KiB
 * is the default.
 */
static struct page *fz_zero_page;	/* one zeroed 4 KiB page */
static struct page *fz_zero_huge;	/* a zeroed 2 MiB compound page, or NULL */

/* The page splice_read() lends: one buffer covers up to all of it. */
static struct page *fz_zero_lent(void)
{
	return fz_zero_huge ?: fz_zero_page;
}

/*
 * References fz_splice_read() stops taking at, far below the overflow
 * that try_get_page() guards against: each one is a pipe buffer or skb
 * fragment somebody holds (accounted to them), so reaching it takes
 * ~40 GiB of pipe buffers.  The read then ends short, or with -ENOMEM.
 */
#define FZ_ZERO_REFS_MAX	(INT_MAX / 2)

/**
 * fz_splice_init() - allocate the zeroed pages splice_read() lends to pipes
 * @huge: also try for a 2 MiB compound page (the splice_huge parameter)
 *
 * Return: 0, or -ENOMEM when not even the 4 KiB page can be had.
 */
int fz_splice_init(bool huge)
{
	fz_zero_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!fz_zero_page)
		return -ENOMEM;
	if (huge)
		fz_zero_huge = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_COMP |
					   __GFP_NOWARN | __GFP_NORETRY,
					   get_order(SZ_2M));
	return 0;
}

/*
 * Drop the module's references.  Pipes and sockets may still hold theirs:
 * the pages are freed when they let go.
 */
void fz_splice_exit(void)
{
	if (fz_zero_huge)
		put_page(fz_zero_huge);
	put_page(fz_zero_page);
}

/* Bytes one pipe buffer of fz_splice_read() carries at most. */
size_t fz_splice_unit(void)
{
	return page_size(fz_zero_lent());
}

/* Called by splice_to_pipe() for the references it did not place. */
static void fz_zero_spd_release(struct splice_pipe_desc *spd, unsigned int i)
{
	put_page(spd->pages[i]);
}

ssize_t fz_splice_read(struct file *in, loff_t *ppos,
		       struct pipe_inode_info *pipe, size_t len,
		       unsigned int flags)
{
	struct page *page = fz_zero_lent();
	size_t unit = page_size(page);
	struct partial_page partial[PIPE_DEF_BUFFERS];
	struct page *pages[PIPE_DEF_BUFFERS];
	struct splice_pipe_desc spd = {
		.pages		= pages,
		.partial	= partial,
		.nr_pages_max	= PIPE_DEF_BUFFERS,
		.ops		= &nosteal_pipe_buf_ops,
		.spd_release	= fz_zero_spd_release,
	};
	ssize_t total = 0, ret = 0;

	while (len) {
		for (spd.nr_pages = 0; spd.nr_pages < PIPE_DEF_BUFFERS && len;
		     spd.nr_pages++) {
			size_t n = min(len, unit);

			pages[spd.nr_pages] = page;
			partial[spd.nr_pages] = (struct partial_page){ .len = n };
			len -= n;
		}
		/* One atomic for the batch: the cache line is touched once. */
		if (page_ref_count(page) > FZ_ZERO_REFS_MAX - PIPE_DEF_BUFFERS) {
			ret = -ENOMEM;
			break;
		}
		page_ref_add(page, spd.nr_pages);
		ret = splice_to_pipe(pipe, &spd);
		if (ret <= 0)
			break;
		total += ret;
		if (spd.nr_pages)	/* the pipe is full */
			break;
	}
	fz_stat_add(FZ_STAT_READ_BYTES, total);
	return total ? total : ret;
}

/*
 * splice_write_null() of drivers/char/mem.c: consume the pipe, copy
 * nothing.  splice_from_pipe() is not exported, so its body is spelled out
 * around the exported __splice_from_pipe().
 */
static int fz_pipe_to_null(struct pipe_inode_info *info, struct pipe_buffer *buf,
			   struct splice_desc *sd)
{
	return sd->len;
}

ssize_t fz_splice_write(struct pipe_inode_info *pipe, struct file *out,
			loff_t *ppos, size_t len, unsigned int flags)
{
	struct splice_desc sd = {
		.total_len = len,
		.flags = flags,
		.pos = *ppos,
		.u.file = out,
	};
	ssize_t ret;

	pipe_lock(pipe);
	ret = __splice_from_pipe(pipe, &sd, fz_pipe_to_null);
	pipe_unlock(pipe);
	return ret;
}
