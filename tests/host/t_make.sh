#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_make.sh - the top Makefile as a new user meets it: make help, a wrong variable refused in seconds with the valid values, the kernel make builds for said in one line; TAP.
#
# Nothing is built, fetched or booted: a refused variable stops make while
# it reads the Makefile, and the kernel trees are stand-ins (a Makefile
# whose "modules" does nothing, a utsrelease.h), put where make looks for
# them (/lib/modules/<release>/build, /usr/src/linux-headers-*-amd64) by
# bind mounts in a private mount namespace, with uname -r answered by a
# stand-in too.  As root (make bench's checks come after its root check
# otherwise, and the mounts need it).
#
# usage: tests/host/t_make.sh    Exit status: 0 when every test passed.  ~3 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"
# shellcheck source=SCRIPTDIR/../vm/kernels.sh
source "$REPO/tests/vm/kernels.sh"

# refused NAME ARGS...: make ARGS fails within 10 s, nothing built, and its
# message (in $out) is one line
refused() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	out=$(make -C "$REPO" --no-print-directory "$@" 2>&1 >/dev/null) || rc=$?
	if ((rc == 0)); then
		ok 1 "$name" "make $* succeeded"
	elif (($(date +%s) - t0 > 10)); then
		ok 1 "$name" "took $(($(date +%s) - t0)) s"
	elif [[ $(wc -l <<<"$out") != 1 ]]; then
		ok 1 "$name" "not one line: $out"
	else
		ok 0 "$name"
	fi
}

# says NAME TEXT: the last refused make's message holds TEXT
says() { [[ $out == *"$2"* ]]; ok $? "$1" "got: $out"; }

if ((EUID != 0)); then
	ok 1 "the test runs as root" "make bench and the mounts need it"
	tap_done
	exit
fi

refused "make bench QUICK=yes is refused" bench QUICK=yes
says "... naming QUICK's values" "QUICK=yes: 1 (the short run) or 0"
refused "make model QUICK=yes is refused" model QUICK=yes
says "... naming QUICK's values" "QUICK=yes: 1 (the short run) or 0"
refused "make bench KERNEL=9.9 is refused" bench KERNEL=9.9
says "... naming every kernel id" "KERNEL=9.9: the guest kernel id, one of $FZ_KERNEL_IDS"
refused "make bench FZ_BENCH_KERNEL=9.9 is refused" bench FZ_BENCH_KERNEL=9.9
says "... naming every kernel id" "FZ_BENCH_KERNEL=9.9: the guest kernel id, one of $FZ_KERNEL_IDS"
refused "make bench FZ_BENCH_MODE=kvm is refused" bench FZ_BENCH_MODE=kvm
says "... naming its values" "FZ_BENCH_MODE=kvm: native or vm"
refused "make KERNEL=7 (no bench) is refused" KERNEL=7
says "... pointing at KDIR" "make builds the module for KDIR"
ok "$([[ $(FZ_BENCH_KERNEL=7 QUICK=1 "$REPO/userspace/bench/run-bench.sh" --check-vars 2>&1) == '' ]]; echo $?)" \
	"run-bench.sh --check-vars passes good values"

# make help: the header's every target, and the kernel ids
help=$(make -C "$REPO" --no-print-directory help 2>&1)
ok $? "make help succeeds"
missing=()
# shellcheck disable=SC2013 # the targets are words
for t in $(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$REPO/Makefile" | sed -n 's/^\.PHONY: *//p'); do
	[[ $t == @(module|userspace) ]] || grep -qE "(^ *|, )make $t( |$)" <<<"$help" || missing+=("$t")
done
ok "${#missing[@]}" "make help names every target" "missing: ${missing[*]}"
[[ $help == *"Kernel ids"*"$FZ_KERNEL_IDS"* ]]
ok $? "make help names the kernel ids"

# The kernel make builds for.  tree DIR RELEASE: a stand-in build tree.
tree() {
	mkdir -p "$1/include/generated"
	printf 'modules:\n\t@:\nclean:\n\t@:\n' >"$1/Makefile"
	printf '#define UTS_RELEASE "%s"\n' "$2" >"$1/include/generated/utsrelease.h"
}
mkdir -p "$T/bin" "$T/src" "$T/mods"
# shellcheck disable=SC2016 # the stand-in's own "$1" and "$@"
printf '#!/bin/sh\n[ "$1" = -r ] && echo 0.0.0-fzrun && exit 0\nexec /usr/bin/uname "$@"\n' >"$T/bin/uname"
chmod 755 "$T/bin/uname"
tree "$T/src/linux-headers-6.1.0-9-amd64" 6.1.0-9-amd64
tree "$T/src/linux-headers-6.12.9+deb12-amd64" 6.12.9+deb12-amd64
# Debian's rt and cloud flavours sort after the generic one
tree "$T/src/linux-headers-6.12.9+deb12-rt-amd64" 6.12.9+deb12-rt-amd64
tree "$T/src/linux-headers-6.12.9+deb12-cloud-amd64" 6.12.9+deb12-cloud-amd64
tree "$T/given" 9.9.9-given
# kline ARGS...: make module's first line, /usr/src and /lib/modules replaced
kline() {
	# shellcheck disable=SC2016 # sh -c's own arguments
	PATH=$T/bin:$PATH unshare --mount --propagation private sh -c \
		'mount --bind "$1/src" /usr/src && mount --bind "$1/mods" /lib/modules && shift && exec "$@"' \
		t "$T" make -C "$REPO" --no-print-directory module "$@" 2>&1 | grep '^fastzero: building'
}
line=$(kline)
[[ $line == "fastzero: building for 6.12.9+deb12-amd64 ("*"/usr/src/linux-headers-6.12.9+deb12-amd64): the newest headers installed, since the running kernel 0.0.0-fzrun has none: insmod here refuses this module (apt install linux-headers-0.0.0-fzrun, or KDIR=)" ]]
ok $? "make names the newest generic headers (not rt, not cloud), and why, when the running kernel has none" "got: $line"
mkdir -p "$T/mods/0.0.0-fzrun"
tree "$T/mods/0.0.0-fzrun/build" 0.0.0-fzrun
line=$(kline)
[[ $line == "fastzero: building for 0.0.0-fzrun (/lib/modules/0.0.0-fzrun/build): the running kernel" ]]
ok $? "make names the running kernel when it has headers" "got: $line"
line=$(kline KDIR="$T/given")
[[ $line == "fastzero: building for 9.9.9-given ($T/given): KDIR given" ]]
ok $? "make names KDIR's kernel when KDIR is given" "got: $line"

tap_done
