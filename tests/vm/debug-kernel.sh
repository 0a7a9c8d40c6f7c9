#!/usr/bin/env bash
# debug-kernel.sh: build a KASAN/kmemleak/lockdep/fault-injection kernel (id 6.12-debug or 7-debug) from Debian's linux-source with tests/vm/debug.config.
#
# Usage: tests/vm/debug-kernel.sh FAMILY [--prepare | --built]
#   FAMILY     6.12: Debian 12's linux-source-6.12, built on the host into
#              $FZ_CACHE/debug-6.12;  7: the linux-source of sid's own kernel
#              (kernel id 7, e.g. linux-source-7.2), built in the sid chroot
#              into /fzdebug-7 there
#   --prepare  fetch, unpack and configure only (no compile)
#   --built    exit 0 if a build of the current recipe is cached, else 1
# Prints KVER=, VMLINUZ= (a host path), KDIR= and FZ_CHROOT= (KDIR is a path
# inside FZ_CHROOT when that is set) once built; kernels.sh reads them for id
# FAMILY-debug.  Progress goes to stderr, the compiler's output to build.log.
# A finished build is reused without any apt query; FZ_REFRESH=1 looks for a
# newer source and rebuilds only if there is one.  A change of debug.config
# (or of the family's lines below) reconfigures and rebuilds.
# The config: make allnoconfig with KCONFIG_ALLCONFIG=debug.config (only what
# the suite exercises), measured on 2 cores: ~8 min per kernel against
# 17-30 for defconfig + kvm_guest.config with the same debug options.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=kernels.sh
source "$FZ_VM_DIR/kernels.sh"

LOCALVERSION=-fzdebug
# The preemption model each family's Debian kernel is built with (their
# .config in linux-headers): 6.12 voluntary, 7.x lazy, both PREEMPT_DYNAMIC.
FAMILY_LINES_6=(CONFIG_PREEMPT_VOLUNTARY=y CONFIG_PREEMPT_DYNAMIC=y)
FAMILY_LINES_7=(CONFIG_PREEMPT_LAZY=y CONFIG_PREEMPT_DYNAMIC=y)
# What compiling a kernel needs, on the host or in the chroot.
BUILD_PKGS=(make gcc flex bison bc libelf-dev libssl-dev xz-utils)

usage() {
	sed -n '4,10p' "$0" >&2
	exit 2
}

# in_tree CMD...: run CMD where the tree is built (host, or the sid chroot
# without its lock: a compile must not hold up the module builds there).
in_tree() {
	if [[ -n $CHROOT ]]; then fz_sid_exec "$@"; else "$@"; fi
}

# setup FAMILY: sets SRC_PKG, WHERE, CHROOT, D (host path), DI (D as the
# build sees it), FAMILY_LINES.
setup() {
	local ver
	case $1 in
	6.12)
		SRC_PKG=linux-source-6.12 WHERE=host CHROOT=''
		D=$FZ_CACHE/debug-6.12 DI=$D
		FAMILY_LINES=("${FAMILY_LINES_6[@]}")
		;;
	7)
		WHERE=sid CHROOT=$FZ_SID_ROOT
		DI=/fzdebug-7 D=$CHROOT$DI
		FAMILY_LINES=("${FAMILY_LINES_7[@]}")
		SRC_PKG=$(cat "$D/.fz-srcpkg" 2>/dev/null || true)
		if [[ -z $SRC_PKG || -n ${FZ_REFRESH:-} ]]; then
			# sid's own kernel (id 7): its series names the source package
			ver=$("$FZ_VM_DIR/kernels.sh" 7 | sed -n 's/^KVER=//p')
			[[ $ver =~ ^([0-9]+\.[0-9]+) ]] || fz_die "kernel id 7 resolved to '$ver'"
			SRC_PKG=linux-source-${BASH_REMATCH[1]}
		fi
		;;
	*) usage ;;
	esac
	TREE=$D/linux
}

# fragment: debug.config and the family's lines, as the build reads it.
fragment() {
	cat "$FZ_VM_DIR/debug.config"
	printf '%s\n' "${FAMILY_LINES[@]}"
}

# recipe_id: identifies the config recipe (a change reconfigures + rebuilds);
# comments are not the recipe, "# CONFIG_X is not set" lines are.
recipe_id() {
	{ fragment | grep -v -E '^$|^#' ; fragment | grep -E '^# CONFIG_[A-Z0-9_]+ is not set$'
		echo "$LOCALVERSION"; } | sha256sum | cut -c1-16
}

# newest_version: the newest SRC_PKG version the apt lists offer.
newest_version() {
	fz_apt_q "$WHERE" apt-cache show "$SRC_PKG" 2>/dev/null | sed -n 's/^Version: //p' |
		sort -V | tail -n1
}

# fetch VER: download the source package and unpack its tarball into $TREE.
fetch() {
	local ver=$1 deb tmp
	[[ -f $TREE/.fz-version && $(cat "$TREE/.fz-version") == "$ver" ]] && return 0
	fz_log "downloading $SRC_PKG $ver (~160 MB)"
	rm -rf "$D/dl" && mkdir -p "$D/dl"
	if [[ $WHERE == sid ]]; then
		fz_sid_run sh -c "cd $DI/dl && apt-get -qq -o APT::Sandbox::User=root download $SRC_PKG=$ver" >&2
	else
		(cd "$D/dl" && apt-get -qq -o APT::Sandbox::User=root download "$SRC_PKG=$ver") >&2
	fi
	deb=$(find "$D/dl" -name "${SRC_PKG}_*.deb" | head -n1)
	[[ -n $deb ]] || fz_die "download of $SRC_PKG=$ver failed"
	fz_log "unpacking $(basename "$deb")"
	tmp=$D/unpack
	rm -rf "$tmp" "$TREE" "$D/.fz-config" "$D/.fz-built"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$SRC_PKG.tar.xz" | tar -xJ -C "$tmp"
	[[ -f $tmp/$SRC_PKG/Makefile ]] || fz_die "no $SRC_PKG/Makefile in the source tarball"
	mv "$tmp/$SRC_PKG" "$TREE"
	rm -rf "$tmp" "$D/dl"
	echo "$ver" >"$TREE/.fz-version"
	echo "$SRC_PKG" >"$D/.fz-srcpkg"
}

# configure: allnoconfig + the fragment; every line of it must hold.
configure() {
	local id line bad=()
	id=$(recipe_id)
	[[ -f $D/.fz-config && $(cat "$D/.fz-config") == "$id" && -f $TREE/.config ]] && return 0
	rm -f "$D/.fz-config" "$D/.fz-built"
	fz_log "configuring (allnoconfig + debug.config)"
	fragment >"$D/fragment.config"
	in_tree make -C "$DI/linux" LOCALVERSION="$LOCALVERSION" \
		KCONFIG_ALLCONFIG="$DI/fragment.config" allnoconfig >"$D/config.log" 2>&1 || {
		tail -n 30 "$D/config.log" >&2
		fz_die "configuring the debug kernel failed (log: $D/config.log)"
	}
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$TREE/.config" || bad+=("$line") ;;
		"# CONFIG_"*" is not set")
			line=${line#\# }
			grep -qE "^${line%% *}=" "$TREE/.config" && bad+=("${line%% *} set")
			;;
		esac
	done <"$D/fragment.config"
	((${#bad[@]} == 0)) || fz_die "debug.config not satisfied (renamed, or a dependency off): ${bad[*]}"
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
	fz_log "building bzImage + modules with -j$jobs (~8 min on 2 cores) -> log $D/build.log"
	if ! in_tree make -C "$DI/linux" LOCALVERSION="$LOCALVERSION" -j"$jobs" bzImage modules \
		>"$D/build.log" 2>&1; then
		tail -n 40 "$D/build.log" >&2
		fz_die "debug kernel build failed (log: $D/build.log)"
	fi
	fz_log "debug kernel built in $(($(date +%s) - t0)) s"
	in_tree make -s -C "$DI/linux" LOCALVERSION="$LOCALVERSION" kernelrelease >"$D/.fz-built"
}

# need_build_pkgs: the compiler and tools, where the tree is built.
need_build_pkgs() {
	local p missing=()
	if [[ $WHERE == host ]]; then
		fz_need_pkgs "${BUILD_PKGS[@]}"
		return
	fi
	fz_sid_ensure
	for p in "${BUILD_PKGS[@]}"; do
		# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
		fz_sid_run dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	fz_sid_apt_update
	fz_log "installing in the sid chroot: ${missing[*]}"
	fz_sid_run apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

main() {
	local mode=${2:-} ver
	[[ $# == 1 || $# == 2 ]] || usage
	setup "$1"
	case $mode in
	'' | --prepare) ;;
	--built) is_built && return 0 || return 1 ;;
	*) usage ;;
	esac
	[[ $WHERE == host ]] || fz_sid_ensure
	mkdir -p "$D"
	fz_lock "debug-$1"
	if [[ $mode == '' && -z ${FZ_REFRESH:-} ]] && is_built; then
		: # already built: no apt query
	else
		need_build_pkgs
		ver=$(newest_version)
		if [[ -z $ver ]]; then
			if [[ $WHERE == host ]]; then fz_apt_update; else FZ_REFRESH=1 fz_sid_apt_update; fi
			ver=$(newest_version)
		fi
		if [[ -z $ver && -f $TREE/.fz-version ]]; then
			ver=$(cat "$TREE/.fz-version")
			fz_log "$SRC_PKG not in the apt lists; keeping the unpacked $ver"
		fi
		[[ -n $ver ]] || fz_die "$SRC_PKG is not available from apt ($WHERE)"
		fetch "$ver"
		configure
		if [[ $mode == --prepare ]]; then
			fz_log "prepared $TREE ($ver); not compiled (--prepare)"
			return 0
		fi
		build
	fi
	printf 'KVER=%s\nVMLINUZ=%s\nKDIR=%s\nFZ_CHROOT=%s\n' "$(cat "$D/.fz-built")" \
		"$TREE/arch/x86/boot/bzImage" "$DI/linux" "$CHROOT"
}

main "$@"
