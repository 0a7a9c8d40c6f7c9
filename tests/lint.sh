#!/usr/bin/env bash
# lint.sh - the checks a maintainer runs: checkpatch --strict and sparse on the driver, cppcheck on the userspace C, shellcheck on the scripts, no history in the tree, the docs against the code.
#
# checkpatch.pl comes from Debian's linux-source package, unpacked once into
# $FZ_CACHE/checkpatch (only the script and its data files are kept).
# sparse and cppcheck are Debian's packages (installed when missing); sparse
# checks the driver through Kbuild (C=2) against KDIR (as the Makefile picks
# it, installing Debian's linux-headers-amd64 when there are none) in a
# scratch copy of the tree.  A setup step that fails is a failure.
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
	if ! fetch_checkpatch; then	# a setup step: a failure, not a skip
		report 1 "checkpatch --strict driver/" "linux-source not obtainable"
		return
	fi
	local f files=()
	for f in "$REPO"/driver/*.[chS] "$REPO"/driver/arch/*/*.[chS]; do
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
	out=$(cd "$REPO" && shellcheck -x tests/lint.sh tests/doccheck.sh tests/nohistory.sh tests/results-table.sh \
		tests/vm/*.sh tests/host/*.sh upstream/*.sh \
		userspace/bench/*.sh userspace/fastzero-run userspace/fastzero-bench \
		debian/make-deb.sh debian/doc-links.sh .ci/run 2>&1) || true
	[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/# /'
	report "$([[ -z $out ]] && echo 0 || echo 1)" "shellcheck scripts"
}

# The kernel build tree the Makefile uses (make kdir).
default_kdir() {
	local k
	k=$(make -s --no-print-directory -C "$REPO" kdir 2>/dev/null | sed 's/: .*//')
	[[ -f $k/Makefile ]] && echo "$k"
}

# sparse through Kbuild, as in "make C=2": any warning or error from a
# driver/ file is a finding (headers' own are not ours).
lint_sparse() {
	local kdir tmp out bad name="sparse (C=2 CF=-D__CHECK_ENDIAN__) driver/"
	command -v sparse >/dev/null || apt_install sparse
	# no headers yet (a new machine): Debian's own, as a kernel developer has
	kdir=$(default_kdir) || { apt_install linux-headers-amd64 && kdir=$(default_kdir); } ||
		{ report 1 "$name" "no kernel headers, and linux-headers-amd64 did not install"; return; }
	tmp=$(mktemp -d)
	cp "$REPO/Kbuild" "$REPO/dkms.conf" "$tmp/"
	(cd "$REPO" && cp --parents driver/Kbuild driver/*.[chS] driver/arch/*/*.[chS] "$tmp/")
	if ! out=$(make -C "$kdir" M="$tmp" C=2 CF=-D__CHECK_ENDIAN__ modules 2>&1); then
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
		report 1 "$name" "build failed against $kdir"
		rm -rf "$tmp"
		return
	fi
	bad=$(grep -E '(^|/)driver/[^:]+:[0-9]+(:[0-9]+)?: (warning|error):' <<<"$out" |
		sed "s|$tmp/||") || true
	rm -rf "$tmp"
	[[ -z $bad ]] || printf '%s\n' "$bad" | sed 's/^/# /'
	report "$([[ -z $bad ]] && echo 0 || echo 1)" "$name"
}

# cppcheck on the userspace C (benchmarks, test suite). A false positive is
# suppressed inline, with a comment proving it, never here.
lint_cppcheck() {
	local out
	command -v cppcheck >/dev/null || apt_install cppcheck
	out=$(cd "$REPO" && cppcheck --enable=warning,portability --error-exitcode=1 \
		--inline-suppr --quiet --template='{file}:{line}: {severity}: {message} [{id}]' \
		userspace/*.c tests/suite/*.c 2>&1) || true
	[[ -z $out ]] || printf '%s\n' "$out" | sed 's/^/# /'
	report "$([[ -z $out ]] && echo 0 || echo 1)" "cppcheck userspace/ tests/suite/"
}

# No issue numbers or work history in code, tests or docs (tests/nohistory.sh).
lint_history() {
	local out
	out=$("$REPO/tests/nohistory.sh" 2>&1) || true
	[[ -z $out ]] || printf '%s\n' "$out" | cut -c1-200 | sed 's/^/# /'
	report "$([[ -z $out ]] && echo 0 || echo 1)" "no issue numbers or history in code, tests and docs"
}

# The docs against the code (tests/doccheck.sh): its own TAP lines.
lint_docs() {
	"$REPO/tests/doccheck.sh" || rc=1
}

lint_checkpatch
lint_sparse
lint_cppcheck
lint_shellcheck
lint_history
lint_docs
exit "$rc"
