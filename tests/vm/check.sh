#!/usr/bin/env bash
# check.sh: what `make check` runs: build fastzero for every kernel, boot each kernel x CPU model in QEMU with the suite, count results.
#
# Env knobs:
#   FZ_KERNELS     kernel ids (default "6.1 6.12 7 newest": 7 is sid's own
#                  kernel, not experimental's; "none": no
#                  matrix, the other tiers only); every one is
#                  required: one that cannot be fetched/built counts as a
#                  failure.  "newest" is the newest kernel in sid or
#                  experimental, skipped (and said) when it is one tested
#                  already.  ("6.12-debug" or "7-debug" boots a debug
#                  kernel under every FZ_CPUS model; its tier below does one.)
#   FZ_FLAVOUR_BOOTS Debian's flavoured kernels booted under -cpu max with
#                  the suite's quick loads (default "6.12-rt"; "none": no boot)
#   FZ_FLAVOUR_BUILDS flavoured kernels the module is only compiled for, W=1,
#                  against their newest headers (default "6.1-rt 6.1-cloud
#                  6.12-cloud 7-rt 7-cloud"; "none": none)
#   FZ_ARM64_KERNELS Debian's arm64 kernels booted under qemu-system-aarch64
#                  with every FZ_ARM64_CPU_MODELS entry, quick loads
#                  (default "6.1-arm64 6.12-arm64 7-arm64"; 6.1 under the
#                  model without FEAT_MOPS only; "none": no arm64 tier)
#   FZ_CPUS        QEMU -cpu strings (default: every FZ_CPU_MODELS entry)
#   FZ_VM_TIMEOUT  seconds per boot (default 900; FZ_FULL_TIMEOUT, default
#                  1500, for the boot with the full-size loads)
#   FZ_FULL_KERNEL the kernel id whose first CPU model runs the full-size
#                  loads (default 7: sid's own kernel); every other boot
#                  runs the quick ones (FZ_QUICK=1)
#   FZ_FULL_ALL    1: full-size loads in every boot
#   FZ_FUZZ        0: leave out the suite's differential fuzzer (t_fuzz; default 1)
#   FZ_DEBIAN_GUEST 0: leave out the Debian guest tier (debian-guest.sh)
#   FZ_SID_DEBS    0: leave out the sid packages tier (sid-debs.sh)
#   FZ_DEBIAN_BESIDE 0: run those tiers before the matrix, not beside it
#   FZ_DEBUG_KERNELS the debug kernel tier's kernels (default "6.12-debug
#                  7-debug", compiled while the other tiers run; "none":
#                  no debug tier), see run_debug_kernel
#   FZ_UPSTREAM_PROOF 0: leave out the upstream series' proof, one of the
#                  debug tier's items when 7-debug is in FZ_DEBUG_KERNELS
#                  (upstream-proof.sh)
#   FZ_MODULE_SRC  tree with Kbuild + driver/ (default: the repo)
#   FZ_RESULTS     where guest logs go (default $FZ_CACHE/logs/check-<time>)
# Output: a results block per kernel/CPU, then as the very last line
# "N passed, N failed". Exit 0 only if nothing failed.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# One QEMU CPU model per clear_user variant the alternatives can patch in:
# "-cpu string:expected clear_user_variant:extra kernel command line:suite
# programs" (empty: all of them).
#  - max: ERMS (and REP_GOOD).
#  - max,-erms: REP_GOOD only.  Booted with init_on_alloc=0: Debian's
#    init_on_alloc=1 zeroes every page before shmem clears it again, this
#    boot leaves one clear, so a missing clear cannot hide; page_poison=1
#    fills freed pages with a pattern, which any page that escaped the clear
#    would show.  The whole suite runs with shared_clear=driver here, where
#    the module offers it (modinfo -F shared_clear): that one clear is the
#    driver's.  And preempt=full, where read extents follow a time budget.
#  - An AMD K8 before revision C (family 15, model 4): neither REP_GOOD (the
#    kernel sets it for K8 from revision C and AMD family 0x10 on; 7.x also
#    for every Intel CPU from the Pentium M on with fast strings enabled, so
#    no Intel model is left without it) nor ERMS: the unrolled loop.
#    preempt=none, and init_on_free=1: freed pages are zeroed, so the
#    allocator skips its clear and t_clear's driver mode relies on that.
#    It runs the variant and preemption programs (below), t_mmap and
#    t_clear.
# The other two boot the kernel's default model (voluntary on 6.x, lazy on
# 7.x); the suite reads the model the kernel runs from read_extent.
#  - max,+fsrm,-fsrs: an AMD CPU (TCG's max is AuthenticAMD) with FSRM but
#    without FSRS, as Zen 3/4: 6.4+ sets X86_FEATURE_FSRS for it anyway
#    ("AMD FSRM also implies FSRS", init_amd()), and the kernel's own
#    clear_user() uses rep stosb at every length; fastzero reads FSRS from
#    CPUID: the erms variant with its AMD threshold.  Only sid's QEMU (8.1+)
#    offers FSRM under TCG and knows the fsrs flag (see kernels.sh).  It
#    runs the variant programs.
# Which programs each model runs: a test whose answer cannot depend on the
# CPU model runs once per kernel, under max and max,-erms (the two modes of
# shared_clear, which the mapping programs, t_unload and t_swap depend on);
# t_splice and t_misc (writes, opens, ioctls, lent pages) depend on neither.
# FZ_VARIANT_PROGS are where the variant the alternatives chose and its
# thresholds act (each also forces every variant in turn, so every loop runs
# on every kernel in every boot); FZ_PREEMPT_PROGS where the preemption model
# acts (signal latency, io_uring's IOCB_NOWAIT), under each of the three
# models the matrix boots: max (the kernel's default), max,-erms (full),
# qemu64 (none).  max,+fsrm,-fsrs boots the default model as max does.
# The variant is asserted and given to the suite as FZ_EXPECT_VARIANT; a CPU
# not listed here gets the variant its flags imply.
FZ_VARIANT_PROGS="t_read t_readv t_fuzz t_sysfs t_clzero"
FZ_PREEMPT_PROGS="t_signal t_async"
FZ_CPU_MODELS=(
	"max:erms:"
	"max,-erms:rep_stosq:init_on_alloc=0 page_poison=1 preempt=full fastzero.shared_clear=driver"
	"qemu64,vendor=AuthenticAMD,family=15,model=4,stepping=0:unrolled:preempt=none init_on_free=1:$FZ_VARIANT_PROGS $FZ_PREEMPT_PROGS t_mmap t_clear"
	"max,+fsrm,-fsrs:erms::$FZ_VARIANT_PROGS"
)
# arm64 (qemu-system-aarch64 -M virt, sid's QEMU: FEAT_MOPS needs 8.2+):
#  - max: FEAT_MOPS, PAN, DC ZVA: the mops variant, dc_zva the cold store.
#    Every program.
#  - neoverse-n1: ARMv8.2, no FEAT_MOPS: the stp loop, mops refused.  As
#    max,-erms on x86: init_on_alloc=0 page_poison=1 and shared_clear=driver.
# bookworm's 6.1 does not enable FEAT_MOPS (compat.h): under max it makes
# neoverse-n1's choices, so it boots that model alone.
FZ_ARM64_CPU_MODELS=(
	"max:mops::"
	"neoverse-n1:unrolled:init_on_alloc=0 page_poison=1 fastzero.shared_clear=driver:$FZ_VARIANT_PROGS $FZ_PREEMPT_PROGS t_mmap t_shared t_clear t_huge"
)
FZ_ARM64_KERNELS=${FZ_ARM64_KERNELS:-6.1-arm64 6.12-arm64 7-arm64}
[[ $FZ_ARM64_KERNELS != none ]] || FZ_ARM64_KERNELS=
FZ_KERNELS=${FZ_KERNELS:-6.1 6.12 7 newest}
[[ $FZ_KERNELS != none ]] || FZ_KERNELS=
FZ_FLAVOUR_BOOTS=${FZ_FLAVOUR_BOOTS:-6.12-rt}
[[ $FZ_FLAVOUR_BOOTS != none ]] || FZ_FLAVOUR_BOOTS=
FZ_FLAVOUR_BUILDS=${FZ_FLAVOUR_BUILDS:-6.1-rt 6.1-cloud 6.12-cloud 7-rt 7-cloud}
[[ $FZ_FLAVOUR_BUILDS != none ]] || FZ_FLAVOUR_BUILDS=
FZ_DEBUG_KERNELS=${FZ_DEBUG_KERNELS:-6.12-debug 7-debug}
[[ $FZ_DEBUG_KERNELS != none ]] || FZ_DEBUG_KERNELS=
FZ_CPUS=${FZ_CPUS:-$(printf '%s\n' "${FZ_CPU_MODELS[@]}" | cut -d: -f1 | tr '\n' ' ')}
FZ_VM_TIMEOUT=${FZ_VM_TIMEOUT:-900}
FZ_FULL_TIMEOUT=${FZ_FULL_TIMEOUT:-1500}
FZ_RESULTS=${FZ_RESULTS:-$FZ_CACHE/logs/check-$(date +%Y%m%d-%H%M%S)}
# One version per kernel id for the whole run, whoever asks first (the
# matrix, the Debian guest, a debug kernel's series): kernels.sh fz_choose.
export FZ_RUN_KERNELS=$FZ_RESULTS/kernels FZ_DEBUG_KERNELS

PASSED=0
FAILED=0
SUMMARY=()
TESTED_KVERS=()


# ---------- payload ----------

# The guest command: suite, then (with the module reloaded: the suite ends
# by unloading it) the benchmark smoke test and the dd acceptance check.
# "FZ: phase NAME UPTIME" lines time each part for the CI budget.  The
# first CPU model of the oldest and of the newest kernel runs the benchmark
# smoke test (every fio job, fzbench; it does not depend on the CPU model).
# FZ_PROGS: the CPU model's programs (FZ_CPU_MODELS), empty for all.  One boot, the first
# CPU model of FZ_FULL_KERNEL, runs the suite at full size (FZ_QUICK=0);
# the others run the same tests with smaller loads (FZ_QUICK=1: a shorter
# fuzz, smaller big reads and mappings), the same code at less cost.
# shellcheck disable=SC2016 # expanded by the guest's shell
GUEST_CMD='phase() { echo "FZ: phase $1 $(cut -d" " -f1 /proc/uptime)"; }
phase suite; sh ./run-suite.sh $FZ_PROGS; echo "FZ: suite rc=$?"
[ -c /dev/fastzero ] || insmod /fastzero.ko
phase smoke; [ "$SMOKE_ALL" = 0 ] || [ ! -f bench/smoke.sh ] ||
	sh bench/smoke.sh /payload/bench
phase dd
if dd if=/dev/fastzero of=/dev/null bs=1M count=$DD_MIB 2>/tmp/dd.err; then
	echo "FZ: dd ok"; else echo "FZ: dd failed"; fi
cat /tmp/dd.err; phase end'

# Until tests/suite exists: check the device exists and 1 MiB reads.
write_placeholder() {
	mkdir -p "$1"
	cat >"$1/run-suite.sh" <<'EOF'
#!/bin/sh
# Placeholder suite (tests/suite/Makefile not present yet).
echo "1..2"
if [ -c /dev/fastzero ]; then echo "ok 1 - /dev/fastzero exists"; else echo "not ok 1 - /dev/fastzero exists"; fi
n=$(dd if=/dev/fastzero bs=1M count=1 2>/dev/null | tr -d '\000' | wc -c)
if [ "$(dd if=/dev/fastzero bs=1M count=1 2>/dev/null | wc -c)" = 1048576 ] && [ "$n" = 0 ]; then
	echo "ok 2 - read 1 MiB of zeros via dd"
else
	echo "not ok 2 - read 1 MiB of zeros via dd # got $n non-zero bytes"
fi
EOF
}

# build_bench_smoke DIR: fzbench, the fio job files and smoke.sh, which runs
# every job and fzbench --quick in the guest and checks their output parses.
build_bench_smoke() {
	local dir=$1 log=$FZ_RESULTS/bench-build.log
	mkdir -p "$dir/fio-jobs"
	if make -C "$FZ_REPO/userspace" O="$dir/build" "$dir/build/fzbench" >"$log" 2>&1; then
		cp "$dir/build/fzbench" "$FZ_REPO/userspace/bench/smoke.sh" "$dir/"
		cp "$FZ_REPO"/fio-jobs/*.fio "$dir/fio-jobs/"
		rm -rf "$dir/build"
		result ok "fzbench builds (make -C userspace)"
	else
		result fail "fzbench builds (make -C userspace)" "log: $log"
	fi
}

# run_lint: tests/lint.sh's results (checkpatch --strict, shellcheck).
run_lint() {
	local line out
	echo "==== lint ===="
	out=$("$FZ_REPO/tests/lint.sh" 2>&1) || true
	while IFS= read -r line; do
		case $line in
		"ok - "*"# SKIP"*) printf '  skip  %s\n' "${line#ok - }" ;;
		"ok - "*) result ok "${line#ok - }" ;;
		"not ok - "*) result fail "${line#not ok - }" ;;
		"# "*) printf '        %s\n' "${line#\# }" ;;
		esac
	done <<<"$out"
}

# run_host_tests: tests/host/t_*.sh, run on this machine (no module needed:
# the tools around it, e.g. fastzero-run); each TAP line is one result.
run_host_tests() {
	local t line out rc
	echo "==== host tests ===="
	for t in "$FZ_REPO"/tests/host/t_*.sh; do
		[[ -e $t ]] || continue
		rc=0
		out=$(bash "$t" 2>&1) || rc=$?
		while IFS= read -r line; do
			case $line in
			"ok "*"# SKIP"*) printf '  skip  %s: %s\n' "$(basename "$t" .sh)" "${line#ok }" ;;
			"ok "*) result ok "$(basename "$t" .sh): ${line#ok }" ;;
			"not ok "*) result fail "$(basename "$t" .sh): ${line#not ok }" ;;
			esac
		done <<<"$out"
		((rc == 0)) || result fail "$(basename "$t" .sh) exited $rc"
	done
}

# build_payload DIR [arm64]: the suite's static binaries (or the
# placeholder) in DIR; arm64: cross-compiled, without the bench smoke test.
build_payload() {
	local dir=$1 log=$FZ_RESULTS/suite-build${2:+-$2}.log cross=() arm64
	if [[ ${2:-} == arm64 ]]; then
		arm64=$("$FZ_VM_DIR/kernels.sh" --arm64-userland 2>"$log") ||
			{ result fail "arm64 userland fetched (busybox, liburing)" "log: $log"; return 1; }
		cross=(CC=aarch64-linux-gnu-gcc "SYSROOT=$arm64/sysroot")
	fi
	rm -rf "$dir"
	if [[ ! -f $FZ_REPO/tests/suite/Makefile ]]; then
		echo "  (tests/suite/Makefile missing: placeholder payload)"
		write_placeholder "$dir"
		return 0
	fi
	mkdir -p "$dir"
	if make -C "$FZ_REPO/tests/suite" OUT="$dir" "${cross[@]}" >>"$log" 2>&1; then
		[[ -f $dir/run-suite.sh ]] || cp "$FZ_REPO/tests/suite/run-suite.sh" "$dir/"
		result ok "suite builds (make -C tests/suite${2:+, $2})"
		[[ -n ${2:-} ]] || build_bench_smoke "$dir/bench"
	else
		result fail "suite builds (make -C tests/suite${2:+, $2})" "log: $log"
		tail -n 30 "$log" | sed 's/^/        /'
		[[ -z ${2:-} ]] || return 1
		rm -rf "$dir"
		write_placeholder "$dir"
		echo "  (using the placeholder payload instead)"
	fi
}

# ---------- per boot ----------

# model_field CPU N: field N (2: variant, 3: kernel arguments) of CPU's
# FZ_CPU_MODELS entry (FZ_ARM64_CPU_MODELS' with BOOT_ARCH=arm64); fails
# for a CPU that has none.
model_field() {
	local m models=("${FZ_CPU_MODELS[@]}")
	[[ ${BOOT_ARCH:-x86} != arm64 ]] || models=("${FZ_ARM64_CPU_MODELS[@]}")
	for m in "${models[@]}"; do
		if [[ ${m%%:*} == "$1" ]]; then
			cut -d: -f"$2" <<<"$m"
			return 0
		fi
	done
	return 1
}

# expected_variant CPU LOG: listed, else derived from the guest's CPU flags.
expected_variant() {
	local cpu=$1 log=$2
	model_field "$cpu" 2 && return 0
	if grep -q 'FZ: cpuflags erms=1' "$log"; then echo erms
	elif grep -q 'FZ: cpuflags.*rep_good=1' "$log"; then echo rep_stosq
	else echo unrolled; fi
}

# guest_dmesg LOG: the guest's dmesg (FZ: dmesg-begin to FZ: dmesg-end),
# less the memcg OOM reports the suite provokes on purpose (t_memcg brackets
# them with "fastzero-test: expected-oom-begin/end" in the kernel log), and
# less the stack dumps of the allocation failures t_fail injects (between
# "fastzero-test: expected-injected-faults-begin/end": only "Call Trace" is
# excused there, a KASAN, lockdep, WARNING or BUG report still counts).
guest_dmesg() {
	awk '/^FZ: dmesg-begin/{on=1; next} /^FZ: dmesg-end/{on=0}
		/fastzero-test: expected-oom-begin/{skip=1}
		/fastzero-test: expected-oom-end/{skip=0; next}
		/fastzero-test: expected-injected-faults-begin/{inj=1}
		/fastzero-test: expected-injected-faults-end/{inj=0; next}
		on && !skip && !(inj && /Call [Tt]race/)' "$1"
}

# module_dmesg LOG: that dmesg from the harness's pre-insmod marker (else all).
module_dmesg() {
	local all
	all=$(guest_dmesg "$1")
	if grep -q 'fastzero-harness: insmod' <<<"$all"; then
		sed -n '/fastzero-harness: insmod/,$p' <<<"$all"
	else
		printf '%s\n' "$all"
	fi
}

# A kernel report in a log line: what fails "dmesg clean" (with Call Trace
# and kmemleak) and what spoils a boot (with Kernel panic).
KERNEL_REPORT='WARNING:|BUG:|Oops|general protection|KASAN'

# check_cpu_flags CPU LOG: the guest kernel sees the flags the model's
# variant needs (FSRS is not in /proc/cpuinfo before 6.4: the suite asks CPUID).
check_cpu_flags() {
	local flags want
	flags=$(grep -o 'FZ: cpuflags.*' "$2" | head -n1 || true)
	want=$(model_field "$1" 2) || want=''
	# a model that asks for FSRM must get it (QEMU 7.2's TCG drops it)
	[[ $1 != *+fsrm* || $flags == *fsrm=1* ]] || return 1
	case $want in
	erms) [[ $flags == *erms=1* ]] ;;
	rep_stosq) [[ $flags == *erms=0*rep_good=1* ]] ;;
	unrolled) [[ $flags == *erms=0*rep_good=0* && $flags != *mops=1* ]] ;;
	mops) [[ $flags == *mops=1* ]] ;;
	*) [[ -n $flags ]] ;;
	esac
}

# check_tap LOG: count/print the suite's TAP lines; sets TAP_OK TAP_NOT TAP_SKIP.
check_tap() {
	local log=$1 plan line
	TAP_OK=0 TAP_NOT=0 TAP_SKIP=0
	while IFS= read -r line; do
		if [[ $line == "not ok"* && $line != *"# TODO"* ]]; then
			TAP_NOT=$((TAP_NOT + 1))
			FAILED=$((FAILED + 1))
			printf '  FAIL  suite: %s\n' "$line"
			continue
		fi
		TAP_OK=$((TAP_OK + 1))
		PASSED=$((PASSED + 1))
		if [[ $line == *"# SKIP"* || $line == *"# skip"* ]]; then
			TAP_SKIP=$((TAP_SKIP + 1))
			printf '  skip  suite: %s\n' "$line"
		fi
	done < <(grep -aE '^(not )?ok [0-9]+' "$log" || true)
	# the suite and the bench smoke test each print a plan: add them up
	plan=$(grep -aoE '^1\.\.[0-9]+' "$log" | cut -d. -f3 |
		awk '{ n += $1 } END { if (NR) print n }' || true)
	if ((TAP_OK + TAP_NOT == 0)); then
		result fail "suite produced TAP results" "none found"
	elif [[ -n $plan && $plan != $((TAP_OK + TAP_NOT)) ]]; then
		result fail "suite ran to its plan" "plan 1..$plan, got $((TAP_OK + TAP_NOT))"
	else
		result ok "suite ran to its plan ($((TAP_OK + TAP_NOT)) results, $TAP_SKIP skipped)"
	fi
}

# check_swap LOG: the guest's swap (zram0, for t_swap and the fuzzer's
# MADV_PAGEOUT) was set up: every module of the kernel's own that the harness
# gave the guest loaded, and /dev/zram0 became a swap area.  A kernel with no
# zram at all (neither a module nor built in: "FZ: swap unavailable: <why>")
# lacks a capability: said, not counted; t_swap skips with the reason.
check_swap() {
	local log=$1 name="guest swap (zram) set up" bad sym
	bad=$(sed -n 's/^FZ: kmod \(.*\) failed$/\1/p' "$log" | tr '\n' ' ')
	sym=$(grep -aom1 'Unknown symbol [^ ]*' "$log" || true)
	if [[ -n $bad ]]; then
		result fail "$name" "insmod failed: ${bad% }${sym:+ ($sym)}"
	elif grep -q '^FZ: swap /dev/zram0 ready' "$log"; then
		result ok "$name (/dev/zram0, $(sed -n 's/^FZ: swap \/dev\/zram0 ready (\(.*\))$/\1/p' "$log" | head -n1))"
	elif grep -q '^FZ: swap unavailable: ' "$log"; then
		printf '  skip  %s: %s\n' "$name" "$(sed -n 's/^FZ: swap unavailable: //p' "$log" | head -n1)"
	elif grep -q '^FZ: swap unavailable' "$log"; then
		result fail "$name" "FZ: swap unavailable"
	else
		result fail "$name" "no FZ: swap line"
	fi
}

# check_debug LOG: debug kernels only (the guest printed the markers): the
# kmemleak scans after the suite and rmmod report nothing, and lockdep is still
# armed at the end (a lockdep report turns it off: debug_locks=0).
check_debug() {
	local log=$1 leaks dl
	if grep -q '^FZ: kmemleak-begin' "$log"; then
		leaks=$(sed -n '/^FZ: kmemleak-begin/,/^FZ: kmemleak-end/p' "$log" | sed '1d;/^FZ: kmemleak-end/d')
		if [[ -z $leaks ]] && grep -q '^FZ: kmemleak-end' "$log"; then
			result ok "kmemleak: no leaks after the suite and rmmod"
		else
			result fail "kmemleak: no leaks after the suite and rmmod" \
				"$(grep -c '^unreferenced object' <<<"$leaks" || true) suspects:"
			printf '%s\n' "$leaks" | head -n 60 | sed 's/^/        /'
		fi
	fi
	dl=$(sed -n 's/^FZ: debug_locks //p' "$log" | head -n1)
	if [[ -n $dl ]]; then
		if [[ $dl == 1 ]]; then
			result ok "lockdep still armed at the end (debug_locks=1)"
		else
			result fail "lockdep still armed at the end" "debug_locks=$dl: lockdep reported and turned off"
		fi
	fi
}

# boot_spoiled LOG: the first report of the kernel's own from before the
# harness loaded the module (a panic before the guest's init ran, a kernel
# that never reached it: run-vm.sh's "FZ: NO INIT", or a bug report in the
# log up to the insmod marker), else nothing.  Such a boot
# cannot judge the module: KASAN reports once per boot, a lockdep report
# turns lockdep off, a panic ends the boot.  Seen under TCG: an int3 oops
# in a secondary CPU's first timer (6.12, rare), a KASAN
# report from an interrupt in identify_cpu() (6.12 debug kernel), 7.2 under
# qemu64 silent for 13 minutes before its init.
boot_spoiled() {
	local pat="Kernel panic|$KERNEL_REPORT"
	if ! grep -q '^FZ: boot ' "$1"; then
		grep -aEm1 "$pat|^FZ: NO INIT" "$1" || true
		return
	fi
	{
		awk '/^FZ: insmod/ { exit } 1' "$1"
		guest_dmesg "$1" | sed '/fastzero-harness: insmod/,$d'
	} | grep -aEm1 "$pat" || true
}

# sid_dkms_module KVER: SID_KO, the module DKMS built for KVER from the sid
# .deb (sid-debs.sh, in the packaging job: waited for); else a failure, and
# the boot keeps the tree's module.  The sid package is proven on the kernel
# it is built for by this boot's suite.
sid_dkms_module() {
	local dkms=$FZ_CACHE/sid/debs/dkms-$1.ko name="kernel 7 boots the module DKMS built from the sid .deb"
	while [[ ! -e $FZ_RESULTS/sid-debs.rc && -n ${PACKAGING_PID:-} ]] &&
		kill -0 "$PACKAGING_PID" 2>/dev/null; do
		sleep 5
	done
	if [[ -s $dkms && $dkms -nt $FZ_RESULTS/payload && $(modinfo -F vermagic "$dkms") == "$1 "* ]]; then
		result ok "$name ($dkms)"
		SID_KO=$dkms
	else
		result fail "$name" "no $dkms from this run (sid-debs.sh): the tree's module instead"
		return 1
	fi
}

# boot_one KID KVER CPU KO PAYLOAD
boot_one() {
	local kid=$1 kver=$2 cpu=$3 ko=$4 payload=$5 log rc=0 f0=$FAILED p0=$PASSED t0=$SECONDS
	local want got bad try spoiled again='' timeout=$FZ_VM_TIMEOUT
	log=$FZ_RESULTS/$(fz_sanitize "$kid")-$(fz_sanitize "$cpu").log
	printf -- '---- kernel %s (%s) / cpu %s ----\n' "$kid" "$kver" "$cpu"
	local env_line='' append quick=1 smoke=0 first=0 progs dd_mib
	local oldest=${FZ_KERNELS%% *} newest=${FZ_KERNELS##* }
	[[ $cpu != "${FZ_CPUS%% *}" ]] || first=1
	if [[ $first == 1 && $kid == 7 && ${FZ_SID_DEBS:-1} != 0 ]]; then
		sid_dkms_module "$kver" && ko=$SID_KO
	fi
	# The smoke test (fio's engines, fzbench) on the oldest and the newest
	# kernel: it does not depend on the CPU model, and what it calls
	# (psync, libaio, io_uring, splice) changes between those two ends.
	[[ $first == 0 || ($kid != "$oldest" && $kid != "$newest") ]] || smoke=1
	[[ $first == 0 || $kid != "${FZ_FULL_KERNEL:-7}" ]] || quick=0
	[[ -z ${FZ_FULL_ALL:-} ]] || quick=0
	[[ -z ${BOOT_QUICK:-} ]] || quick=$BOOT_QUICK smoke=0
	((quick)) || ((timeout >= FZ_FULL_TIMEOUT)) || timeout=$FZ_FULL_TIMEOUT
	progs=$(model_field "$cpu" 4) || progs=''
	# the README's 4 GiB dd where the loads are full size or the smoke test
	# runs, 1 GiB in the other boots: the same extents, a quarter the time
	dd_mib=1024
	((quick && !smoke)) || dd_mib=4096
	env_line="export FZ_QUICK=$quick SMOKE_ALL=$smoke DD_MIB=$dd_mib FZ_FUZZ=${FZ_FUZZ:-1} FZ_PROGS='$progs' ${BOOT_ENV:-}"
	if want=$(model_field "$cpu" 2); then env_line+=" FZ_EXPECT_VARIANT=$want"; fi
	append=$(model_field "$cpu" 3) || append=''
	append+=${BOOT_APPEND:+${append:+ }$BOOT_APPEND}
	if [[ $append == *fastzero.shared_clear=driver* &&
		" $(modinfo -F shared_clear "$ko") " != *" driver "* ]]; then
		append=${append/ fastzero.shared_clear=driver/}
		append=${append/fastzero.shared_clear=driver/}
		printf '  (shared_clear=driver: this kernel lacks it, the module says)\n'
	fi
	[[ -z $append ]] || printf '  (kernel command line + %s)\n' "$append"
	for try in 1 2; do
		rc=0
		"$FZ_VM_DIR/run-vm.sh" --kernel "$kid" --cpu "$cpu" --module "$ko" --payload "$payload" \
			--cmd "$env_line
$GUEST_CMD" --timeout "$timeout" --log "$log" ${append:+--append "$append"} \
			>/dev/null 2>"$log.host" || rc=$?
		spoiled=$(boot_spoiled "$log")
		[[ -n $spoiled && $try == 1 ]] || break
		printf '  note  boot 1: the kernel failed before the module was loaded, booting once more: %s\n' \
			"$spoiled"
		printf '        (first boot'"'"'s log: %s.boot1)\n' "$log"
		mv "$log" "$log.boot1"
		mv "$log.host" "$log.boot1.host"
		[[ ! -e $log.qemu-stderr ]] || mv "$log.qemu-stderr" "$log.boot1.qemu-stderr"
		again=" (booted twice)"
	done
	if grep -q 'FZ: done rc=' "$log"; then
		result ok "guest reached FZ: done"
	elif ((rc == 124)); then
		result fail "guest reached FZ: done" "TIMEOUT after $timeout s"
	elif ((rc == 126)); then
		result fail "guest reached FZ: done" "the kernel never reached the guest's init (FZ: NO INIT)"
	else
		result fail "guest reached FZ: done" "no FZ: done (run-vm status $rc; crash/panic?)"
		tail -n 5 "$log.host" | sed 's/^/        /'
	fi
	check_swap "$log"
	if grep -q '^FZ: insmod ok' "$log"; then result ok "insmod ok"; else result fail "insmod ok"; fi
	check_tap "$log"
	if grep -q '^FZ: dd ok' "$log"; then
		result ok "dd if=/dev/fastzero of=/dev/null bs=1M count=$dd_mib"
	else
		result fail "dd if=/dev/fastzero of=/dev/null bs=1M count=$dd_mib"
	fi
	want=$(expected_variant "$cpu" "$log")
	got=$(sed -n 's/^FZ: variant //p' "$log" | head -n1)
	if [[ "|$want|" == *"|$got|"* ]]; then
		result ok "clear_user_variant = $want"
	else
		result fail "clear_user_variant = $want" "guest reports '${got:-nothing}'"
	fi
	if check_cpu_flags "$cpu" "$log"; then
		result ok "guest CPU flags match model ($(grep -o 'erms=.*' "$log" | head -n1))"
	else
		result fail "guest CPU flags match model" "$(grep -o 'FZ: cpuflags.*' "$log" | head -n1)"
	fi
	if grep -q '^FZ: rmmod failed' "$log"; then result fail "rmmod fastzero"; else result ok "rmmod fastzero"; fi
	bad=$(module_dmesg "$log" |
		grep -E "$KERNEL_REPORT|Call [Tt]race|kmemleak" || true)
	if [[ -z $bad ]] && grep -q '^FZ: dmesg-end' "$log"; then
		result ok "dmesg clean (no WARNING/BUG/Oops/Call Trace/GPF/KASAN/kmemleak)"
	else
		if [[ -n $bad ]]; then
			result fail "dmesg clean" "offending lines:"
			printf '%s\n' "$bad" | head -n 20 | sed 's/^/        /'
		else
			result fail "dmesg clean" "no dmesg captured"
		fi
	fi
	check_debug "$log"
	printf '  suite: %d ok (%d skipped), %d not ok\n' "$TAP_OK" "$TAP_SKIP" "$TAP_NOT"
	awk '/^FZ: phase / { if (n) printf " %s %.0f s,", name, $4 - t; name = $3; t = $4; n++ }
		END { if (n) print "" }' "$log" | sed 's/^/  time:/; s/,$//'
	printf '  log: %s\n' "$log"
	SUMMARY+=("$(printf '%-6s %-22s %-10s %4d passed, %d failed (%d s)%s' "$kid" "$kver" "$cpu" \
		$((PASSED - p0)) $((FAILED - f0)) $((SECONDS - t0)) "$again")")
}

# ---------- per kernel ----------

# cold_or_warm WHAT LOG: CW=cold when LOG shows that something was fetched
# or built (debootstrap, a download, a package install, the guest's image),
# and WHAT is remembered for the time table's total; else CW=warm.
COLD=()
cold_or_warm() {
	CW=warm
	if grep -qsE 'downloading|debootstrap|installing|building the Debian guest image' "$2"; then
		COLD+=("$1")
		CW=cold
	fi
}

# run_kind: the time table's verdict on the whole run.
run_kind() {
	if ((${#COLD[@]})); then
		local IFS=,
		echo "cold: fetched or built ${COLD[*]}"
	else
		echo "warm: everything was in $FZ_CACHE"
	fi
}

# kernel_one KID PAYLOAD
kernel_one() {
	local kid=$1 payload=$2 out kver='' ko reason cpu blog t0=$SECONDS
	printf -- '==== kernel %s ====\n' "$kid"
	if ! out=$("$FZ_VM_DIR/kernels.sh" "$kid" 2>"$FZ_RESULTS/kernel-$kid.log"); then
		reason=$(sed -n 's/.*error: //p' "$FZ_RESULTS/kernel-$kid.log" | tail -n1)
		result fail "kernel $kid: skipped: ${reason:-cannot obtain kernel} (log: $FZ_RESULTS/kernel-$kid.log)"
		SUMMARY+=("$(printf '%-6s %-22s SKIPPED (counted as failure): %s' "$kid" '-' "${reason:-}")")
		return 0
	fi
	kver=$(sed -n 's/^KVER=//p' <<<"$out")
	if [[ " ${TESTED_KVERS[*]} " == *" $kver "* ]]; then
		result ok "kernel $kid is $kver, tested above"
		SUMMARY+=("$(printf '%-6s %-22s same as a kernel above: not booted again' "$kid" "$kver")")
		return 0
	fi
	TESTED_KVERS+=("$kver")
	blog=$FZ_RESULTS/build-$(fz_sanitize "$kid").log
	if ! ko=$("$FZ_VM_DIR/build-module.sh" --kernel "$kid" --log "$blog" 2>"$blog.host"); then
		result fail "$kid ($kver): module builds W=1 clean" "log: $blog"
		sed 's/^/        /' "$blog.host" | tail -n 40
		SUMMARY+=("$(printf '%-6s %-22s BUILD FAILED: boots not run' "$kid" "$kver")")
		return 0
	fi
	result ok "$kid ($kver): module builds W=1 clean"
	cold_or_warm "kernel $kid" "$FZ_RESULTS/kernel-$kid.log"
	SUMMARY+=("$(printf '%-6s %-22s fetch + module build (%d s, %s)' "$kid" "$kver" \
		$((SECONDS - t0)) "$CW")")
	for cpu in $FZ_CPUS; do
		boot_one "$kid" "$kver" "$cpu" "$ko" "$payload"
	done
}

# run_flavours PAYLOAD: Debian's other amd64 flavours, rt (PREEMPT_RT, so no
# THP) and cloud.  FZ_FLAVOUR_BOOTS boot once each, -cpu max, quick loads;
# FZ_FLAVOUR_BUILDS are compiled only (their headers, no image): a few
# seconds each, while the debug kernels compile.
run_flavours() {
	local payload=$1 id ko kver blog t0
	[[ -n $FZ_FLAVOUR_BOOTS$FZ_FLAVOUR_BUILDS ]] || return 0
	echo "==== Debian's kernel flavours: rt, cloud ===="
	for id in $FZ_FLAVOUR_BOOTS; do
		FZ_CPUS=max BOOT_QUICK=1 kernel_one "$id" "$payload"
	done
	for id in $FZ_FLAVOUR_BUILDS; do
		t0=$SECONDS blog=$FZ_RESULTS/build-$id.log
		if ko=$(FZ_HEADERS_ONLY=1 "$FZ_VM_DIR/build-module.sh" --kernel "$id" --log "$blog" \
			2>"$blog.host"); then
			kver=${ko%/driver/fastzero.ko} kver=${kver##*/}
			result ok "$id ($kver): module builds W=1 clean (compile only)"
			cold_or_warm "flavour $id" "$blog.host"
			SUMMARY+=("$(printf '%-6s %-22s headers + module build only (%d s, %s)' "$id" "$kver" \
				$((SECONDS - t0)) "$CW")")
		else
			result fail "$id: module builds W=1 clean (compile only)" "log: $blog.host"
			tail -n 20 "$blog.host" | sed 's/^/        /'
			SUMMARY+=("$(printf '%-6s %-22s BUILD FAILED (compile only)' "$id" -)")
		fi
	done
}

# run_arm64: Debian's arm64 kernels under qemu-system-aarch64 (TCG), each
# under every FZ_ARM64_CPU_MODELS model, quick loads, the suite
# cross-compiled; the module cross-built against each kernel's headers in
# the sid chroot (kernels.sh).  In the matrix's lane, before the debug
# kernels: on a cold run that lane waits there for a compile, which then
# gets less of the CPU, so the tier costs its CPU time either way.
run_arm64() {
	local payload=$FZ_RESULTS/payload-arm64 id cpus nomops models
	[[ -n $FZ_ARM64_KERNELS ]] || return 0
	echo "==== arm64: Debian's arm64 kernels, qemu-system-aarch64 ===="
	build_payload "$payload" arm64 || return 0
	arm64_userspace
	cpus=$(printf '%s\n' "${FZ_ARM64_CPU_MODELS[@]}" | cut -d: -f1 | tr '\n' ' ')
	nomops=$(printf '%s\n' "${FZ_ARM64_CPU_MODELS[@]}" | awk -F: '$2 == "unrolled" { print $1 }')
	for id in $FZ_ARM64_KERNELS; do
		models=$cpus
		[[ $id != 6.1-arm64 ]] || models=$nomops
		BOOT_ARCH=arm64 FZ_CPUS=$models BOOT_QUICK=1 kernel_one "$id" "$payload"
	done
}

# arm64_userspace: userspace/ cross-built for arm64 (the benchmarks, the
# model, fzbench: make model and make microbench for an arm64 user), and
# clearbench --self-test run under qemu-aarch64 with each FZ_ARM64_CPU_MODELS
# model: the driver's arm64 loops (their plain flavour), every length 0..320
# at every offset 0..63 and longer ones, byte for byte; mops must run where
# the model has FEAT_MOPS, and is a SKIP where it has not.
arm64_userspace() {
	local o=$FZ_RESULTS/userspace-arm64 cpu line variant
	if ! make -C "$FZ_REPO/userspace" O="$o" CC=aarch64-linux-gnu-gcc >"$o.log" 2>&1; then
		result fail "userspace builds for arm64 (make -C userspace CC=aarch64-linux-gnu-gcc)" "log: $o.log"
		return 0
	fi
	result ok "userspace builds for arm64 (clearbench, readmodel, refline, fzbench)"
	for cpu in $(printf '%s\n' "${FZ_ARM64_CPU_MODELS[@]}" | cut -d: -f1); do
		variant=$(BOOT_ARCH=arm64 model_field "$cpu" 2)
		while IFS= read -r line; do
			case $line in
			"ok "*"# SKIP"*)
				# a capability the CPU lacks: FEAT_MOPS, on a model without
				# it; any other loop not run is a failure
				if [[ $line == *" - mops_"*"# SKIP this CPU has no FEAT_MOPS"* && $variant != mops ]]; then
					printf '  skip  arm64 %s loops: %s\n' "$cpu" "${line#ok }"
				else
					result fail "arm64 $cpu loops (qemu-aarch64): ${line#ok }" "a loop the model runs"
				fi
				;;
			"ok "*) result ok "arm64 $cpu loops (qemu-aarch64): ${line#ok }" ;;
			"not ok "*) result fail "arm64 $cpu loops (qemu-aarch64): ${line#not ok }" ;;
			esac
		done < <("$FZ_VM_DIR/kernels.sh" --arm64-run "$cpu" "$o/clearbench" --self-test 2>>"$o.log" ||
			echo "not ok - clearbench --self-test exited $? (log: $o.log)")
	done
}

# ---------- packaging tiers: the Debian guest, the sid packages ----------

# start_packaging: tests/vm/debian-guest.sh boots a full Debian 13 guest
# that does what a new user does (README, make install, DKMS, udev,
# modprobe.d, modules-load.d, signing, native make bench); then
# tests/vm/sid-debs.sh builds, lintian-checks, installs and DKMS-builds the
# Debian packages for sid's kernel in the sid chroot (no VM).  They run in
# the background, one after the other, beside the matrix's boots
# (FZ_DEBIAN_BESIDE=0: before them): their steps are DKMS builds, apt and
# depmod, mostly one busy CPU, so they and the matrix's guest share the 2
# cores instead of each leaving one idle.  Then, in the same job, the debug
# kernel tier (run_debug_kernel; FZ_DEBUG_BESIDE=0: after the matrix
# instead): from there to the matrix's end the second core would be idle.
# The matrix, once done, boots the debug kernels this job has not begun
# yet: whichever of the two is free first takes the next one.
# finish_packaging waits for them and counts their results.
# FZ_DEBIAN_GUEST=0 and FZ_SID_DEBS=0 leave each tier out.
PACKAGING_TIERS=()
# sid-debs first: kernel 7's first boot loads the module it DKMS-built.
[[ ${FZ_SID_DEBS:-1} == 0 ]] || PACKAGING_TIERS+=(sid-debs)
[[ ${FZ_DEBIAN_GUEST:-1} == 0 ]] || PACKAGING_TIERS+=(debian-guest)

DEBUG_BESIDE=${FZ_DEBUG_BESIDE:-1}
[[ -n $FZ_DEBUG_KERNELS ]] || DEBUG_BESIDE=0

# packaging_job PAYLOAD: start_packaging's background job.  Its counts,
# summary lines and cold parts are its own (a subshell): the debug tier
# leaves them in debug-tier.* for count_debug_beside.
packaging_job() {
	local tier t0 rc
	for tier in "${PACKAGING_TIERS[@]}"; do
		t0=$(date +%s) rc=0
		"$FZ_VM_DIR/$tier.sh" >"$FZ_RESULTS/$tier.tap" 2>"$FZ_RESULTS/$tier.log" || rc=$?
		echo "$rc $(($(date +%s) - t0))" >"$FZ_RESULTS/$tier.rc"
	done
	[[ $DEBUG_BESIDE != 0 ]] || return 0
	PASSED=0 FAILED=0 SUMMARY=() COLD=()
	run_debug_kernel "$1" >"$FZ_RESULTS/debug-tier.out" 2>&1
	echo "$PASSED $FAILED" >"$FZ_RESULTS/debug-tier.counts"
	printf '%s\n' "${SUMMARY[@]}" >"$FZ_RESULTS/debug-tier.summary"
	printf '%s\n' "${COLD[@]}" >"$FZ_RESULTS/debug-tier.cold"
}

# start_packaging PAYLOAD
start_packaging() {
	PACKAGING_PID=
	((${#PACKAGING_TIERS[@]})) || [[ $DEBUG_BESIDE != 0 ]] || return 0
	packaging_job "$1" &
	PACKAGING_PID=$!
	[[ ${FZ_DEBIAN_BESIDE:-1} != 0 ]] || finish_packaging
}

# count_tier TIER LABEL WHAT: TIER's TAP lines as results "LABEL: ...",
# its exit status, and its line of the time table (WHAT: the tier).
count_tier() {
	local tier=$1 label=$2 line rc secs f0=$FAILED p0=$PASSED
	read -r rc secs <"$FZ_RESULTS/$tier.rc" || rc=none secs=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) result ok "$label: ${line#ok - }" ;;
		"not ok - "*) result fail "$label: ${line#not ok - }" ;;
		"# "*) printf '        %s\n' "${line#\# }" ;;
		esac
	done <"$FZ_RESULTS/$tier.tap"
	if [[ $rc != 0 && $FAILED == "$f0" ]]; then
		result fail "$label: $tier.sh exited $rc" "log: $FZ_RESULTS/$tier.log"
	fi
	cold_or_warm "$3" "$FZ_RESULTS/$tier.log"
	SUMMARY+=("$(printf '%-6s %-22s %4d passed, %d failed (%d s%s, %s)' "${label%% *}" "$3" \
		$((PASSED - p0)) $((FAILED - f0)) "$secs" \
		"$([[ ${FZ_DEBIAN_BESIDE:-1} == 0 ]] || echo ', beside the matrix')" "$CW")")
}

finish_packaging() {
	[[ -n $PACKAGING_PID ]] || return 0
	echo "==== packaging: the Debian guest, the sid packages ===="
	wait "$PACKAGING_PID" || true
	PACKAGING_PID=
	[[ ${FZ_DEBIAN_GUEST:-1} == 0 ]] || count_tier debian-guest "debian guest" "trixie guest, 6.12"
	[[ ${FZ_SID_DEBS:-1} == 0 ]] || count_tier sid-debs "sid packages" "sid chroot, kernel 7"
	[[ $DEBUG_BESIDE != 0 ]] || return 0
	count_debug_beside
}

# count_debug_beside: what run_debug_kernel did in start_packaging's job:
# its output, its counts, its time table lines and what it built.
count_debug_beside() {
	local p=0 f=0 line
	cat "$FZ_RESULTS/debug-tier.out" 2>/dev/null
	if ! read -r p f 2>/dev/null <"$FZ_RESULTS/debug-tier.counts"; then
		result fail "debug kernels: the tier beside the matrix finished" \
			"no counts (log: $FZ_RESULTS/debug-tier.out)"
		return 0
	fi
	PASSED=$((PASSED + p)) FAILED=$((FAILED + f))
	while IFS= read -r line; do
		[[ -z $line ]] || SUMMARY+=("$line")
	done <"$FZ_RESULTS/debug-tier.summary"
	while IFS= read -r line; do
		[[ -z $line ]] || COLD+=("$line")
	done <"$FZ_RESULTS/debug-tier.cold"
}

# ---------- debug kernel tier ----------

# start_debug_builds: compile the FZ_DEBUG_KERNELS (debug-kernel.sh) in the
# background, one after the other, as SCHED_IDLE: they get the CPU time the
# tiers before leave idle (a TCG guest keeps about one of the 2 cores busy)
# and give it back at once when a guest wants it.  Each writes
# debug-build-ID.{log,rc}; run_debug_kernel boots each kernel as soon as
# its rc is there, the next one compiling beside that boot.
start_debug_builds() {
	local id
	DEBUG_BUILD_PID=
	[[ -n $FZ_DEBUG_KERNELS ]] || return 0
	for id in $FZ_DEBUG_KERNELS; do
		[[ $id == *-debug ]] || result fail "FZ_DEBUG_KERNELS: '$id' is not a debug kernel id"
	done
	(
		for id in $FZ_DEBUG_KERNELS; do
			rc=0
			chrt --idle 0 "$FZ_VM_DIR/debug-kernel.sh" "${id%-debug}" \
				>/dev/null 2>"$FZ_RESULTS/debug-build-$id.log" || rc=$?
			echo "$rc" >"$FZ_RESULTS/debug-build-$id.rc"
		done
	) &
	DEBUG_BUILD_PID=$!
}

# debug_items: what run_debug_kernel's callers claim, in order: each debug
# kernel, and the upstream proof after 7-debug (it boots that kernel twice).
debug_items() {
	local id
	for id in $FZ_DEBUG_KERNELS; do
		echo "$id"
		[[ $id != 7-debug || ${FZ_UPSTREAM_PROOF:-1} != 1 ]] || echo upstream
	done
}

# wait_debug_build ID LABEL: until start_debug_builds has built ID (or
# stopped); the wait goes into the time table's LABEL line.
wait_debug_build() {
	local t0
	t0=$(date +%s)
	while [[ ! -e $FZ_RESULTS/debug-build-$1.rc ]] && kill -0 "$DEBUG_BUILD_PID" 2>/dev/null; do
		sleep 5
	done
	SUMMARY+=("$(printf '%-6s %-22s waited %d s for its compile' "$2" "$1" $(($(date +%s) - t0)))")
}

# run_debug_kernel PAYLOAD: the suite once more on each debug kernel (KASAN,
# kmemleak, lockdep, DEBUG_VM, DEBUG_ATOMIC_SLEEP, fault injection: t_fail
# runs there), -cpu max, quick loads, a fuzz of up to FZ_DEBUG_FUZZ_SECONDS
# (60) each, with shared_clear=driver, the mode with the most module code
# on the fault path (debug.config has no init_on_alloc: the driver's clear
# runs); and the upstream proof (run_upstream_proof).  Always run, cold or
# warm; a kernel that fails to build is a FAIL.  Beside the matrix, each
# item is run by whichever caller claims it first (mkdir debug-claim-ITEM):
# the packaging job or, after the matrix, the main one.
run_debug_kernel() {
	local payload=$1 id t1 f0 p0 rc how
	echo "==== debug kernels ===="
	if [[ -z $FZ_DEBUG_KERNELS ]]; then
		echo "  (none: FZ_DEBUG_KERNELS=none)"
		return 0
	fi
	for id in $(debug_items); do
		[[ $DEBUG_BESIDE == 0 ]] || mkdir "$FZ_RESULTS/debug-claim-$id" 2>/dev/null || continue
		if [[ $id == upstream ]]; then
			wait_debug_build 7-debug upstr
			if [[ $(cat "$FZ_RESULTS/debug-build-7-debug.rc" 2>/dev/null) == 0 ]]; then
				run_upstream_proof
			else
				result fail "upstream proof: 7-debug built" "log: $FZ_RESULTS/debug-build-7-debug.log"
			fi
			continue
		fi
		wait_debug_build "$id" debug
		f0=$FAILED p0=$PASSED t1=$(date +%s)
		rc=$(cat "$FZ_RESULTS/debug-build-$id.rc" 2>/dev/null || echo none)
		how=$(sed -n 's/.*debug kernel built in \([0-9]*\) s$/cold: compiled in \1 s, beside the tiers above/p' \
			"$FZ_RESULTS/debug-build-$id.log" 2>/dev/null)
		if [[ $rc != 0 ]]; then
			result fail "$id: debug kernel builds" "status $rc, log: $FZ_RESULTS/debug-build-$id.log"
			tail -n 20 "$FZ_RESULTS/debug-build-$id.log" 2>/dev/null | sed 's/^/        /'
			SUMMARY+=("$(printf '%-6s %-22s BUILD FAILED: not booted' debug "$id")")
			continue
		fi
		result ok "$id: debug kernel builds (${how:-warm: cached})"
		[[ -z $how ]] || COLD+=("$id")
		FZ_CPUS=max BOOT_QUICK=1 FZ_VM_TIMEOUT=${FZ_DEBUG_TIMEOUT:-1800} \
			BOOT_APPEND=fastzero.shared_clear=driver \
			BOOT_ENV="FZ_FUZZ_OPS=${FZ_DEBUG_FUZZ_OPS:-10000} FZ_FUZZ_SECONDS=${FZ_DEBUG_FUZZ_SECONDS:-60} FZ_TIMEOUT=900" \
			kernel_one "$id" "$payload"
		SUMMARY+=("$(printf '%-6s %-22s %4d passed, %d failed (%d s; build: %s)' debug "$id" \
			$((PASSED - p0)) $((FAILED - f0)) $(($(date +%s) - t1)) "${how:-warm: cached}")")
	done
}

# kernel_choices: each id's version as the run chose it, and why.
kernel_choices() {
	# shellcheck disable=SC2034 # KIMG: set by the sourced file, not shown
	local f KVER KIMG KWHY
	for f in "$FZ_RUN_KERNELS"/*.env; do
		[[ -s $f ]] || continue
		# shellcheck source=/dev/null
		source "$f"
		printf '  %-6s %-22s chosen: %s\n' "$(basename "$f" .env)" "$KVER" "$KWHY"
	done
}

# Keep the 10 newest check-* result dirs.
prune_old_results() {
	local d
	find "$FZ_CACHE/logs" -maxdepth 1 -type d -name 'check-2*' -printf '%T@ %p\n' 2>/dev/null |
		sort -rn | tail -n +11 | cut -d' ' -f2- | while read -r d; do rm -rf "$d"; done
}

# run_upstream_proof: upstream/'s series in the 7-debug kernel, booted, the
# suite against the patched and the unpatched /dev/zero (upstream-proof.sh);
# its PASS and FAIL lines are counted here.
run_upstream_proof() {
	local out t0=$SECONDS p f
	echo "==== upstream series: /dev/zero patched in the 7-debug kernel ===="
	# its status is its FAIL lines, counted below
	out=$("$FZ_VM_DIR/upstream-proof.sh" 2>"$FZ_RESULTS/upstream-proof.err") || true
	printf '%s\n' "$out"
	p=$(grep -c '^  PASS  ' <<<"$out" || true)
	f=$(grep -c '^  FAIL  ' <<<"$out" || true)
	if ((p + f == 0)); then
		result fail "upstream proof ran" "$(tail -n 3 "$FZ_RESULTS/upstream-proof.err" | tr '\n' ' ')"
		f=1
	else
		PASSED=$((PASSED + p)) FAILED=$((FAILED + f))
	fi
	SUMMARY+=("$(printf '%-6s %-22s %4d passed, %d failed (%d s)' upstr "7-debug + upstream/" \
		"$p" "$f" $((SECONDS - t0)))")
}

main() {
	local t0 payload kid
	t0=$(date +%s)
	# FZ_RESULTS may be elsewhere: logs/ is still where check-latest goes.
	mkdir -p "$FZ_RESULTS" "$FZ_CACHE/logs"
	prune_old_results
	ln -sfn "$FZ_RESULTS" "$FZ_CACHE/logs/check-latest"
	printf '==== fastzero check: kernels [%s] cpus [%s] accel %s results %s ====\n' \
		"$FZ_KERNELS" "$FZ_CPUS" "$(fz_accel)" "$FZ_RESULTS"
	# the kernels are chosen from the lists as the archive is today
	fz_apt_lists_fresh 2>>"$FZ_RESULTS/deps.log"
	if ! fz_need_host_deps 2>>"$FZ_RESULTS/deps.log"; then
		result fail "host dependencies installed" "log: $FZ_RESULTS/deps.log"
	fi
	if [[ -z ${FZ_MODULE_SRC:-} && ! -f $FZ_REPO/driver/Kbuild ]]; then
		result fail "driver/Kbuild present in the repo"
	fi
	run_lint
	run_host_tests
	payload=$FZ_RESULTS/payload
	build_payload "$payload"
	SUMMARY+=("$(printf '%-6s %-22s host deps, lint, payload (%d s)' host - $(($(date +%s) - t0)))")
	start_debug_builds
	start_packaging "$payload"
	for kid in $FZ_KERNELS; do
		kernel_one "$kid" "$payload"
	done
	run_flavours "$payload"
	run_arm64
	run_debug_kernel "$payload"
	finish_packaging
	echo "==== time table: every tier and boot ($(fz_accel), $(nproc) CPUs) ===="
	printf '  %s\n' "${SUMMARY[@]}"
	printf '  %-6s %-22s %d s (%s)\n' total - $(($(date +%s) - t0)) "$(run_kind)"
	echo "==== kernels: the version each id took in this run, and why ===="
	kernel_choices
	[[ -z ${FZ_RESULTS:-} ]] || echo "  logs: $FZ_RESULTS"
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
}

main "$@"
