/* SPDX-License-Identifier: GPL-2.0 */
/* fastzero.h - what the driver's files share: tunables and the file operations each implements. */
#ifndef _FASTZERO_H
#define _FASTZERO_H

#include <linux/fs.h>
#include <linux/sizes.h>
#include <linux/time64.h>
#include <linux/types.h>
#include <asm/page.h>

/*
 * The extent a read clears in one call, between signal checks (and, on
 * cooperative kernels, cond_resched() calls).  /dev/zero uses PAGE_SIZE.
 * chunk_size 0 (the default) lets read.c choose by the preemption model;
 * any other value, 4 KiB to 1 GiB, overrides it.
 *
 * Cooperative kernels (preempt=none|voluntary) take mainline's batch for
 * clear_pages() between cond_resched() calls: PROCESS_PAGES_NON_PREEMPT_BATCH
 * (include/linux/mm.h, 7.0), 32 MiB, "worst case preemption latency of
 * around 3ms" at ~10 GB/s.  Preemptible kernels (full, lazy, rt) are
 * preempted inside a rep stos anyway; their extents only bound how late a
 * signal is seen: FZ_SIGNAL_BUDGET_NS at the clearing rate last measured,
 * from 32 MiB up to 1 GiB.
 */
#define FZ_CHUNK_AUTO		0
#define FZ_CHUNK_MIN		PAGE_SIZE
#define FZ_CHUNK_MAX		SZ_1G
#define FZ_EXTENT_COOP		SZ_32M
#define FZ_EXTENT_PREEMPT_MAX	SZ_1G
#define FZ_SIGNAL_BUDGET_NS	(4 * NSEC_PER_MSEC)

/*
 * Reads of at least this many bytes use non-temporal stores: measured
 * 1.38x faster than rep stosb into a 256 MiB destination, only 1.13x at
 * 64 MiB and 0.6x at 16 MiB (README).  0 disables.
 */
#define FZ_NT_THRESHOLD_DEFAULT	SZ_128M

/* force_variant: negative means "use what the alternatives selected". */
#define FZ_LOOP_AUTO		(-1)

/* The huge= policies of the tmpfs mount behind MAP_SHARED (mm/shmem.c). */
enum fz_shared_huge {
	FZ_SHARED_HUGE_NEVER,
	FZ_SHARED_HUGE_ALWAYS,
	FZ_SHARED_HUGE_WITHIN_SIZE,
	FZ_SHARED_HUGE_ADVISE,
	FZ_NR_SHARED_HUGE,
};

extern unsigned long fz_chunk_size;
extern unsigned long fz_nt_threshold;
extern int fz_forced_loop;
extern int fz_shared_huge;
extern const char * const fz_shared_huge_names[FZ_NR_SHARED_HUGE];

/* read.c */
size_t fz_read_extent(const char **why);
ssize_t fz_read(struct file *file, char __user *buf, size_t count,
		loff_t *ppos);
ssize_t fz_read_iter(struct kiocb *iocb, struct iov_iter *iter);
ssize_t fz_splice_read(struct file *in, loff_t *ppos,
		       struct pipe_inode_info *pipe, size_t len,
		       unsigned int flags);

/* mmap.c */
int fz_shmem_mount(void);
void fz_shmem_unmount(void);
int fz_mmap(struct file *file, struct vm_area_struct *vma);
unsigned long fz_get_unmapped_area(struct file *file, unsigned long addr,
				   unsigned long len, unsigned long pgoff,
				   unsigned long flags);

#endif /* _FASTZERO_H */
