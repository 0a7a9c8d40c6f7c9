#!/usr/bin/env bash
# run-vm.sh: boot one kernel with one QEMU CPU model, load fastzero.ko, run a payload command, collect the serial log.
#
# CONTRACT (reused by benchmarks; keep stable):
#   tests/vm/run-vm.sh --kernel <id> --cpu <qemu -cpu string> --payload <host dir> \
#       --cmd '<shell command>' --log <file> [--mem 2G] [--smp 2] [--timeout SEC] \
#       [--module <ko> | --no-module] [--no-fio] [--append '<extra kernel args>'] [--prog <path>]...
#       [--vmlinuz <bzImage>]
#   <id>      kernel id: 6.1, 6.12, 7, 6.12-debug, 7-arm64 (see kernels.sh; fetched/built
#             into $FZ_CACHE on first use); an arm64 id boots qemu-system-aarch64 -M virt
#   --cpu     e.g. "max" (ERMS+REP_GOOD) or "max,-erms" (REP_GOOD only); a
#             +feature the host's QEMU lacks ("max,+fsrs") runs sid's QEMU
#   --module  use this .ko instead of building the repo's driver/ for <id> (W=1)
#   --no-module  boot without loading anything (baseline runs against /dev/zero)
#   --no-fio  leave fio out of the initramfs (smaller/faster boot)
#   --prog    a host program the guest gets at the same path, with its ldd
#             libraries (e.g. /bin/bash, /usr/bin/pv); repeatable
#   --vmlinuz boot this image instead of <id>'s (a rebuild of <id>'s tree,
#             e.g. the upstream series in the debug kernel; <id> still
#             names the kernel for the module build)
# Guest side: /init mounts proc, sysfs, devtmpfs (/dev), tmpfs (/tmp), debugfs;
#   the payload dir is at /payload (the cmd runs there with /bin/sh = busybox),
#   the module at /fastzero.ko, fio at /usr/bin/fio (with its libs), the
#   kernel's zram module and its dependencies loaded (distribution kernels).
#   Marker lines printed by the guest, in order:
#     FZ: boot kernel=<uname -r> nproc=<n>
#     FZ: cpuflags erms=<0|1> rep_good=<0|1> fsrm=<0|1> mops=<0|1>  (the guest kernel's view)
#     FZ: kmod <name>.ko failed                 (an insmod of the kernel's own modules)
#     FZ: swap /dev/zram0 ready (<comp>) | FZ: swap unavailable  (made, not on)
#       | FZ: swap unavailable: <reason>        (the kernel has no zram at all)
#     FZ: insmod ok | FZ: insmod failed | FZ: insmod skipped (no module)
#     FZ: variant <clear_user_variant>          (if the module exposes it)
#     ... the cmd's stdout/stderr ...
#     FZ: rmmod ok | FZ: rmmod failed | FZ: rmmod skipped (not loaded)
#     FZ: kmemleak-begin / <leak reports> / FZ: kmemleak-end  (kernels with
#         kmemleak: two scans after rmmod; boot-time suspects cleared before insmod)
#     FZ: debug_locks <0|1>                     (lockdep kernels: 1 = still armed)
#     FZ: dmesg-begin / <dmesg> / FZ: dmesg-end  (the kernel log has the line
#         "fastzero-harness: insmod" written to /dev/kmsg just before insmod)
#     FZ: done rc=<cmd exit status>
#   then poweroff -f.
# Host side: the serial console (CRs stripped) is streamed to stdout and written
#   to --log (default $FZ_CACHE/logs/vm-<kernel>-<cpu>.log). Exit status:
#     0   guest reached "FZ: done rc=0" and insmod was ok (or --no-module)
#     1   guest reached "FZ: done" but rc!=0 or insmod failed
#     2   setup error (bad args, kernel not obtainable, module build failed/warned)
#     124 QEMU killed after --timeout seconds (prints "FZ: TIMEOUT after N s")
#     125 QEMU exited without "FZ: done" (panic, crash, triple fault)
#     126 QEMU killed because the guest printed no "FZ: boot" within
#         FZ_BOOT_DEADLINE seconds (default 240; prints "FZ: NO INIT after
#         N s"): the kernel hung before the guest's init, before anything
#         of the module ran (seen once under TCG: 7.2, qemu64, silent for
#         13 minutes at 94% of a core, where the same boot takes 70 s)
# Devices: QEMU's "edu" test device (PCI 1234:11e8, no driver claims it):
#   t_signal maps its 1 MiB BAR through sysfs resource0 as slow, uncached
#   memory to read into.
# Accel: kvm when the host CPU has vmx/svm and /dev/kvm is usable, else tcg.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=kernels.sh
source "$FZ_VM_DIR/kernels.sh"

usage() {
	sed -n '4,7p' "$0" >&2
	exit 2
}

# init_watchdog LOG PIDFILE DEADLINE: kill QEMU (and leave $FZ_WORK/noinit)
# if LOG has no "FZ: boot" line DEADLINE seconds after the start.
init_watchdog() {
	local log=$1 pidfile=$2 deadline=$3 t=0
	while ((t < deadline)); do
		sleep 5
		t=$((t + 5))
		grep -q '^FZ: boot ' "$log" 2>/dev/null && return 0
	done
	[[ -s $pidfile ]] || return 0
	touch "$FZ_WORK/noinit"
	kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
}

# boot VMLINUZ INITRD CPU MEM SMP TIMEOUT APPEND LOG -> QEMU/timeout status
boot() {
	local vmlinuz=$1 initrd=$2 cpu=$3 mem=$4 smp=$5 tmo=$6 append=$7 log=$8 rc=0
	local accel wd
	local machine=() console=ttyS0
	accel=$(fz_accel)
	fz_qemu_resolve "$cpu" "${KARCH:-x86}"
	# arm64: QEMU's virt board (a PL011 serial port, PCIe for edu)
	[[ ${KARCH:-x86} != arm64 ]] || machine=(-M virt) console=ttyAMA0 accel=tcg
	fz_log "boot $KVER cpu=$cpu accel=$accel mem=$mem smp=$smp timeout=${tmo}s log=$log"
	: >"$log"
	init_watchdog "$log" "$FZ_WORK/qemu.pid" "${FZ_BOOT_DEADLINE:-240}" &
	wd=$!
	set +e
	timeout -k 10 "$tmo" "${FZ_QEMU[@]}" "${machine[@]}" -accel "$accel" -cpu "$cpu" -m "$mem" \
		-smp "$smp" -display none -vga none -monitor none -serial stdio -nic none \
		-device edu -pidfile "$FZ_WORK/qemu.pid" \
		-no-reboot -kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=$console panic=-1 quiet $append" \
		</dev/null 2>"$log.qemu-stderr" | sed -u 's/\r//g' | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	kill "$wd" 2>/dev/null || true
	wait "$wd" 2>/dev/null || true
	return "$rc"
}

main() {
	local kid='' cpu='' mem=2G smp=2 tmo=600 payload='' cmd='' log='' module=''
	local no_module=0 fio_flag=() append='' initrd rc=0 progs=() vmlinuz=''
	while (($#)); do
		case $1 in
		--kernel) kid=$2 ;;
		--cpu) cpu=$2 ;;
		--mem) mem=$2 ;;
		--smp) smp=$2 ;;
		--timeout) tmo=$2 ;;
		--payload) payload=$2 ;;
		--cmd) cmd=$2 ;;
		--log) log=$2 ;;
		--module) module=$2 ;;
		--append) append=$2 ;;
		--vmlinuz) vmlinuz=$2 ;;
		--prog) progs+=(--prog "$2") ;;
		--no-module | --no-fio)
			[[ $1 == --no-module ]] && no_module=1 || fio_flag=(--no-fio)
			shift
			continue
			;;
		*) usage ;;
		esac
		shift 2
	done
	[[ -n $kid && -n $cpu && -n $cmd ]] || usage
	[[ -z $payload || -d $payload ]] || fz_die "payload dir $payload missing"
	fz_need_pkgs qemu-system-x86 coreutils
	fz_kernel_resolve "$kid" >&2
	if [[ -n $vmlinuz ]]; then
		[[ -s $vmlinuz ]] || fz_die "--vmlinuz $vmlinuz: no such image"
		VMLINUZ=$vmlinuz
	fi
	log=${log:-$FZ_CACHE/logs/vm-$(fz_sanitize "$kid")-$(fz_sanitize "$cpu").log}
	mkdir -p "$(dirname "$log")"
	if [[ $no_module == 0 && -z $module ]]; then
		module=$("$FZ_VM_DIR/build-module.sh" --kernel "$kid") || exit 2
	fi
	FZ_WORK=$(mktemp -d)
	trap 'rm -rf "$FZ_WORK"' EXIT
	initrd=$FZ_WORK/initrd.cpio.gz
	if [[ $KARCH == arm64 ]]; then	# the guest's userland: arm64 busybox, no fio
		fz_arm64_userland
		fio_flag=(--no-fio --busybox "$FZ_ARM64_DIR/busybox")
	fi
	"$FZ_VM_DIR/initramfs.sh" --out "$initrd" --cmd "$cmd" ${payload:+--payload "$payload"} \
		${module:+--module "$module"} ${KMODS:+--kmods "$KMODS"} "${fio_flag[@]}" "${progs[@]}"
	boot "$VMLINUZ" "$initrd" "$cpu" "$mem" "$smp" "$tmo" "$append" "$log" || rc=$?
	if [[ -e $FZ_WORK/noinit ]]; then
		echo "FZ: NO INIT after ${FZ_BOOT_DEADLINE:-240} s" | tee -a "$log"
		return 126
	fi
	if ((rc == 124 || rc == 137)); then
		echo "FZ: TIMEOUT after $tmo s" | tee -a "$log"
		return 124
	fi
	if ! grep -q 'FZ: done rc=' "$log"; then
		fz_log "guest did not reach 'FZ: done' (qemu status $rc); qemu stderr:"
		cat "$log.qemu-stderr" >&2
		return 125
	fi
	if grep -q 'FZ: done rc=0$' "$log" && ! grep -q 'FZ: insmod failed' "$log"; then
		return 0
	fi
	return 1
}

main "$@"
