/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fztest - tiny TAP test library for the fastzero test suite.
 *
 * Output follows tools/testing/selftests/kselftest.h:
 *
 *	ok N - name
 *	not ok N - name # reason
 *	ok N - name # SKIP reason
 *	# diagnostic
 *	1..N			(printed by fz_exit(), i.e. at the end)
 *
 * Environment:
 *	FZ_DEV		device under test (default /dev/fastzero)
 *	FZ_REF		reference device (default /dev/zero)
 *	FZ_MODULE	module-specific tests (sysfs, rmmod) run when set to 1;
 *			default: 1 if FZ_DEV is /dev/fastzero, else 0
 *	FZ_QUICK	when set to 1, shrink the largest work loads
 *	FZ_MODULE_PARAMS the parameters the harness loaded the module with;
 *			every reload starts from them
 */
#ifndef FZTEST_H
#define FZTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FZ_PASS		0
#define FZ_FAIL		1
#define FZ_SKIP		2

#define FZ_WHYLEN	512
#define FZ_POISON	0xAA
#define FZ_GUARD	64	/* poisoned bytes checked on each side */
#define FZ_MAX_DIAG	8	/* per-test cap on individual failure lines */

#define FZ_KiB		(1024UL)
#define FZ_MiB		(1024UL * 1024)
#define FZ_GiB		(1024UL * 1024 * 1024)

#define FZ_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* A user address the kernel will always refuse (start of the direct map). */
#define FZ_KERNEL_ADDR	((void *)0xffff888000000000UL)

extern const char *fz_dev_path;		/* device under test */
extern const char *fz_ref_path;		/* reference (/dev/zero) */
extern const char *fz_dev_name;		/* short names for messages */
extern const char *fz_ref_name;
extern int fz_module;			/* module-specific tests enabled */
extern int fz_quick;
/*
 * Set while testing read methods that may legitimately stop early at any
 * point (RWF_NOWAIT, io_uring, aio: read_iter_zero() returns a short count
 * under IOCB_NOWAIT when need_resched() is set).  fz_diff_read() then
 * accepts differing positive counts; contents are still fully checked.
 */
extern int fz_allow_short;
extern size_t fz_page;

/* A test returns FZ_PASS, FZ_FAIL or FZ_SKIP and explains itself in @why. */
typedef int (*fz_test_fn)(const void *arg, char *why);

void fz_init(int argc, char **argv);
int fz_exit(void);
/* fz_init() and open both devices O_RDWR; exits with a failure if not. */
void fz_setup(int argc, char **argv, int *dev, int *ref);
void fz_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fz_report(int status, const char *name, const char *why);
void fz_run(fz_test_fn fn, const void *arg, const char *namefmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Write a reason into @why and return FZ_FAIL / FZ_SKIP.  A SKIP means the
 * kernel lacks a capability (or the user turned the tests off, FZ_MODULE=0);
 * a setup step of the test or of the harness that fails is a FAIL.
 */
int fz_fail(char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int fz_skip(char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Something the tests/vm harness provides is missing (root, /dev/zram0):
 * FZ_FAIL when the device under test is /dev/fastzero (the suite in the
 * guest, where the harness made it), FZ_SKIP in host development mode
 * (FZ_DEV=/dev/zero ./run-suite.sh, no harness).
 */
int fz_harness_missing(char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* FZ_PASS as root, else fz_harness_missing() "needs root". */
int fz_need_root(char *why);

/*
 * Accumulates the failures of a table-driven test that loops over many
 * cases: the first failure becomes the reason, the first FZ_MAX_DIAG are
 * also printed as diagnostics, the rest are only counted.
 */
struct fz_agg {
	unsigned long cases;
	unsigned long failed;
	unsigned long skipped;
	char first[FZ_WHYLEN];
	char first_skip[FZ_WHYLEN];
};

void fz_agg_init(struct fz_agg *agg);
void fz_agg_add(struct fz_agg *agg, int status, const char *casefmt,
		const char *why, ...) __attribute__((format(printf, 3, 5)));
int fz_agg_result(const struct fz_agg *agg, char *why);

/* Buffer helpers. */
void fill_guard(unsigned char *p, size_t len, size_t guard);
int check_guard(const unsigned char *p, size_t len, size_t guard, char *why);
size_t fz_first_not(const unsigned char *p, size_t len, unsigned char c);
int check_zero(const unsigned char *p, size_t len, char *why);
int check_byte(const unsigned char *p, size_t len, unsigned char c,
	       char *why);
int check_untouched(const unsigned char *p, size_t len, char *why);

void *fz_mmap(size_t len, int prot);
void fz_munmap(void *p, size_t len);

/*
 * A mapping whose usable part ends at a PROT_NONE page: returns the
 * address of the PROT_NONE page ("hole"); at least @before bytes
 * in front of it are readable and writable.  Release with fz_hole_free().
 */
struct fz_hole {
	unsigned char *base;
	size_t len;
	unsigned char *hole;
	size_t before;
};

int fz_hole_alloc(struct fz_hole *h, size_t before);
void fz_hole_free(struct fz_hole *h);

/* Errno-preserving formatting of a syscall result: "123" or "-1 (EFAULT)". */
const char *fz_strret(char *buf, size_t len, ssize_t ret, int err);
#define FZ_RETLEN	48

int fz_open(const char *path, int flags, char *why);

/*
 * A read method: performs one read-like operation and returns the byte
 * count, or -errno.  Methods exist for read(), pread(), readv() and
 * preadv2(); t_async adds io_uring and aio ones.
 */
typedef ssize_t (*fz_read_fn)(int fd, void *buf, size_t len);

struct fz_method {
	const char *name;
	fz_read_fn read;
};

ssize_t fz_do_read(int fd, void *buf, size_t len);
ssize_t fz_do_pread(int fd, void *buf, size_t len);
ssize_t fz_do_readv3(int fd, void *buf, size_t len);
ssize_t fz_do_preadv2_nowait(int fd, void *buf, size_t len);

/*
 * The differential check at the heart of the suite.  Performs @fn on
 * the reference and on the device with the destination @buf/@len.
 * [lo, hi) is the writable memory around the destination that is
 * poisoned before the device read and must afterwards be zero in
 * [buf, buf + ret) and untouched elsewhere; pass lo == hi == NULL when the
 * destination is not accessible at all.
 * The return values (or errnos) must be identical (see fz_allow_short).
 * When @expect is not FZ_EXPECT_ANY, the device must return exactly
 * @expect (a count, or -errno).  The reference may stop up to 7 bytes
 * short of the device's count (qword-granular clear_user() before 6.4);
 * the bytes the device claims are still checked.
 */
#define FZ_EXPECT_ANY	((ssize_t)1 << 62)

int fz_diff_read(int dev, int ref, fz_read_fn fn, unsigned char *buf,
		 size_t len, unsigned char *lo, unsigned char *hi,
		 ssize_t expect, char *why);

/*
 * The return-value half of fz_diff_read(): device result @dr against the
 * reference's @rr for a @len-byte read whose exact answer is @expect.
 */
int fz_compare_returns(ssize_t dr, ssize_t rr, size_t len, ssize_t expect,
		       char *why);

/* Per-case helpers built on fz_diff_read(). */
int fz_check_size(int dev, int ref, fz_read_fn fn, size_t len, size_t align,
		  char *why);
int fz_check_hole(int dev, int ref, fz_read_fn fn, struct fz_hole *h,
		  size_t k, size_t len, char *why);

/*
 * Compact differential set (sizes 0..300, a few big sizes, reads running
 * into a PROT_NONE page at ~100 offsets), reported as three tests named
 * "<prefix>_sizes_0_300", "<prefix>_big_sizes" and "<prefix>_prot_none".
 */
void fz_compact_checks(int dev, int ref, fz_read_fn fn, const char *prefix);

/* Module helpers. */
int fz_delete_module(const char *name, unsigned int flags);
/*
 * Load the module file FZ_KO (default /fastzero.ko) with the parameters the
 * harness loaded it with (FZ_MODULE_PARAMS), then @params: 0 or -errno.
 */
int fz_load_module(const char *params);
/* fz_load_module() in two steps: the module file opened (fd or -errno)... */
int fz_module_open(void);
/* ... and loaded from @fd, as fz_load_module(@params) would: 0 or -errno. */
int fz_module_load_fd(int fd, const char *params);
/*
 * Unload the module (not loaded is fine), then fz_load_module(@params).
 * With @dev, close *@dev first and reopen the device into it afterwards
 * (-1 on failure): 0 or -errno.
 */
int fz_reload_module(const char *params, int *dev);

/* A connected stream pair: AF_UNIX, or TCP over loopback; 0 or -errno. */
int fz_sock_pair(int tcp, int sv[2]);

/* Run @fn in a child; returns 0 on normal exit 0, else the signal or 256+code. */
int fz_in_child(void (*fn)(void *), void *arg);

/* 0 if *p can be read (and written when @write), else the signal number. */
int fz_probe(volatile unsigned char *p, int write);

double fz_now(void);

/*
 * Small files (sysfs, cgroupfs): read the first line of @path without its
 * newline, write @val; 0 or -errno.
 */
int fz_read_file(const char *path, char *buf, size_t len);
/*
 * Whether the kernel has transparent huge pages: its sysfs directory exists
 * only with CONFIG_TRANSPARENT_HUGEPAGE (not on PREEMPT_RT) on a CPU that
 * maps PMDs.  Without them MAP_SHARED takes 4 KiB pages, as /dev/zero's.
 */
int fz_kernel_has_thp(void);
/* debugfs: each choice of policy/ with its reason, "name: reason" a line */
#define FZ_REASONS	"/sys/kernel/debug/fastzero/reasons"
/* The reason for policy/ choice @name into @buf: 0, or -errno. */
int fz_reason(const char *name, char *buf, size_t len);
int fz_write_file(const char *path, const char *val);
/* 1 if the whitespace-separated word @word is in the first line of @path. */
int fz_file_has_word(const char *path, const char *word);
/* 1 if /proc/filesystems lists @fstype: the kernel has that file system. */
int fz_have_fs(const char *fstype);
/*
 * A number from a small file (/proc/meminfo, a cgroup file): the whole
 * file, or the number after the first @key ("Shmem:"); -1 if neither.
 */
long fz_file_long(const char *file, const char *key);

/*
 * The sum of the smaps field @key ("Swap:", "AnonHugePages:"...) in kB over
 * the mappings that overlap [p, p + len); -1 if smaps cannot be read.
 */
long fz_smaps_kb(const void *p, size_t len, const char *key);

/*
 * "fastzero-test: @what" into the kernel log: the markers around reports a
 * test provokes on purpose (tests/vm/check.sh reads them).
 */
void fz_kmsg(const char *what);
/*
 * Lines of the kernel log holding @needle after the first that holds
 * @marker: the count, -1 when @marker is not there, -2 when the log cannot
 * be read.  With @warnings, a WARNING after @marker sets *@warnings.
 */
int fz_klog_count(const char *marker, const char *needle, int *warnings);

/*
 * A cgroup v2 with the memory controller at @path (mounting cgroup2 on
 * /sys/fs/cgroup if needed): FZ_PASS; FZ_SKIP with the reason when the
 * kernel has no cgroup2 or no memory controller, else FZ_FAIL.
 */
int fz_memcg_create(const char *path, char *why);
/*
 * memory.max = @max bytes and memory.swap.max = @swap_max in the cgroup at
 * @path (no memory.swap.max file: swap is not accounted, tolerated):
 * FZ_PASS, or FZ_FAIL with the reason.
 */
int fz_memcg_limit(const char *path, unsigned long max, const char *swap_max,
		   char *why);

/* What an administrator sets; what the module chose and why. */
#define FZ_PARAMS	"/sys/module/fastzero/parameters"
#define FZ_POLICY	"/sys/class/misc/fastzero/policy"

#endif /* FZTEST_H */
