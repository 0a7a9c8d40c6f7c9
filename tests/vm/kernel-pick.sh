# kernel-pick.sh: choose a kernel id's version from what the apt lists offer for every use a run makes of it (sourced by kernels.sh).
# shellcheck shell=bash
#
# Debian does not publish a kernel's packages at once: linux-signed-amd64
# (the signed linux-image-VER) is a source package of its own, built after
# linux (the -unsigned image, the headers, linux-source); the headers'
# -common and kbuild packages, sid's linux-binary-VER and linux-modules-VER
# can each lag too.  So a version is taken only when everything the run
# will install or download of it is there, newest first:
#  - the headers, installable (apt-get -s resolves the -common and kbuild
#    packages they depend on): the module builds, on the host or in the sid
#    chroot;
#  - an image for the matrix, any of FZ_PICK_MATRIX_IMAGES (vmlinuz and the
#    zram module are taken out of it);
#  - for FZ_PICK_GUEST_ID (the Debian guest sets 6.12 when it picks from the
#    trixie lists; none otherwise) an installable
#    image, the signed one first, else -unsigned (FZ_PICK_GUEST_IMAGES);
#  - for a sid id other than "newest": sid itself ships it (experimental's
#    packages are NotAutomatic: a sid user does not get them);
#  - for id 7 with 7-debug in FZ_DEBUG_KERNELS: linux-source-SERIES, which
#    debug-kernel.sh builds.
# fz_pick prints the version, the guest's image package and why it was
# taken: "newest", or what the newer ones lacked.  With FZ_APT_FAKE=DIR every
# query goes to the package lists under DIR/host or DIR/sid (apt's own
# Dir option) instead: tests/host/t_kernel_pick.sh.
# WHERE "trixie" asks Debian 13's lists (trixie, -updates, -security,
# -backports), which the host's apt keeps in a directory of their own
# (fz_trixie_apt_update): the Debian guest's kernels, no chroot needed.

FZ_PICK_MATRIX_IMAGES=('linux-image-%s-unsigned' 'linux-binary-%s' 'linux-image-%s')
FZ_PICK_GUEST_IMAGES=('linux-image-%s' 'linux-image-%s-unsigned')
FZ_PICK_GUEST_ID=${FZ_PICK_GUEST_ID:-none}
FZ_TRIXIE_APT=$FZ_CACHE/trixie-apt
FZ_TRIXIE_MIRROR=${FZ_TRIXIE_MIRROR:-http://deb.debian.org/debian}
FZ_TRIXIE_SECURITY=${FZ_TRIXIE_SECURITY:-http://deb.debian.org/debian-security}

# fz_trixie_sources: the sources.list of Debian 13 as a user with backports has it.
fz_trixie_sources() {
	cat <<EOF
deb $FZ_TRIXIE_MIRROR trixie main
deb $FZ_TRIXIE_MIRROR trixie-updates main
deb $FZ_TRIXIE_SECURITY trixie-security main
deb $FZ_TRIXIE_MIRROR trixie-backports main
EOF
}

# fz_trixie_apt_update: refresh the trixie lists when over a day old.
fz_trixie_apt_update() {
	local d=$FZ_TRIXIE_APT
	mkdir -p "$d/etc/apt.conf.d" "$d/etc/preferences.d" "$d/lists/partial" "$d/cache/archives/partial"
	fz_trixie_sources >"$d/etc/sources.list"
	[[ -z ${FZ_REFRESH:-} && -n $(find "$d/.fz-updated" -mmin -1440 2>/dev/null) ]] && return 0
	fz_log "apt-get update of the trixie lists ($d)"
	if fz_apt_q trixie apt-get -qq update >&2; then
		touch "$d/.fz-updated"
	else
		fz_log "apt-get update of the trixie lists failed (continuing with old lists)"
	fi
}

# fz_apt_q WHERE CMD...: an apt command on the host ("host") or in the sid
# chroot ("sid"); with FZ_APT_FAKE, on the fake lists of WHERE.
fz_apt_q() {
	local where=$1 d
	shift
	if [[ -n ${FZ_APT_FAKE:-} ]]; then
		d=$FZ_APT_FAKE/$where
		"$1" -o Dir="$d" -o Dir::State::status="$d/var/lib/dpkg/status" \
			-o Dir::Bin::methods=/usr/lib/apt/methods -o Debug::NoLocking=1 "${@:2}"
	elif [[ $where == sid ]]; then
		fz_sid_run "$@"
	elif [[ $where == trixie ]]; then
		d=$FZ_TRIXIE_APT
		"$1" -o Dir::Etc="$d/etc" -o Dir::Etc::trustedparts=/etc/apt/trusted.gpg.d \
			-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
			-o Dir::State::status=/dev/null -o APT::Architecture=amd64 "${@:2}"
	else
		"$@"
	fi
}

fz_pkg_exists() { fz_apt_q "$1" apt-cache show "$2" >/dev/null 2>&1; }

# fz_installable WHERE PKG...: apt could install them now (a simulation).
fz_installable() {
	local where=$1
	shift
	fz_apt_q "$where" apt-get -s -qq --no-install-recommends install "$@" >/dev/null 2>&1
}

# fz_version_regex ID: "6.1" -> versions like 6.1.0-57-amd64, "7" -> 7.2.13+deb14-amd64,
# "newest" -> any (7.3-amd64 from experimental); a flavour id "6.12-rt" or
# "7-cloud" -> that series' versions of the flavour (6.12.118+deb12-rt-amd64).
# A series alone is the generic flavour only.
fz_version_regex() {
	local series=$1 flavour='' esc
	case $1 in
	*-rt | *-cloud) series=${1%-*} flavour=-${1##*-} ;;
	esac
	esc=${series//./\\.}
	[[ $series == newest ]] && esc='[0-9]+'
	printf '%s(\\.[0-9]+)*(-[0-9]+|\\+deb[0-9]+)?%s-amd64' "$esc" "$flavour"
}

# fz_image_pkg WHERE VER [guest]: the first image package of the matrix's
# (or the guest's) list that the lists have, or nothing.  linux-binary-VER
# counts only with its linux-modules-VER.
fz_image_pkg() {
	local where=$1 ver=$2 fmt p
	local -a list=("${FZ_PICK_MATRIX_IMAGES[@]}")
	[[ ${3:-} != guest ]] || list=("${FZ_PICK_GUEST_IMAGES[@]}")
	for fmt in "${list[@]}"; do
		# shellcheck disable=SC2059 # the format is ours
		p=$(printf "$fmt" "$ver")
		fz_pkg_exists "$where" "$p" || continue
		[[ $p != linux-binary-* ]] || fz_pkg_exists "$where" "linux-modules-$ver" || continue
		echo "$p"
		return 0
	done
	return 1
}

# fz_in_suite WHERE PKG SUITE: apt-cache policy lists PKG in SUITE.
fz_in_suite() {
	fz_apt_q "$1" apt-cache policy "$2" 2>/dev/null | grep -qE "^ +[0-9]+ .* $3/"
}

# fz_in_sid VER: sid itself (not only experimental) has VER's headers.
fz_in_sid() { fz_in_suite sid "linux-headers-$1" sid; }

# fz_debug_source VER: the linux-source package debug-kernel.sh builds
# 7-debug from, for sid's VER.
fz_debug_source() {
	[[ $1 =~ ^([0-9]+\.[0-9]+) ]] && echo "linux-source-${BASH_REMATCH[1]}"
}

# fz_version_check WHERE ID VER: "ok IMAGE" when the run can use VER for
# ID (IMAGE: what the Debian guest installs, "-" for other ids), else
# "no WHAT-IT-LACKS".
fz_version_check() {
	local where=$1 id=$2 ver=$3 img=- src
	if [[ $where == sid && $id != newest ]] && ! fz_in_sid "$ver"; then
		echo "no: not in sid (experimental only)"
	elif ! fz_image_pkg "$where" "$ver" >/dev/null; then
		echo "no: no image package"
	elif ! fz_installable "$where" "linux-headers-$ver"; then
		echo "no: linux-headers-$ver not installable"
	elif [[ $id == "$FZ_PICK_GUEST_ID" ]] && { ! img=$(fz_image_pkg "$where" "$ver" guest) ||
		! fz_installable "$where" "$img" "linux-headers-$ver"; }; then
		echo "no: no installable image for the Debian guest"
	elif [[ $where == sid && $id != newest && " ${FZ_DEBUG_KERNELS-7-debug} " == *" 7-debug "* ]] &&
		src=$(fz_debug_source "$ver") && ! fz_pkg_exists sid "$src"; then
		echo "no: no $src (7-debug)"
	else
		echo "ok $img"
	fi
}

# fz_pick WHERE ID [NOT]: "VER<TAB>why" for the newest version the run can
# use (other than NOT).
fz_pick() {
	local where=$1 id=$2 re v res skipped='' why img
	re=$(fz_version_regex "$id")
	while read -r v; do
		[[ -n $v && $v != "${3:-}" ]] || continue
		res=$(fz_version_check "$where" "$id" "$v")
		if [[ $res != "ok "* ]]; then
			skipped+="${skipped:+; }$v ${res#no: }"
			continue
		fi
		img=${res#ok }
		why=${skipped:+newer skipped: $skipped}
		why=${why:-newest}
		if [[ $img != - ]]; then
			why+="; the Debian guest installs $img"
			[[ $img != *-unsigned ]] || why+=" (the signed linux-image-$v is not published)"
		fi
		printf '%s\t%s\t%s\n' "$v" "$img" "$why"
		return 0
	done < <(fz_apt_q "$where" apt-cache search --names-only "^linux-headers-${re}\$" 2>/dev/null |
		awk '{print $1}' | sed 's/^linux-headers-//' | grep -E "^${re}\$" | sort -V -r)
	[[ -z $skipped ]] || fz_log "kernel $id: no usable version ($skipped)"
	return 1
}
