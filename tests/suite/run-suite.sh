#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-suite.sh - run the fastzero test programs as one TAP stream.
#
# Usage: run-suite.sh [program...]	(default: all, t_unload last)
#
# Environment:
#	FZ_DEV		device under test (default /dev/fastzero)
#	FZ_REF		reference device (default /dev/zero)
#	FZ_MODULE	1: run sysfs/rmmod tests (default: 1 for /dev/fastzero)
#	FZ_QUICK	1: smaller work loads
#	FZ_TIMEOUT	seconds per program (default 300)
#	FZ_ONLY		comma-separated substrings: run only the tests whose
#			name holds one (targeted runs by hand; default all)
#	FZ_FUZZ		0: leave out the differential fuzzer t_fuzz (default 1;
#			its length: FZ_FUZZ_OPS, FZ_FUZZ_SECONDS, see t_fuzz.c)
#	FZ_NO_SWAP	set by the guest's /init when the kernel has no zram
#			at all: t_swap skips with it as the reason (without
#			it, no /dev/zram0 under the harness is a failure)
#
# A SKIP means the kernel lacks a capability (or FZ_MODULE=0 turned the
# module's tests off); a setup step that fails is a failure.  Root and the
# harness's /dev/zram0 are setup: missing, they fail when FZ_DEV is
# /dev/fastzero and skip only in host development mode (below).
#
# Each program's results are renumbered into one continuous TAP stream and
# named "<program>/<test>".  A program that dies by a signal, exits without
# printing its plan, or times out yields a "not ok" line of its own.
# Exit status: 0 if nothing failed.  Works with busybox sh and awk.
#
# Development on a host without the module:
#	FZ_DEV=/dev/zero ./run-suite.sh

dir=$(cd "$(dirname "$0")" && pwd)
fuzz=
[ "${FZ_FUZZ:-1}" = 0 ] || fuzz=t_fuzz
progs=${*:-"t_read t_readv t_async t_splice t_signal t_misc t_mmap t_shared t_huge t_clear t_swap $fuzz t_fail t_memcg t_sysfs t_clzero t_unload"}
limit=${FZ_TIMEOUT:-300}

run_one() {
	start=$(date +%s)
	if command -v timeout >/dev/null 2>&1; then
		timeout -s KILL "$limit" "$dir/$1" 2>&1
	else
		"$dir/$1" 2>&1
	fi
	rc=$?
	end=$(date +%s)
	echo "@@fz-end $1 $rc $((end - start))"
}

for p in $progs; do
	echo "@@fz-begin $p"
	run_one "$p"
done | awk -v limit="$limit" '
function result(ok, text) {
	n++
	if (!ok)
		failed++
	print (ok ? "ok " : "not ok ") n " - " text
	fflush()
}
BEGIN { print "TAP version 13"; fflush() }
/^@@fz-begin / {
	prog = $2; plan = 0; pfail = 0
	print "# program " prog; fflush()
	next
}
/^@@fz-end / {
	rc = $3; secs = $4
	if (rc == 124 || ((rc == 137 || rc == 143) && secs >= limit - 1))
		result(0, prog " timed out after " secs " s")
	else if (rc > 128)
		result(0, prog " crashed (signal " rc - 128 ")")
	else if (!plan)
		result(0, prog " crashed (exit " rc ", no plan)")
	else if (rc != 0 && !pfail)
		result(0, prog " exited " rc " without a failed test")
	print "# program " prog " done: exit " rc " in " secs " s"; fflush()
	next
}
/^TAP version/ { next }
/^1\.\.[0-9]+$/ { plan = 1; print "# " prog " plan " $0; fflush(); next }
/^(not )?ok [0-9]+/ {
	ok = ($1 == "ok")
	if (!ok)
		pfail = 1
	match($0, /^(not )?ok [0-9]+( - )?/)
	result(ok, prog "/" substr($0, RLENGTH + 1))
	next
}
/^#/ { print; fflush(); next }
{ print "# " $0; fflush() }
END {
	print "1.." n
	print "# suite: " n " tests, " failed + 0 " failed"
	exit failed ? 1 : 0
}'
