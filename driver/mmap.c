// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - mmap() of /dev/fastzero: shared is shmem on a huge-page tmpfs, private is anonymous.
 *
 * MAP_SHARED is what /dev/zero's shmem_zero_setup() does: each mmap() call
 * gets a new unlinked shmem file the size of the mapping, and the VMA gets
 * shmem's own vm_ops.  The file lives on fastzero's kernel-internal tmpfs
 * mount, mounted "huge=within_size" as i915 does (7.3's
 * drm_gem_huge_mnt_create(), formerly i915_gemfs.c; fz_kern_mount_tmpfs()
 * in compat.h), where /dev/zero's lives on
 * shm_mnt, which is huge=never unless shmem_enabled says otherwise.  That
 * mount option is the whole difference: every 2 MiB of the object that lies
 * within its size is a transparent huge page, allocated, cleared and mapped
 * with one PMD on its first fault, instead of 512 faults on 4 KiB pages
 * (where none can straddle the object's end: fz_shared_huge_ok()).
 * Everything else is shmem's, so the memory is accounted and bounded like
 * /dev/zero's: commit-charged unless MAP_NORESERVE (refused under
 * overcommit_memory=2), charged to the faulting task's memory cgroup,
 * counted as Shmem, swappable and migratable; msync(), MADV_REMOVE,
 * mbind(), userfaultfd, fork (no page table copy), io_uring buffers and
 * every vma_is_shmem() test in the kernel see /dev/zero's kind of VMA.
 *
 * Shmem clears its folios itself (shmem_get_folio_gfp()); fastzero does no
 * clearing here.  Clearing them in the driver would take vm_ops of its own,
 * and with them the vma_is_shmem() identity (6.1's io_uring refuses such
 * buffers), and 6.1 does not export shmem_get_folio(); the README
 * has the measured cost of leaving it to shmem.
 *
 * MAP_PRIVATE is the core anonymous-memory path, as /dev/zero's
 * vma_set_anonymous(): COW across fork, MADV_DONTNEED/MADV_FREE, KSM,
 * userfaultfd, swap and smaps all key on vma_is_anonymous().  fastzero adds
 * THP-aligned placement, so the first fault of each 2 MiB can be a huge page.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/shmem_fs.h>
#include <linux/compat.h>
#include "compat.h"
#include "fastzero.h"
#include "stats.h"

/* tmpfs huge= policies, indexed by enum fz_shared_huge. */
const char * const fz_shared_huge_names[FZ_NR_SHARED_HUGE] = {
	[FZ_SHARED_HUGE_NEVER]		= "never",
	[FZ_SHARED_HUGE_ALWAYS]		= "always",
	[FZ_SHARED_HUGE_WITHIN_SIZE]	= "within_size",
	[FZ_SHARED_HUGE_ADVISE]		= "advise",
};

int fz_shared_huge = FZ_SHARED_HUGE_WITHIN_SIZE;

/*
 * The mounts behind MAP_SHARED: [0] has the shared_huge policy, [1] is
 * huge=never, for mappings that fz_shared_huge_ok() refuses.
 */
static struct vfsmount *fz_shm_mnt[2];

static struct vfsmount *fz_mount(const char *huge)
{
	struct vfsmount *mnt = fz_kern_mount_tmpfs(fz_thp_usable() ? huge : NULL);

	if (IS_ERR(mnt))
		pr_err("cannot mount tmpfs with huge=%s: %ld\n", huge, PTR_ERR(mnt));
	return mnt;
}

/**
 * fz_shmem_mount() - mount the tmpfs instances that back shared mappings
 *
 * Kernel-internal mounts (SB_KERNMOUNT: no size or inode limits, as
 * shm_mnt), one with the huge= policy of the shared_huge parameter and,
 * unless that is "never", one with huge=never.  Without THP the policy
 * becomes never, said once: tmpfs would refuse any other.
 *
 * Return: 0, -EINVAL for shared_huge=advise with shared_clear=driver, or
 * another negative errno.
 */
int fz_shmem_mount(void)
{
	const char *huge;

	if (!fz_thp_usable() && fz_shared_huge != FZ_SHARED_HUGE_NEVER) {
		pr_info("shared_huge=never: this kernel has no transparent huge pages, so MAP_SHARED takes 4 KiB pages as /dev/zero's\n");
		fz_shared_huge = FZ_SHARED_HUGE_NEVER;
	}
	huge = fz_shared_huge_names[fz_shared_huge];
	/*
	 * shared_clear=driver allocates through shmem_get_folio(), which gives
	 * shmem no VMA: under huge=advise, shmem_huge_global_enabled() then
	 * never sees VM_HUGEPAGE and no folio is huge, so every fault of a
	 * MADV_HUGEPAGE mapping would take a 4 KiB page and a PTE.  No
	 * exported call passes the VMA's flags (6.12 to 7.3): refuse the pair.
	 */
	if (fz_shared_clear == FZ_SHARED_CLEAR_DRIVER &&
	    fz_shared_huge == FZ_SHARED_HUGE_ADVISE) {
		pr_err("shared_clear=driver cannot give shared_huge=advise mappings huge pages: use within_size or always\n");
		return -EINVAL;
	}
	fz_shm_mnt[0] = fz_mount(huge);
	if (IS_ERR(fz_shm_mnt[0]))
		return PTR_ERR(fz_shm_mnt[0]);
	if (fz_shared_huge == FZ_SHARED_HUGE_NEVER) {
		fz_shm_mnt[1] = fz_shm_mnt[0];
		return 0;
	}
	fz_shm_mnt[1] = fz_mount(fz_shared_huge_names[FZ_SHARED_HUGE_NEVER]);
	if (IS_ERR(fz_shm_mnt[1])) {
		kern_unmount(fz_shm_mnt[0]);
		return PTR_ERR(fz_shm_mnt[1]);
	}
	return 0;
}

/*
 * Mappings may outlive the module: they hold their shmem file, and the file
 * holds the mount, so kern_unmount() only drops the module's reference.
 */
void fz_shmem_unmount(void)
{
	if (fz_shm_mnt[1] != fz_shm_mnt[0])
		kern_unmount(fz_shm_mnt[1]);
	kern_unmount(fz_shm_mnt[0]);
}

/**
 * fz_shared_huge_ok() - whether a shared mapping may take huge pages
 * @pgoff: the mapping's file offset, in pages
 * @len: its length, which is the size of its object
 *
 * Every access past the object's end must SIGBUS, as /dev/zero's does, and
 * a huge page that straddles the end would move that to the huge page's
 * end.  The VMA runs past the end from the start when it maps the object
 * at an offset, and after mremap() grows it otherwise.  An object of whole
 * huge pages mapped from offset 0 cannot have one straddle.  In any other,
 * only huge=within_size could keep them inside, and 7.2's and 7.3's do not:
 * since shmem_huge_global_enabled() returns a mask of orders (the tmpfs
 * large-folio rework, 736bbc68255f), shmem_allowable_huge_orders() adds
 * the "inherit" orders, PMD by default, to an anonymous-shmem VMA whenever
 * any smaller order fits within i_size (7.3's /dev/zero does the same with
 * shmem_enabled=within_size; 6.12's keeps them inside).  So on every
 * kernel the others take 4 KiB pages from the huge=never mount, as
 * /dev/zero's do.
 *
 * Return: true if the mapping may use the shared_huge mount.
 */
static bool fz_shared_huge_ok(unsigned long pgoff, unsigned long len)
{
	return fz_shared_huge != FZ_SHARED_HUGE_NEVER && !pgoff &&
	       IS_ALIGNED(len, PMD_SIZE);
}

static struct vfsmount *fz_shmem_mnt(const struct vm_area_struct *vma)
{
	return fz_shm_mnt[!fz_shared_huge_ok(vma->vm_pgoff,
					     vma->vm_end - vma->vm_start)];
}

/*
 * As shmem_zero_setup(), on fastzero's mount: the object is sized by the
 * mapping and indexed by the file offset, and VM_NORESERVE (MAP_NORESERVE)
 * is the only thing that skips the commit charge.  shmem's ->mmap then
 * installs its vm_ops.
 */
static int fz_mmap_shared(struct vm_area_struct *vma)
{
	loff_t size = vma->vm_end - vma->vm_start;
	struct file *file;
	int ret;

	file = fz_shmem_file(fz_shmem_mnt(vma), "dev/fastzero", size, vma);
	if (IS_ERR(file))
		return PTR_ERR(file);
	/*
	 * Reachable only through its mapping, as /dev/zero's file, which
	 * shmem_kernel_file_setup() makes S_PRIVATE so that the LSM hooks
	 * skip it.  No exported call makes one on another mount: set it
	 * before anyone else can see the inode, so every later hook skips it
	 * too; only the label given when the file was made remains.
	 */
	file_inode(file)->i_flags |= S_PRIVATE;
	vma_set_file(vma, file);
	fput(file);
	ret = fz_call_mmap(file, vma);
	if (ret)
		return ret;
	if (fz_shared_clear == FZ_SHARED_CLEAR_DRIVER &&
	    fz_shared_huge_ok(vma->vm_pgoff, vma->vm_end - vma->vm_start)) {
		ret = fz_shared_clear_vma(vma);
		if (ret)
			return ret;
	}
	fz_stat_inc(FZ_STAT_SHARED_MAPS);
	return 0;
}

int fz_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_flags & FZ_VM_SHMEM)
		return fz_mmap_shared(vma);

	fz_stat_inc(FZ_STAT_PRIVATE_MAPS);
	vma_set_anonymous(vma);
	return 0;
}

/*
 * Place a mapping so that its huge pages can be mapped with PMDs: at a
 * PMD-aligned address.  Shared mappings qualify when they can have huge
 * pages (fz_shared_huge_ok(): a shmem huge page covers an aligned range of
 * file offsets, as in shmem_get_unmapped_area()).
 * Private mappings are aligned only when their length is a multiple of
 * PMD_SIZE, as the kernel does for anonymous memory since d4148aeab412
 * ("mm, mmap: limit THP alignment of anonymous mappings to PMD-aligned
 * sizes"), which fixed a 600% regression of aligning every mapping.
 *
 * The placement is __thp_get_unmapped_area()'s (mm/huge_memory.c, 6.12
 * and 7.x; what MAP_ANONYMOUS gets): search for the length plus PMD_SIZE,
 * then take the aligned start inside that gap.  When the gap found is
 * aligned already, a top-down search returns its bottom, and the aligned
 * start that ends where the gap ends is PMD_SIZE above it: taking that one
 * (96204e15310c, "mm: thp_get_unmapped_area must honour topdown
 * preference") makes consecutive mappings abut, as anonymous ones do,
 * where rounding up would leave PMD_SIZE unmapped above each.  6.1's
 * helper rounds up (and 6.1 aligns no anonymous mapping): fastzero packs
 * there too.
 */
unsigned long fz_get_unmapped_area(struct file *file, unsigned long addr,
				   unsigned long len, unsigned long pgoff,
				   unsigned long flags)
{
	unsigned long padded = len + PMD_SIZE;
	unsigned long ret;

	/*
	 * Never for 32-bit tasks, as thp_get_unmapped_area() since
	 * 4ef9ad19e176 (CVE-2024-26621): in a 32-bit address space the
	 * alignment removes most of mmap's randomization.
	 */
	if (!IS_ENABLED(CONFIG_64BIT) || in_compat_syscall())
		goto plain;
	if (flags & MAP_SHARED) {
		if (!fz_shared_huge_ok(pgoff, len))
			goto plain;
	} else if (!IS_ALIGNED(len, PMD_SIZE)) {
		goto plain;
	}
	if (addr || (flags & MAP_FIXED) || padded < len)
		goto plain;

	ret = fz_mm_get_unmapped_area(0, padded, 0, flags);
	if (IS_ERR_VALUE(ret))
		goto plain;
	if (IS_ALIGNED(ret, PMD_SIZE) && fz_mm_topdown())
		return ret + PMD_SIZE;
	return round_up(ret, PMD_SIZE);
plain:
	return fz_mm_get_unmapped_area(addr, len, pgoff, flags);
}
