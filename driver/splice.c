// SPDX-License-Identifier: GPL-2.0
/* splice.c - splice from the device (zero pages lent to pipes) and to it (a null sink). */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/pipe_fs_i.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/splice.h>
#include "compat.h"
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
 *
 * Sharing.  Each CPU lends its own 4 KiB page (allocated on its node), and
 * with splice_huge=1 each memory node its own 2 MiB page: the reference
 * count a splice writes is a cache line of the CPU it runs on (or of its
 * node), not one line every CPU of every user writes, and the consumer
 * that drops the reference writes the producer's line only.  Each page has
 * its own bound, FZ_LENT_REFS_MAX; a splice that finds its page at the
 * bound does not fail: it does what /dev/zero does (copy_splice_read(),
 * on 6.1 generic_file_splice_read(): fresh pipe pages cleared by
 * fz_read_iter()), so a user holding a CPU's
 * references makes other users' splices on that CPU no worse than
 * /dev/zero's and changes nothing on the other CPUs.
 */
static DEFINE_PER_CPU(struct page *, fz_cpu_page);	/* owned, one per CPU */
static DEFINE_PER_CPU(struct page *, fz_cpu_lent);	/* what the CPU lends */
static struct page **fz_node_huge;	/* owned, nr_node_ids, or NULL */
static size_t fz_unit;			/* bytes one buffer carries at most */

/*
 * References a lent page stops taking at.  The cheapest route to any
 * bound is not ~40 GiB of pipe buffers: a 1-byte splice takes one
 * reference for one 40-byte struct pipe_buffer, or, forwarded into an
 * AF_UNIX socket nobody reads, for ~50 bytes of skb that no memory cgroup
 * is charged for.  65536 is 256 pipes of 256 slots (root; an unprivileged
 * user gets 2-slot pipes past pipe-user-pages-soft, 16384 slots, and
 * needs more descriptors).  Reaching it only means the CPU's next splices
 * copy (see "Sharing").  It bounds only the references fz_splice_read()
 * adds: tee() takes its own through generic_pipe_buf_get(), and a socket
 * through get_page(), without asking.  try_get_page() (mm.h, 6.1 and
 * 6.12) guards no overflow: it refuses, with a WARN, a count already
 * wrapped to <= 0.  What bounds those references is what each costs its
 * holder, a pipe slot or a socket's buffer, within the pipe and socket
 * limits and the descriptors a user may open: 2^31 of them is tens of GiB
 * of kernel memory.
 */
#define FZ_LENT_REFS_MAX	65536

/* Drop the huge pages (the module's references) and lend 4 KiB ones. */
static void fz_splice_free_huge(void)
{
	unsigned int cpu;
	int nid;

	if (!fz_node_huge)
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		if (fz_node_huge[nid])
			put_page(fz_node_huge[nid]);
	kfree(fz_node_huge);
	fz_node_huge = NULL;
	for_each_possible_cpu(cpu)
		per_cpu(fz_cpu_lent, cpu) = per_cpu(fz_cpu_page, cpu);
}

/* Free what fz_splice_init() allocated; the module's references only. */
static void fz_splice_free(void)
{
	unsigned int cpu;

	fz_splice_free_huge();
	for_each_possible_cpu(cpu) {
		if (per_cpu(fz_cpu_page, cpu))
			put_page(per_cpu(fz_cpu_page, cpu));
		per_cpu(fz_cpu_page, cpu) = NULL;
		per_cpu(fz_cpu_lent, cpu) = NULL;
	}
}

/*
 * One zeroed 2 MiB compound page per node with memory, or none at all:
 * every CPU's buffers then have the same size, splice_unit.
 */
static bool fz_splice_init_huge(void)
{
	unsigned int cpu;
	int nid, home = NUMA_NO_NODE;

	fz_node_huge = kcalloc(nr_node_ids, sizeof(*fz_node_huge), GFP_KERNEL);
	if (!fz_node_huge)
		return false;
	for_each_node_state(nid, N_MEMORY) {
		fz_node_huge[nid] = alloc_pages_node(nid, GFP_KERNEL | __GFP_ZERO |
						     __GFP_COMP | __GFP_NOWARN |
						     __GFP_NORETRY | __GFP_THISNODE,
						     get_order(SZ_2M));
		if (!fz_node_huge[nid])
			return false;
		if (home == NUMA_NO_NODE)
			home = nid;
	}
	if (home == NUMA_NO_NODE)
		return false;
	for_each_possible_cpu(cpu) {
		nid = cpu_to_node(cpu);
		if (nid == NUMA_NO_NODE || !fz_node_huge[nid])
			nid = home;	/* a CPU of a memoryless node */
		per_cpu(fz_cpu_lent, cpu) = fz_node_huge[nid];
	}
	return true;
}

/**
 * fz_splice_init() - allocate the zeroed pages splice_read() lends to pipes
 * @huge: also try for 2 MiB compound pages (the splice_huge parameter)
 *
 * Return: 0, or -ENOMEM when not even every CPU's 4 KiB page can be had.
 */
int fz_splice_init(bool huge)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct page *page = alloc_pages_node(cpu_to_node(cpu),
						     GFP_KERNEL | __GFP_ZERO, 0);

		if (!page) {
			fz_splice_free();
			return -ENOMEM;
		}
		per_cpu(fz_cpu_page, cpu) = page;
		per_cpu(fz_cpu_lent, cpu) = page;
	}
	fz_unit = PAGE_SIZE;
	if (huge && fz_splice_init_huge())
		fz_unit = SZ_2M;
	else
		fz_splice_free_huge();	/* not on every node: on none */
	return 0;
}

/*
 * Drop the module's references.  Pipes and sockets may still hold theirs:
 * the pages are freed when they let go.
 */
void fz_splice_exit(void)
{
	fz_splice_free();
}

/*
 * Bytes one pipe buffer of fz_splice_read() carries at most: a value kept
 * at load, not read from the pages, so that policy/splice_unit never
 * depends on their lifetime.
 */
size_t fz_splice_unit(void)
{
	return fz_unit;
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
	/*
	 * The page of the CPU the call starts on; a migration later costs a
	 * shared cache line, nothing else: every page lives until unload.
	 */
	struct page *page = per_cpu(fz_cpu_lent, raw_smp_processor_id());
	size_t unit = fz_unit;
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
		/* One atomic for the batch: the cache line is touched once. */
		if (page_ref_count(page) > FZ_LENT_REFS_MAX - PIPE_DEF_BUFFERS) {
			/*
			 * The rest as /dev/zero does it, after what was lent;
			 * its read_iter counts the bytes it clears.
			 */
			fz_stat_add(FZ_STAT_READ_BYTES, total);
			fz_stat_inc(FZ_STAT_SPLICE_COPIED);
			ret = fz_copy_splice_read(in, ppos, pipe, len, flags);
			if (ret > 0)
				total += ret;
			return total ? total : ret;
		}
		for (spd.nr_pages = 0; spd.nr_pages < PIPE_DEF_BUFFERS && len;
		     spd.nr_pages++) {
			size_t n = min(len, unit);

			pages[spd.nr_pages] = page;
			partial[spd.nr_pages] = (struct partial_page){ .len = n };
			len -= n;
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
