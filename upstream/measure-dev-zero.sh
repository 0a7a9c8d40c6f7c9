#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# measure-dev-zero.sh - what the /dev/zero series changes, timed on the running kernel: stress-ng --splice, dd from /dev/zero, first touch of shared memory; one CSV.
#
# Usage: measure-dev-zero.sh [-r runs] [-o file.csv]
#   Run it on an unpatched and on a patched kernel, same machine, same
#   settings, and send both CSVs.  First touch is measured as the kernel
#   is booted: boot with init_on_alloc=1 for the shmem patch's case (the
#   CSV records whether the kernel reports it on).
#   Needs stress-ng, dd (coreutils) and a C compiler (cc).
#
# CSV columns: kernel,test,param,run,value,unit
#   splice     stress-ng --splice 1 for 10 s: bogo ops/s (real time)
#   dd         dd if=/dev/zero of=/dev/null bs=4K|1M|64M, 4 GiB: bytes/s
#   first_touch  a 1 GiB MAP_SHARED mapping of /dev/zero, one store per
#              page, then munmap: bytes/s
set -eu

runs=5 out=
while getopts r:o: opt; do
	case $opt in
	r) runs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '5,5p' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || out=dev-zero-$(uname -r).csv
for cmd in stress-ng dd cc; do
	command -v "$cmd" >/dev/null || { echo "measure-dev-zero.sh: needs $cmd" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/touch.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	const size_t len = 1ul << 30;
	long page = sysconf(_SC_PAGESIZE);
	struct timespec a, b;
	int fd = open("/dev/zero", O_RDWR);
	volatile char *p;
	size_t i;

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	for (i = 0; i < len; i += page)
		p[i] = 1;
	munmap((void *)p, len);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", len / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
	return 0;
}
C
cc -O2 -o "$tmp/touch" "$tmp/touch.c"

k=$(uname -r)
row() { echo "$k,$1,$2,$3,$4,$5" >>"$out"; }
echo "kernel,test,param,run,value,unit" >"$out"
# what the run was: CPU, command line, init_on_alloc as the kernel logged it
row info cpu 0 "\"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)\"" text
row info cmdline 0 "\"$(cat /proc/cmdline)\"" text
row info init_on_alloc 0 "$(dmesg 2>/dev/null | grep -q 'heap alloc:on' && echo on || echo off-or-unknown)" text

for r in $(seq 1 "$runs"); do
	ops=$(stress-ng --splice 1 --timeout 10s --metrics-brief 2>&1 |
		awk '$0 ~ /splice/ && $NF ~ /^[0-9.]+$/ { v = $(NF - 1) } END { print v }')
	row splice 1 "$r" "${ops:-NA}" bogo_ops_per_s
	for bs in 4K 1M 64M; do
		case $bs in 4K) n=1048576 ;; 1M) n=4096 ;; 64M) n=64 ;; esac
		s=$(LC_ALL=C dd if=/dev/zero of=/dev/null bs="$bs" count="$n" 2>&1 |
			awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") print $(i - 1) }')
		row dd "$bs" "$r" "$(awk -v s="$s" 'BEGIN { printf "%.0f", 4294967296 / s }')" bytes_per_s
	done
	row first_touch 1G "$r" "$("$tmp/touch")" bytes_per_s
done
echo "measure-dev-zero.sh: $out"
