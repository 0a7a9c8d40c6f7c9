// SPDX-License-Identifier: GPL-2.0
/*
 * t_memcg - MAP_SHARED memory of the device is charged to the caller's
 * memory cgroup, and exceeding memory.max ends the process, not the kernel.
 * Differential: /dev/zero's shmem object is charged the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fztest.h"

#define CG_TEST		"/sys/fs/cgroup/fz_memcg"
#define CHARGE_LEN	(64 * FZ_MiB)
#define LIMIT		(32 * FZ_MiB)
#define OVER_LEN	(128 * FZ_MiB)

static int dev, ref;

static int cg_setup(char *why)
{
	return fz_memcg_create(CG_TEST, why);
}

/*
 * In a child inside the test cgroup: map @len bytes of @fd shared, touch
 * every page, report the cgroup's memory.current through @pipefd, exit.
 */
static void child_touch(int fd, size_t len, int pipefd)
{
	char pid[32];
	unsigned char *p;
	long cur;
	size_t i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (fz_write_file(CG_TEST "/cgroup.procs", pid))
		_exit(2);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		_exit(3);
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	cur = fz_file_long(CG_TEST "/memory.current", NULL);
	if (write(pipefd, &cur, sizeof(cur)) != sizeof(cur))
		_exit(4);
	_exit(0);
}

/* Run child_touch(); returns its wait status, *charged = memory.current. */
static int run_child(int fd, size_t len, long *charged)
{
	int pipefd[2], status;
	pid_t pid;

	*charged = -1;
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		child_touch(fd, len, pipefd[1]);
	}
	close(pipefd[1]);
	if (read(pipefd[0], charged, sizeof(*charged)) != sizeof(*charged))
		*charged = -1;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return status;
}

static int test_charged(const void *arg, char *why)
{
	int fd = *(const int *)arg;
	long charged;
	int status, ret = cg_setup(why);

	if (ret != FZ_PASS)
		return ret;
	fz_write_file(CG_TEST "/memory.max", "max");
	status = run_child(fd, CHARGE_LEN, &charged);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fz_fail(why, "child failed (status 0x%x)", status);
	if (charged < (long)(CHARGE_LEN * 9 / 10))
		return fz_fail(why, "memory.current %ld after touching %lu bytes",
			       charged, CHARGE_LEN);
	return FZ_PASS;
}

/*
 * The memcg OOM report that the over-limit test provokes carries a stack
 * dump; kernel log markers around it let the harness's dmesg check skip it.
 */
static int test_over_limit(const void *arg, char *why)
{
	int fd = *(const int *)arg;
	long charged, ooms;
	int status, ret = cg_setup(why);

	if (ret != FZ_PASS)
		return ret;
	/* t_swap left swap on: none for this cgroup (no file: not accounted). */
	ret = fz_memcg_limit(CG_TEST, LIMIT, "0", why);
	if (ret != FZ_PASS)
		return ret;
	ooms = fz_file_long(CG_TEST "/memory.events", "oom_kill ");
	fz_kmsg("expected-oom-begin");
	status = run_child(fd, OVER_LEN, &charged);
	fz_kmsg("expected-oom-end");
	fz_write_file(CG_TEST "/memory.max", "max");
	if (WIFEXITED(status))
		return fz_fail(why, "child touched %lu bytes over a %lu limit and exited %d",
			       OVER_LEN, LIMIT, WEXITSTATUS(status));
	if (WTERMSIG(status) != SIGKILL && WTERMSIG(status) != SIGBUS)
		return fz_fail(why, "child died of signal %d, expected SIGKILL or SIGBUS",
			       WTERMSIG(status));
	if (WTERMSIG(status) == SIGKILL &&
	    fz_file_long(CG_TEST "/memory.events", "oom_kill ") <= ooms)
		return fz_fail(why, "SIGKILL without a memcg oom_kill event");
	return FZ_PASS;
}

int main(int argc, char **argv)
{
	char why[FZ_WHYLEN];
	int root;

	fz_setup(argc, argv, &dev, &ref);
	root = fz_need_root(why);
	if (root != FZ_PASS) {
		fz_report(root, "memcg", why);
	} else {
		fz_run(test_charged, &ref, "reference_shared_charged_to_memcg");
		fz_run(test_charged, &dev, "device_shared_charged_to_memcg");
		fz_run(test_over_limit, &ref,
		       "reference_shared_over_memory_max_killed");
		fz_run(test_over_limit, &dev, "device_shared_over_memory_max_killed");
		rmdir(CG_TEST);
	}
	return fz_exit();
}
