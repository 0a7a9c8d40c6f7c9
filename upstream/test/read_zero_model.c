// SPDX-License-Identifier: GPL-2.0
/*
 * read_zero_model - /dev/zero's read() in 4 KiB, timed, and fixed extents, modelled on this CPU.
 *
 * Each model is a zero-byte read() of the host's real /dev/zero (the
 * syscall and VFS cost) plus read_zero()'s clearing loop run in userspace
 * with the kernel's own clear_user() code: rep_stos_alternative() as the
 * base has it ("base", what CPUs without FSRS run), assembled from the
 * source by upstream/series.sh --model (symbol rsa_base), and the inline
 * "rep stosb" that CPUs with FSRS run ("fsrs").  Extents: 4 KiB as the
 * base clears; the extents patch's rule ("ramp": a page, doubling while
 * the last extent took under 1 ms, back to a page after one over 2 ms, at
 * most 32 MiB, CLOCK_MONOTONIC standing in for local_clock()); and fixed
 * extents of 256 KiB, 1 MiB and 32 MiB with no clock read at all.  Beside
 * them, read() of the real /dev/zero.  Every read goes to the start of
 * one prefaulted buffer, as dd's do.  Best of the interleaved samples;
 * ratios against base-4K of the same run.  Mode: native userspace, this
 * CPU.
 *
 * Usage: read_zero_model [-r reps] [-t ms_per_sample] [size ...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"

#define KiB		1024ul
#define MiB		(1024 * KiB)
#define PAGE		(4 * KiB)
#define EXTENT_MAX	(32 * MiB)	/* PROCESS_PAGES_NON_PREEMPT_BATCH pages */
#define EXTENT_NSEC	2000000ull	/* ZERO_EXTENT_NSEC */
#define MAX_REPS	32
#define MAX_SIZES	8

extern char rsa_base[];

enum clear { C_BASE, C_FSRS, C_NR };
enum ext { E_4K, E_RAMP, E_256K, E_1M, E_32M, E_NR };
static const char *const clear_names[] = { "base", "fsrs" };
static const char *const ext_names[] = { "4K", "ramp", "256K", "1M", "32M" };
static const size_t ext_start[] = { PAGE, PAGE, 256 * KiB, MiB, EXTENT_MAX };

struct model {
	int real;		/* read() of /dev/zero itself */
	enum clear clear;
	enum ext ext;
	size_t bs;
	unsigned long iters, extents, reads;
	uint64_t max_ns;
	double gbs[MAX_REPS];
};

static int zfd;
static char *buf;

static void zero_read(size_t n)
{
	if (read(zfd, buf, n) != (ssize_t)n)
		bl_die("read /dev/zero: %s", strerror(errno));
}

/* clear_user() without FSRS: call rep_stos_alternative (rcx, rdi, rax = 0). */
static void rsa(char *fn, char *dst, unsigned long n)
{
	asm volatile("call *%[fn]"
		     : "+c" (n), "+D" (dst)
		     : [fn] "r" (fn), "a" (0)
		     : "memory", "cc");
}

/* clear_user() with FSRS: one inline rep stosb. */
static void stosb(char *dst, unsigned long n)
{
	asm volatile("rep stosb" : "+c" (n), "+D" (dst) : "a" (0) : "memory");
}

static void clear(enum clear c, char *dst, size_t n)
{
	if (c == C_FSRS)
		stosb(dst, n);
	else
		rsa(rsa_base, dst, n);
}

/* The extents patch's zero_next_extent(). */
static size_t next_extent(size_t extent, uint64_t start, struct model *m)
{
	uint64_t took = bl_now_ns() - start;

	if (took > m->max_ns)
		m->max_ns = took;
	if (took > EXTENT_NSEC)
		return PAGE;
	if (took < EXTENT_NSEC / 2)
		return extent * 2 < EXTENT_MAX ? extent * 2 : EXTENT_MAX;
	return extent;
}

/* read_zero() of m->bs bytes in the extents of m->ext. */
static void one_read(struct model *m)
{
	size_t done = 0, extent = ext_start[m->ext];

	if (m->real) {
		zero_read(m->bs);
		return;
	}
	zero_read(0);
	while (done < m->bs) {
		size_t chunk = m->bs - done < extent ? m->bs - done : extent;
		int more = chunk < m->bs - done;
		uint64_t start = more && m->ext == E_RAMP ? bl_now_ns() : 0;

		clear(m->clear, buf + done, chunk);
		done += chunk;
		m->extents++;
		if (start)
			extent = next_extent(extent, start, m);
	}
	m->reads++;
}

static uint64_t time_reads(struct model *m, unsigned long n)
{
	uint64_t t0;
	unsigned long i;

	one_read(m);
	t0 = bl_now_ns();
	for (i = 0; i < n; i++)
		one_read(m);
	return bl_now_ns() - t0 + 1;
}

/* The best of a model's @reps samples, GB/s. */
static double best(const struct model *m, unsigned int reps)
{
	double b = 0;
	unsigned int r;

	for (r = 0; r < reps; r++)
		b = m->gbs[r] > b ? m->gbs[r] : b;
	return b;
}

static uint64_t time_reads_cb(void *m, unsigned long n)
{
	return time_reads(m, n);
}

int main(int argc, char **argv)
{
	static const size_t def_sizes[] = { 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1024 * MiB };
	static struct model ms[MAX_SIZES * (1 + C_NR * E_NR)];
	size_t sizes[MAX_SIZES], maxbs = 0;
	unsigned int reps = 9, nsizes = 0, nm = 0, i, r;
	double base = 0;
	double target_ms = 50;
	int opt;

	while ((opt = getopt(argc, argv, "r:t:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 't')
			target_ms = atof(optarg);
		else
			return fprintf(stderr, "usage: read_zero_model [-r reps] [-t ms] [size_KiB ...]\n"), 2;
	}
	if (reps < 1 || reps > MAX_REPS)
		reps = 9;
	for (; optind < argc && nsizes < MAX_SIZES; optind++)
		sizes[nsizes++] = strtoul(argv[optind], NULL, 0) * KiB;
	if (!nsizes)
		for (; nsizes < sizeof(def_sizes) / sizeof(def_sizes[0]); nsizes++)
			sizes[nsizes] = def_sizes[nsizes];
	for (i = 0; i < nsizes; i++)
		maxbs = sizes[i] > maxbs ? sizes[i] : maxbs;

	zfd = open("/dev/zero", O_RDONLY);
	if (zfd < 0)
		bl_die("open /dev/zero: %s", strerror(errno));
	buf = mmap(NULL, maxbs, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		bl_die("mmap: %s", strerror(errno));
	memset(buf, 1, maxbs);

	for (i = 0; i < nsizes; i++) {
		ms[nm++] = (struct model){ .real = 1, .bs = sizes[i] };
		for (int c = 0; c < C_NR; c++)
			for (int e = 0; e < E_NR; e++)
				ms[nm++] = (struct model){ .clear = c, .ext = e, .bs = sizes[i] };
	}
	for (i = 0; i < nm; i++)	/* reads per sample: about target_ms */
		ms[i].iters = bl_calibrate(time_reads_cb, &ms[i], target_ms * 1e6, 1ul << 20);
	for (r = 0; r < reps; r++)
		for (i = 0; i < nm; i++) {
			struct model *m = &ms[i];

			m->gbs[r] = (double)m->bs * m->iters / time_reads(m, m->iters);
		}

	printf("# read_zero_model: /dev/zero's read() modelled with the kernel's clear_user() code; mode native userspace; best of %u interleaved samples of ~%.0f ms; GB/s = 1e9 B/s\n",
	       reps, target_ms);
	printf("%-10s %-10s %9s %8s %9s %12s\n", "bytes", "model", "GB/s", "x base", "extents", "longest_ms");
	for (i = 0; i < nm; i++) {
		struct model *m = &ms[i];
		double b = 0;
		char name[32];

		b = best(m, reps);
		/* a size's rows: real, then base-4K ("x base"'s 1), then the rest */
		if (m->real)
			base = best(&ms[i + 1], reps);
		if (m->real)
			snprintf(name, sizeof(name), "real");
		else
			snprintf(name, sizeof(name), "%s-%s", clear_names[m->clear], ext_names[m->ext]);
		printf("%-10zu %-10s %9.2f %8.2f", m->bs, name, b, b / base);
		if (m->reads)
			printf(" %9.1f %12.3f", (double)m->extents / m->reads, m->max_ns / 1e6);
		printf("\n");
	}
	return 0;
}
