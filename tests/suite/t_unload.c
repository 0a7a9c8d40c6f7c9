// SPDX-License-Identifier: GPL-2.0
/*
 * t_unload - run last: the module unloads under a shared mapping (which
 * holds only its shmem file) and the mapping keeps working; the device node
 * and sysfs directory go away; every parameter refuses a bad value at load
 * time with an error (no oops: the harness checks dmesg); good values given
 * at load are honoured.  Leaves the module unloaded.
 *
 * FZ_KO: the module file for the load tests (default /fastzero.ko).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fztest.h"

#define MAP_LEN		(4 * FZ_MiB)

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
	};
	char path[256], val[64];
	int err = load("chunk_size=65536 shared_huge=never force_variant=unrolled");
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
		fz_report(FZ_SKIP, "insmod_parameters", "no module file at FZ_KO");
		return fz_exit();
	}
	for (i = 0; i < FZ_ARRAY_SIZE(bad); i++)
		fz_run(test_bad_param, bad[i], "insmod_refuses_%s", bad[i]);
	fz_run(test_good_params, NULL, "insmod_parameters_honoured");
	return fz_exit();
}
