#!/usr/bin/env bash
# upstream-proof.sh: the upstream series (upstream/series) in the 7.x debug kernel, booted, with the suite's tests run against the patched /dev/zero and the unpatched one.
#
# Usage: tests/vm/upstream-proof.sh [--build-only]
#   1. the 7-debug kernel (debug-kernel.sh 7; built first if it is not);
#   2. the series applied (patch -p1) in an overlayfs layer over that
#      built tree (/fzdebug-7-upstream in the sid chroot), make bzImage:
#      only the touched objects recompile, then vmlinux links again; and
#      the patches generated as they are sent (upstream/series.sh, signed
#      off by a test identity, checkpatch --strict, git am onto the tree);
#   3. unless --build-only, two boots under -cpu max, no module: the
#      unpatched 7-debug image and the patched one, each running
#      tests/suite with FZ_DEV=/dev/zero FZ_MODULE=0 (read, readv,
#      io_uring, splice and its consumers, the Dirty-Pipe check, mmap,
#      signals, partial faults, the fuzzer), then the kernel's verdicts
#      (KASAN, lockdep, kmemleak, the log).
# Each step prints PASS or FAIL lines; the last line counts them.  A test
# the two boots answer differently, a failed test on the patched kernel,
# a KASAN report or lockdep turned off is a failure.  Logs:
# $FZ_CACHE/logs/upstream-proof-<time>/.  make check runs it after the
# debug tier (check.sh's run_upstream_proof; FZ_UPSTREAM_PROOF=0 leaves it
# out): the build reuses the debug tier's objects.
# The two boots run side by side (each guest keeps about one core busy).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=kernels.sh
source "$FZ_VM_DIR/kernels.sh"

build_only=0
case ${1:-} in
'') ;;
--build-only) build_only=1 ;;
*) sed -n '4,4p' "$0" >&2; exit 2 ;;
esac

OUT=${FZ_RESULTS:-$FZ_CACHE/logs}/upstream-proof-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
PASSED=0 FAILED=0
finish() {
	echo "upstream proof: $PASSED passed, $FAILED failed (logs: $OUT)"
	((FAILED == 0))
	exit
}

# 1. The unpatched debug kernel.
out=$("$FZ_VM_DIR/debug-kernel.sh" 7) || { result fail "7-debug kernel builds"; finish; }
base_di=$(sed -n 's/^KDIR=//p' <<<"$out")
result ok "7-debug kernel ($(sed -n 's/^KVER=//p' <<<"$out"))"

# 2. The patched tree: the series in a layer over the built debug tree
# (fz_sid_exec's FZ_SID_OVER), so that make sees the base's objects at
# their own paths and recompiles only what the series touches.
DI=/fzdebug-7-upstream
layer=$FZ_SID_ROOT$DI
# the stack's diffs: the code the patches carry (upstream/series.sh makes
# the signed patches of them)
patches=("$FZ_REPO"/upstream/series/*/[0-9][0-9][0-9][0-9]-*/diff)
mapfile -t files < <(sed -n 's|^+++ b/||p' "${patches[@]}" | sort -u)
# A layer is kept while the base build and the files the series touches
# stay the same (a file no longer patched would keep its patched object).
stamp="$(cat "$FZ_SID_ROOT$base_di/../.fz-built") ${files[*]}"
if [[ $(cat "$layer/.fz-stamp" 2>/dev/null) != "$stamp" ]]; then
	rm -rf "$layer" && mkdir -p "$layer/upper" "$layer/work"
	echo "$stamp" >"$layer/.fz-stamp"
fi
# Every run applies the series to the base's own files again.
rm -rf "$layer/patched" && mkdir -p "$layer/patched"
for f in "${files[@]}"; do
	mkdir -p "$layer/patched/$(dirname "$f")"
	cp -p "$FZ_SID_ROOT$base_di/$f" "$layer/patched/$f"
done
if cat "${patches[@]}" | patch -s -p1 -d "$layer/patched" --no-backup-if-mismatch >"$OUT/patch.log" 2>&1; then
	result ok "the series applies to the debug tree (${#patches[@]} patches)"
else
	result fail "the series applies to the debug tree" "$(head -n 3 "$OUT/patch.log" | tr '\n' ' ')"
	finish
fi
cp -a "$layer/patched/." "$layer/upper/"
t0=$(date +%s)
if FZ_SID_OVER="$base_di $DI" fz_sid_exec make -C "$base_di" LOCALVERSION=-fzdebug \
	-j"$(nproc)" bzImage >"$OUT/build.log" 2>&1; then
	result ok "the patched debug kernel builds ($(($(date +%s) - t0)) s)"
else
	result fail "the patched debug kernel builds" "log: $OUT/build.log"
	finish
fi
img=$layer/upper/arch/x86/boot/bzImage
# The touched objects again with W=1 and warnings as errors (the kernel's
# own flags otherwise; the next run's build compiles them back).
mapfile -t objs < <(printf '%s\n' "${files[@]}" | sed -n 's/\.[cS]$/.o/p')
if FZ_SID_OVER="$base_di $DI" fz_sid_exec make -C "$base_di" LOCALVERSION=-fzdebug \
	W=1 KCFLAGS=-Werror "${objs[@]}" >"$OUT/w1.log" 2>&1; then
	result ok "the touched objects build with W=1 -Werror (${objs[*]})"
else
	result fail "the touched objects build with W=1 -Werror" "log: $OUT/w1.log"
fi
# The patches as they are sent: generated from the stack, signed off by a
# test identity, checkpatch --strict on the signed files, git am onto the
# debug tree (upstream/series.sh, with that tree as its base).
tree=$FZ_SID_ROOT$base_di
if UPSTREAM_IDENT='fastzero test <test@example.invalid>' UPSTREAM_BASE=$tree UPSTREAM_NEWEST=$tree \
	"$FZ_REPO/upstream/series.sh" >"$OUT/series.log" 2>&1; then
	result ok "the signed patches generate, checkpatch --strict clean, and apply ($(grep -c 'checkpatch --strict: clean' "$OUT/series.log") patches)"
else
	result fail "the signed patches generate, checkpatch --strict clean, and apply" "log: $OUT/series.log"
fi
((build_only)) && finish

# 3. The suite against /dev/zero on both kernels.
payload=$OUT/payload
make -C "$FZ_REPO/tests/suite" OUT="$payload" >"$OUT/suite-build.log" 2>&1 ||
	{ result fail "suite builds" "log: $OUT/suite-build.log"; finish; }
[[ -f $payload/run-suite.sh ]] || cp "$FZ_REPO/tests/suite/run-suite.sh" "$payload/"
# shellcheck disable=SC2016 # expanded by the guest's shell
cmd='FZ_DEV=/dev/zero FZ_MODULE=0 FZ_QUICK=1 FZ_TIMEOUT=900 sh ./run-suite.sh; echo "FZ: suite rc=$?"'
# spoiled_early LOG: the kernel reported before the guest's init ran (seen
# under TCG: a KASAN report from an interrupt in identify_cpu()): such a
# boot judges nothing, and is booted once more, as check.sh's matrix does.
spoiled_early() {
	awk '/^FZ: boot / { exit } /WARNING:|BUG:|Oops|general protection|KASAN|Kernel panic/ { f = 1 }
		END { exit !f }' "$1"
}

# boot WHICH: one boot, its TAP answers in $OUT/WHICH.tap, its status in WHICH.rc.
boot() {
	local which=$1 rc vm try
	vm=("$FZ_VM_DIR/run-vm.sh" --kernel 7-debug --cpu max --no-module --payload "$payload"
		--cmd "$cmd" --timeout "${FZ_VM_TIMEOUT:-2400}" --log "$OUT/$which.log")
	[[ $which == patched ]] && vm+=(--vmlinuz "$img")
	for try in 1 2; do
		rc=0
		"${vm[@]}" >/dev/null || rc=$?
		if ((try == 2)) || ! spoiled_early "$OUT/$which.log"; then
			break
		fi
		mv "$OUT/$which.log" "$OUT/$which.log.boot1"
	done
	echo "$rc" >"$OUT/$which.rc"
}
boot unpatched &
boot patched &
wait
for which in unpatched patched; do
	rc=$(cat "$OUT/$which.rc")
	# The answers, without what varies from boot to boot: a timeout's
	# seconds, and the fuzzer's batch names (operations run in its time).
	grep -aE '^(not )?ok [0-9]+ - ' "$OUT/$which.log" |
		sed -E 's/^(not ok|ok) [0-9]+ - /\1 /; s/ after [0-9]+ s$//; s/(fuzz_ops)_[0-9]+_[0-9]+/\1/' |
		awk '!seen[$0]++' >"$OUT/$which.tap" || true
	if ((rc == 0)) && grep -q 'FZ: suite rc=0' "$OUT/$which.log"; then
		result ok "$which: the suite passes against /dev/zero ($(grep -c '^ok' "$OUT/$which.tap") ok)"
	else
		result fail "$which: the suite against /dev/zero" "run-vm $rc; $(grep -c '^not ok' "$OUT/$which.tap") not ok; log $OUT/$which.log"
	fi
	# check.sh's KERNEL_REPORT; lockdep still armed; kmemleak's block empty
	leaks=$(sed -n '/^FZ: kmemleak-begin/,/^FZ: kmemleak-end/p' "$OUT/$which.log" |
		sed '1d;/^FZ: kmemleak-end/d')
	if grep -qE 'WARNING:|BUG:|Oops|general protection|KASAN' "$OUT/$which.log" ||
		! grep -q '^FZ: debug_locks 1' "$OUT/$which.log" || [[ -n $leaks ]]; then
		result fail "$which: the kernel log is clean (KASAN, lockdep, kmemleak)" "log $OUT/$which.log"
	else
		result ok "$which: the kernel log is clean (KASAN, lockdep, kmemleak)"
	fi
done
# What the zero-page splice and the extents change, as each kernel shows it in the suite's
# diagnostics: pages allocated per MiB spliced, and how soon a read into
# uncached memory returns after SIGALRM (median, ms).
per_mib() { tr -d '\r' <"$OUT/$1.log" | sed -n 's/.*spliced to \/dev\/null (\([0-9.]*\) per MiB).*/\1/p' | head -n1; }
sig_ms() { tr -d '\r' <"$OUT/$1.log" | sed -n 's/.*uncached BAR.*returned in \([0-9.]*\) ms median.*/\1/p' | head -n1; }
u=$(per_mib unpatched) p=$(per_mib patched)
if [[ -n $u && -n $p ]] && awk -v u="$u" -v p="$p" 'BEGIN { exit !(p * 16 < u) }'; then
	result ok "zero-page splice: splice to /dev/null allocates $p pages per MiB (unpatched $u)"
else
	result fail "zero-page splice: splice allocates no page per 4 KiB" "pages per MiB: patched ${p:-?}, unpatched ${u:-?}"
fi
# t_signal bounds that latency on each kernel; here both must have measured it
if [[ -n $(sig_ms patched) && -n $(sig_ms unpatched) ]]; then
	result ok "extents: a read into uncached memory returns $(sig_ms patched) ms after SIGALRM (median; unpatched $(sig_ms unpatched) ms)"
else
	result fail "extents: the SIGALRM latency into uncached memory measured on both kernels" \
		"patched $(sig_ms patched) ms, unpatched $(sig_ms unpatched) ms"
fi
if diff -u "$OUT/unpatched.tap" "$OUT/patched.tap" >"$OUT/answers.diff"; then
	result ok "identical answers on both kernels ($(wc -l <"$OUT/patched.tap") tests)"
else
	result fail "identical answers on both kernels" "$OUT/answers.diff"
fi
finish
