# lib.sh: common helpers (cache dir, logging, locking, host deps, counted results) sourced by the tests/vm scripts.
# shellcheck shell=bash

# Everything downloaded or generated lives here, never in the repo tree or /boot.
FZ_CACHE=${FZ_CACHE:-/var/cache/fastzero}
FZ_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FZ_REPO=${FZ_REPO:-$(cd "$FZ_VM_DIR/../.." && pwd)}
export FZ_CACHE FZ_REPO FZ_VM_DIR

# Host packages the harness needs (Debian 12 names).
FZ_HOST_PKGS=(qemu-system-x86 busybox-static cpio gzip debootstrap fio make gcc libc6-dev binutils
	liburing-dev coreutils util-linux ca-certificates kmod xz-utils zstd stress-ng)

fz_log() { printf '[fz %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
fz_die() {
	fz_log "error: $*"
	exit 2
}

# fz_lock NAME: take an exclusive lock on $FZ_CACHE/locks/NAME for the rest of
# the calling (sub)shell. Serialises fetches/builds between concurrent runs.
fz_lock() {
	local fd
	mkdir -p "$FZ_CACHE/locks"
	exec {fd}>"$FZ_CACHE/locks/$1.lock"
	flock "$fd"
}

# apt-get update at most once per process tree (and only when needed).
fz_apt_update() {
	[[ -n ${FZ_APT_UPDATED:-} ]] && return 0
	fz_log "apt-get update"
	# Third-party sources may be unreachable; apt still refreshes Debian's lists.
	apt-get update -qq >&2 || fz_log "apt-get update reported errors (continuing)"
	export FZ_APT_UPDATED=1
}

# fz_apt_lists_fresh: apt-get update when the host's lists are over a day
# old (or missing): kernels are chosen from them (kernel-pick.sh).
fz_apt_lists_fresh() {
	[[ -n $(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null) ]] ||
		fz_apt_update
}

fz_pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# fz_need_pkgs PKG...: install whatever is missing with apt.
fz_need_pkgs() {
	local p missing=()
	for p in "$@"; do
		fz_pkg_installed "$p" || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	(
		fz_lock apt
		fz_log "installing: ${missing[*]}"
		fz_apt_install "${missing[@]}" || {
			fz_apt_update
			fz_apt_install "${missing[@]}"
		}
	)
}

fz_apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

fz_need_host_deps() { fz_need_pkgs "${FZ_HOST_PKGS[@]}"; }

# fz_stage_tree DIR: the checkout as a new user gets it (tracked and
# untracked, not ignored files: no build products), readable by all.
fz_stage_tree() {
	local f
	rm -rf "$1" && mkdir -p "$1"
	(cd "$FZ_REPO" && git ls-files -co --exclude-standard -z) |
		while IFS= read -r -d '' f; do
			[[ -e $FZ_REPO/$f ]] && cp -a --parents "$f" "$1/" 2>/dev/null
		done
	chmod -R a+rX "$1"
	[[ -f $1/Makefile && -f $1/dkms.conf ]]
}

# fz_accel: kvm only when the CPU has vmx/svm and /dev/kvm is usable.
fz_accel() {
	if grep -qw -e vmx -e svm /proc/cpuinfo && [[ -r /dev/kvm && -w /dev/kvm ]]; then
		echo kvm
	else
		echo tcg
	fi
}

# fz_sanitize STR: turn a kernel id / cpu model into a file-name-safe token.
fz_sanitize() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_'; }

# result ok|fail NAME [DETAIL]: one counted harness result (PASSED, FAILED).
result() {
	if [[ $1 == ok ]]; then
		PASSED=$((PASSED + 1))
		printf '  PASS  %s\n' "$2"
	else
		FAILED=$((FAILED + 1))
		printf '  FAIL  %s%s\n' "$2" "${3:+  -- $3}"
	fi
}
