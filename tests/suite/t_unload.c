// SPDX-License-Identifier: GPL-2.0
/*
 * t_unload - run last: with no descriptor or mapping left, the module must
 * unload, and the device node and sysfs directory must go away.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fztest.h"

static int test_unload(const void *arg, char *why)
{
	(void)arg;
	if (fz_delete_module("fastzero", O_NONBLOCK))
		return fz_fail(why, "delete_module: %s", strerrorname_np(errno));
	return FZ_PASS;
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

int main(int argc, char **argv)
{
	fz_init(argc, argv);
	if (!fz_module) {
		fz_report(FZ_SKIP, "rmmod", "module tests disabled (FZ_MODULE=0)");
		return fz_exit();
	}
	fz_run(test_unload, NULL, "rmmod_succeeds_when_unused");
	fz_run(test_gone, fz_dev_path, "device_node_gone");
	fz_run(test_gone, "/sys/module/fastzero", "sysfs_dir_gone");
	return fz_exit();
}
