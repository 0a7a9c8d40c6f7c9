/* SPDX-License-Identifier: GPL-2.0 */
/*
 * benchlib.h - timing, statistics, sizes and result output shared by
 * clearbench (the clear loops in userspace) and fzbench (the devices).
 */
#ifndef _FASTZERO_BENCHLIB_H
#define _FASTZERO_BENCHLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BL_MAX_REPS	64
#define BL_NAME_LEN	32

#define BL_MIN(a, b)	((a) < (b) ? (a) : (b))
#define BL_MAX(a, b)	((a) > (b) ? (a) : (b))
#define BL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bl_now_ns(void);

/**
 * struct bl_stats - summary of the repeated samples of one measurement
 * @med: median
 * @min: smallest sample
 * @max: largest sample
 * @spread_pct: (max - min) / median, in percent
 * @n: number of samples (0: not measured, n/a)
 */
struct bl_stats {
	double med, min, max, spread_pct;
	unsigned int n;
};

void bl_stats(const double *v, unsigned int n, struct bl_stats *st);

/* "4K", "1M", "2G", "512", "64k" (binary units) -> bytes; 0 on success. */
int bl_parse_size(const char *s, size_t *out);
/* Comma-separated list of sizes; returns the count or -1. */
int bl_parse_size_list(const char *s, size_t *out, int max);
/* bytes -> "4K", "64M", "1G", "1536"; exact binary units only. */
const char *bl_fmt_size(size_t v, char *buf, size_t len);

/* Anonymous mapping of @len bytes, every page written once (pre-faulted). */
void *bl_alloc(size_t len, bool thp);
void bl_free(void *p, size_t len);
void bl_prefault(void *p, size_t len);

struct fz_cpu;
/* This CPU as the driver's arch/<arch>/cpu.c sees it (fzcpu.h). */
void bl_fz_cpu(struct fz_cpu *cpu);

/* x86-64's CPUID 7.0:ECX[28]: MOVDIR64B, a 64-byte direct store (not measured: no loop) */
bool bl_cpu_has_movdir64b(void);

/* Pin the calling thread to @cpu (-1: leave it alone); 0 on success. */
int bl_pin_cpu(int cpu);
/* Model name and the clear-related CPU flags, for the report header. */
const char *bl_cpu_model(void);
const char *bl_cpu_flags(void);

/**
 * struct bl_result - one measured configuration
 * @workload: e.g. "read", "matrix-1G", "short"
 * @param: e.g. the block or chunk size, "4K"
 * @series: the thing compared: a device path or a loop name
 * @unit: unit of the samples, e.g. "GB/s"
 * @st: statistics of the samples (st.n == 0: n/a)
 * @ratio: median over the baseline's median, NAN if none
 * @ratio_spread_pct: the ratio's spread (bl_set_ratio()), NAN if none
 * @aux_name: name of an extra per-configuration number ("" if none)
 * @aux: that number (median), e.g. ns per call or page faults
 */
struct bl_result {
	char workload[BL_NAME_LEN];
	char param[BL_NAME_LEN];
	char series[BL_NAME_LEN];
	char unit[12];
	struct bl_stats st;
	double ratio, ratio_spread_pct;
	char aux_name[16];
	double aux;
};

struct bl_note {
	char key[BL_NAME_LEN];
	char val[320];
};

/**
 * struct bl_report - everything one run produced
 * @tool: program name
 * @mode: where it ran: "native", "kvm", "tcg", ...
 */
struct bl_report {
	const char *tool;
	const char *mode;
	struct bl_result *res;
	unsigned int nres, capres;
	struct bl_note *notes;
	unsigned int nnotes, capnotes;
};

struct bl_result *bl_add(struct bl_report *rep, const char *workload,
			 const char *param, const char *series,
			 const char *unit, const double *samples,
			 unsigned int n);
struct bl_result *bl_find(const struct bl_report *rep, const char *workload,
			  const char *param, const char *series);
void bl_note(struct bl_report *rep, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bl_report_free(struct bl_report *rep);

/*
 * @r's ratio to @base and its spread: the two spreads added, the widest
 * the ratio's range can be (to first order); @r itself as the base is 1
 * with no spread.  Left NAN when either has no samples.
 */
void bl_set_ratio(struct bl_result *r, const struct bl_result *base);
/* The ratio's spread exceeds its effect (|ratio - 1|): noise, not a result. */
bool bl_ratio_noise(const struct bl_result *r);

void bl_print_table(FILE *f, const struct bl_report *rep);
int bl_write_csv(const char *path, const struct bl_report *rep);
void bl_write_json(FILE *f, const struct bl_report *rep);

/* Progress line on stderr: "[i/n] text". */
/*
 * The repeat count that makes one sample of @time (nanoseconds for @n
 * repeats of the work @arg describes) last about @target_ns: grow by 8 until
 * a run takes an eighth of it, then scale; at most @max.
 */
unsigned long bl_calibrate(uint64_t (*time)(void *arg, unsigned long n),
			   void *arg, double target_ns, unsigned long max);
void bl_progress(unsigned int i, unsigned int n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bl_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* _FASTZERO_BENCHLIB_H */
