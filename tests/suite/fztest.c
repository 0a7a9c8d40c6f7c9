// SPDX-License-Identifier: GPL-2.0
/*
 * fztest - shared helpers of the fastzero test suite, see fztest.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fztest.h"

const char *fz_dev_path = "/dev/fastzero";
const char *fz_ref_path = "/dev/zero";
const char *fz_dev_name = "fastzero";
const char *fz_ref_name = "/dev/zero";
int fz_module;
int fz_quick;
int fz_allow_short;
size_t fz_page = 4096;

static unsigned int fz_count, fz_npass, fz_nfail, fz_nskip;

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

void fz_init(int argc, char **argv)
{
	static char devname[128];
	struct utsname u;
	const char *prog = argc > 0 ? argv[0] : "?";
	const char *slash = strrchr(prog, '/');

	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	fz_page = (size_t)sysconf(_SC_PAGESIZE);

	fz_dev_path = env_or("FZ_DEV", fz_dev_path);
	fz_ref_path = env_or("FZ_REF", fz_ref_path);
	fz_ref_name = fz_ref_path;
	if (strcmp(fz_dev_path, "/dev/fastzero") == 0) {
		fz_dev_name = "fastzero";
	} else {
		snprintf(devname, sizeof(devname), "dev %s", fz_dev_path);
		fz_dev_name = devname;
	}
	fz_module = atoi(env_or("FZ_MODULE",
			 strcmp(fz_dev_path, "/dev/fastzero") ? "0" : "1"));
	fz_quick = atoi(env_or("FZ_QUICK", "0"));

	if (uname(&u))
		strcpy(u.release, "?");
	printf("TAP version 13\n");
	fz_diag("%s: dev=%s ref=%s kernel=%s module_tests=%d", 
		slash ? slash + 1 : prog, fz_dev_path, fz_ref_path,
		u.release, fz_module);
}

void fz_setup(int argc, char **argv, int *dev, int *ref)
{
	char why[FZ_WHYLEN];

	fz_init(argc, argv);
	*dev = fz_open(fz_dev_path, O_RDWR, why);
	if (*dev < 0) {
		fz_report(FZ_FAIL, "open_device", why);
		exit(fz_exit());
	}
	*ref = fz_open(fz_ref_path, O_RDWR, why);
	if (*ref < 0) {
		fz_report(FZ_FAIL, "open_reference", why);
		exit(fz_exit());
	}
}

int fz_exit(void)
{
	printf("1..%u\n", fz_count);
	fz_diag("Totals: pass:%u fail:%u skip:%u", fz_npass, fz_nfail,
		fz_nskip);
	return fz_nfail ? 1 : 0;
}

void fz_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void fz_report(int status, const char *name, const char *why)
{
	fz_count++;
	switch (status) {
	case FZ_PASS:
		fz_npass++;
		printf("ok %u - %s\n", fz_count, name);
		break;
	case FZ_SKIP:
		fz_nskip++;
		printf("ok %u - %s # SKIP %s\n", fz_count, name,
		       why && *why ? why : "unsupported");
		break;
	default:
		fz_nfail++;
		printf("not ok %u - %s # %s\n", fz_count, name,
		       why && *why ? why : "failed");
		break;
	}
}

/*
 * FZ_ONLY, for targeted runs by hand: a comma-separated list of
 * substrings; only tests whose name holds one of them run (unset: all).
 */
static int fz_selected(const char *name)
{
	const char *only = getenv("FZ_ONLY"), *p;
	size_t n;

	if (!only || !*only)
		return 1;
	for (p = only; *p; p += n + (p[n] == ',')) {
		char sub[128];

		n = strcspn(p, ",");
		if (n && n < sizeof(sub)) {
			memcpy(sub, p, n);
			sub[n] = 0;
			if (strstr(name, sub))
				return 1;
		}
	}
	return 0;
}

void fz_run(fz_test_fn fn, const void *arg, const char *namefmt, ...)
{
	char name[256], why[FZ_WHYLEN] = "";
	double secs;
	va_list ap;
	int status;

	va_start(ap, namefmt);
	vsnprintf(name, sizeof(name), namefmt, ap);
	va_end(ap);
	if (!fz_selected(name))
		return;

	fflush(stdout);
	secs = fz_now();
	status = fn(arg, why);
	secs = fz_now() - secs;
	fz_report(status, name, why);
	/* what each test costs, for the CI's budget (docs/testing.md) */
	if (secs >= 1.0)
		fz_diag("  took %.1f s", secs);
}

static int vset(char *why, int status, const char *fmt, va_list ap)
{
	if (why)
		vsnprintf(why, FZ_WHYLEN, fmt, ap);
	return status;
}

int fz_fail(char *why, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vset(why, FZ_FAIL, fmt, ap);
	va_end(ap);
	return ret;
}

int fz_skip(char *why, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vset(why, FZ_SKIP, fmt, ap);
	va_end(ap);
	return ret;
}

int fz_harness_missing(char *why, const char *fmt, ...)
{
	int harnessed = strcmp(fz_dev_path, "/dev/fastzero") == 0;
	char sub[FZ_WHYLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sub, sizeof(sub), fmt, ap);
	va_end(ap);
	if (harnessed)
		return fz_fail(why, "%s (the tests/vm harness provides it)", sub);
	return fz_skip(why, "%s (host development mode, FZ_DEV=%s)", sub,
		       fz_dev_path);
}

int fz_need_root(char *why)
{
	if (geteuid() == 0)
		return FZ_PASS;
	return fz_harness_missing(why, "needs root");
}

void fz_agg_init(struct fz_agg *agg)
{
	memset(agg, 0, sizeof(*agg));
}

void fz_agg_add(struct fz_agg *agg, int status, const char *casefmt,
		const char *why, ...)
{
	char name[128];
	va_list ap;

	agg->cases++;
	if (status == FZ_PASS)
		return;
	va_start(ap, why);
	vsnprintf(name, sizeof(name), casefmt, ap);
	va_end(ap);
	if (status == FZ_SKIP) {
		agg->skipped++;
		if (agg->skipped == 1)
			snprintf(agg->first_skip, sizeof(agg->first_skip),
				 "%s: %s", name, why);
		return;
	}
	agg->failed++;
	if (agg->failed == 1)
		snprintf(agg->first, sizeof(agg->first), "%s: %s", name, why);
	if (agg->failed <= FZ_MAX_DIAG)
		fz_diag("  %s: %s", name, why);
	else if (agg->failed == FZ_MAX_DIAG + 1)
		fz_diag("  (further failures not shown)");
}

int fz_agg_result(const struct fz_agg *agg, char *why)
{
	if (agg->failed)
		return fz_fail(why, "%s (%lu of %lu cases failed)", agg->first,
			       agg->failed, agg->cases);
	if (agg->cases && agg->skipped == agg->cases)
		return fz_skip(why, "%s", agg->first_skip);
	return FZ_PASS;
}

void fill_guard(unsigned char *p, size_t len, size_t guard)
{
	memset(p - guard, FZ_POISON, len + 2 * guard);
}

size_t fz_first_not(const unsigned char *p, size_t len, unsigned char c)
{
	static unsigned char ref[4096];
	size_t off, n, i;

	if (ref[0] != c || ref[sizeof(ref) - 1] != c)
		memset(ref, c, sizeof(ref));

	for (off = 0; off < len; off += n) {
		n = len - off < sizeof(ref) ? len - off : sizeof(ref);
		if (!memcmp(p + off, ref, n))
			continue;
		for (i = 0; p[off + i] == c; i++)
			;
		return off + i;
	}
	return len;
}

int check_byte(const unsigned char *p, size_t len, unsigned char c,
	       char *why)
{
	size_t off = fz_first_not(p, len, c);

	if (off == len)
		return FZ_PASS;
	return fz_fail(why, "byte at offset %zu is 0x%02x, expected 0x%02x",
		       off, p[off], c);
}

int check_zero(const unsigned char *p, size_t len, char *why)
{
	return check_byte(p, len, 0, why);
}

int check_untouched(const unsigned char *p, size_t len, char *why)
{
	return check_byte(p, len, FZ_POISON, why);
}

int check_guard(const unsigned char *p, size_t len, size_t guard, char *why)
{
	char sub[FZ_WHYLEN];

	if (check_untouched(p - guard, guard, sub))
		return fz_fail(why, "guard before buffer modified: %s", sub);
	if (check_untouched(p + len, guard, sub))
		return fz_fail(why, "guard after buffer modified: %s", sub);
	return FZ_PASS;
}

void *fz_mmap(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void fz_munmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int fz_hole_alloc(struct fz_hole *h, size_t before)
{
	size_t acc = (before + fz_page - 1) & ~(fz_page - 1);

	h->len = acc + fz_page;
	h->base = fz_mmap(h->len, PROT_READ | PROT_WRITE);
	if (!h->base)
		return -1;
	h->hole = h->base + acc;
	h->before = acc;
	if (mprotect(h->hole, fz_page, PROT_NONE)) {
		fz_munmap(h->base, h->len);
		h->base = NULL;
		return -1;
	}
	return 0;
}

void fz_hole_free(struct fz_hole *h)
{
	fz_munmap(h->base, h->len);
	h->base = NULL;
}

const char *fz_strret(char *buf, size_t len, ssize_t ret, int err)
{
	const char *name;

	if (ret >= 0) {
		snprintf(buf, len, "%zd", ret);
		return buf;
	}
	name = strerrorname_np(err);
	if (name)
		snprintf(buf, len, "-1 (%s)", name);
	else
		snprintf(buf, len, "-1 (errno %d)", err);
	return buf;
}

int fz_open(const char *path, int flags, char *why)
{
	int fd = open(path, flags);

	if (fd < 0 && why)
		fz_fail(why, "open(%s): %s", path, strerror(errno));
	return fd;
}

static ssize_t neg_errno(ssize_t ret)
{
	return ret < 0 ? -errno : ret;
}

ssize_t fz_do_read(int fd, void *buf, size_t len)
{
	return neg_errno(read(fd, buf, len));
}

ssize_t fz_do_pread(int fd, void *buf, size_t len)
{
	return neg_errno(pread(fd, buf, len, 0));
}

/* Three segments: 1/4, 1/2 and the rest of the buffer. */
ssize_t fz_do_readv3(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;
	struct iovec iov[3] = {
		{ p, len / 4 },
		{ p + len / 4, len / 2 },
		{ p + len / 4 + len / 2, len - len / 4 - len / 2 },
	};

	return neg_errno(readv(fd, iov, 3));
}

ssize_t fz_do_preadv2_nowait(int fd, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return neg_errno(preadv2(fd, &iov, 1, -1, RWF_NOWAIT));
}

/*
 * Up to 6.3, clear_user() on CPUs without ERMS clears whole qwords and
 * reports a fault at the qword that straddles the inaccessible page: it
 * may stop up to 7 bytes short of it.  fastzero's count is always exact.
 */
static int ref_inexact_ok(ssize_t rr, ssize_t expect)
{
	if (rr == -EFAULT)
		return expect < 8;
	return rr >= 0 && rr < expect && expect - rr < 8;
}

int fz_compare_returns(ssize_t dr, ssize_t rr, size_t len, ssize_t expect,
		       char *why)
{
	char a[FZ_RETLEN], b[FZ_RETLEN];

	if (expect != FZ_EXPECT_ANY && dr != expect &&
	    !(fz_allow_short && dr > 0 && dr < expect))
		return fz_fail(why, "%s returned %s, the exact count is %s",
			       fz_dev_name, fz_strret(a, sizeof(a), dr, -dr),
			       fz_strret(b, sizeof(b), expect, -expect));
	if (dr == rr)
		return FZ_PASS;
	/*
	 * Without a known exact count, the device's own is checked by the
	 * caller: every byte it claims is zero and accessible, the rest
	 * untouched.
	 */
	if (ref_inexact_ok(rr, expect != FZ_EXPECT_ANY ? expect : dr)) {
		fz_diag("  %s stopped short of the fault: %zd for exact %zd (qword clear_user)",
			fz_ref_name, rr, dr);
		return FZ_PASS;
	}
	if (fz_allow_short && dr > 0 && rr > 0) {
		fz_diag("  short read tolerated: len %zu: %s returned %zd, %s returned %zd",
			len, fz_dev_name, dr, fz_ref_name, rr);
		return FZ_PASS;
	}
	return fz_fail(why, "%s returned %s, %s returned %s",
		       fz_dev_name, fz_strret(a, sizeof(a), dr, -dr),
		       fz_ref_name, fz_strret(b, sizeof(b), rr, -rr));
}

int fz_diff_read(int dev, int ref, fz_read_fn fn, unsigned char *buf,
		 size_t len, unsigned char *lo, unsigned char *hi,
		 ssize_t expect, char *why)
{
	char sub[FZ_WHYLEN];
	ssize_t rr, dr;
	size_t n, pre;

	/* Poisoning first also faults the pages in: same conditions for both. */
	if (lo)
		memset(lo, FZ_POISON, hi - lo);
	rr = fn(ref, buf, len);
	if (lo)
		memset(lo, FZ_POISON, hi - lo);
	dr = fn(dev, buf, len);
	if (fz_compare_returns(dr, rr, len, expect, why) != FZ_PASS)
		return FZ_FAIL;
	if (!lo)
		return FZ_PASS;

	n = dr > 0 ? (size_t)dr : 0;
	if (n > (size_t)(hi - buf))
		return fz_fail(why, "returned %zu but only %zu bytes are accessible",
			       n, (size_t)(hi - buf));
	pre = fz_first_not(lo, buf - lo, FZ_POISON);
	if (pre != (size_t)(buf - lo))
		return fz_fail(why, "byte %zu bytes before the buffer modified",
			       (size_t)(buf - lo) - pre);
	if (check_zero(buf, n, sub))
		return fz_fail(why, "returned %zu but %s", n, sub);
	if (check_untouched(buf + n, hi - buf - n, sub))
		return fz_fail(why, "memory after the returned count %zu modified: %s",
			       n, sub);
	return FZ_PASS;
}

/* Scratch memory for fz_check_size(), kept between calls for small sizes. */
static unsigned char *scratch;
static size_t scratch_len;

#define FZ_SCRATCH_KEEP	(16 * FZ_MiB)

int fz_check_size(int dev, int ref, fz_read_fn fn, size_t len, size_t align,
		  char *why)
{
	size_t need = (len + align + 2 * FZ_GUARD + fz_page - 1) &
		      ~(fz_page - 1);
	unsigned char *base, *buf;
	int ret;

	if (need > scratch_len) {
		fz_munmap(scratch, scratch_len);
		scratch_len = 0;
		scratch = fz_mmap(need, PROT_READ | PROT_WRITE);
		if (!scratch)
			return fz_fail(why, "mmap(%zu): %s", need, strerror(errno));
		scratch_len = need;
	}
	base = scratch;
	buf = base + FZ_GUARD + align;
	ret = fz_diff_read(dev, ref, fn, buf, len, buf - FZ_GUARD,
			   buf + len + FZ_GUARD, FZ_EXPECT_ANY, why);
	if (scratch_len > FZ_SCRATCH_KEEP) {
		fz_munmap(scratch, scratch_len);
		scratch = NULL;
		scratch_len = 0;
	}
	return ret;
}

int fz_check_hole(int dev, int ref, fz_read_fn fn, struct fz_hole *h,
		  size_t k, size_t len, char *why)
{
	unsigned char *buf = h->hole - k;

	if (k + FZ_GUARD > h->before)
		return fz_fail(why, "internal: hole mapping too small for %zu", k);
	/* @len > @k: exactly the @k bytes before the hole, or EFAULT. */
	return fz_diff_read(dev, ref, fn, buf, len, buf - FZ_GUARD, h->hole,
			    k ? (ssize_t)k : -EFAULT, why);
}

struct compact_arg {
	int dev, ref;
	fz_read_fn fn;
};

static int compact_sizes(const void *arg, char *why)
{
	const struct compact_arg *c = arg;
	char sub[FZ_WHYLEN];
	struct fz_agg agg;
	size_t len, align;

	fz_agg_init(&agg);
	for (len = 0; len <= 300; len++) {
		align = (len * 7) % 64;
		fz_agg_add(&agg, fz_check_size(c->dev, c->ref, c->fn, len,
					       align, sub),
			   "size %zu align %zu", sub, len, align);
	}
	return fz_agg_result(&agg, why);
}

static int compact_big(const void *arg, char *why)
{
	static const size_t sizes[] = {
		4095, 4096, 4097, 65537, FZ_MiB + 1, 8 * FZ_MiB + 3,
	};
	static const size_t aligns[] = { 0, 13 };
	const struct compact_arg *c = arg;
	char sub[FZ_WHYLEN];
	struct fz_agg agg;
	size_t i, j;

	fz_agg_init(&agg);
	for (i = 0; i < FZ_ARRAY_SIZE(sizes); i++)
		for (j = 0; j < FZ_ARRAY_SIZE(aligns); j++)
			fz_agg_add(&agg, fz_check_size(c->dev, c->ref, c->fn,
						       sizes[i], aligns[j], sub),
				   "size %zu align %zu", sub, sizes[i],
				   aligns[j]);
	return fz_agg_result(&agg, why);
}

static int compact_hole(const void *arg, char *why)
{
	static const size_t extra[] = {
		4095, 4096, 4097, 8191, 8192, 8193, 65536, 65537,
	};
	const struct compact_arg *c = arg;
	char sub[FZ_WHYLEN];
	struct fz_hole h;
	struct fz_agg agg;
	size_t k, len, i, n = 0;

	if (fz_hole_alloc(&h, 65537 + FZ_GUARD))
		return fz_fail(why, "mmap: %s", strerror(errno));
	fz_agg_init(&agg);
	for (i = 0; ; i++) {
		if (i < 32)
			k = i;
		else if (32 + (i - 32) * 67 <= 4096)
			k = 32 + (i - 32) * 67;
		else if (n < FZ_ARRAY_SIZE(extra))
			k = extra[n++];
		else
			break;
		len = (i & 1) ? k + 8192 : k + 1;
		fz_agg_add(&agg, fz_check_hole(c->dev, c->ref, c->fn, &h, k,
					       len, sub),
			   "offset %zu len %zu", sub, k, len);
	}
	fz_hole_free(&h);
	return fz_agg_result(&agg, why);
}

void fz_compact_checks(int dev, int ref, fz_read_fn fn, const char *prefix)
{
	struct compact_arg c = { dev, ref, fn };

	fz_run(compact_sizes, &c, "%s_sizes_0_300", prefix);
	fz_run(compact_big, &c, "%s_big_sizes", prefix);
	fz_run(compact_hole, &c, "%s_prot_none_offsets", prefix);
}

int fz_delete_module(const char *name, unsigned int flags)
{
	return syscall(__NR_delete_module, name, flags);
}

int fz_module_open(void)
{
	const char *ko = getenv("FZ_KO");
	int fd = open(ko && *ko ? ko : "/fastzero.ko", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int fz_module_load_fd(int fd, const char *params)
{
	const char *boot = getenv("FZ_MODULE_PARAMS");
	char all[1024];

	/* The harness's own parameters first: a later one wins (parse_args()). */
	snprintf(all, sizeof(all), "%s %s", boot ? boot : "", params);
	return syscall(SYS_finit_module, fd, all, 0) ? -errno : 0;
}

int fz_load_module(const char *params)
{
	int fd = fz_module_open(), ret;

	if (fd < 0)
		return fd;
	ret = fz_module_load_fd(fd, params);
	close(fd);
	return ret;
}

int fz_reload_module(const char *params, int *dev)
{
	int err;

	if (dev) {
		if (*dev >= 0)
			close(*dev);
		*dev = -1;
	}
	if (fz_delete_module("fastzero", O_NONBLOCK) && errno != ENOENT)
		return -errno;
	err = fz_load_module(params);
	if (err || !dev)
		return err;
	*dev = open(fz_dev_path, O_RDWR);
	return *dev < 0 ? -errno : 0;
}

int fz_sock_pair(int tcp, int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l, err;

	if (!tcp)
		return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? -errno : 0;
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (void *)&a, alen) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &alen))
		goto err;
	sv[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (sv[1] < 0 || connect(sv[1], (void *)&a, alen))
		goto err;
	sv[0] = accept(l, NULL, NULL);
	if (sv[0] < 0)
		goto err;
	close(l);
	return 0;
err:
	err = -errno;
	close(l);
	return err;
}

int fz_in_child(void (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st))
		return WTERMSIG(st);
	return WEXITSTATUS(st) ? 256 + WEXITSTATUS(st) : 0;
}

static sigjmp_buf probe_env;

static void probe_handler(int sig)
{
	siglongjmp(probe_env, sig);
}

int fz_probe(volatile unsigned char *p, int write)
{
	struct sigaction sa = { .sa_handler = probe_handler }, osegv, obus;
	int sig;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &osegv);
	sigaction(SIGBUS, &sa, &obus);
	sig = sigsetjmp(probe_env, 1);
	if (!sig) {
		unsigned char v = *p;

		if (write)
			*p = v;
	}
	sigaction(SIGSEGV, &osegv, NULL);
	sigaction(SIGBUS, &obus, NULL);
	return sig;
}

double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int fz_reason(const char *name, char *buf, size_t len)
{
	char line[1024];
	size_t n = strlen(name);
	FILE *f = fopen(FZ_REASONS, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, n) || line[n] != ':' || line[n + 1] != ' ')
			continue;
		fclose(f);
		line[strcspn(line, "\n")] = 0;
		snprintf(buf, len, "%s", line + n + 2);
		return 0;
	}
	fclose(f);
	return -ENOENT;
}

int fz_kernel_has_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0;
}

int fz_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int fz_write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

int fz_file_has_word(const char *path, const char *word)
{
	char buf[1024], *tok, *save;

	if (fz_read_file(path, buf, sizeof(buf)))
		return 0;
	for (tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save))
		if (!strcmp(tok, word))
			return 1;
	return 0;
}

int fz_have_fs(const char *fstype)
{
	char line[256], *name;
	int found = 0;
	FILE *f = fopen("/proc/filesystems", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		name = strrchr(line, '\t');
		found = !strcmp(name ? name + 1 : line, fstype);
	}
	fclose(f);
	return found;
}

long fz_file_long(const char *file, const char *key)
{
	char buf[8192], *p;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!key)
		return atol(buf);
	p = strstr(buf, key);
	return p ? atol(p + strlen(key)) : -1;
}

void fz_kmsg(const char *what)
{
	char msg[128];
	int fd = open("/dev/kmsg", O_WRONLY);
	int len = snprintf(msg, sizeof(msg), "fastzero-test: %s\n", what);

	if (fd < 0)
		return;
	if (write(fd, msg, len) != len)
		fz_diag("kernel log marker not written: %s", strerror(errno));
	close(fd);
}

int fz_klog_count(const char *marker, const char *needle, int *warnings)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	const char *from, *p;
	char *log;
	int n, lines = 0;

	if (len <= 0)
		return -2;
	log = calloc(1, len + 1);
	if (!log)
		return -2;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, len);
	if (n < 0) {
		free(log);
		return -2;
	}
	log[n] = 0;
	from = strstr(log, marker);
	if (!from) {
		free(log);
		return -1;
	}
	for (p = from; (p = strstr(p, needle)); p++)
		lines++;
	if (warnings)
		*warnings = !!strstr(from, "WARNING");
	free(log);
	return lines;
}

int fz_memcg_create(const char *path, char *why)
{
	static const char root[] = "/sys/fs/cgroup";
	struct stat st;
	int ret;

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st)) {
		if (!fz_have_fs("cgroup2"))
			return fz_skip(why, "kernel without cgroup2 (not in /proc/filesystems)");
		if (mount("cgroup2", root, "cgroup2", 0, NULL))
			return fz_fail(why, "cannot mount cgroup2 on %s: %s",
				       root, strerror(errno));
	}
	ret = fz_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	if (ret) {
		if (!fz_file_has_word("/sys/fs/cgroup/cgroup.controllers", "memory"))
			return fz_skip(why, "kernel without the memory controller (not in cgroup.controllers)");
		return fz_fail(why, "cannot enable the memory controller: %s",
			       strerror(-ret));
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return fz_fail(why, "mkdir %s: %s", path, strerror(errno));
	return FZ_PASS;
}

long fz_smaps_kb(const void *p, size_t len, const char *key)
{
	unsigned long a, b, lo = (unsigned long)p, hi = lo + len;
	size_t klen = strlen(key);
	char line[256];
	long kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
			in = a < hi && b > lo;
		else if (in && !strncmp(line, key, klen))
			kb += atol(line + klen);
	}
	fclose(f);
	return kb;
}

int fz_memcg_limit(const char *path, unsigned long max, const char *swap_max,
		   char *why)
{
	char file[256], val[32];
	int ret;

	snprintf(file, sizeof(file), "%s/memory.max", path);
	snprintf(val, sizeof(val), "%lu", max);
	ret = fz_write_file(file, val);
	if (ret)
		return fz_fail(why, "cannot set memory.max: %s", strerror(-ret));
	snprintf(file, sizeof(file), "%s/memory.swap.max", path);
	ret = fz_write_file(file, swap_max);
	if (ret && ret != -ENOENT)
		return fz_fail(why, "cannot set memory.swap.max: %s", strerror(-ret));
	return FZ_PASS;
}
