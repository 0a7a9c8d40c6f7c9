#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_clear_loops.sh - driver/arch/x86/clear_loops.S's bytes on this CPU, natively; TAP.
#
# The module assembles the same clear_loops.S as userspace/clearbench:
# `clearbench --self-test` runs every loop at each length 0..320 and each
# offset 0..63 from a cache line, then at lengths around line, page and
# 2 MiB boundaries, and checks that exactly the asked bytes are zero and
# 128 guard bytes on each side untouched.  A loop this CPU cannot run is
# a SKIP with the reason (clzero: CPUID 0x80000008:EBX[0] clear, or set
# but raising SIGILL).  clearbench-clzero-emul runs the clzero loop with
# its line store emulated by movq stores, so its head, line walk and tail
# are proven on any CPU; the instruction itself only where it runs.
# The user-access flavour's fault fixups are the module's: tests/suite.
#
# usage: tests/host/t_clear_loops.sh    Exit status: 0 when every test passed.  ~2 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"

if ! make -s -C "$REPO/userspace" O="$T" "$T/clearbench" "$T/clearbench-clzero-emul" \
	>"$T/build.log" 2>&1; then
	ok 1 "clearbench_builds" "$(tail -n 3 "$T/build.log" | tr '\n' ' ')"
	exit 1
fi
for bin in clearbench clearbench-clzero-emul; do
	tag=native
	[[ $bin == clearbench ]] || tag=clzero_emulated
	rc=0
	out=$("$T/$bin" --self-test 2>&1) || rc=$?
	seen=0
	while IFS= read -r line; do
		# the emulated build adds only the clzero loop to the native run
		[[ $tag == native || $line == *" - clzero_"* ]] || continue
		case $line in
		"ok "*"# SKIP"*)
			n=$((n + 1)) seen=$((seen + 1))
			name=${line#ok * - }
			echo "ok $n - ${tag}_${name%% # SKIP*} # SKIP ${name#* # SKIP }"
			;;
		"ok "*) seen=$((seen + 1)); ok 0 "${tag}_${line#ok * - }" ;;
		"not ok "*)
			seen=$((seen + 1))
			name=${line#not ok * - }
			ok 1 "${tag}_${name%% # *}" "${name#* # }"
			;;
		esac
	done <<<"$out"
	# a crash (a wrong length walks off the buffer) or a missing loop
	((rc == 0 || seen > 0)) || ok 1 "${tag}_self_test_runs" "exit $rc: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	((rc <= 1)) || ok 1 "${tag}_self_test_exits" "exit $rc (killed by a signal?)"
done
tap_done
