#!/usr/bin/env bash
# build-module.sh: build fastzero.ko for one kernel id (W=1, any compiler warning fails) in $FZ_CACHE.
#
# Usage: tests/vm/build-module.sh --kernel <id> [--src <dir>] [--log <file>]
#   --src  tree holding Kbuild + driver/ (default: the repo root, or $FZ_MODULE_SRC)
# Prints the host path of the built .ko on stdout. Exit 0 ok, 1 build failed or
# warned (log shown on stderr), 2 setup error (kernel could not be obtained).
# The tree is copied fresh into $FZ_CACHE/build/<kver>/ (sid kernels: into the
# sid chroot's /fzbuild/<kver>/) and built clean every time (~2 s), so W=1
# warnings are never hidden by a stale object.  FZ_BUILD_TAG=NAME builds in
# <kver>-NAME instead: trees that build side by side keep their own .ko.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=kernels.sh
source "$FZ_VM_DIR/kernels.sh"

usage() {
	sed -n '3,6p' "$0" >&2
	exit 2
}

# copy_tree SRC DST: the parts of the repo Kbuild needs.
copy_tree() {
	local src=$1 dst=$2 d
	[[ -f $src/Kbuild && -d $src/driver ]] || fz_die "$src has no Kbuild + driver/"
	rm -rf "$dst"
	mkdir -p "$dst"
	cp "$src/Kbuild" "$src/dkms.conf" "$dst/"
	for d in driver include; do
		[[ -d $src/$d ]] && cp -a "$src/$d" "$dst/"
	done
	# Drop objects of an in-tree build (another kernel's): always build clean.
	find "$dst" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '*.a' -o -name 'modules.order' -o -name 'Module.symvers' \
		-o -name '.*.d' -o -name '*.dwo' -o -name '.tmp_*' \) -delete
}

# run_make BUILDDIR_INSIDE LOG: kbuild on the host or in the sid chroot.
run_make() {
	local m=$1 log=$2
	local args=(make -C "$KDIR" "M=$m" W=1 -j"$(nproc)" modules)
	# arm64 headers name their compiler $(CROSS_COMPILE)gcc-N; 6.12 and
	# later set the prefix themselves, bookworm's only in a Debian build
	[[ ${KARCH:-x86} != arm64 ]] || args+=(CROSS_COMPILE=aarch64-linux-gnu-)
	if [[ -n $FZ_CHROOT ]]; then
		fz_sid_run "${args[@]}" >"$log" 2>&1
	else
		"${args[@]}" >"$log" 2>&1
	fi
}

main() {
	local kid='' src=${FZ_MODULE_SRC:-$FZ_REPO} log='' host_dir inner_dir ko vm
	while (($#)); do
		case $1 in
		--kernel) kid=$2 ;;
		--src) src=$2 ;;
		--log) log=$2 ;;
		*) usage ;;
		esac
		shift 2
	done
	[[ -n $kid ]] || usage
	fz_kernel_resolve "$kid" >&2
	local dir=$KVER${FZ_BUILD_TAG:+-$FZ_BUILD_TAG}
	if [[ -n $FZ_CHROOT ]]; then
		inner_dir=/fzbuild/$dir
		host_dir=$FZ_CHROOT$inner_dir
	else
		host_dir=$FZ_CACHE/build/$dir
		inner_dir=$host_dir
	fi
	log=${log:-$FZ_CACHE/logs/build-$KVER.log}
	mkdir -p "$(dirname "$log")"
	fz_lock "build-$dir"
	copy_tree "$src" "$host_dir"
	fz_log "building module for $KVER (W=1) -> log $log"
	if ! run_make "$inner_dir" "$log"; then
		fz_log "module build FAILED for $KVER:"
		tail -n 40 "$log" >&2
		exit 1
	fi
	if grep -qi 'warning:' "$log"; then
		fz_log "module build for $KVER has warnings (W=1 must be clean):"
		grep -i -B2 -A3 'warning:' "$log" | head -n 60 >&2
		exit 1
	fi
	ko=$host_dir/driver/fastzero.ko
	[[ -f $ko ]] || ko=$(find "$host_dir" -name '*.ko' -print | sort | head -n1)
	[[ -n $ko ]] || fz_die "no .ko produced in $host_dir"
	vm=$(strings "$ko" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p' | head -n1)
	if [[ $vm != "$KVER" ]]; then
		fz_log "vermagic '$vm' does not match kernel $KVER"
		exit 1
	fi
	echo "$ko"
}

main "$@"
