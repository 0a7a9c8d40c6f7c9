#!/usr/bin/env bash
# lint.sh - style checks a maintainer runs: checkpatch --strict on the driver, shellcheck on the scripts.
#
# checkpatch.pl comes from Debian's linux-source package, unpacked once into
# $FZ_CACHE/checkpatch (only the script and its data files are kept).
# Prints TAP lines; exit status non-zero on a finding.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FZ_CACHE=${FZ_CACHE:-/var/cache/fastzero}
CP_DIR=$FZ_CACHE/checkpatch
rc=0

# apt_install PKG: install, refreshing the package lists once if needed.
apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null; }
}

newest_linux_source() {
	apt-cache search --names-only '^linux-source-[0-9.]+$' |
		awk '{print $1}' | sort -V | tail -n 1
}

# Fetch checkpatch.pl and the files it reads from the newest linux-source.
fetch_checkpatch() {
	local pkg tmp
	[[ -x $CP_DIR/scripts/checkpatch.pl ]] && return 0
	pkg=$(newest_linux_source)
	[[ -n $pkg ]] || { apt-get update -qq >/dev/null 2>&1; pkg=$(newest_linux_source); }
	[[ -n $pkg ]] || return 1
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -qq "$pkg" 2>/dev/null) || { rm -rf "$tmp"; return 1; }
	dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb |
		tar -xO --wildcards '*.tar.xz' |
		tar -xJ -C "$tmp" --wildcards --strip-components=1 \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
	mkdir -p "$CP_DIR"
	cp -r "$tmp/scripts" "$CP_DIR/"
	rm -rf "$tmp"
}

report() {	# report STATUS NAME [DETAIL]
	if [[ $1 == 0 ]]; then
		echo "ok - $2"
	else
		echo "not ok - $2${3:+ # $3}"
		rc=1
	fi
}

lint_checkpatch() {
	local out
	if ! fetch_checkpatch; then
		echo "ok - checkpatch --strict driver/ # SKIP linux-source not obtainable"
		return
	fi
	local f files=()
	for f in "$REPO"/driver/*.[chS]; do
		[[ $f == *.mod.c ]] || files+=("${f#"$REPO"/}")
	done
	out=$(cd "$REPO" && perl "$CP_DIR/scripts/checkpatch.pl" --no-tree --strict \
		--quiet -f "${files[@]}" 2>&1) || true
	[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/# /'
	report "$([[ -z $out ]] && echo 0 || echo 1)" "checkpatch --strict driver/"
}

lint_shellcheck() {
	local out
	command -v shellcheck >/dev/null || apt_install shellcheck
	out=$(cd "$REPO" && shellcheck -x tests/lint.sh tests/vm/*.sh \
		userspace/bench/*.sh .ci/run 2>&1) || true
	[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/# /'
	report "$([[ -z $out ]] && echo 0 || echo 1)" "shellcheck scripts"
}

lint_checkpatch
lint_shellcheck
exit "$rc"
