// SPDX-License-Identifier: GPL-2.0
/*
 * fzbench - /dev/fastzero against a reference device (/dev/zero), interleaved.
 *
 * Workloads (each sample alternates the devices, order flipped every round):
 *   read          read(2) of one block size, repeated for ~target-ms
 *   readv         readv(2) of 16 iovecs of one size
 *   splice-read   splice(dev -> pipe), then read(2) the pipe into a buffer
 *   splice-null   splice(dev -> pipe), then splice(pipe -> /dev/null)
 *   mmap-private  mmap(MAP_PRIVATE) + first touch of every page
 *   mmap-shared   mmap(MAP_SHARED) + first touch
 *   mmap-populate mmap(MAP_SHARED | MAP_POPULATE) + touch
 *   mmap-fork     fork() of a process with a touched MAP_SHARED mapping
 * The mmap workloads also run on MAP_ANONYMOUS ("anon") and report the page
 * faults taken (getrusage minflt) as aux; mmap-fork reports the mapping's
 * page tables (VmPTE kB) instead.  A device whose mmap (or fault)
 * fails is reported as n/a with the error, never a crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"

#define NSERIES		3	/* dev, ref, anon */
#define S_ANON		2
#define IOV_N		16
#define PIPE_SIZE	(1u << 20)
#define MAX_WL		64

enum kind { K_READ, K_READV, K_SPLICE_READ, K_SPLICE_NULL, K_MMAP, K_FORK };

/**
 * struct wl - one workload configuration and its samples
 * @name: workload name in the results
 * @kind: what a sample does
 * @size: block size (read, splice), iovec size (readv) or mapping size
 * @mflags: mmap flags (K_MMAP, K_FORK)
 * @nseries: 2 (the devices) or 3 (plus anonymous memory)
 * @err: first error per series (0: fine; the series is n/a otherwise)
 */
struct wl {
	const char *name;
	enum kind kind;
	size_t size;
	int mflags;
	unsigned int nseries;
	int err[NSERIES];
	double gbs[NSERIES][BL_MAX_REPS];
	double faults[NSERIES][BL_MAX_REPS];	/* aux: minflt, or VmPTE kB */
};

struct opts {
	const char *dev, *ref, *csv, *mode, *workloads;
	bool quick, json, touch_read;
	unsigned int reps;
	double target_ms;
	int cpu;
	size_t bs[16], msizes[8];
	int nbs, nmsizes;
};

struct ctx {
	const struct opts *o;
	int fd[NSERIES];		/* -1 for anon */
	char name[NSERIES][BL_NAME_LEN];
	char *buf;
	size_t buflen;
	int pipe[2], nullfd;
};

static struct wl wls[MAX_WL];
static unsigned int nwls;

static char *fmt(size_t v)
{
	static char bufs[8][16];
	static unsigned int n;

	return (char *)bl_fmt_size(v, bufs[n++ % 8], sizeof(bufs[0]));
}

/* --- samples: each returns 0 and GB/s in *gbs, or -errno ------------------ */

static int sample_read(struct ctx *c, const struct wl *w, int fd, double *gbs)
{
	uint64_t t0 = bl_now_ns(), t, end = t0 + c->o->target_ms * 1e6;
	double bytes = 0;
	struct iovec iov[IOV_N];
	ssize_t n;
	int i;

	for (i = 0; i < IOV_N; i++) {
		iov[i].iov_base = c->buf + i * w->size;
		iov[i].iov_len = w->size;
	}
	do {
		if (w->kind == K_READV)
			n = readv(fd, iov, IOV_N);
		else
			n = read(fd, c->buf, w->size);
		if (n <= 0)
			return n ? -errno : -ENODATA;
		bytes += n;
		t = bl_now_ns();
	} while (t < end);
	*gbs = bytes / (t - t0);
	return 0;
}

/* Empty the pipe of @n bytes, by read(2) or by splice to /dev/null. */
static int drain_pipe(struct ctx *c, const struct wl *w, ssize_t n)
{
	ssize_t m;

	while (n > 0) {
		if (w->kind == K_SPLICE_READ)
			m = read(c->pipe[0], c->buf, BL_MIN((size_t)n, c->buflen));
		else
			m = splice(c->pipe[0], NULL, c->nullfd, NULL, n, 0);
		if (m <= 0)
			return m ? -errno : -ENODATA;
		n -= m;
	}
	return 0;
}

static int sample_splice(struct ctx *c, const struct wl *w, int fd, double *gbs)
{
	uint64_t t0 = bl_now_ns(), t, end = t0 + c->o->target_ms * 1e6;
	double bytes = 0;
	ssize_t n;
	int err;

	do {
		n = splice(fd, NULL, c->pipe[1], NULL, w->size, 0);
		if (n <= 0)
			return n ? -errno : -ENODATA;
		err = drain_pipe(c, w, n);
		if (err)
			return err;
		bytes += n;
		t = bl_now_ns();
	} while (t < end);
	*gbs = bytes / (t - t0);
	return 0;
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Touch one byte of every page; a SIGBUS/SIGSEGV comes back as -EFAULT. */
static int touch_pages(volatile char *p, size_t len, bool rd)
{
	size_t i;

	if (sigsetjmp(fault_jmp, 1))
		return -EFAULT;
	for (i = 0; i < len; i += 4096) {
		if (rd)
			(void)p[i];	/* a volatile read: the fault is the point */
		else
			p[i] = 1;
	}
	return 0;
}

/* This process's page tables in kB (VmPTE), -1 if unknown. */
static long vmpte_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* fork() of this process, until the child has exited: ns, or -errno. */
static int64_t time_fork(void)
{
	uint64_t t0 = bl_now_ns();
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return bl_now_ns() - t0;
}

/*
 * K_MMAP: mmap and first touch of every page, timed; aux = page faults.
 * K_FORK: mmap and touch untimed, then fork() timed (GB/s = mapping size
 * per fork time); aux = the page tables the mapping cost (VmPTE).
 */
static int sample_mmap(struct ctx *c, const struct wl *w, int fd, double *gbs,
		       double *aux)
{
	int flags = w->mflags | (fd < 0 ? MAP_ANONYMOUS : 0);
	uint64_t t0 = bl_now_ns(), t;
	long f0, pte0 = vmpte_kb();
	int64_t ns;
	char *p;
	int err;

	p = mmap(NULL, w->size, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	f0 = minflt();
	err = touch_pages(p, w->size, c->o->touch_read);
	t = bl_now_ns();
	*aux = minflt() - f0;
	if (w->kind == K_FORK && !err) {
		*aux = vmpte_kb() - pte0;
		t0 = 0;
		ns = time_fork();
		t = ns;
		if (ns < 0)
			err = ns;
	}
	munmap(p, w->size);
	*gbs = w->size / (double)BL_MAX(t - t0, 1);
	return err;
}

static void sample(struct ctx *c, struct wl *w, unsigned int s, unsigned int r)
{
	double gbs = 0, faults = NAN;
	int err;

	if (w->err[s])
		return;
	switch (w->kind) {
	case K_READ:
	case K_READV:
		err = sample_read(c, w, c->fd[s], &gbs);
		break;
	case K_SPLICE_READ:
	case K_SPLICE_NULL:
		err = sample_splice(c, w, c->fd[s], &gbs);
		break;
	default:
		err = sample_mmap(c, w, c->fd[s], &gbs, &faults);
		break;
	}
	w->err[s] = err;
	w->gbs[s][r] = gbs;
	w->faults[s][r] = faults;
}

/* --- workload list --------------------------------------------------------- */

static struct wl *add_wl(const char *name, enum kind kind, size_t size,
			 int mflags, unsigned int nseries)
{
	struct wl *w;

	if (nwls == MAX_WL)
		bl_die("too many workloads");
	w = &wls[nwls++];
	memset(w, 0, sizeof(*w));
	w->name = name;
	w->kind = kind;
	w->size = size;
	w->mflags = mflags;
	w->nseries = nseries;
	return w;
}

/* RAM that a mapping of @len may use: at most 80% of MemAvailable. */
static bool fits_in_ram(size_t len)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return !kb || len <= kb * 1024 / 10 * 8;
}

static void build_wls(const struct opts *o, struct bl_report *rep)
{
	static const size_t vsizes[] = { 4u << 10, 64u << 10 };
	static const size_t ssizes[] = { 64u << 10, 1u << 20 };
	const char *sel = o->workloads;
	int i;

	for (i = 0; strstr(sel, "read") && i < o->nbs; i++)
		add_wl("read", K_READ, o->bs[i], 0, 2);
	for (i = 0; strstr(sel, "readv") && i < 2; i++)
		add_wl("readv", K_READV, vsizes[i], 0, 2);
	for (i = 0; strstr(sel, "splice") && i < 2; i++) {
		add_wl("splice-read", K_SPLICE_READ, ssizes[i], 0, 2);
		add_wl("splice-null", K_SPLICE_NULL, ssizes[i], 0, 2);
	}
	for (i = 0; strstr(sel, "mmap") && i < o->nmsizes; i++) {
		if (!fits_in_ram(o->msizes[i])) {
			bl_note(rep, "skipped", "mmap %s: more than 80%% of MemAvailable",
				fmt(o->msizes[i]));
			continue;
		}
		add_wl("mmap-private", K_MMAP, o->msizes[i], MAP_PRIVATE, 3);
		add_wl("mmap-shared", K_MMAP, o->msizes[i], MAP_SHARED, 3);
		add_wl("mmap-populate", K_MMAP, o->msizes[i],
		       MAP_SHARED | MAP_POPULATE, 3);
		add_wl("mmap-fork", K_FORK, o->msizes[i], MAP_SHARED, 3);
	}
}

/* Every round visits every workload; the device order flips each round. */
static void run_wls(struct ctx *c)
{
	const struct opts *o = c->o;
	unsigned int r, i, k;

	for (r = 0; r < o->reps; r++) {
		bl_progress(r + 1, o->reps, "%u workloads x devices", nwls);
		for (i = 0; i < nwls; i++)
			for (k = 0; k < wls[i].nseries; k++)
				sample(c, &wls[i], r & 1 ? wls[i].nseries - 1 - k : k, r);
	}
}

static void param_of(const struct wl *w, char *buf, size_t len)
{
	if (w->kind == K_READV)
		snprintf(buf, len, "%dx%s", IOV_N, fmt(w->size));
	else
		snprintf(buf, len, "%s", fmt(w->size));
}

static void collect(struct ctx *c, struct bl_report *rep)
{
	unsigned int i, s;
	char param[BL_NAME_LEN];

	for (i = 0; i < nwls; i++) {
		struct wl *w = &wls[i];
		struct bl_result *r[NSERIES];
		struct bl_stats f;

		param_of(w, param, sizeof(param));
		for (s = 0; s < w->nseries; s++) {
			r[s] = bl_add(rep, w->name, param, c->name[s], "GB/s",
				      w->gbs[s], w->err[s] ? 0 : c->o->reps);
			if (w->err[s])
				bl_note(rep, "n/a", "%s %s on %s: %s", w->name,
					param, c->name[s], strerror(-w->err[s]));
			if (w->kind >= K_MMAP && !w->err[s]) {
				bl_stats(w->faults[s], c->o->reps, &f);
				snprintf(r[s]->aux_name, sizeof(r[s]->aux_name),
					 w->kind == K_FORK ? "vmpte_kB" : "minflt");
				r[s]->aux = f.med;
			}
		}
		/* every add_wl() caller gives nseries 2 or 3: r[0], r[1] are set */
		/* cppcheck-suppress uninitvar */
		bl_set_ratio(r[0], r[1]);
	}
}

/* --- setup ----------------------------------------------------------------- */

static void open_devs(struct ctx *c)
{
	const char *path[2] = { c->o->dev, c->o->ref };
	int s;

	for (s = 0; s < 2; s++) {
		c->fd[s] = open(path[s], O_RDONLY);
		if (c->fd[s] < 0)
			bl_die("open %s: %s", path[s], strerror(errno));
		snprintf(c->name[s], BL_NAME_LEN, "%s%s", path[s],
			 s && !strcmp(path[0], path[1]) ? "(ref)" : "");
	}
	c->fd[S_ANON] = -1;
	snprintf(c->name[S_ANON], BL_NAME_LEN, "anon");
	/* mmap needs a writable fd for MAP_SHARED | PROT_WRITE */
	for (s = 0; s < 2; s++) {
		int fd = open(path[s], O_RDWR);

		if (fd >= 0) {
			close(c->fd[s]);
			c->fd[s] = fd;
		}
	}
}

static void setup(struct ctx *c, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_fault };
	size_t need = 4u << 20;
	int i;

	memset(c, 0, sizeof(*c));
	c->o = o;
	open_devs(c);
	for (i = 0; i < o->nbs; i++)
		need = BL_MAX(need, o->bs[i]);
	need = BL_MAX(need, (size_t)IOV_N * (64u << 10));
	c->buflen = need;
	c->buf = bl_alloc(need, false);
	if (pipe(c->pipe))
		bl_die("pipe: %s", strerror(errno));
	fcntl(c->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
	c->nullfd = open("/dev/null", O_WRONLY);
	if (c->nullfd < 0)
		bl_die("open /dev/null: %s", strerror(errno));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

static void teardown(struct ctx *c)
{
	int s;

	for (s = 0; s < 2; s++)
		close(c->fd[s]);
	close(c->pipe[0]);
	close(c->pipe[1]);
	close(c->nullfd);
	bl_free(c->buf, c->buflen);
}

/* --- options and main ------------------------------------------------------ */

#ifndef FZ_VERSION
#define FZ_VERSION "unknown"
#endif

/* --help: on stdout, exit 0 (help2man reads it); a bad option: stderr, 2. */
static void __attribute__((noreturn)) usage(int status)
{
	fputs("Usage: fzbench [OPTION]...\n"
	      "Benchmark /dev/fastzero against a reference device (/dev/zero), interleaved:\n"
	      "read(2) and readv(2) by block size, splice into a pipe, mmap first touch\n"
	      "(private, shared, MAP_POPULATE, fork), each also on MAP_ANONYMOUS.\n"
	      "\n"
	      "  --dev PATH, --ref PATH  the devices (default $FZ_DEV or /dev/fastzero,\n"
	      "                          $FZ_REF or /dev/zero)\n"
	      "  --quick                 fewer repetitions, shorter samples, smaller sizes\n"
	      "  --reps N, --target-ms MS  repetitions, and milliseconds per sample\n"
	      "  --bs LIST               read block sizes, e.g. 4K,1M\n"
	      "  --mmap-sizes LIST       mapping sizes (default 1G,8G; 0: no mmap workloads)\n"
	      "  --touch read|write      how mappings are first touched (default write)\n"
	      "  --workloads LIST        any of read,readv,splice,mmap\n"
	      "  --cpu N                 pin to CPU N\n"
	      "  --mode LABEL            the mode in the results (default native, or vm)\n"
	      "  --json                  JSON on stdout, the table on stderr\n"
	      "  --csv FILE              the results as CSV too\n"
	      "  --help, --version       this help, the version\n"
	      "\n"
	      "GB/s = 1e9 bytes/s; ratio = dev / ref; spread = (max - min) / median.\n",
	      status ? stderr : stdout);
	exit(status);
}

static void size_list(const char *arg, size_t *out, int *n, int max)
{
	*n = bl_parse_size_list(arg, out, max);
	if (*n < 0)
		bl_die("bad size list '%s'", arg);
	if (*n == 1 && !out[0])
		*n = 0;
}

static const char *default_mode(void)
{
	return strstr(bl_cpu_flags(), "hypervisor") ? "vm" : "native";
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'D' },
		{ "ref", required_argument, NULL, 'R' },
		{ "quick", no_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ "target-ms", required_argument, NULL, 't' },
		{ "bs", required_argument, NULL, 'b' },
		{ "mmap-sizes", required_argument, NULL, 'M' },
		{ "touch", required_argument, NULL, 'T' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ },
	};
	int ch, reps = 0;
	double target = 0;

	memset(o, 0, sizeof(*o));
	o->dev = getenv("FZ_DEV") ? getenv("FZ_DEV") : "/dev/fastzero";
	o->ref = getenv("FZ_REF") ? getenv("FZ_REF") : "/dev/zero";
	o->workloads = "read,readv,splice,mmap";
	o->cpu = -1;
	o->nmsizes = -1;
	while ((ch = getopt_long(argc, argv, "D:R:qr:t:b:M:T:w:p:m:jc:hV", lo, NULL)) != -1) {
		switch (ch) {
		case 'D': o->dev = optarg; break;
		case 'R': o->ref = optarg; break;
		case 'q': o->quick = true; break;
		case 'r': reps = atoi(optarg); break;
		case 't': target = atof(optarg); break;
		case 'b': size_list(optarg, o->bs, &o->nbs, 16); break;
		case 'M': size_list(optarg, o->msizes, &o->nmsizes, 8); break;
		case 'T': o->touch_read = !strcmp(optarg, "read"); break;
		case 'w': o->workloads = optarg; break;
		case 'p': o->cpu = atoi(optarg); break;
		case 'm': o->mode = optarg; break;
		case 'j': o->json = true; break;
		case 'c': o->csv = optarg; break;
		case 'h': usage(0);
		case 'V':
			puts("fzbench (fastzero) " FZ_VERSION);
			exit(0);
		default: usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	o->reps = reps > 0 ? (unsigned int)BL_MIN(reps, BL_MAX_REPS) : o->quick ? 3 : 5;
	o->target_ms = target > 0 ? target : o->quick ? 25 : 100;
	if (!o->nbs)
		size_list(o->quick ? "512,4K,64K,1M,16M" :
			  "512,4K,16K,64K,256K,1M,4M,16M,64M", o->bs, &o->nbs, 16);
	if (o->nmsizes < 0)
		size_list(o->quick ? "64M" : "1G,8G", o->msizes, &o->nmsizes, 8);
	if (!o->mode)
		o->mode = default_mode();
}

static void header(const struct ctx *c, struct bl_report *rep)
{
	const struct opts *o = c->o;

	bl_note(rep, "dev", "%s", o->dev);
	bl_note(rep, "ref", "%s", o->ref);
	bl_note(rep, "cpu", "%s", bl_cpu_model());
	bl_note(rep, "cpu_flags", "%s", bl_cpu_flags());
	bl_note(rep, "reps", "%u interleaved, ~%.0f ms per read/splice sample", o->reps,
		o->target_ms);
	bl_note(rep, "mmap_touch", "%s one byte per 4 KiB page; aux minflt = page faults taken by the touch loop (not mmap(MAP_POPULATE))",
		o->touch_read ? "read" : "write");
	bl_note(rep, "spread", "(max - min) / median of the repetitions");
}

int main(int argc, char **argv)
{
	struct bl_report rep = { .tool = "fzbench" };
	struct opts o;
	struct ctx c;
	uint64_t t0 = bl_now_ns();

	parse_opts(argc, argv, &o);
	rep.mode = o.mode;
	if (bl_pin_cpu(o.cpu))
		perror("sched_setaffinity");
	setup(&c, &o);
	header(&c, &rep);
	build_wls(&o, &rep);
	run_wls(&c);
	collect(&c, &rep);
	bl_note(&rep, "runtime_s", "%.1f", (bl_now_ns() - t0) / 1e9);

	bl_print_table(o.json ? stderr : stdout, &rep);
	if (o.json)
		bl_write_json(stdout, &rep);
	if (o.csv && bl_write_csv(o.csv, &rep))
		bl_die("writing %s failed", o.csv);
	teardown(&c);
	bl_report_free(&rep);
	return 0;
}
