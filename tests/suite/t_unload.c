// SPDX-License-Identifier: GPL-2.0
/*
 * t_unload - run last: the module unloads under a shared mapping (which
 * holds only its shmem file) and the mapping keeps working; it unloads
 * while pipes hold data spliced from the device, and those pipes are then
 * read, tee()d, spliced to sockets, closed and read by another process
 * (SCM_RIGHTS) without touching module memory; the device node
 * and sysfs directory go away; every parameter refuses a bad value at load
 * time with an error (no oops: the harness checks dmesg); good values given
 * at load are honoured; the module reloads a hundred times (quick runs:
 * 25) while threads open, read, map and close the device, and rmmod
 * succeeds only once nothing holds it.  Leaves the module unloaded.
 *
 * FZ_KO: the module file for the load tests (default /fastzero.ko).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fztest.h"

#define MAP_LEN		(4 * FZ_MiB)
/* a quarter in quick runs: a reload is over a second on a KASAN kernel */
#define RELOADS		(fz_quick ? 25 : 100)
#define RACERS		2

static const char *ko_path;

static int loaded(void)
{
	struct stat st;

	return !stat(FZ_PARAMS, &st);
}

/*
 * A shared mapping holds only its shmem file: the module unloads under it.
 * With shared_clear=driver the mapping's vm_ops are the module's, so the
 * module stays until the mapping goes.
 */
static int driver_mode;

static int test_unload_mapped(const void *arg, char *why)
{
	unsigned char *p;
	int fd, gone, ret = FZ_PASS;

	(void)arg;
	fd = open(fz_dev_path, O_RDWR);
	if (fd < 0)
		return fz_fail(why, "open %s: %s", fz_dev_path, strerror(errno));
	p = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fz_fail(why, "mmap: %s", strerror(errno));
	memset(p, 0x5a, MAP_LEN / 2);
	gone = !fz_delete_module("fastzero", O_NONBLOCK);
	if (gone == driver_mode) {
		if (driver_mode)
			ret = fz_fail(why, "delete_module succeeded under a shared_clear=driver mapping");
		else
			ret = fz_fail(why, "delete_module with only a shared mapping left: %s",
				      strerrorname_np(errno));
	} else if (check_byte(p, MAP_LEN / 2, 0x5a, why) ||
		   check_zero(p + MAP_LEN / 2, MAP_LEN / 2, why)) {
		ret = FZ_FAIL;
	}
	memset(p, 0x33, MAP_LEN);
	if (ret == FZ_PASS && check_byte(p, MAP_LEN, 0x33, why))
		ret = FZ_FAIL;
	munmap(p, MAP_LEN);
	if (driver_mode && fz_delete_module("fastzero", O_NONBLOCK) && ret == FZ_PASS)
		ret = fz_fail(why, "delete_module after the last driver-mode mapping went: %s",
			      strerrorname_np(errno));
	return ret;
}

/* ---- pipe buffers that outlive the module ---- */

/* Spliced into a 256 KiB pipe: more than one buffer of any size. */
#define SPLICED		(128 * FZ_KiB + 4097)

enum drain { D_READ, D_TEE, D_UNIX, D_TCP, D_CLOSE, D_SCM_RIGHTS };

/* Read exactly @n bytes from @fd and check they are zero; then EOF or empty. */
static int drain_zeros(int fd, size_t n, char *why)
{
	static unsigned char buf[SPLICED];
	size_t got = 0;
	int left = 0;
	ssize_t r;

	memset(buf, 0xa5, sizeof(buf));
	while (got < n) {
		r = read(fd, buf + got, n - got);
		if (r <= 0)
			return fz_fail(why, "read %zu of %zu bytes, then %zd (%s)",
				       got, n, r, r ? strerror(errno) : "EOF");
		got += r;
	}
	if (ioctl(fd, FIONREAD, &left) == 0 && left)
		return fz_fail(why, "%d bytes more than were spliced", left);
	return check_zero(buf, n, why) ? FZ_FAIL : FZ_PASS;
}

/* Send @fd over the AF_UNIX socket @sock (SCM_RIGHTS); 0 or -1. */
static int send_fd(int sock, int fd)
{
	char data = 'p', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &data, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char data, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The other process of D_SCM_RIGHTS: receives the pipe's read end, waits
 * until the module is gone, drains it.  Exit status 0: zeros, all of them.
 */
static void scm_child(int sock)
{
	char why[FZ_WHYLEN], go;
	int fd = recv_fd(sock);

	if (fd < 0 || read(sock, &go, 1) != 1)
		_exit(2);
	if (drain_zeros(fd, SPLICED, why)) {
		fprintf(stderr, "# scm_rights child: %s\n", why);
		_exit(1);
	}
	_exit(0);
}

/* Hand the pipe's read end @rd to consumer @d, after the unload. */
static int drain(enum drain d, int rd, char *why)
{
	int q[2], err, ret;
	ssize_t n;

	switch (d) {
	case D_READ:
		return drain_zeros(rd, SPLICED, why);
	case D_TEE:
		if (pipe(q) || fcntl(q[1], F_SETPIPE_SZ, 256 * FZ_KiB) < 0)
			return fz_fail(why, "pipe: %s", strerror(errno));
		n = tee(rd, q[1], SPLICED, 0);
		ret = n == (ssize_t)SPLICED ? FZ_PASS :
		      fz_fail(why, "tee returned %zd (%s)", n, strerror(errno));
		close(q[1]);
		if (ret == FZ_PASS)
			ret = drain_zeros(q[0], SPLICED, why);
		if (ret == FZ_PASS)
			ret = drain_zeros(rd, SPLICED, why);
		close(q[0]);
		return ret;
	case D_UNIX:
	case D_TCP:
		err = fz_sock_pair(d == D_TCP, q);
		if (err)
			return fz_fail(why, "socket pair: %s", strerror(-err));
		for (n = 0, ret = 0; n < (ssize_t)SPLICED && ret >= 0; n += ret)
			ret = splice(rd, NULL, q[1], NULL, SPLICED - n, 0);
		ret = n == (ssize_t)SPLICED ? drain_zeros(q[0], SPLICED, why) :
		      fz_fail(why, "splice to the socket moved %zd bytes (%s)",
			      n, strerror(errno));
		close(q[0]);
		close(q[1]);
		return ret;
	default:	/* D_CLOSE: the caller's close() releases the buffers */
		return FZ_PASS;
	}
}

/*
 * Splice SPLICED bytes of the device into a pipe, close the device and
 * unload the module (nothing holds it: it must go), then let consumer @arg
 * at the pipe.  Its buffers must point at nothing of the module's: a read
 * that calls into the freed module crashes the kernel here.
 */
static int test_splice_outlives(const void *arg, char *why)
{
	enum drain d = *(const enum drain *)arg;
	int p[2], sv[2] = { -1, -1 }, fd, err, st, ret = FZ_PASS;
	pid_t child = -1;
	ssize_t a, b;

	if (!loaded() && (err = fz_load_module("")))
		return fz_fail(why, "insmod: %s", strerror(-err));
	fd = open(fz_dev_path, O_RDONLY);
	if (fd < 0)
		return fz_fail(why, "open %s: %s", fz_dev_path, strerror(errno));
	if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 256 * FZ_KiB) < 0) {
		close(fd);
		return fz_fail(why, "pipe: %s", strerror(errno));
	}
	a = splice(fd, NULL, p[1], NULL, 128 * FZ_KiB, 0);
	b = splice(fd, NULL, p[1], NULL, 4097, 0);
	close(fd);
	if (a != 128 * FZ_KiB || b != 4097) {
		ret = fz_fail(why, "splice returned %zd and %zd", a, b);
		goto out;
	}
	if (d == D_SCM_RIGHTS) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
			ret = fz_fail(why, "socketpair: %s", strerror(errno));
			goto out;
		}
		fflush(stdout);
		child = fork();
		if (child == 0)
			scm_child(sv[1]);
		if (child < 0 || send_fd(sv[0], p[0])) {
			ret = fz_fail(why, "passing the pipe on: %s", strerror(errno));
			goto out;
		}
		/* only the other process has the pipe now */
		close(p[0]);
		close(p[1]);
		p[0] = p[1] = -1;
	} else {
		close(p[1]);	/* readers see EOF after the data */
		p[1] = -1;
	}
	if (fz_delete_module("fastzero", O_NONBLOCK)) {
		ret = fz_fail(why, "delete_module with only a pipe holding spliced data: %s",
			      strerrorname_np(errno));
		goto out;
	}
	if (d == D_SCM_RIGHTS) {
		if (write(sv[0], "g", 1) != 1 || waitpid(child, &st, 0) != child)
			ret = fz_fail(why, "the other process: %s", strerror(errno));
		else if (!WIFEXITED(st) || WEXITSTATUS(st))
			ret = fz_fail(why, "the other process read wrong data (status %#x)", st);
		child = -1;
	} else {
		ret = drain(d, p[0], why);
	}
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	return ret;
}

static const struct {
	const char *name;
	enum drain d;
} drains[] = {
	{ "read", D_READ }, { "tee", D_TEE }, { "af_unix", D_UNIX },
	{ "tcp_loopback", D_TCP }, { "close", D_CLOSE },
	{ "scm_rights_process", D_SCM_RIGHTS },
};

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
	int err = fz_load_module(arg);

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
		{ "cold_threshold", "1024" },
		{ "policy/cold_threshold_source", "parameter" },
		{ "nt_threshold", "0" },
		{ "policy/nt_threshold_source", "parameter" },
	};
	char path[256], val[64];
	int err = fz_load_module("chunk_size=65536 shared_huge=never force_variant=unrolled cold_threshold=1024 nt_threshold=0");
	int ret = FZ_PASS;
	size_t i;

	(void)arg;
	if (err)
		return fz_fail(why, "insmod: %s", strerror(-err));
	for (i = 0; i < FZ_ARRAY_SIZE(want) && ret == FZ_PASS; i++) {
		if (!strncmp(want[i][0], "policy/", 7))
			snprintf(path, sizeof(path), FZ_POLICY "/%s", want[i][0] + 7);
		else
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
 * EBUSY/EAGAIN only: somebody holds the device), RELOADS times.
 */
static int test_reload_races(const void *arg, char *why)
{
	static struct racer r[RACERS];
	unsigned long busy = 0, uses = 0;
	int i, k, err, ret = FZ_PASS;
	double until;

	(void)arg;
	for (i = 0; i < RELOADS && ret == FZ_PASS; i++) {
		err = fz_load_module("");
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
		"splice_huge=maybe", "chunk_size=4095", "chunk_size=abc",
		"force_variant=bogus", "shared_huge=bogus", "shared_huge=deny",
		"nt_threshold=abc", "cold_threshold=-1", "shared_clear=bogus",
	};
	char mode[32] = "";
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

	for (i = 0; i < FZ_ARRAY_SIZE(drains); i++)
		fz_run(test_splice_outlives, &drains[i].d,
		       "rmmod_with_spliced_pipe_then_%s", drains[i].name);
	if (!loaded() && fz_load_module(""))
		fz_diag("  reload after the splice tests failed");
	driver_mode = fz_read_file(FZ_PARAMS "/shared_clear", mode, sizeof(mode)) == 0 &&
		      !strcmp(mode, "driver");
	fz_run(test_unload_mapped, NULL, driver_mode ?
	       "rmmod_waits_for_shared_clear_driver_mapping" :
	       "rmmod_succeeds_under_shared_mapping");
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
	fz_run(test_reload_races, NULL, "reload_racing_users");
	return fz_exit();
}
