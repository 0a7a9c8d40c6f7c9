/* SPDX-License-Identifier: GPL-2.0 */
/* compat.h - every kernel-version difference, detected at compile time, in one place. */
#ifndef _FASTZERO_COMPAT_H
#define _FASTZERO_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/splice.h>
#include <linux/uio.h>
#include <asm/cpufeatures.h>
#include <asm/page.h>
#include <asm/processor.h>
#ifdef FZ_HAVE_ASM_CPUID_API
#include <asm/cpuid/api.h>	/* cpuid_count(), out of processor.h since 6.15 */
#endif

/*
 * The current segment of a user-backed iov_iter.  6.4 renamed ->iov to
 * ->__iov behind iter_iov().  For ITER_UBUF, iter_iov_len() is not usable
 * after an advance, so the ubuf case is spelled out.
 */
#ifdef iter_iov_addr
#define fz_iter_iov(i)		iter_iov(i)
#else
#define fz_iter_iov(i)		((i)->iov)
#endif

static inline void __user *fz_iter_user_addr(const struct iov_iter *i)
{
	if (iter_is_ubuf(i))
		return i->ubuf + i->iov_offset;
	return fz_iter_iov(i)->iov_base + i->iov_offset;
}

static inline size_t fz_iter_user_len(const struct iov_iter *i)
{
	if (iter_is_ubuf(i))
		return i->count;
	return min(i->count, fz_iter_iov(i)->iov_len - i->iov_offset);
}

/*
 * Hand a VMA to a file's own mmap.  6.x: call_mmap(), shmem has ->mmap.
 * 7.x: vfs_mmap(), which runs shmem's ->mmap_prepare through
 * compat_vma_mmap().
 */
static inline int fz_call_mmap(struct file *file, struct vm_area_struct *vma)
{
#ifdef FZ_HAVE_VFS_MMAP
	return vfs_mmap(file, vma);
#else
	return call_mmap(file, vma);
#endif
}

/*
 * A new unlinked shmem file on @mnt for @vma, commit-charged unless the VMA
 * is VM_NORESERVE.  7.x passes the flags as a vma_flags_t bitmap.
 */
static inline struct file *fz_shmem_file(struct vfsmount *mnt,
					 const char *name, loff_t size,
					 struct vm_area_struct *vma)
{
#ifdef FZ_HAVE_SHMEM_VMA_FLAGS
	return shmem_file_setup_with_mnt(mnt, name, size,
					 legacy_to_vma_flags(vma->vm_flags));
#else
	return shmem_file_setup_with_mnt(mnt, name, size, vma->vm_flags);
#endif
}

/*
 * Which mmap()s of /dev/zero get a shmem object: up to 7.2 mmap_zero()
 * tested VM_SHARED, which do_mmap() leaves out for MAP_SHARED of a
 * descriptor opened read-only (VM_MAYSHARE alone), so those were
 * anonymous; 7.3's mmap_zero_prepare() tests VM_MAYSHARE.  The behaviour
 * has no symbol of its own: vma_flags_is_cow_mapping(), new in the same
 * release, stands for it.
 */
#ifdef FZ_HAVE_VMA_FLAGS_IS_COW
#define FZ_VM_SHMEM		VM_MAYSHARE
#else
#define FZ_VM_SHMEM		VM_SHARED
#endif

/*
 * The default placement for current->mm: 6.10 replaced mm->get_unmapped_area
 * with mm_get_unmapped_area(mm, ...), which later lost its mm argument.
 */
static inline unsigned long
fz_mm_get_unmapped_area(unsigned long addr, unsigned long len,
			unsigned long pgoff, unsigned long flags)
{
#if defined(FZ_HAVE_MM_GET_UNMAPPED_AREA)
	return mm_get_unmapped_area(NULL, addr, len, pgoff, flags);
#elif defined(FZ_HAVE_MM_GET_UNMAPPED_AREA_MM)
	return mm_get_unmapped_area(current->mm, NULL, addr, len, pgoff, flags);
#else
	return current->mm->get_unmapped_area(NULL, addr, len, pgoff, flags);
#endif
}

/*
 * X86_FEATURE_FSRS (fast short rep stosb, CPUID 7.1:EAX bit 11) has a name
 * from 6.4 on; 6.1 already fills that capability word from CPUID, so the
 * bit can be tested there by number.
 */
#ifndef X86_FEATURE_FSRS
#define X86_FEATURE_FSRS	(12 * 32 + 11)
#endif

/* The preemption model the kernel runs; "lazy" exists from 6.13 on. */
static inline const char *fz_preempt_model(void)
{
	if (preempt_model_rt())
		return "rt";
	if (preempt_model_full())
		return "full";
#ifdef FZ_HAVE_PREEMPT_LAZY
	if (preempt_model_lazy())
		return "lazy";
#endif
	if (preempt_model_voluntary())
		return "voluntary";
	return "none";
}

#endif /* _FASTZERO_COMPAT_H */
