#!/usr/bin/env bash
# doccheck.sh - the docs against the code: README.md and docs/*.md name what the code has, and the code has what they name.
#
# Usage: tests/doccheck.sh   (make lint runs it; TAP-ish "ok - NAME" lines,
#                             one "# missing: ..." line per finding)
#
# Checks, each one TAP line:
#   - every module parameter (module_param*() in driver/ and driver/arch/*/, or modinfo of
#     driver/fastzero.ko when it is built), every sysfs counter
#     (FZ_STAT_ATTR() in driver/stats.c), every .PHONY target of the top
#     Makefile (as "make TARGET") and every option of userspace/fastzero-run
#     (its --help) is named somewhere in README.md or docs/*.md;
#   - README.md's parameter table has one row per module parameter and no
#     other (as many as `grep -c module_param driver/*.c driver/arch/*/*.c`), modprobe.d's
#     file lists each, and docs/sysfs.md's policy/ table is exactly the
#     device's read-only attributes (DEVICE_ATTR_RO() in driver/ and driver/arch/*/);
#   - every repository path the docs name (in `code` or as a link) exists,
#     and every "make TARGET" they show is a target of the top Makefile;
#   - every command line tests/vm/debian-guest.sh runs from the docs
#     (g_readme PREFIX: an indented line starting with PREFIX) is there;
#   - the README's results table and the docs' included results/ files
#     (results-include blocks) are what tests/results-table.sh makes of
#     results/.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
DOCS=(README.md docs/*.md)
# Targets of the kernel's own Makefile that the docs show run through Kbuild
# (make -C <kernel> ..., the debug kernel's configuration), not ours.
KBUILD_TARGETS=" allnoconfig modules modules_install "
# Paths the docs name that a build writes, not ignored by .gitignore.
GENERATED=" debian/changelog "
rc=0

# verdict NAME MISSING...: one TAP line; each missing item on its own line.
verdict() {
	local name=$1 m
	shift
	if (($# == 0)); then
		echo "ok - docs: $name"
		return
	fi
	for m in "$@"; do
		echo "# missing: $m"
	done
	echo "not ok - docs: $name # $# missing: $*"
	rc=1
}

# named WORD: WORD appears as a word in README.md or docs/*.md.
named() { grep -qw -e "$1" "${DOCS[@]}"; }

# The driver's C files, every architecture's among them.
SRCS=(driver/*.c driver/arch/*/*.c)

# The module's parameters: the source's, every architecture's, and those
# modinfo finds in a built module.
params() {
	{
		if [[ -f driver/fastzero.ko ]] && command -v modinfo >/dev/null; then
			modinfo -F parm driver/fastzero.ko | sed 's/:.*//'
		fi
		sed -n 's/^module_param\(_cb\|_named\)\?(\([a-z0-9_]*\),.*/\2/p' "${SRCS[@]}"
	} | sort -u
}

# The device's policy/ attributes (DEVICE_ATTR_RO(), every architecture's).
policy_attrs() {
	sed -n 's/^\(static \)\?DEVICE_ATTR_RO(\([a-z0-9_]*\));/\2/p' "${SRCS[@]}"
}

check_params() {
	local p missing=()
	for p in $(params); do
		named "$p" || missing+=("$p (a module parameter, driver/)")
	done
	verdict "every module parameter is documented" "${missing[@]}"
}

check_stats() {
	local s missing=()
	while read -r s; do
		named "$s" || missing+=("$s (a counter in /sys/class/misc/fastzero/stats/, driver/stats.c)")
	done < <(sed -n 's/^FZ_STAT_ATTR(\([a-z0-9_]*\),.*/\1/p' driver/stats.c)
	verdict "every sysfs counter is documented" "${missing[@]}"
}

# table_names FILE HEADING: the names in the first column of the table
# under "## HEADING" in FILE (rows "| `name` | ...").
table_names() {
	# shellcheck disable=SC2016 # backquotes, not an expansion
	awk -v h="## $2" '$0 == h { on = 1; next } on && /^## / { exit }
		on && /^\| `[a-z0-9_]+` \|/ { print }' "$1" | sed 's/^| `\([a-z0-9_]*\)`.*/\1/' | sort
}

# set_diff WHAT A B: the names in A (one a line) not in B, as findings.
set_diff() {
	comm -23 <(printf '%s\n' "$2" | sort -u) <(printf '%s\n' "$3" | sort -u) | sed "s|^|$1: |"
}

# The README's parameter table is exactly the module's parameters, one row
# each (as many rows as module_param lines in driver/), and the modprobe.d
# file lists every one.
check_param_table() {
	local want have n rows conf missing=()
	want=$(params)
	have=$(table_names README.md "Module parameters")
	n=$(cat "${SRCS[@]}" | grep -c '^module_param')
	rows=$(printf '%s\n' "$have" | grep -c .)
	conf=$(sed -n 's/^#\?options fastzero \([a-z0-9_]*\)=.*/\1/p' modprobe.d/fastzero.conf)
	mapfile -t missing < <(set_diff "a parameter with no row in README.md's table" "$want" "$have"
		set_diff "a row in README.md's parameter table that is no parameter" "$have" "$want"
		set_diff "a parameter modprobe.d/fastzero.conf does not list" "$want" "$conf")
	((n == rows)) || missing+=("$n module_param lines in driver/, $rows rows in README.md's table")
	verdict "the parameter table is the module's parameters" "${missing[@]}"
}

# Every sysfs file of the module (policy/, stats/, parameters/) has its
# entry in docs/ABI/testing/, in the kernel's Documentation/ABI format.
check_abi() {
	local abi=docs/ABI/testing/sysfs-class-misc-fastzero n missing=()
	while read -r n; do
		grep -qx "What:		/sys/class/misc/fastzero/policy/$n" "$abi" || missing+=("policy/$n")
	done < <(policy_attrs)
	while read -r n; do
		grep -qx "What:		/sys/class/misc/fastzero/stats/$n" "$abi" || missing+=("stats/$n")
	done < <(sed -n 's/^FZ_STAT_ATTR(\([a-z0-9_]*\),.*/\1/p' driver/stats.c)
	while read -r n; do
		grep -qx "What:		/sys/module/fastzero/parameters/$n" "$abi" || missing+=("parameters/$n")
	done < <(params)
	verdict "every sysfs file has a Documentation/ABI entry ($abi)" "${missing[@]}"
}

# docs/sysfs.md's policy table is exactly the device's policy/ attributes
# (DEVICE_ATTR_RO() in the driver).
check_policy_table() {
	local want have missing=()
	want=$(policy_attrs)
	have=$(table_names docs/sysfs.md "Policy: what the module chose and why")
	mapfile -t missing < <(set_diff "a policy/ attribute with no row in docs/sysfs.md" "$want" "$have"
		set_diff "a row in docs/sysfs.md's policy table that is no attribute" "$have" "$want")
	verdict "the policy/ table is the device's attributes" "${missing[@]}"
}

# The .PHONY targets of the top Makefile (continuation lines joined).
phony() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' Makefile | sed -n 's/^\.PHONY: *//p' | tr -s ' \t' '\n' | sort -u
}

check_targets_documented() {
	local t missing=()
	for t in $(phony); do
		grep -qE "make $t([^a-z_-]|$)" "${DOCS[@]}" || missing+=("make $t (a .PHONY target of Makefile)")
	done
	verdict "every make target is documented" "${missing[@]}"
}

check_fastzero_run() {
	local o missing=()
	for o in $(userspace/fastzero-run --help 2>/dev/null | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' |
		grep -oE -- '--[a-z-]+|-[a-zA-Z]'); do
		grep -qF -e "$o" "${DOCS[@]}" || missing+=("fastzero-run $o (userspace/fastzero-run --help)")
	done
	[[ -n $(userspace/fastzero-run --help 2>/dev/null) ]] || missing+=("userspace/fastzero-run --help printed nothing")
	verdict "every fastzero-run option is documented" "${missing[@]}"
}

# code_spans: the `code` spans of the docs, one per line, as "file<TAB>text".
code_spans() {
	local f
	for f in "${DOCS[@]}"; do
		# shellcheck disable=SC2016 # backquotes, not an expansion
		grep -v '^    ' "$f" | grep -oE '`[^`]+`' | tr -d '`' | sed "s|^|$f\t|"
	done
}

# slugs FILE: the anchors of FILE's headings, as GitHub makes them.
slugs() {
	sed -n 's/^#\{1,6\} //p' "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# A repository path: a tracked top-level entry, then more; no placeholders.
check_paths() {
	local f text p top missing=()
	local tops
	tops=" $(git ls-files | sed 's|/.*||' | sort -u | tr '\n' ' ') "
	while IFS=$'\t' read -r f text; do
		for p in $text; do
			p=${p%[,.:;)]}
			p=${p%%:[0-9]*}
			top=${p%%/*}
			[[ -n $top && $tops == *" $top "* && $p == */* ]] || continue
			[[ $p == *[\<\{\$]* || $p == *...* || $GENERATED == *" $p "* ]] && continue
			git check-ignore -q "$p" && continue	# build output (*.ko)
			# shellcheck disable=SC2086 # p may be a glob (t_*.c)
			compgen -G "$p" >/dev/null || missing+=("$p (named in $f)")
		done
	done < <(code_spans)
	# Links: [text](target#anchor), relative to the page that holds them;
	# an anchor must be a heading of the target, as GitHub spells it.
	local target anchor
	for f in "${DOCS[@]}"; do
		while read -r p; do
			[[ $p == *://* ]] && continue
			target=${p%%#*} anchor=
			[[ $p == *#* ]] && anchor=${p#*#}
			if [[ -z $target ]]; then target=$f; else target=$(dirname "$f")/$target; fi
			if [[ ! -e $target ]]; then
				missing+=("$p (a link in $f)")
			elif [[ -n $anchor ]] && ! slugs "$target" | grep -qxF -e "$anchor"; then
				missing+=("$p (a link in $f: no such heading)")
			fi
		done < <(grep -oE '\]\([^)]+\)' "$f" | sed 's/^](//; s/)$//')
	done
	verdict "every file the docs name exists" "${missing[@]}"
}

# Every "make TARGET" shown in code (spans and indented lines) is ours.
check_targets_exist() {
	local f t missing=()
	local targets
	targets=" $(make -qp -f Makefile 2>/dev/null | sed -n 's/^\([a-z][a-z0-9_-]*\):.*/\1/p' | sort -u | tr '\n' ' ') "
	while IFS=$'\t' read -r f t; do
		[[ $targets == *" $t "* || $KBUILD_TARGETS == *" $t "* ]] ||
			missing+=("make $t (named in $f; not a target of Makefile)")
	done < <(for f in "${DOCS[@]}"; do
		{ code_spans | grep -F "$f"$'\t' | cut -f2; grep '^    ' "$f"; } |
			grep -oE '(^|[^a-z_-])make( +[A-Z_]+=[^ ]*)* +[a-z][a-z0-9_-]*' |
			grep -vE 'make +-' | awk '{ print $NF }' | sed "s|^|$f\t|"
	done | sort -u)
	verdict "every make target the docs name exists" "${missing[@]}"
}

# The prefixes tests/vm/debian-guest.sh's g_readme runs, found as it finds them.
check_guest_commands() {
	local p missing=()
	while IFS= read -r p; do
		awk -v p="$p" 'substr($0, 1, 4) == "    " && index(substr($0, 5), p) == 1 { found = 1; exit }
			END { exit !found }' "${DOCS[@]}" ||
			missing+=("an indented line starting '$p' (tests/vm/debian-guest.sh g_readme)")
	done < <(sed -n "s/.*g_readme '\([^']*\)'.*/\1/p" tests/vm/debian-guest.sh)
	verdict "every command the Debian guest runs from the docs is there" "${missing[@]}"
}

check_results_table() {
	local out
	if out=$(tests/results-table.sh --check 2>&1); then
		verdict "the README's results table and the docs' included results match results/"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		verdict "the README's results table and the docs' included results match results/" \
			"an up-to-date table and included blocks: make results-table"
	fi
}

check_params
check_param_table
check_policy_table
check_abi
check_stats
check_targets_documented
check_fastzero_run
check_paths
check_targets_exist
check_guest_commands
check_results_table
exit "$rc"
