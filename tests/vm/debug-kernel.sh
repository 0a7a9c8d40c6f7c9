#!/usr/bin/env bash
# debug-kernel.sh: fetch Debian's linux-source-6.12 and build a KASAN/kmemleak/lockdep debug kernel (kernel id 6.12-debug) into $FZ_CACHE/debug-6.12.
#
# Usage: tests/vm/debug-kernel.sh [--prepare | --built]
#   --prepare  fetch, unpack and configure only (no compile)
#   --built    exit 0 if a build of the current recipe is cached, else 1
# Prints KVER=, VMLINUZ=, KDIR= on stdout once built (kernels.sh reads them for
# id 6.12-debug); progress goes to stderr, the compiler's output to
# $FZ_CACHE/debug-6.12/build.log. Idempotent: a finished build is reused without
# any apt query; FZ_REFRESH=1 looks for a newer linux-source-6.12 and rebuilds
# only if there is one. Changing the config recipe below reconfigures and rebuilds.
# The compile (make bzImage + modules for Module.symvers) takes ~15 min on 2 cores.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SRC_PKG=linux-source-6.12
D=$FZ_CACHE/debug-6.12
TREE=$D/linux
LOCALVERSION=-fzdebug

# The config recipe: defconfig + kvm_guest.config, then these. ON must end up
# =y, OFF must end up unset (checked after olddefconfig).
CFG_ON=(MODULES MODULE_UNLOAD DEBUG_KERNEL
	KASAN KASAN_GENERIC KASAN_INLINE KASAN_VMALLOC
	DEBUG_KMEMLEAK PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_VM DEBUG_FS
	FAULT_INJECTION FAULT_INJECTION_DEBUG_FS FAILSLAB FAIL_PAGE_ALLOC
	FAULT_INJECTION_USERCOPY FAULT_INJECTION_STACKTRACE_FILTER
	CGROUPS MEMCG TRANSPARENT_HUGEPAGE IO_URING AIO SWAP ZRAM
	DEBUG_INFO_NONE DEVTMPFS TMPFS BLK_DEV_INITRD RD_GZIP SERIAL_8250_CONSOLE)
# (SMAP has no option since 5.19: always built in. OBJTOOL stays at its default.)
# KMEMLEAK_AUTO_SCAN off: the guest scans by hand after rmmod (see initramfs.sh).
# FAULT_INJECTION*: t_fail's fail-nth injection (slab, page allocator, user
# copies); ZRAM built in: a swap device without modules.  The guest boots from
# an initramfs with a serial console: no disk, USB, input or network driver is
# needed, and leaving them out saves compile time.
CFG_OFF=(KASAN_OUTLINE DEBUG_KMEMLEAK_AUTO_SCAN DEBUG_KMEMLEAK_DEFAULT_OFF
	DEBUG_INFO_BTF DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT DEBUG_INFO_DWARF4 DEBUG_INFO_DWARF5
	LOCALVERSION_AUTO MODULE_SIG
	DRM SOUND USB_SUPPORT WLAN WIRELESS CFG80211 NETFILTER ETHERNET IPV6
	NETWORK_FILESYSTEMS AGP
	ATA SCSI MD EXT4_FS HID INPUT_MOUSE PCCARD HIBERNATION)

# newest_version: the newest linux-source-6.12 version the apt lists offer.
newest_version() {
	apt-cache show "$SRC_PKG" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n1
}

# fetch VER: download the source package and unpack its tarball into $TREE.
fetch() {
	local ver=$1 dl deb tmp
	[[ -f $TREE/.fz-version && $(cat "$TREE/.fz-version") == "$ver" ]] && return 0
	fz_log "downloading $SRC_PKG $ver (~150 MB)"
	dl=$D/dl
	rm -rf "$dl" && mkdir -p "$dl"
	(cd "$dl" && apt-get -qq -o APT::Sandbox::User=root download "$SRC_PKG=$ver") >&2
	deb=$(find "$dl" -name "${SRC_PKG}_*.deb" | head -n1)
	[[ -n $deb ]] || fz_die "download of $SRC_PKG=$ver failed"
	fz_log "unpacking $(basename "$deb")"
	tmp=$D/unpack
	rm -rf "$tmp" "$TREE" "$D/.fz-config" "$D/.fz-built"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$SRC_PKG.tar.xz" | tar -xJ -C "$tmp"
	[[ -f $tmp/$SRC_PKG/Makefile ]] || fz_die "no $SRC_PKG/Makefile in the source tarball"
	mv "$tmp/$SRC_PKG" "$TREE"
	rm -rf "$tmp" "$dl"
	echo "$ver" >"$TREE/.fz-version"
}

# recipe_id: identifies the config recipe (a change reconfigures + rebuilds).
recipe_id() {
	printf '%s\n' "${CFG_ON[@]}" -- "${CFG_OFF[@]}" "$LOCALVERSION" | sha256sum | cut -c1-16
}

configure() {
	local id o bad=()
	id=$(recipe_id)
	[[ -f $D/.fz-config && $(cat "$D/.fz-config") == "$id" && -f $TREE/.config ]] && return 0
	rm -f "$D/.fz-config" "$D/.fz-built"
	fz_log "configuring (defconfig + kvm_guest.config + debug options)"
	{
		make -C "$TREE" defconfig
		make -C "$TREE" kvm_guest.config
		local args=(--set-str LOCALVERSION "$LOCALVERSION")
		for o in "${CFG_ON[@]}"; do args+=(--enable "$o"); done
		for o in "${CFG_OFF[@]}"; do args+=(--disable "$o"); done
		"$TREE/scripts/config" --file "$TREE/.config" "${args[@]}"
		make -C "$TREE" olddefconfig
	} >"$D/config.log" 2>&1 || {
		tail -n 30 "$D/config.log" >&2
		fz_die "configuring the debug kernel failed (log: $D/config.log)"
	}
	for o in "${CFG_ON[@]}"; do
		grep -qx "CONFIG_$o=y" "$TREE/.config" || bad+=("$o not =y")
	done
	for o in "${CFG_OFF[@]}"; do
		grep -qE "^CONFIG_$o=[ym]" "$TREE/.config" && bad+=("$o still set")
	done
	((${#bad[@]} == 0)) || fz_die "config recipe not satisfied: ${bad[*]}"
	echo "$id" >"$D/.fz-config"
}

# is_built: a finished build of the current recipe is in the cache.
is_built() {
	[[ -s $D/.fz-built && -s $TREE/arch/x86/boot/bzImage && -s $TREE/Module.symvers &&
		-f $D/.fz-config && $(cat "$D/.fz-config") == "$(recipe_id)" ]]
}

build() {
	local t0 jobs
	is_built && return 0
	rm -f "$D/.fz-built"
	jobs=$(nproc)
	t0=$(date +%s)
	fz_log "building bzImage + modules with -j$jobs (~15 min on 2 cores) -> log $D/build.log"
	if ! make -C "$TREE" -j"$jobs" bzImage modules >"$D/build.log" 2>&1; then
		tail -n 40 "$D/build.log" >&2
		fz_die "debug kernel build failed (log: $D/build.log)"
	fi
	fz_log "debug kernel built in $(($(date +%s) - t0)) s"
	make -s -C "$TREE" kernelrelease >"$D/.fz-built"
}

main() {
	local prepare=0 ver
	case ${1:-} in
	'') ;;
	--prepare) prepare=1 ;;
	--built) is_built && return 0 || return 1 ;;
	*)
		sed -n '4,6p' "$0" >&2
		exit 2
		;;
	esac
	mkdir -p "$D"
	fz_lock debug-6.12
	if [[ $prepare == 0 && -z ${FZ_REFRESH:-} ]] && is_built; then
		: # already built: no apt query
	else
		fz_need_pkgs make gcc flex bison bc libelf-dev libssl-dev xz-utils
		ver=$(newest_version)
		if [[ -z $ver ]]; then
			fz_apt_update
			ver=$(newest_version)
		fi
		if [[ -z $ver && -f $TREE/.fz-version ]]; then
			ver=$(cat "$TREE/.fz-version")
			fz_log "$SRC_PKG not in the apt lists; keeping the unpacked $ver"
		fi
		[[ -n $ver ]] || fz_die "$SRC_PKG is not available from apt"
		fetch "$ver"
		configure
		if [[ $prepare == 1 ]]; then
			fz_log "prepared $TREE ($ver); not compiled (--prepare)"
			return 0
		fi
		build
	fi
	printf 'KVER=%s\nVMLINUZ=%s\nKDIR=%s\n' "$(cat "$D/.fz-built")" \
		"$TREE/arch/x86/boot/bzImage" "$TREE"
}

main "$@"
