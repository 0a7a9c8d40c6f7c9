#!/usr/bin/env bash
# run-bench.sh - what `make bench` runs: /dev/fastzero vs /dev/zero, one table.
#
# Mode: native when root, the running kernel loads modules (/proc/modules) and
# its headers are installed (build, insmod, run here); otherwise a QEMU VM via
# tests/vm/run-vm.sh: KVM if usable, else TCG (software emulation: those
# numbers measure the emulator, and the clear-loop microbenchmark runs natively
# as well to give real-hardware numbers).
#
# usage: run-bench.sh                 the bench
#        run-bench.sh --check-vars    check the variables below and exit: 0,
#                                     or 64 with one line naming the valid values
# Env (checked first, before anything is built, fetched or booted):
#      QUICK=1               short run (~3 min on 2 cores), else (0 or unset)
#                            full (~20 min)
#      FZ_BENCH_MODE         force native or vm
#      FZ_BENCH_KERNEL       guest kernel id for VM mode (default 6.12; one of
#                            tests/vm/kernels.sh's FZ_KERNEL_IDS); KERNEL, as
#                            `make bench KERNEL=7` passes it, is the same
#      FZ_BENCH_CPU          QEMU -cpu (default max)
#      FZ_BENCH_MEM          guest memory (default: 3G quick, 4G TCG, 12G KVM)
#      FZ_BENCH_MMAP         fzbench --mmap-sizes (default: 64M quick, 1G TCG,
#                            1G,8G native/KVM)
#      FZ_BENCH_UNROLLED     the third series, /dev/fastzero with its
#                            force_variant parameter set to "unrolled" (the
#                            movq loop /dev/zero uses), in the read workloads:
#                            auto (default: under TCG only), 1 (always, if the
#                            parameter is writable) or 0 (never)
#      FZ_RESULTS            output dir (default results/)
# First, in every mode, the hardware model (userspace/readmodel, native
# userspace on the host CPU): /dev/zero's read() measured and emulated,
# fastzero's emulated with driver/policy.h; its table leads the output, and
# <date>-<host>-<uname -r>-native-model.{csv,txt} goes to FZ_RESULTS.
# Output: table on stdout, <date>-<host>-<kernel>-<mode>.{csv,svg,png} in
# FZ_RESULTS, the raw outputs in the matching -raw/ directory; TCG adds
# the clear loops timed natively on the host, <date>-<host>-<uname -r>-
# native-clearbench.{csv,svg,png} (microbench.sh).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
US_DIR=$(cd "$BENCH_DIR/.." && pwd)
REPO=$(cd "$US_DIR/.." && pwd)
QUICK=${QUICK:-0}
KERNEL_ID=${FZ_BENCH_KERNEL:-${KERNEL:-6.12}}
QCPU=${FZ_BENCH_CPU:-max}
RESULTS=${FZ_RESULTS:-$REPO/results}
DEV=/dev/fastzero
REF=/dev/zero

say() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}
loud() {
	local line='################################################################'
	printf '%s\n# %s\n%s\n' "$line" "$*" "$line" >&2
}

# check_vars: every variable above is one of its values, before any work
# (a wrong one would otherwise be ignored, or fail only after a download)
check_vars() {
	local bad=()
	# shellcheck source=SCRIPTDIR/../../tests/vm/kernels.sh
	source "$REPO/tests/vm/kernels.sh"
	[[ $QUICK == [01] ]] || bad+=("QUICK=$QUICK: 1 (the short run) or 0 (the full one)")
	if [[ -n ${KERNEL:-} && -n ${FZ_BENCH_KERNEL:-} && $KERNEL != "$FZ_BENCH_KERNEL" ]]; then
		bad+=("KERNEL=$KERNEL and FZ_BENCH_KERNEL=$FZ_BENCH_KERNEL differ: give one")
	fi
	fz_kernel_id_ok "$KERNEL_ID" ||
		bad+=("${FZ_BENCH_KERNEL:+FZ_BENCH_}KERNEL=$KERNEL_ID: the guest kernel id, one of $FZ_KERNEL_IDS")
	[[ ${FZ_BENCH_MODE:-native} == @(native|vm) ]] || bad+=("FZ_BENCH_MODE=$FZ_BENCH_MODE: native or vm")
	[[ ${FZ_BENCH_UNROLLED:-auto} == @(auto|0|1) ]] ||
		bad+=("FZ_BENCH_UNROLLED=$FZ_BENCH_UNROLLED: auto, 1 or 0")
	[[ ${FZ_BENCH_MEM:-1G} =~ ^[1-9][0-9]*[MG]$ ]] || bad+=("FZ_BENCH_MEM=$FZ_BENCH_MEM: a size such as 4G or 3072M")
	[[ ${FZ_BENCH_MMAP:-1G} =~ ^(0|[1-9][0-9]*[KMG]?)(,[1-9][0-9]*[KMG]?)*$ ]] ||
		bad+=("FZ_BENCH_MMAP=$FZ_BENCH_MMAP: sizes such as 64M or 1G,8G (0: none)")
	((${#bad[@]} == 0)) && return 0
	printf 'make bench: %s\n' "${bad[@]}" >&2
	exit 64
}

need_pkgs() {
	local p missing=()
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	say "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }
}

# want_pkgs PKG...: need_pkgs, but a package that cannot be installed (no
# network) only costs the rows that use it (the clients say which)
want_pkgs() {
	need_pkgs "$@" || say "could not install ${*}: the client rows that need them are left out"
}

accel() {
	if grep -qw -e vmx -e svm /proc/cpuinfo && [[ -r /dev/kvm && -w /dev/kvm ]]; then
		echo kvm
	else
		echo tcg
	fi
}

pick_mode() {
	case ${FZ_BENCH_MODE:-} in
	native) echo native; return ;;
	vm) accel; return ;;
	esac
	if [[ $EUID == 0 && -e /proc/modules && -d /lib/modules/$(uname -r)/build ]]; then
		echo native
	else
		accel
	fi
}

# collect.sh options for this mode
collect_opts() {
	local mode=$1 mmap
	case ${FZ_BENCH_UNROLLED:-auto} in
	1) printf '%s\n' -u ;;
	0) ;;
	*) [[ $mode != tcg ]] || printf '%s\n' -u ;;	# auto (main checks)
	esac
	if [[ $QUICK == 1 ]]; then
		mmap=${FZ_BENCH_MMAP:-64M}
		printf '%s\n' -q
	elif [[ $mode == tcg ]]; then
		mmap=${FZ_BENCH_MMAP:-1G}
	else
		mmap=${FZ_BENCH_MMAP:-1G,8G}
	fi
	printf '%s\n' -m "$mode" -M "$mmap"
}

run_native() {	# run_native RAWDIR
	local raw=$1 loaded=0 opts
	# As `make` builds it (same flags: no rebuild after the README's steps).
	make -C "$REPO" module KDIR="/lib/modules/$(uname -r)/build" >&2
	if [[ ! -e /sys/module/fastzero ]]; then
		insmod "$REPO/driver/fastzero.ko"
		loaded=1
	fi
	mapfile -t opts < <(collect_opts native)
	sh "$BENCH_DIR/collect.sh" "${opts[@]}" -o "$raw" "$DEV" "$REF" || true
	((loaded == 0)) || rmmod fastzero
}

# The payload: scripts, fastzero-run, fzbench, the job files and a GNU dd
# (its libc is in the guest with fio's libraries; busybox dd prints no timing).
make_payload() {	# make_payload DIR
	mkdir -p "$1/bin" "$1/fio-jobs"
	cp "$BENCH_DIR/collect.sh" "$BENCH_DIR/dd.sh" "$BENCH_DIR/clients.sh" "$BENCH_DIR/roles.sh" \
		"$US_DIR/fastzero-run" "$US_DIR/build/fzbench" "$1/"
	cp "$REPO"/fio-jobs/*.fio "$1/fio-jobs/"
	cp "$(command -v dd)" "$1/bin/dd"
}

# The clients' programs in the guest, at their host paths (run-vm.sh
# --prog): bash for fastzero-run, GNU cat and head (before busybox's in
# PATH), uutils' multi-call coreutils, pv.
CLIENT_PROGS=(/bin/bash /usr/bin/cat /usr/bin/head /usr/bin/coreutils /usr/bin/pv)

run_vm() {	# run_vm MODE RAWDIR
	local mode=$1 raw=$2 payload log mem tmo opts cmd rc=0 p progs=()
	[[ -x $REPO/tests/vm/run-vm.sh ]] || die "tests/vm/run-vm.sh missing: VM mode unavailable"
	payload=$(mktemp -d)
	make_payload "$payload"
	mapfile -t opts < <(collect_opts "$mode")
	if [[ $QUICK == 1 ]]; then
		mem=3G tmo=900
	elif [[ $mode == tcg ]]; then
		mem=4G tmo=2400
	else
		mem=12G tmo=1500
	fi
	mem=${FZ_BENCH_MEM:-$mem}
	for p in "${CLIENT_PROGS[@]}"; do
		[[ ! -x $p ]] || progs+=(--prog "$p")
	done
	cmd="sh ./collect.sh -e -o /tmp/fzb ${opts[*]} $DEV $REF"
	log=$raw.vm.log
	say "VM: kernel $KERNEL_ID, cpu $QCPU, $mode, mem $mem, timeout ${tmo}s, log $log"
	"$REPO/tests/vm/run-vm.sh" --kernel "$KERNEL_ID" --cpu "$QCPU" --mem "$mem" \
		--timeout "$tmo" --payload "$payload" --cmd "$cmd" --log "$log" "${progs[@]}" \
		| grep --line-buffered -E '^\[[0-9]+/[0-9]+\]|^FZ: (boot|insmod|variant|done)' >&2 || rc=$?
	rm -rf "$payload"
	[[ -s $log ]] || die "the VM did not start (run-vm.sh status $rc): no $log"
	mkdir -p "$raw"
	awk -v dir="$raw" '
		/^FZB: file-begin / { f = dir "/" $3; printf "" > f; next }
		/^FZB: file-end / { close(f); f = ""; next }
		f != "" { print >> f }' "$log"
	[[ -s $raw/meta.txt ]] || die "no results in $log (run-vm.sh status $rc)"
}

# The hardware model on the host CPU, before anything else (userspace only).
run_model() {	# run_model OUTBASE
	local args=(--csv "$1.csv")
	[[ $QUICK != 1 ]] || args+=(--quick)
	loud "HARDWARE MODEL (host CPU, userspace emulation): /dev/zero measured and" \
		"emulated, /dev/fastzero emulated with driver/policy.h - a model, not the device" 2>&1
	"$US_DIR/build/readmodel" "${args[@]}" | tee "$1.txt"
}

tcg_warning() {	# tcg_warning RAWDIR: on stdout, next to the table
	loud "WARNING: mode TCG - these numbers measure QEMU's software emulation," \
		"not the hardware (TCG runs rep stosb ~8x slower than a movq loop, the" \
		"opposite of real CPUs). Do not tune on them; see the native clearbench below." 2>&1
	if [[ $(sed -n 's/^unrolled=//p' "$1/meta.txt") == 1 ]]; then
		echo "# unrl/u.ratio: $DEV with force_variant=unrolled, /dev/zero's own movq loop, so u.ratio vs $REF isolates fastzero's 2 MiB chunks and read path from TCG's slow rep stosb."
	fi
}

main() {
	local mode kver host stamp base raw
	check_vars
	[[ ${1:-} != --check-vars ]] || exit 0
	need_pkgs gcc make fio gnuplot-nox jq
	want_pkgs pv rust-coreutils
	mode=$(pick_mode)
	case $mode in
	native) loud "MODE: NATIVE - module loaded into the running kernel $(uname -r)" ;;
	kvm) loud "MODE: KVM - QEMU/KVM guest, kernel $KERNEL_ID, cpu $QCPU" ;;
	tcg) loud "MODE: TCG - QEMU software emulation, kernel $KERNEL_ID: NOT hardware numbers" ;;
	esac
	[[ $mode == native ]] || need_pkgs qemu-system-x86 busybox-static
	make -s -C "$US_DIR" all >&2
	mkdir -p "$RESULTS"
	host=$(hostname -s 2>/dev/null || uname -n)
	run_model "$RESULTS/$(date +%Y%m%d-%H%M%S)-$host-$(uname -r)-native-model"
	raw=$(mktemp -d "$RESULTS/.raw.XXXXXX")
	if [[ $mode == native ]]; then
		run_native "$raw"
	else
		run_vm "$mode" "$raw"
	fi
	kver=$(sed -n 's/^kernel=//p' "$raw/meta.txt")
	stamp=$(date +%Y%m%d-%H%M%S)
	base=$RESULTS/$stamp-$host-$kver-$mode
	mv "$raw" "$base-raw"
	[[ ! -e $raw.vm.log ]] || mv "$raw.vm.log" "$base-raw/vm.log"
	[[ ! -e $raw.vm.log.qemu-stderr ]] || mv "$raw.vm.log.qemu-stderr" "$base-raw/qemu-stderr.txt"
	[[ $mode != tcg ]] || tcg_warning "$base-raw"
	"$BENCH_DIR/report.sh" "$base-raw" "$base"
	[[ $mode != tcg ]] || tcg_warning "$base-raw"
	if [[ $mode == tcg ]]; then
		loud "real hardware: the driver's clear loops in userspace (clearbench, mode native)" 2>&1
		QUICK=$QUICK CLEARBENCH=$US_DIR/build/clearbench \
			"$BENCH_DIR/microbench.sh" -o "$RESULTS/$stamp-$host-$(uname -r)-native-clearbench"
	fi
}

main "$@"
