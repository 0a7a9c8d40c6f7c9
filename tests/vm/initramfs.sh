#!/usr/bin/env bash
# initramfs.sh: pack a guest initramfs = cached base (busybox, fio + libs, /init) + per-run part (module, payload, cmd).
#
# Usage: tests/vm/initramfs.sh --out <file.cpio.gz> --cmd '<shell cmd>' [--payload <dir>] [--module <ko>]
#        [--kmods <dir>] [--no-fio] [--prog <host path>]... [--busybox <static busybox>]
# The base archive is built once per (busybox, fio, init) content into
# $FZ_CACHE/initramfs/ and reused; the per-run archive is appended to it
# (the kernel unpacks concatenated cpio archives in order).
# Guest layout: /init, /bin/busybox (+ applet links), /usr/bin/fio + its ldd libs,
# /fastzero.ko, /payload/ (copy of --payload), /fz-cmd (the --cmd text),
# /kmods/ (--kmods: the kernel's own modules, loaded in kmods/order, and
# kmods/lacking: the guest modules the kernel does not have), each --prog
# at its host path with its ldd libs (per run, not cached). zram0,
# from kmods or built in, becomes a 1 GiB swap area, made but not enabled:
# the tests that want swap turn it on.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	sed -n '3,3p' "$0" >&2
	exit 2
}

# The guest's /init. Marker lines all start with "FZ: " (see run-vm.sh).
write_init() {
	cat >"$1" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
ip link set lo up 2>/dev/null
echo "FZ: boot kernel=$(uname -r) nproc=$(grep -c ^processor /proc/cpuinfo)"
erms=0; rep_good=0; fsrm=0; mops=0
grep -qw erms /proc/cpuinfo && erms=1
grep -qw rep_good /proc/cpuinfo && rep_good=1
grep -qw fsrm /proc/cpuinfo && fsrm=1
grep -qw mops /proc/cpuinfo && mops=1
echo "FZ: cpuflags erms=$erms rep_good=$rep_good fsrm=$fsrm mops=$mops"
# Debug kernels: forget the leak suspects from boot (two scans: kmemleak only
# reports an object unchanged since the previous scan), so that the scan after
# rmmod reports what was leaked while the module was in.
kml=/sys/kernel/debug/kmemleak
if [ -w $kml ]; then
	t0=$(date +%s)
	echo scan >$kml
	echo scan >$kml
	echo "FZ: kmemleak boot suspects cleared: $(grep -c '^unreferenced object' $kml) ($(($(date +%s) - t0)) s)"
	echo clear >$kml
fi
if [ -f /kmods/order ]; then
	for m in $(cat /kmods/order); do insmod /kmods/$m || echo "FZ: kmod $m failed"; done
fi
# Swap for the suite.  Only a kernel that has no zram at all (kernels.sh
# lists it in /kmods/lacking) is without it for a reason: FZ_NO_SWAP tells
# t_swap so; anything else that fails here is the harness's failure.
z=/sys/block/zram0
if [ -w $z/disksize ] && echo 1G >$z/disksize && mkswap /dev/zram0 >/dev/null; then
	echo "FZ: swap /dev/zram0 ready ($(sed 's/.*\[\(.*\)\].*/\1/' $z/comp_algorithm))"
elif [ ! -e $z ] && grep -qx zram /kmods/lacking 2>/dev/null; then
	export FZ_NO_SWAP="kernel $(uname -r) has no zram (neither a module nor built in)"
	echo "FZ: swap unavailable: $FZ_NO_SWAP"
else
	echo "FZ: swap unavailable"
fi
if [ -f /fastzero.ko ]; then
	echo "fastzero-harness: insmod" >/dev/kmsg
	# fastzero.<param>=<value> on the kernel command line, as modprobe passes them
	fzp=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^fastzero\.//p' | tr '\n' ' ')
	export FZ_MODULE_PARAMS="$fzp"	# the suite's reloads start from them
	# shellcheck disable=SC2086 # one word per parameter
	if insmod /fastzero.ko $fzp; then echo "FZ: insmod ok${fzp:+ ($fzp)}"; else echo "FZ: insmod failed"; fi
else
	echo "FZ: insmod skipped (no module)"
fi
p=/sys/class/misc/fastzero/policy
[ -r $p/clear_user_variant ] && echo "FZ: variant $(cat $p/clear_user_variant)"
mkdir -p /payload
cd /payload
sh /fz-cmd
rc=$?
cd /
if [ -f /fastzero.ko ]; then
	if ! grep -q '^fastzero ' /proc/modules; then echo "FZ: rmmod skipped (not loaded)"
	elif rmmod fastzero; then echo "FZ: rmmod ok"; else echo "FZ: rmmod failed"; fi
fi
if [ -w $kml ]; then
	echo scan >$kml
	echo scan >$kml
	echo "FZ: kmemleak-begin"
	cat $kml
	echo "FZ: kmemleak-end"
fi
[ ! -r /proc/lockdep_stats ] ||
	echo "FZ: debug_locks $(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)"
echo "FZ: dmesg-begin"
dmesg
echo "FZ: dmesg-end"
echo "FZ: done rc=$rc"
# QEMU runs with -no-reboot: the reset ends it
reboot -f
EOF
	chmod 755 "$1"
}

# copy_with_libs ROOT BIN...: copy binaries and every library ldd lists (+ loader).
copy_with_libs() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
		while read -r lib; do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done < <(ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' || true)
	done
}

# fio ioengine plugin dirs (only present when fio was built with dynamic engines).
fio_engine_files() {
	dpkg -L fio 2>/dev/null | grep -E '/fio/.*\.so$' || true
}

# build_base OUT WITH_FIO BUSYBOX
build_base() {
	local out=$1 with_fio=$2 busybox=$3 st
	st=$(mktemp -d "$FZ_CACHE/initramfs/base.XXXXXX")
	chmod 755 "$st"	# the guest's /: unprivileged tests must traverse it
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,payload,etc,lib64}
	cp "$busybox" "$st/bin/busybox"
	write_init "$st/init"
	if [[ $with_fio == 1 ]]; then
		local engines
		mapfile -t engines < <(fio_engine_files)
		copy_with_libs "$st" /usr/bin/fio "${engines[@]}"
	fi
	(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$st"
}

# base_archive WITH_FIO BUSYBOX: print the path of the (cached) base archive.
base_archive() {
	local with_fio=$1 busybox=$2 key out
	key=$({
		sha256sum "$busybox" "$0"
		[[ $with_fio == 1 ]] && sha256sum /usr/bin/fio
		echo "fio=$with_fio"
	} | sha256sum | cut -c1-16)
	out=$FZ_CACHE/initramfs/base-$key.cpio.gz
	mkdir -p "$FZ_CACHE/initramfs"
	(
		fz_lock "initramfs-base-$key"
		[[ -s $out ]] || {
			fz_log "building initramfs base (fio=$with_fio)"
			build_base "$out" "$with_fio" "$busybox"
		}
	)
	echo "$out"
}

main() {
	local out='' cmd='' payload='' module='' kmods='' with_fio=1 base st progs=()
	local busybox=/bin/busybox
	while (($#)); do
		case $1 in
		--out) out=$2 ;;
		--cmd) cmd=$2 ;;
		--payload) payload=$2 ;;
		--module) module=$2 ;;
		--kmods) kmods=$2 ;;
		--prog) progs+=("$2") ;;
		--busybox) busybox=$2 ;;
		--no-fio)
			with_fio=0
			shift
			continue
			;;
		*) usage ;;
		esac
		shift 2
	done
	[[ -n $out && -n $cmd ]] || usage
	fz_need_pkgs busybox-static cpio gzip
	[[ $with_fio == 0 ]] || fz_need_pkgs fio
	base=$(base_archive "$with_fio" "$busybox")
	st=$(mktemp -d)
	chmod 755 "$st"	# this archive's "." entry sets the mode of / again
	mkdir -p "$st/payload"
	[[ -z $payload ]] || cp -a "$payload/." "$st/payload/"
	[[ -z $module ]] || cp "$module" "$st/fastzero.ko"
	[[ -z $kmods || ! -d $kmods ]] || cp -a "$kmods" "$st/kmods"
	((${#progs[@]} == 0)) || copy_with_libs "$st" "${progs[@]}"
	printf '%s\n' "$cmd" >"$st/fz-cmd"
	{
		cat "$base"
		(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1)
	} >"$out"
	rm -rf "$st"
}

main "$@"
