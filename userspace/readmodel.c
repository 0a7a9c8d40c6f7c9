// SPDX-License-Identifier: GPL-2.0
/*
 * readmodel - a hardware model of read() from /dev/zero and /dev/fastzero on this CPU.
 *
 * For each block size, in one run, interleaved, best of N, into the same
 * prefaulted buffer (every read at its start, as dd reuses its buffer):
 *
 *   zero-real      read() of /dev/zero itself
 *   zero-<loop>    /dev/zero's read path emulated: a zero-byte read() of
 *                  /dev/zero (syscall, VFS) plus <loop> in 4 KiB chunks
 *                  (read_zero() clears PAGE_SIZE per clear_user()), for
 *                  every candidate loop of driver/arch/x86/clear_loops.S; the one
 *                  that matches zero-real best is the host kernel's
 *   fz             fastzero's read path emulated: a zero-byte read() plus
 *                  the loop and extents driver/policy.h gives for this CPU
 *                  (the driver's own functions), timed as the driver times
 *                  them; one policy for every preemption model, and the
 *                  longest extent (the latency it gives a pending signal,
 *                  or on a cooperative kernel the scheduler) reported
 *   limit-<loop>   a zero-byte read() plus one call of <loop> for the
 *                  whole block: what no read path can beat; every store
 *                  the CPU has (rep stosb, rep stosq, the unrolled loop,
 *                  movnti, clzero where it runs), so the limit is this
 *                  CPU's, not the fastest of fastzero's own choices
 *
 * and the same for a cold destination, each read into the next bs of a
 * COLD_REGION region (a program filling an array; perf bench mem memset
 * -k bs -s 4GB's pattern), which the cache cannot hold:
 *
 *   cold-fz        fastzero's read path emulated, as fz
 *   cold-<loop>    a zero-byte read() plus one call of <loop>
 *
 * and for a ring of slots the cache holds, each read into the next bs of
 * a ring_size() buffer, wrapping round (double buffers, a ring of I/O
 * slots: reads that start where the last ended, into cached memory):
 *
 *   ring-fz        fastzero's read path emulated, as fz
 *   ring-<loop>    a zero-byte read() plus one call of <loop>, for the
 *                  patched variant and the cold store
 *
 * Rows where the /dev/zero model misses the real /dev/zero by more than
 * 10% are flagged and carry no claim.  Mode: native userspace, host CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "benchlib.h"
#include "loops.h"
#include "policy.h"

#define MAX_SIZES	12
#define MAX_MCFGS	(1 + MAX_SIZES * 24)
#define COLD_REGION	(4ul << 30)
#define ZERO_CHUNK	4096	/* /dev/zero: PAGE_SIZE per clear_user() */
#define MISS_PCT	10.0	/* a model row off by more carries no claim */

enum kind { K_READ0, K_REAL, K_ZERO, K_FZ, K_LIMIT, K_CFZ, K_CLIMIT, K_RFZ,
	    K_RLIMIT };

/* /dev/zero candidates and limits (loops.h, per architecture). */
static const enum fz_loop zero_loops[] = BL_ZERO_LOOPS;
/* every store: those this CPU cannot run (loop_runs()) are left out */
static const enum fz_loop limit_loops[] = BL_LIMIT_LOOPS;

/**
 * struct mcfg - one measured configuration
 * @kind: what one operation is
 * @loop: K_ZERO, K_LIMIT: the loop
 * @bs: bytes per read
 * @off: K_CFZ, K_CLIMIT, K_RFZ, K_RLIMIT: where the next read goes in the
 *	 cold region or the ring
 * @streamed: K_CFZ, K_RFZ: bytes the reads before the next one streamed,
 *	      each starting where the last ended (read.c's per-open state)
 * @max_extent_ns: K_FZ: the longest extent any read took
 * @extents: K_FZ: extents cleared, over @reads reads
 * @iters: operations per sample
 * @v: samples: GB/s, or ns per operation for K_READ0
 */
struct mcfg {
	enum kind kind;
	enum fz_loop loop;
	size_t bs, off, streamed;
	uint64_t max_extent_ns;
	unsigned long extents, reads;
	unsigned long iters;
	double v[BL_MAX_REPS];
};

static struct mcfg cfgs[MAX_MCFGS];
static unsigned int ncfgs;
static int zfd;
static char *buf, *cold, *ring;
static size_t ring_bytes;
static struct fz_cpu cpu;
static enum fz_loop variant;
static unsigned long nt_threshold;
static int cold_loop;

static void zero_read(size_t n)
{
	ssize_t r = read(zfd, buf, n);

	if (r != (ssize_t)n)
		bl_die("read(/dev/zero, %zu): %zd (%s)", n, r, strerror(errno));
}

/*
 * fastzero's fz_read_iter() for one read of c->bs bytes, extents and loop from
 * policy.h (a probe, then main extents: fz_policy_extents_*()), timed as
 * read.c times them (every extent but the last; read.c's VMA lookup
 * before each main extent, a trylock and a maple tree walk, is not
 * modelled: the buffer is one mapping); the
 * longest timed extent is kept (the scheduling latency on a cooperative
 * kernel, the signal latency on a preemptible one; a read of one extent
 * takes the whole read's time).  The cooperative kernel's cond_resched() between
 * extents costs next to nothing when nothing else is runnable: both
 * models run the same extents.
 */
static void fz_emul(struct mcfg *c, char *dst)
{
	/* K_CFZ's and K_RFZ's reads start where the last ended, but a wrap */
	int loop = fz_policy_read_loop(FZ_LOOP_AUTO, nt_threshold, cold_loop,
				       FZ_COLD_THRESHOLD, c->bs,
				       c->streamed + c->bs);
	struct fz_extents x;
	enum fz_loop l = loop == FZ_LOOP_AUTO ? variant : (enum fz_loop)loop;
	uint64_t t0, ns;
	size_t off, n;

	fz_policy_extents_init(&x, FZ_CHUNK_AUTO, c->bs);
	zero_read(0);
	for (off = 0; off < c->bs; off += n) {
		n = BL_MIN(x.next, c->bs - off);
		if (c->bs - off == n) {		/* the last: read.c does not time it */
			loops[l](dst + off, n, n, 1);
			c->extents++;
			break;
		}
		t0 = bl_now_ns();
		loops[l](dst + off, n, n, 1);
		ns = bl_now_ns() - t0;
		if (ns > c->max_extent_ns)
			c->max_extent_ns = ns;
		fz_policy_extents_done(&x, n, ns);
		c->extents++;
	}
	c->reads++;
}

/* The next bs of @region, wrapping round; @c->streamed as read.c keeps it. */
static char *next_in(struct mcfg *c, char *region, size_t size)
{
	char *dst;

	if (c->off + c->bs > size)
		c->off = 0;
	c->streamed = c->off;	/* the run started at the wrap */
	dst = region + c->off;
	c->off += c->bs;
	return dst;
}

static char *cold_next(struct mcfg *c)
{
	return next_in(c, cold, COLD_REGION);
}

/* A ring of at least 4 slots the cache holds: 4 MiB, or 4 x bs. */
static size_t ring_size(size_t bs)
{
	return BL_MAX((size_t)4 << 20, 4 * bs);
}

static char *ring_next(struct mcfg *c)
{
	return next_in(c, ring, ring_size(c->bs));
}

static void one_op(struct mcfg *c)
{
	switch (c->kind) {
	case K_READ0:
		zero_read(0);
		break;
	case K_REAL:
		zero_read(c->bs);
		break;
	case K_ZERO:
		zero_read(0);
		loops[c->loop](buf, c->bs, ZERO_CHUNK, 1);
		break;
	case K_FZ:
		fz_emul(c, buf);
		break;
	case K_LIMIT:
		zero_read(0);
		loops[c->loop](buf, c->bs, c->bs, 1);
		break;
	case K_CFZ:
		fz_emul(c, cold_next(c));
		break;
	case K_CLIMIT:
		zero_read(0);
		loops[c->loop](cold_next(c), c->bs, c->bs, 1);
		break;
	case K_RFZ:
		fz_emul(c, ring_next(c));
		break;
	case K_RLIMIT:
		zero_read(0);
		loops[c->loop](ring_next(c), c->bs, c->bs, 1);
		break;
	}
}

static uint64_t time_ops(struct mcfg *c, unsigned long iters)
{
	uint64_t t0;
	unsigned long i;

	one_op(c);	/* warm: the buffer's cache state as in a stream of reads */
	t0 = bl_now_ns();
	for (i = 0; i < iters; i++)
		one_op(c);
	return BL_MAX(bl_now_ns() - t0, 1);
}

static uint64_t time_ops_cb(void *c, unsigned long iters)
{
	return time_ops(c, iters);
}

static void calibrate(struct mcfg *c, double target_ns)
{
	c->iters = bl_calibrate(time_ops_cb, c, target_ns, 1ul << 30);
}

static void sample(struct mcfg *c, unsigned int rep)
{
	uint64_t t = time_ops(c, c->iters);

	c->v[rep] = c->kind == K_READ0 ? (double)t / c->iters :
		    (double)c->bs * c->iters / t;
}

static struct mcfg *add(enum kind kind, enum fz_loop loop, size_t bs)
{
	struct mcfg *c = &cfgs[ncfgs++];

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->loop = loop;
	c->bs = bs;
	return c;
}

static const char *series(const struct mcfg *c, char *out, size_t len)
{
	switch (c->kind) {
	case K_READ0:
		return "read0";
	case K_REAL:
		return "zero-real";
	case K_ZERO:
		snprintf(out, len, "zero-%s", loop_names[c->loop]);
		return out;
	case K_FZ:
		return "fz";
	case K_LIMIT:
		snprintf(out, len, "limit-%s", loop_names[c->loop]);
		return out;
	case K_CFZ:
		return "cold-fz";
	case K_CLIMIT:
		snprintf(out, len, "cold-%s", loop_names[c->loop]);
		return out;
	case K_RFZ:
		return "ring-fz";
	case K_RLIMIT:
		snprintf(out, len, "ring-%s", loop_names[c->loop]);
		return out;
	}
	return "?";
}

/* Best of the samples: the most GB/s, the fewest ns. */
static double best(const struct mcfg *c, unsigned int reps)
{
	double b = c->v[0];
	unsigned int r;

	for (r = 1; r < reps; r++)
		b = c->kind == K_READ0 ? BL_MIN(b, c->v[r]) : BL_MAX(b, c->v[r]);
	return b;
}

static const struct mcfg *find(enum kind kind, int loop, size_t bs)
{
	unsigned int i;

	for (i = 0; i < ncfgs; i++)
		if (cfgs[i].kind == kind && cfgs[i].bs == bs &&
		    (loop < 0 || cfgs[i].loop == (enum fz_loop)loop))
			return &cfgs[i];
	return NULL;
}

struct opts {
	unsigned int reps;
	double target_ms;
	size_t sizes[MAX_SIZES];
	int nsizes;
	const char *csv;
	long nt_threshold;	/* -1: driver/policy.h's, else the parameter */
};

static void usage(void)
{
	fputs("usage: readmodel [--quick] [--reps N] [--target-ms MS] [--sizes 4K,64K,...] [--csv FILE]\n"
	      "                 [--nt-threshold BYTES]\n"
	      "  /dev/zero's read() measured and emulated, fastzero's emulated with\n"
	      "  driver/policy.h, on this CPU (native userspace). GB/s = 1e9 B/s, best of N.\n"
	      "  --nt-threshold: model the module loaded with nt_threshold=BYTES (0: never),\n"
	      "  as make calibrate's modprobe.d line sets it.\n",
	      stderr);
	exit(2);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ "target-ms", required_argument, NULL, 't' },
		{ "sizes", required_argument, NULL, 's' },
		{ "csv", required_argument, NULL, 'c' },
		{ "nt-threshold", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ },
	};
	bool quick = false;
	int ch, reps = 0;
	size_t thr;
	double target = 0;

	memset(o, 0, sizeof(*o));
	o->nt_threshold = -1;
	while ((ch = getopt_long(argc, argv, "qr:t:s:c:n:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'q': quick = true; break;
		case 'r': reps = atoi(optarg); break;
		case 't': target = atof(optarg); break;
		case 's':
			o->nsizes = bl_parse_size_list(optarg, o->sizes, MAX_SIZES);
			if (o->nsizes <= 0)
				usage();
			break;
		case 'c': o->csv = optarg; break;
		case 'n':
			if (bl_parse_size(optarg, &thr))
				usage();
			o->nt_threshold = (long)thr;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	o->reps = reps > 0 ? (unsigned int)BL_MIN(reps, BL_MAX_REPS) : quick ? 5 : 7;
	o->target_ms = target > 0 ? target : quick ? 10 : 30;
	if (!o->nsizes)
		o->nsizes = bl_parse_size_list("4K,64K,1M,4M,16M,64M", o->sizes,
					       MAX_SIZES);
}

static void run(const struct opts *o)
{
	unsigned int r, k, i;

	for (i = 0; i < ncfgs; i++)
		calibrate(&cfgs[i], o->target_ms * 1e6);
	for (r = 0; r < o->reps; r++) {
		bl_progress(r + 1, o->reps, "readmodel: %u configurations", ncfgs);
		for (k = 0; k < ncfgs; k++) {
			i = (k + r * 7) % ncfgs;
			if (r & 1)
				i = ncfgs - 1 - i;
			sample(&cfgs[i], r);
		}
	}
}

/* The candidate whose emulation misses the real /dev/zero least (max |error|). */
static enum fz_loop match(const struct opts *o, double *worst)
{
	enum fz_loop pick = zero_loops[0];
	unsigned int l;
	int s;

	*worst = INFINITY;
	for (l = 0; l < BL_ARRAY_SIZE(zero_loops); l++) {
		double w = 0;

		printf("# /dev/zero model with %-9s:", loop_names[zero_loops[l]]);
		for (s = 0; s < o->nsizes; s++) {
			double real = best(find(K_REAL, -1, o->sizes[s]), o->reps);
			double em = best(find(K_ZERO, zero_loops[l], o->sizes[s]), o->reps);
			double e = 100 * (em - real) / real;
			char p[16];

			printf(" %s %+.1f%%", bl_fmt_size(o->sizes[s], p, sizeof(p)), e);
			w = BL_MAX(w, fabs(e));
		}
		printf("  (max %.1f%%)\n", w);
		if (w < *worst) {
			*worst = w;
			pick = zero_loops[l];
		}
	}
	return pick;
}

/* The targets for a block size: ratio to /dev/zero, share of the limit. */
static double target_ratio(size_t bs)
{
	if (bs <= 4096)
		return 0.97;
	if (bs >= (64u << 20))
		return 3.0;
	if (bs == (1u << 20))
		return 1.4;
	return 0;
}

static void report(const struct opts *o, enum fz_loop zl, double worst)
{
	int s;

	printf("%-5s %9s %9s %7s %9s %6s %9s %-9s %7s %8s %7s  %s\n", "bs",
	       "zero", "zero-mdl", "err", "fz", "ratio", "limit", "(loop)",
	       "fz/lim", "ext-max", "ext/rd", "verdict");
	for (s = 0; s < o->nsizes; s++) {
		size_t bs = o->sizes[s];
		double real = best(find(K_REAL, -1, bs), o->reps);
		double zm = best(find(K_ZERO, zl, bs), o->reps);
		const struct mcfg *f = find(K_FZ, -1, bs);
		double fc = best(f, o->reps);
		double err = 100 * (zm - real) / real, lim = 0, tr = target_ratio(bs);
		enum fz_loop ll = limit_loops[0];
		char p[16], verdict[160];
		unsigned int l;

		for (l = 0; l < BL_ARRAY_SIZE(limit_loops); l++) {
			const struct mcfg *m = find(K_LIMIT, limit_loops[l], bs);
			double v = m ? best(m, o->reps) : 0;

			if (v > lim) {
				lim = v;
				ll = limit_loops[l];
			}
		}
		if (fabs(err) > MISS_PCT)
			snprintf(verdict, sizeof(verdict), "NO CLAIM: the /dev/zero model misses by %.0f%%",
				 err);
		else
			snprintf(verdict, sizeof(verdict), "%.2fx /dev/zero%s%s, %.1f%% of the limit (%s)",
				 fc / zm, tr ? (fc / zm >= tr ? ", target met" : ", TARGET MISSED") : "",
				 tr ? (tr >= 3 ? " (>= 3x)" : tr >= 1.4 ? " (>= 1.4x)" : " (>= 0.97x)") : "",
				 100 * fc / lim, fc / lim >= 0.95 ? ">= 95%: met" : "< 95%: MISSED");
		printf("%-5s %9.2f %9.2f %+6.1f%% %9.2f %5.2fx %9.2f %-9s %6.0f%% %6.2fms %7.1f  %s\n",
		       bl_fmt_size(bs, p, sizeof(p)), real, zm, err, fc, fc / zm,
		       lim, loop_names[ll], 100 * fc / lim,
		       f->max_extent_ns ? f->max_extent_ns / 1e6 : bs / fc / 1e6,
		       f->reads ? (double)f->extents / f->reads : 0, verdict);
	}
	printf("# GB/s, best of %u interleaved; ratio = fastzero model / /dev/zero model; limit = zero-byte read() + the fastest single clear of bs by any store this CPU has\n",
	       o->reps);
	if (worst > MISS_PCT)
		printf("# the /dev/zero model misses by up to %.0f%%: rows beyond %.0f%% carry no claim\n",
		       worst, MISS_PCT);
}

/* Every store at every bs, both patterns; then fastzero in the cold one. */
static void report_stores(const struct opts *o)
{
	unsigned int l;
	int s;
	char p[16];

	printf("\n# every store, GB/s (best of %u): reused buffer (dd's pattern) / cold destination (reads moving through %lu GiB)\n",
	       o->reps, COLD_REGION >> 30);
	printf("%-5s", "bs");
	for (l = 0; l < BL_ARRAY_SIZE(limit_loops); l++)
		if (find(K_LIMIT, limit_loops[l], o->sizes[0]))
			printf(" %17s", loop_names[limit_loops[l]]);
	printf("  %9s %9s %-9s %7s\n", "cold-fz", "cold-lim", "(loop)", "fz/lim");
	for (s = 0; s < o->nsizes; s++) {
		size_t bs = o->sizes[s];
		double fc = best(find(K_CFZ, -1, bs), o->reps), lim = 0;
		enum fz_loop ll = limit_loops[0];

		printf("%-5s", bl_fmt_size(bs, p, sizeof(p)));
		for (l = 0; l < BL_ARRAY_SIZE(limit_loops); l++) {
			const struct mcfg *w = find(K_LIMIT, limit_loops[l], bs);
			const struct mcfg *c = find(K_CLIMIT, limit_loops[l], bs);
			char cell[32];

			if (!w || !c)
				continue;
			snprintf(cell, sizeof(cell), "%.2f / %.2f", best(w, o->reps),
				 best(c, o->reps));
			printf(" %17s", cell);
			if (best(c, o->reps) > lim) {
				lim = best(c, o->reps);
				ll = limit_loops[l];
			}
		}
		printf("  %9.2f %9.2f %-9s %6.0f%%\n", fc, lim, loop_names[ll],
		       100 * fc / lim);
	}
}

/* The ring: fastzero against the patched variant and the cold store. */
static void report_ring(const struct opts *o)
{
	enum fz_loop cl = cold_loop == FZ_LOOP_AUTO ? variant : (enum fz_loop)cold_loop;
	int s;
	char p[16], q[16];

	printf("\n# a ring of slots (reads moving on through a buffer that wraps), GB/s (best of %u)\n",
	       o->reps);
	printf("%-5s %7s %9s %9s %9s %7s\n", "bs", "ring", "ring-fz",
	       loop_names[variant], loop_names[cl], "fz/best");
	for (s = 0; s < o->nsizes; s++) {
		size_t bs = o->sizes[s];
		double f = best(find(K_RFZ, -1, bs), o->reps);
		double v = best(find(K_RLIMIT, variant, bs), o->reps);
		double c = best(find(K_RLIMIT, cl, bs), o->reps);

		printf("%-5s %7s %9.2f %9.2f %9.2f %6.0f%%\n",
		       bl_fmt_size(bs, p, sizeof(p)),
		       bl_fmt_size(ring_size(bs), q, sizeof(q)), f, v, c,
		       100 * f / BL_MAX(v, c));
	}
}

static void write_csv(const struct opts *o, enum fz_loop zl, double worst)
{
	struct bl_report rep = { .tool = "readmodel", .mode = "native-model" };
	char name[BL_NAME_LEN], p[16];
	unsigned int i;

	for (i = 0; i < ncfgs; i++) {
		const struct mcfg *c = &cfgs[i];

		bl_add(&rep, "model", c->kind == K_READ0 ? "0" : bl_fmt_size(c->bs, p, sizeof(p)),
		       series(c, name, sizeof(name)),
		       c->kind == K_READ0 ? "ns" : "GB/s", c->v, o->reps);
	}
	bl_note(&rep, "zero_model_loop", "%s (max error %.1f%%)", loop_names[zl], worst);
	if (bl_write_csv(o->csv, &rep))
		bl_die("writing %s failed", o->csv);
	bl_report_free(&rep);
}

int main(int argc, char **argv)
{
	const char *nt_why, *cold_why;
	char erms[48] = "";
#ifdef __x86_64__
	const char *erms_why;
#endif
	struct utsname un;
	struct opts o;
	size_t maxbs = 0;
	enum fz_loop zl;
	double worst;
	unsigned int l;
	int s;

	parse_opts(argc, argv, &o);
	if (bl_pin_cpu(sched_getcpu()))
		perror("sched_setaffinity");
	zfd = open("/dev/zero", O_RDONLY);
	if (zfd < 0)
		bl_die("/dev/zero: %s", strerror(errno));
	bl_fz_cpu(&cpu);
	variant = fz_policy_variant(&cpu);
#ifdef __x86_64__
	fz_erms_threshold = fz_policy_erms_threshold(&cpu, &erms_why);
	snprintf(erms, sizeof(erms), ", erms_threshold %lu", fz_erms_threshold);
#endif
	nt_threshold = fz_policy_nt_threshold(&cpu, loop_runs(BL_LOOP_COLD, NULL),
					      &nt_why);
	if (o.nt_threshold >= 0) {
		nt_threshold = (unsigned long)o.nt_threshold;
		nt_why = "set by parameter (--nt-threshold)";
	}
	cold_loop = fz_policy_cold_loop(&cpu, loop_runs(BL_LOOP_COLD, NULL), &cold_why);
	for (s = 0; s < o.nsizes; s++)
		maxbs = BL_MAX(maxbs, o.sizes[s]);
	buf = bl_alloc(maxbs, false);
	cold = bl_alloc(COLD_REGION, false);
	ring_bytes = ring_size(maxbs);
	ring = bl_alloc(ring_bytes, false);

	add(K_READ0, 0, 0);
	for (s = 0; s < o.nsizes; s++) {
		add(K_REAL, 0, o.sizes[s]);
		for (l = 0; l < BL_ARRAY_SIZE(zero_loops); l++)
			add(K_ZERO, zero_loops[l], o.sizes[s]);
		add(K_FZ, 0, o.sizes[s]);
		add(K_CFZ, 0, o.sizes[s]);
		add(K_RFZ, 0, o.sizes[s]);
		add(K_RLIMIT, variant, o.sizes[s]);
		if (cold_loop != FZ_LOOP_AUTO && cold_loop != (int)variant)
			add(K_RLIMIT, (enum fz_loop)cold_loop, o.sizes[s]);
		for (l = 0; l < BL_ARRAY_SIZE(limit_loops); l++) {
			if (!loop_runs(limit_loops[l], NULL))
				continue;
			add(K_LIMIT, limit_loops[l], o.sizes[s]);
			add(K_CLIMIT, limit_loops[l], o.sizes[s]);
		}
	}
	run(&o);

	uname(&un);
	printf("# readmodel: HARDWARE MODEL, mode: native userspace, host CPU (%s; %s), kernel %s\n",
	       bl_cpu_model(), bl_cpu_flags(), un.release);
	printf("# zero-byte read() of /dev/zero: %.0f ns (best of %u)\n",
	       best(&cfgs[0], o.reps), o.reps);
	printf("# fastzero model: zero-byte read() + driver/policy.h for this CPU: variant %s%s, nt_threshold %lu (%s); extents: a %lu KiB probe, then %llu ms at the read's own rate, at most %lux the bytes it timed and %lu KiB (every preemption model)\n",
	       loop_names[variant], erms, nt_threshold, nt_why,
	       FZ_EXTENT_PROBE >> 10, FZ_EXTENT_BUDGET_NS / 1000000,
	       FZ_EXTENT_GROWTH, FZ_EXTENT_MAX >> 10);
	printf("# cold store: %s (%s), for reads of %lu bytes and more once a run of reads, each starting where the last ended, has streamed nt_threshold bytes\n",
	       cold_loop == FZ_LOOP_AUTO ? "none" : loop_names[cold_loop], cold_why,
	       FZ_COLD_THRESHOLD);
	zl = match(&o, &worst);
	printf("# /dev/zero model: zero-byte read() + %s in 4 KiB chunks (the best match; max error %.1f%%)\n",
	       loop_names[zl], worst);
	report(&o, zl, worst);
	report_stores(&o);
	report_ring(&o);
	for (l = 0; l < BL_ARRAY_SIZE(limit_loops); l++) {
		const char *why;

		if (!loop_runs(limit_loops[l], &why))
			printf("# %s not measured: %s\n", loop_names[limit_loops[l]], why);
	}
#ifdef __x86_64__
	if (!bl_cpu_has_movdir64b())
		printf("# movdir64b not measured: CPUID 7.0:ECX[28] clear\n");
#endif
	if (o.csv)
		write_csv(&o, zl, worst);
	bl_free(buf, maxbs);
	bl_free(cold, COLD_REGION);
	bl_free(ring, ring_bytes);
	close(zfd);
	return 0;
}
