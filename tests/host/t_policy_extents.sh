#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_policy_extents.sh - driver/policy.h's read extents against simulated memory; TAP.
#
# tests/host/policy_extents.c runs the driver's own extent loop
# (driver/read_loop.h's fz_read_extents(), which read.c runs on user
# memory) with each piece timed as its bytes over the simulated memory's
# rate, and checks that no extent takes more than twice
# FZ_EXTENT_BUDGET_NS: probes the cache holds (100 GB/s) over memory at
# 0.5, 2 and 10 GB/s, and memory that drops 100x mid-read (at a mapping
# boundary: every extent; inside one mapping: all but the extent the drop
# falls in); that readv() gets read()'s extents however its iovecs cut the
# bytes; that a stream of small reads gets the cold store and a ring of
# slots the cache holds does not.  Then the extents of a uniform 64 MiB
# read.
#
# usage: tests/host/t_policy_extents.sh [--driver DIR]
#   --driver DIR    test DIR's read_loop.h and policy.h instead of driver/'s
#                   (another revision's: git archive REV driver | tar -x -C DIR)
# Exit status: 0 when every test passed.  <1 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"

drv=$REPO/driver
if [[ ${1:-} == --driver && -n ${2:-} ]]; then
	drv=$2
elif (($#)); then
	echo "usage: $0 [--driver DIR]" >&2
	exit 2
fi
arch=$("${CC:-gcc}" -dumpmachine | sed -e 's/^x86_64-.*/x86/' -e 's/^aarch64-.*/arm64/')
if ! "${CC:-gcc}" -O2 -std=gnu11 -Wall -Wextra -Werror -I"$drv" -I"$drv/arch/$arch" -I"$REPO/userspace/shim" \
	"$REPO/tests/host/policy_extents.c" -o "$T/policy_extents" >"$T/build.log" 2>&1; then
	ok 1 "policy_extents_builds" "$(tail -n 3 "$T/build.log" | tr '\n' ' ')"
	tap_done
	exit
fi
"$T/policy_extents" >"$T/out" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "${line#ok }" ;;
	"not ok "*) ok 1 "${line#not ok }" ;;
	*) echo "# $line" ;;
	esac
done <"$T/out"
echo "# a uniform 64 MiB read at 50 GB/s:"
"$T/policy_extents" --trace $((64 << 20)) 50 | sed 's/^/# /'
tap_done
