/* SPDX-License-Identifier: GPL-2.0 */
/* compat.h - every kernel-version difference, detected at compile time, in one place. */
#ifndef _FASTZERO_COMPAT_H
#define _FASTZERO_COMPAT_H

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/splice.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <asm/page.h>
#include <asm/processor.h>
/* Shared mappings are shmem objects, made and faulted through shmem's calls. */
#ifndef CONFIG_SHMEM
#error "fastzero needs CONFIG_SHMEM: its shared mappings are shmem objects"
#endif

#if defined(CONFIG_X86) && defined(FZ_HAVE_ASM_CPUID_API)
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
 * shmem's file operations map through ->mmap_prepare where the VFS has
 * vfs_mmap() (7.x, the same conversion), through ->mmap before.
 */
#ifdef FZ_HAVE_VFS_MMAP
#define FZ_SHMEM_MMAP_PREPARE	1
#else
#define FZ_SHMEM_MMAP_PREPARE	0
#endif

static inline bool fz_fops_have_mmap_hook(const struct file_operations *fops)
{
#if FZ_SHMEM_MMAP_PREPARE
	return fops->mmap_prepare;
#else
	return fops->mmap;
#endif
}

/*
 * Which mmap()s of /dev/zero get a shmem object.  do_mmap() gives MAP_SHARED
 * of a descriptor opened read-only VM_MAYSHARE without VM_SHARED or
 * VM_MAYWRITE.  Up to 7.2 /dev/zero tests VM_SHARED (mmap_zero(), then
 * mmap_zero_prepare()), so such a mapping is anonymous; 7.3's
 * mmap_zero_prepare() tests VM_MAYSHARE, because 7.3's anonymous reverse
 * mapping tracks CoW mappings only: "No anonymous mapping can ever clear
 * VMA_MAYWRITE_BIT" (vma_flags_is_cow_mapping() in 7.3's mm.h).  The probe
 * looks for that rule, or for vma_start_anon_pgoff() of the same rework.
 */
#if defined(FZ_HAVE_ANON_NEEDS_MAYWRITE) || defined(FZ_HAVE_VMA_START_ANON_PGOFF)
#define FZ_VM_SHMEM		VM_MAYSHARE
#else
#define FZ_VM_SHMEM		VM_SHARED
#endif

static inline int fz_fc_parse(struct fs_context *fc, const char *key,
			      const char *val)
{
#ifdef FZ_HAVE_VFS_PARSE_FS_QSTR
	return vfs_parse_fs_string(fc, key, val);
#else
	return vfs_parse_fs_string(fc, key, val, strlen(val));
#endif
}

/*
 * put_filesystem() (fs/filesystems.c) is not exported: its body, the
 * release of the module reference get_fs_type() took (none for a built-in
 * tmpfs today, released all the same).
 */
static inline void fz_put_filesystem(struct file_system_type *type)
{
	module_put(type->owner);
}

/**
 * fz_kern_mount_tmpfs() - a kernel-internal tmpfs with huge=@huge
 * @huge: the tmpfs huge= policy, or NULL for none (a kernel without THP)
 *
 * 7.2+: fc_mount_longterm(), as drm_gem_huge_mnt_create() does for i915:
 * long-term (MNT_NS_INTERNAL, as kern_mount() and shm_mnt), so the final
 * mntput() of each shmem file made on it takes mntput_no_expire()'s fast
 * path, not the global mount_lock.  6.1/6.12 export no way to mount
 * long-term with options: vfs_kern_mount() with the options as mount
 * data, as i915's gemfs did before 7.2; its files' final mntput() takes
 * the mount_lock (docs/design-mmap.md).
 *
 * Return: the mount (release with kern_unmount()), or an ERR_PTR().
 */
static inline struct vfsmount *fz_kern_mount_tmpfs(const char *huge)
{
	struct file_system_type *type = get_fs_type("tmpfs");
	struct vfsmount *mnt;
#ifdef FZ_HAVE_FC_MOUNT_LONGTERM
	struct fs_context *fc;
	int err;
#else
	char opts[32];
#endif

	if (!type)
		return ERR_PTR(-ENODEV);
#ifdef FZ_HAVE_FC_MOUNT_LONGTERM
	fc = fs_context_for_mount(type, SB_KERNMOUNT);
	if (IS_ERR(fc)) {
		fz_put_filesystem(type);
		return ERR_CAST(fc);
	}
	err = fz_fc_parse(fc, "source", type->name);
	if (!err && huge)
		err = fz_fc_parse(fc, "huge", huge);
	mnt = err ? ERR_PTR(err) : fc_mount_longterm(fc);
	put_fs_context(fc);
#else
	/* writable: the monolithic parser splits it in place */
	if (huge)
		snprintf(opts, sizeof(opts), "huge=%s", huge);
	mnt = vfs_kern_mount(type, SB_KERNMOUNT, type->name, huge ? opts : NULL);
#endif
	fz_put_filesystem(type);
	return mnt;
}

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
 * Whether current's mmap searches top down, as __thp_get_unmapped_area()
 * asks: MMF_TOPDOWN (6.10+), read with mm_flags_test() since mm->flags
 * became a bitmap (6.18).  6.1 has no such flag; x86's
 * arch_pick_mmap_base() then sets mmap_base to mmap_legacy_base exactly
 * when the layout is the legacy bottom-up one.
 */
static inline bool fz_mm_topdown(void)
{
#if defined(FZ_HAVE_MM_FLAGS_TEST)
	return mm_flags_test(MMF_TOPDOWN, current->mm);
#elif defined(MMF_TOPDOWN)
	return test_bit(MMF_TOPDOWN, &current->mm->flags);
#else
	return current->mm->mmap_base != current->mm->mmap_legacy_base;
#endif
}

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

/*
 * Transparent huge pages: absent where CONFIG_TRANSPARENT_HUGEPAGE is off
 * (Debian's rt flavour: it depends on !PREEMPT_RT) or the CPU cannot map
 * a PMD.  Without them tmpfs refuses any huge= but never (6.1 has no
 * huge= at all), so shared mappings take 4 KiB shmem pages, as
 * /dev/zero's do.
 */
static inline bool fz_thp_usable(void)
{
	return IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) &&
	       has_transparent_hugepage();
}

/*
 * shared_clear=driver (shared_clear.c) allocates shmem huge folios through
 * shmem_get_folio(), exported with its write_end argument (6.12, 7.x);
 * 6.1's takes none and is not exported.  Without THP it has no huge
 * folio to clear.
 */
#if defined(FZ_HAVE_SHMEM_GET_FOLIO_WRITE_END) && \
	defined(CONFIG_TRANSPARENT_HUGEPAGE)
#define FZ_CAN_CLEAR_SHARED	1
#else
#define FZ_CAN_CLEAR_SHARED	0
#endif

/*
 * 7.1+ x86 has clear_pages() (asm/page_64.h, the clear_pages() series),
 * which says so with "#define clear_pages clear_pages"; each arch's
 * clear.h fz_clear_pages() stands in for it on older kernels and
 * elsewhere.
 */
#ifdef clear_pages
#define FZ_HAVE_KERNEL_CLEAR_PAGES	1
#endif

/*
 * arm64 FEAT_MOPS: the kernel enables SETP/SETM/SETE (SCTLR_EL1.MSCEn) and
 * names the cpucap only from 6.5 on; before, they are UNDEFINED at EL0 and
 * EL1 whatever the CPU has, so no loop may use them (bookworm's 6.1).
 * alternative_has_cap_likely() is 6.3's: every kernel with the cap has it.
 */
#ifdef CONFIG_ARM64
#ifdef ARM64_HAS_MOPS
#define fz_arm64_mops_patched()	alternative_has_cap_likely(ARM64_HAS_MOPS)
#define fz_arm64_mops_final()	cpus_have_final_cap(ARM64_HAS_MOPS)
#define FZ_ARM64_NO_MOPS	"this CPU has no FEAT_MOPS"
#else
#define fz_arm64_mops_patched()	false
#define fz_arm64_mops_final()	false
#define FZ_ARM64_NO_MOPS	"this kernel does not enable FEAT_MOPS (6.5 and later do)"
#endif
#endif

/*
 * THP refused for this VMA (MADV_NOHUGEPAGE, prctl); declared only with
 * CONFIG_TRANSPARENT_HUGEPAGE (6.12); 7.x adds forced_collapse.
 */
static inline bool fz_vma_thp_disabled(struct vm_area_struct *vma)
{
#if !FZ_CAN_CLEAR_SHARED
	return true;
#elif defined(FZ_HAVE_VMA_THP_DISABLED_COLLAPSE)
	return vma_thp_disabled(vma, vma->vm_flags, false);
#else
	return vma_thp_disabled(vma, vma->vm_flags);
#endif
}

/*
 * Whether a folio fresh from the page allocator may hold old data: 7.x
 * asks user_alloc_needs_zeroing(), as the anonymous fault path does
 * (alloc_anon_folio()); 6.12 reads the same init_on_alloc key (x86 has
 * no aliasing caches, the other half of the 7.x test).
 */
static inline bool fz_alloc_needs_zeroing(void)
{
#ifdef FZ_HAVE_USER_ALLOC_NEEDS_ZEROING
	return user_alloc_needs_zeroing();
#else
	return !static_branch_maybe(CONFIG_INIT_ON_ALLOC_DEFAULT_ON,
				    &init_on_alloc);
#endif
}

/*
 * /dev/zero's splice_read, for splices whose lent page is at its bound
 * (splice.c): copy_splice_read() (fs/splice.c, 6.5+; drivers/char/mem.c
 * gives it to /dev/zero from 6.7, 1b057bd800c3), which fills fresh pipe
 * pages through ->read_iter with a bvec iterator.  6.1 has neither
 * (/dev/zero cannot splice there) but exports generic_file_splice_read(),
 * the same through an ITER_PIPE iterator.  Either way the buffers are the
 * kernel's (default_pipe_buf_ops on kernel pages), nothing of the module.
 */
static inline ssize_t fz_copy_splice_read(struct file *in, loff_t *ppos,
					  struct pipe_inode_info *pipe,
					  size_t len, unsigned int flags)
{
#ifdef FZ_HAVE_COPY_SPLICE_READ
	return copy_splice_read(in, ppos, pipe, len, flags);
#else
	return generic_file_splice_read(in, ppos, pipe, len, flags);
#endif
}

/*
 * Splice from a pipe into the device: /dev/zero takes it from 6.7 on
 * (drivers/char/mem.c's splice_write_zero, 1b057bd800c3); before, its
 * fops have no ->splice_write and do_splice_from() answers EINVAL.  The
 * device gives the answer the running kernel's /dev/zero gives (Kbuild's
 * probe).
 */
#ifdef FZ_HAVE_ZERO_SPLICE_WRITE
#define FZ_SPLICE_WRITE		fz_splice_write
#else
#define FZ_SPLICE_WRITE		NULL
#endif

#endif /* _FASTZERO_COMPAT_H */
