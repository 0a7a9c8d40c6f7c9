/* SPDX-License-Identifier: GPL-2.0 */
/* fastzero.h - what the driver's files share: tunables and the file operations each implements. */
#ifndef _FASTZERO_H
#define _FASTZERO_H

#include <linux/fs.h>
#include <linux/types.h>
#include <asm/page.h>
#include "policy.h"

/* Reads of at least nt_threshold bytes use non-temporal stores (0: never). */
extern unsigned long fz_nt_threshold;

/* The huge= policies of the tmpfs mount behind MAP_SHARED (mm/shmem.c). */
enum fz_shared_huge {
	FZ_SHARED_HUGE_NEVER,
	FZ_SHARED_HUGE_ALWAYS,
	FZ_SHARED_HUGE_WITHIN_SIZE,
	FZ_SHARED_HUGE_ADVISE,
	FZ_NR_SHARED_HUGE,
};

/* Who clears the huge folios of shared mappings (shared_clear.c). */
enum fz_shared_clear {
	FZ_SHARED_CLEAR_SHMEM,
	FZ_SHARED_CLEAR_DRIVER,
	FZ_NR_SHARED_CLEAR,
};

extern unsigned long fz_chunk_size;
struct kernel_param;
int fz_param_ulong_set(const char *val, const struct kernel_param *kp);
extern enum fz_loop fz_forced_loop;
/* the loops' names, indexed by enum fz_loop (FZ_LOOP_NAMES) */
extern const char * const fz_loop_names[FZ_NR_LOOPS];
extern int fz_shared_huge;
extern const char * const fz_shared_huge_names[FZ_NR_SHARED_HUGE];
extern int fz_shared_clear;
extern const char * const fz_shared_clear_names[FZ_NR_SHARED_CLEAR];

/* read.c */
size_t fz_read_extent(const char **why);
ssize_t fz_read_iter(struct kiocb *iocb, struct iov_iter *iter);
int fz_read_open(struct file *file);
void fz_read_release(struct file *file);

/* splice.c */
int fz_splice_init(bool huge);
void fz_splice_exit(void);
size_t fz_splice_unit(void);
ssize_t fz_splice_write(struct pipe_inode_info *pipe, struct file *out,
			loff_t *ppos, size_t len, unsigned int flags);
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

/* the store for cold destinations, and the reads it serves (policy.h) */
extern enum fz_loop fz_cold_loop;
extern unsigned long fz_cold_threshold;
/* a threshold's reason once a parameter set it, and policy/'s *_source */
extern const char *const fz_set_by_param;
const char *fz_source(bool from_param);

/* shared_clear.c */
int fz_shared_clear_vma(struct vm_area_struct *vma);

#endif /* _FASTZERO_H */
