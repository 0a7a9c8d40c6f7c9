// SPDX-License-Identifier: GPL-2.0
/*
 * t_unload - run last: the module unloads under a shared mapping (which
 * holds only its shmem file) and the mapping keeps working; the device node
 * and sysfs directory go away; every parameter refuses a bad value at load
 * time with an error (no oops: the harness checks dmesg); good values given
 * at load are honoured; the module reloads a hundred times while threads
 * open, read, map and close the device, and rmmod succeeds only once
 * nothing holds it.  Leaves the module unloaded.
 *
 * FZ_KO: the module file for the load tests (default /fastzero.ko).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fztest.h"

#define MAP_LEN		(4 * FZ_MiB)
#define RELOADS		100
#define RACERS		2

static const char *ko_path;

/* Load the module with @params: 0, or -errno. */
static int load(const char *params)
{
	int fd = open(ko_path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	return ret;
}

static int loaded(void)
{
	struct stat st;

	return !stat(FZ_PARAMS, &st);
}

static int test_unload_mapped(const void *arg, char *why)
{
	unsigned char *p;
	int fd, ret = FZ_PASS;

	(void)arg;
	fd = open(fz_dev_path, O_RDWR);
	if (fd < 0)
		return fz_fail(why, "open %s: %s", fz_dev_path, strerror(errno));
	p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	memset(p, 0x5a, MAP_LEN / 2);
	if (fz_delete_module("fastzero", O_NONBLOCK))
		ret = fz_fail(why, "delete_module with only a shared mapping left: %s",
			      strerrorname_np(errno));
	else if (check_byte(p, MAP_LEN / 2, 0x5a, why) ||
		 check_zero(p + MAP_LEN / 2, MAP_LEN / 2, why))
		ret = FZ_FAIL;
	memset(p, 0x33, MAP_LEN);
	if (ret == FZ_PASS && check_byte(p, MAP_LEN, 0x33, why))
		ret = FZ_FAIL;
	munmap(p, MAP_LEN);
	return ret;
}

static int test_gone(const void *arg, char *why)
{
	const char *path = arg;
	struct stat st;
	int fd;

	if (stat(path, &st))
		return errno == ENOENT ? FZ_PASS :
		       fz_fail(why, "stat %s: %s", path, strerror(errno));
	/* a static node may remain; it must not open a device any more */
	if (S_ISCHR(st.st_mode)) {
		fd = open(path, O_RDONLY);
		if (fd < 0 && (errno == ENXIO || errno == ENODEV))
			return FZ_PASS;
		if (fd >= 0)
			close(fd);
		return fz_fail(why, "%s still opens", path);
	}
	return fz_fail(why, "%s still exists", path);
}

/* A load with @arg as its parameters must fail and leave nothing loaded. */
static int test_bad_param(const void *arg, char *why)
{
	int err = load(arg);

	if (!err) {
		fz_delete_module("fastzero", O_NONBLOCK);
		return fz_fail(why, "insmod %s succeeded", (const char *)arg);
	}
	if (err != -EINVAL && err != -ERANGE)
		return fz_fail(why, "insmod %s: %s, expected EINVAL or ERANGE",
			       (const char *)arg, strerror(-err));
	return loaded() ? fz_fail(why, "module present after a failed load") :
			  FZ_PASS;
}

/* Values given at load (modprobe.d options) read back, then unload. */
static int test_good_params(const void *arg, char *why)
{
	static const char *const want[][2] = {
		{ "chunk_size", "65536" },
		{ "shared_huge", "never" },
		{ "force_variant", "unrolled" },
		{ "erms_threshold", "1024" },
		{ "erms_threshold_reason", "set by parameter" },
		{ "nt_threshold", "0" },
		{ "nt_threshold_reason", "set by parameter" },
	};
	char path[256], val[64];
	int err = load("chunk_size=65536 shared_huge=never force_variant=unrolled erms_threshold=1024 nt_threshold=0");
	int ret = FZ_PASS;
	size_t i;

	(void)arg;
	if (err)
		return fz_fail(why, "insmod: %s", strerror(-err));
	for (i = 0; i < FZ_ARRAY_SIZE(want) && ret == FZ_PASS; i++) {
		snprintf(path, sizeof(path), FZ_PARAMS "/%s", want[i][0]);
		if (fz_read_file(path, val, sizeof(val)))
			ret = fz_fail(why, "cannot read %s", path);
		else if (strcmp(val, want[i][1]))
			ret = fz_fail(why, "%s is \"%s\", expected \"%s\"",
				      want[i][0], val, want[i][1]);
	}
	if (fz_delete_module("fastzero", O_NONBLOCK) && ret == FZ_PASS)
		ret = fz_fail(why, "delete_module: %s", strerrorname_np(errno));
	return ret;
}

struct racer {
	pthread_t tid;
	volatile int stop;
	unsigned long uses;
	char why[FZ_WHYLEN];
	unsigned char buf[64 * 1024];
};

/* One use of the device: open, read, map shared or private, touch, close. */
static int use_device(unsigned long n, unsigned char *buf, size_t len,
		      char *why)
{
	int flags = n & 1 ? MAP_SHARED : MAP_PRIVATE;
	unsigned char *p;
	ssize_t got;
	int fd;

	fd = open(fz_dev_path, O_RDWR);
	if (fd < 0)	/* unloaded: the node is gone or no longer opens */
		return errno == ENOENT || errno == ENXIO || errno == ENODEV ? 0 :
		       fz_fail(why, "open: %s", strerrorname_np(errno));
	memset(buf, 0xa5, len);
	got = read(fd, buf, len);
	if (got != (ssize_t)len || check_zero(buf, len, why)) {
		close(fd);
		return got == (ssize_t)len ? FZ_FAIL :
		       fz_fail(why, "read returned %zd", got);
	}
	p = mmap(NULL, 2 * FZ_MiB, PROT_READ | PROT_WRITE, flags, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerrorname_np(errno));
	/* the mapping keeps working if the module goes away meanwhile */
	p[4096] = 7;
	if (check_zero(p, 4096, why))
		got = FZ_FAIL;
	else if (p[4096] != 7)
		got = fz_fail(why, "a write to the mapping was lost");
	else
		got = 0;
	munmap(p, 2 * FZ_MiB);
	return got;
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;

	while (!r->stop)
		if (use_device(r->uses++, r->buf, sizeof(r->buf), r->why))
			break;
	return NULL;
}

/*
 * Load, race users against rmmod until rmmod succeeds (it may fail with
 * EBUSY/EAGAIN only: somebody holds the device), a hundred times.
 */
static int test_reload_races(const void *arg, char *why)
{
	static struct racer r[RACERS];
	unsigned long busy = 0, uses = 0;
	int i, k, err, ret = FZ_PASS;
	double until;

	(void)arg;
	for (i = 0; i < RELOADS && ret == FZ_PASS; i++) {
		err = load("");
		if (err)
			return fz_fail(why, "reload %d: insmod: %s", i, strerror(-err));
		memset(r, 0, sizeof(r));
		for (k = 0; k < RACERS; k++)
			pthread_create(&r[k].tid, NULL, racer_main, &r[k]);
		until = fz_now() + 2;
		while (fz_delete_module("fastzero", O_NONBLOCK)) {
			if (errno != EBUSY && errno != EAGAIN) {
				ret = fz_fail(why, "reload %d: delete_module: %s", i,
					      strerrorname_np(errno));
				break;
			}
			busy++;
			if (fz_now() > until)	/* stop the users: it must go now */
				for (k = 0; k < RACERS; k++)
					r[k].stop = 1;
			usleep(200);
		}
		for (k = 0; k < RACERS; k++) {
			r[k].stop = 1;
			pthread_join(r[k].tid, NULL);
			uses += r[k].uses;
			if (r[k].why[0] && ret == FZ_PASS)
				ret = fz_fail(why, "reload %d: %s", i, r[k].why);
		}
		if (ret == FZ_PASS && loaded())
			ret = fz_fail(why, "reload %d: module still present", i);
	}
	fz_diag("  %d reloads, %lu device uses raced against rmmod, %lu rmmod refusals",
		i, uses, busy);
	return ret;
}

int main(int argc, char **argv)
{
	static const char *const bad[] = {
		"clear_user_variant=erms", "chunk_size=4095", "chunk_size=abc",
		"force_variant=bogus", "shared_huge=bogus", "shared_huge=deny",
		"nt_threshold=abc", "erms_threshold=-1",
	};
	struct stat st;
	size_t i;

	fz_init(argc, argv);
	if (!fz_module) {
		fz_report(FZ_SKIP, "rmmod", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	ko_path = getenv("FZ_KO");
	if (!ko_path || !*ko_path)
		ko_path = "/fastzero.ko";

	fz_run(test_unload_mapped, NULL, "rmmod_succeeds_under_shared_mapping");
	fz_run(test_gone, fz_dev_path, "device_node_gone");
	fz_run(test_gone, "/sys/module/fastzero", "sysfs_dir_gone");

	if (stat(ko_path, &st)) {
		char why[FZ_WHYLEN];

		/* The harness puts it at /fastzero.ko; elsewhere FZ_KO names it. */
		snprintf(why, sizeof(why), "no module file %s (FZ_KO): %s",
			 ko_path, strerror(errno));
		fz_report(FZ_FAIL, "insmod_parameters", why);
		return fz_exit();
	}
	for (i = 0; i < FZ_ARRAY_SIZE(bad); i++)
		fz_run(test_bad_param, bad[i], "insmod_refuses_%s", bad[i]);
	fz_run(test_good_params, NULL, "insmod_parameters_honoured");
	fz_run(test_reload_races, NULL, "reload_100_times_racing_users");
	return fz_exit();
}
