#!/usr/bin/env bash
# series.sh - the upstream postings (docs/upstream.md) as git format-patch output, one series per tree, regenerated from upstream/series/.
#
# Usage: upstream/series.sh [--build] [--model]
#   (none)    generate each posting into build/upstream/out/TREE, signed off
#             by the sender (below), run checkpatch --strict on every
#             signed patch, git am each posting by itself onto the base
#             and the newest source, and all of them together onto the base
#   --build   also compile the touched objects after each patch, W=1, with
#             make allnoconfig + tests/vm/debug.config (nice -n 19; about
#             15 minutes cold on 2 cores, seconds per patch after that)
#   --model   also time /dev/zero's read() in 4 KiB, timed and fixed
#             extents on this CPU (upstream/test/read_zero_model.c, the
#             kernel's own clear_user() code; mode native userspace) into
#             build/upstream/read_zero_model.txt
#
# The stack is upstream/series/TREE/NNNN-name/{msg,diff}: one directory per
# posting (the tree that takes it), its patches in order; msg is the
# commit message (subject, blank line, body; no Signed-off-by: the stack
# signs for nobody), diff the change as git diff prints it.  The patches
# are generated, never committed: their From: and Signed-off-by: are
# whoever sends them, UPSTREAM_IDENT="Name <address>" or else git's
# user.name and user.email (git format-patch --signoff); without one the
# script stops before anything is fetched.  Each posting's cover letter
# text is upstream/cover/TREE.txt; its shortlog and diffstat come from git
# format-patch, its @MAINTAINERS@ line from the base's
# scripts/get_maintainer.pl (plus the pipe and splice owners on patches
# that touch splice), and upstream/measure-dev-zero.sh is appended to it.
#
# Sources (unpacked linux-source trees): UPSTREAM_BASE and UPSTREAM_NEWEST,
# else the debug tier's sid tree for the base when it is the same series,
# else both are fetched with apt-get download from sid and experimental
# (a private apt configuration under build/upstream/apt: the host's apt
# state is not touched) and unpacked under build/upstream/src.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UP=$REPO/upstream
OUT=$REPO/build/upstream
FZ_CACHE=${FZ_CACHE:-/var/cache/fastzero}
BASE_PKG=linux-source-7.2 BASE_VER=7.2.13-1 BASE_SUITE=sid
NEWEST_PKG=linux-source-7.3 NEWEST_VER=7.3~rc7-1~exp1 NEWEST_SUITE=experimental
# A fixed date: the same series and sender give the same bytes.
BASE_DATE=2026-12-05T21:00:00Z

build=0 model=0
for a in "$@"; do
	case $a in
	--build) build=1 ;;
	--model) model=1 ;;
	*) sed -n '4,16p' "$0" >&2; exit 2 ;;
	esac
done

log() { printf 'upstream: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The sender: the author and the Signed-off-by of every patch.
IDENT=${UPSTREAM_IDENT:-}
if [[ -z $IDENT ]]; then
	n=$(git -C "$REPO" config user.name || true) m=$(git -C "$REPO" config user.email || true)
	[[ -z $n || -z $m ]] || IDENT="$n <$m>"
fi
[[ $IDENT =~ ^[^\<\>]+\ \<[^\<\>@\ ]+@[^\<\>\ ]+\>$ ]] ||
	die "no sender identity: the patches are signed off by whoever sends them; set git config user.name and user.email, or UPSTREAM_IDENT=\"Name <address>\""
IDENT_NAME=${IDENT% <*} IDENT_MAIL=${IDENT##*<} IDENT_MAIL=${IDENT_MAIL%>}
log "signed off by $IDENT"

# fetch_source PKG VER SUITE: unpack PKG=VER into $OUT/src/PKG; prints the tree.
fetch_source() {
	local pkg=$1 ver=$2 suite=$3 apt=$OUT/apt tree=$OUT/src/$1 deb
	if [[ -f $tree/.fz-version && $(cat "$tree/.fz-version") == "$ver" ]]; then
		echo "$tree/$pkg"
		return
	fi
	mkdir -p "$apt"/{cache/archives/partial,etc/preferences.d}
	echo "deb [trusted=yes] http://deb.debian.org/debian $suite main" >"$apt/etc/sources.list.$suite"
	cat >"$apt/apt.conf.$suite" <<-EOF
		Dir::State "$apt";
		Dir::State::Lists "$apt/lists.$suite";
		Dir::State::status "/var/lib/dpkg/status";
		Dir::Cache "$apt/cache";
		Dir::Etc::SourceList "$apt/etc/sources.list.$suite";
		Dir::Etc::SourceParts "/nonexistent";
		Dir::Etc::Preferences "$apt/etc/preferences";
		Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
		Acquire::Languages "none";
		APT::Sandbox::User "root";
	EOF
	mkdir -p "$apt/lists.$suite/partial"
	log "fetching $pkg=$ver from $suite"
	APT_CONFIG=$apt/apt.conf.$suite apt-get -qq update >&2
	rm -rf "$tree" && mkdir -p "$tree"
	(cd "$tree" && APT_CONFIG=$apt/apt.conf.$suite apt-get -qq download "$pkg=$ver") >&2
	deb=$(find "$tree" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)
	[[ -n $deb ]] || die "download of $pkg=$ver failed"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" | tar -xJ -C "$tree"
	rm -f "$deb"
	echo "$ver" >"$tree/.fz-version"
	echo "$tree/$pkg"
}

# tree_version TREE: VERSION.PATCHLEVEL.SUBLEVEL-EXTRAVERSION of a tree's Makefile.
tree_version() {
	awk -F' = ' '/^VERSION =/{v=$2} /^PATCHLEVEL =/{p=$2} /^SUBLEVEL =/{s=$2}
		/^EXTRAVERSION =/{e=$2; print v "." p "." s e; exit}' "$1/Makefile"
}

base=${UPSTREAM_BASE:-}
if [[ -z $base ]]; then
	dbg=$FZ_CACHE/sid/root/fzdebug-7
	if [[ $(cat "$dbg/linux/.fz-version" 2>/dev/null) == "$BASE_VER" &&
		$(cat "$dbg/.fz-srcpkg" 2>/dev/null) == "$BASE_PKG" ]]; then
		base=$dbg/linux
	else
		base=$(fetch_source $BASE_PKG $BASE_VER $BASE_SUITE)
	fi
fi
newest=${UPSTREAM_NEWEST:-$(fetch_source $NEWEST_PKG $NEWEST_VER $NEWEST_SUITE)}
for t in "$base" "$newest"; do
	[[ -f $t/Makefile && -x $t/scripts/checkpatch.pl ]] || die "$t: not a kernel source tree"
done
log "base $(tree_version "$base") ($base), newest $(tree_version "$newest") ($newest)"

# The postings: one directory per tree under upstream/series, each holding
# its patches in order.
mapfile -t postings < <(find "$UP/series" -mindepth 1 -maxdepth 1 -type d | sort)
((${#postings[@]})) || die "no postings in $UP/series"
mapfile -t patches < <(find "${postings[@]}" -mindepth 1 -maxdepth 1 -type d | sort)
# Every file the series touches (b/ side of each diff).
mapfile -t files < <(sed -n 's|^+++ b/||p' "${patches[@]/%//diff}" | sort -u)
# The pipe and splice owners, Cc'd on every patch that touches splice
# where get_maintainer.pl does not name them already.
SPLICE_OWNERS=("Alexander Viro <viro@zeniv.linux.org.uk>" "Christian Brauner <brauner@kernel.org>"
	"Jens Axboe <axboe@kernel.dk>" "linux-fsdevel@vger.kernel.org")

# git_in DIR ARGS...: git with the series' identity and fixed dates.
git_in() {
	local d=$1
	shift
	GIT_AUTHOR_NAME=$IDENT_NAME GIT_AUTHOR_EMAIL=$IDENT_MAIL \
	GIT_COMMITTER_NAME=$IDENT_NAME GIT_COMMITTER_EMAIL=$IDENT_MAIL \
	GIT_AUTHOR_DATE=$BASE_DATE GIT_COMMITTER_DATE=$BASE_DATE \
		git -C "$d" -c core.autocrlf=false -c commit.gpgsign=false "$@"
}

# sparse_repo TREE DIR: a git repository of TREE's copies of the touched
# files, committed once (what git am and format-patch need of a tree).
sparse_repo() {
	local tree=$1 dir=$2 f
	rm -rf "$dir" && mkdir -p "$dir"
	for f in "${files[@]}"; do
		[[ -f $tree/$f ]] || die "$tree has no $f"
		mkdir -p "$dir/$(dirname "$f")"
		cp "$tree/$f" "$dir/$f"
	done
	git_in "$dir" init -q
	git_in "$dir" add -A
	git_in "$dir" commit -q -m "linux-source $(tree_version "$tree")"
}

# maintainers PATCHFILE: get_maintainer.pl's list, and the splice owners
# it misses when the patch touches splice.
maintainers() {
	local list o
	list=$(cd "$base" && perl scripts/get_maintainer.pl --no-git --no-git-fallback "$1")
	printf '%s\n' "$list"
	grep -q '^+.*splice\|^-.*splice' "$1" || return 0
	for o in "${SPLICE_OWNERS[@]}"; do
		grep -qiF "${o##*<}" <<<"$list" || grep -qiF "$o" <<<"$list" ||
			echo "$o (pipe and splice)"
	done
}

rc=0
rm -rf "$OUT/out" && mkdir -p "$OUT/out"
for posting in "${postings[@]}"; do
	name=$(basename "$posting")
	mapfile -t mine < <(find "$posting" -mindepth 1 -maxdepth 1 -type d | sort)
	[[ -f $UP/cover/$name.txt ]] || die "no cover letter upstream/cover/$name.txt"
	# 1. The commits, and git format-patch with the cover letter.
	repo=$OUT/git-$name
	sparse_repo "$base" "$repo"
	for p in "${mine[@]}"; do
		git_in "$repo" apply --index "$p/diff" || die "$name/$(basename "$p"): does not apply to the base"
		git_in "$repo" commit -q -F "$p/msg"
	done
	git_in "$repo" format-patch -q --signoff --cover-letter --no-signature \
		--subject-prefix="RFC PATCH" -o "$OUT/out/$name" HEAD~${#mine[@]}..HEAD

	# 2. The cover letter: its text, the maintainers of each patch, the
	# measurement script, a fixed date.
	cover=$(find "$OUT/out/$name" -name '0000-*.patch')
	maint=$OUT/maintainers-$name.txt
	: >"$maint"
	n=0
	for f in "$OUT/out/$name"/000[1-9]-*.patch; do
		n=$((n + 1))
		{
			echo "  $n/${#mine[@]} $(head -n1 "${mine[n - 1]}/msg"):"
			maintainers "$f" | sed 's/^/    /'
		} >>"$maint"
	done
	awk -v subj="$(head -n1 "$UP/cover/$name.txt")" -v body="$UP/cover/$name.txt" \
		-v maint="$maint" -v script="$UP/measure-dev-zero.sh" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			n = 0
			while ((getline line < body) > 0) {
				if (++n <= 2) continue	# the subject and the blank line
				if (line == "@MAINTAINERS@") {
					while ((getline m < maint) > 0) print m
					continue
				}
				print line
			}
			print ""
			print "measure-dev-zero.sh:"
			print ""
			while ((getline line < script) > 0) print "  " line
			next
		}
		/^Date: / { print "Date: Sat, 5 Dec 2026 21:00:00 +0000"; next }
		{ print }' "$cover" >"$cover.new"
	mv "$cover.new" "$cover"
	log "$name: generated $(find "$OUT/out/$name" -name '*.patch' | wc -l) files in $OUT/out/$name"

	# 3. checkpatch --strict with the base's own script and data files; the
	# base is a source package, not a git tree, so a cited commit id cannot
	# be looked up there (UNKNOWN_COMMIT_ID).
	for f in "$OUT/out/$name"/000[1-9]-*.patch; do
		if res=$(cd "$base" && perl scripts/checkpatch.pl --strict --no-summary --terse \
			--ignore UNKNOWN_COMMIT_ID "$f" 2>&1) &&
			[[ -z $res ]]; then
			log "checkpatch --strict: clean: $name/$(basename "$f")"
		else
			log "checkpatch --strict: $name/$(basename "$f"):"
			printf '%s\n' "$res" >&2
			rc=1
		fi
	done

	# 4. git am of the posting by itself onto both sources.
	for t in "$base" "$newest"; do
		am=$OUT/am
		sparse_repo "$t" "$am"
		if git_in "$am" am -q "$OUT/out/$name"/000[1-9]-*.patch; then
			log "git am: $name applies to $(tree_version "$t") by itself"
		else
			log "git am: $name does NOT apply to $(tree_version "$t")"
			git_in "$am" am --abort 2>/dev/null || true
			rc=1
		fi
	done
done
# 5. Every posting, one after the other, onto the base: they do not collide.
sparse_repo "$base" "$OUT/am"
if git_in "$OUT/am" am -q "$OUT"/out/*/000[1-9]-*.patch; then
	log "git am: all postings together apply to $(tree_version "$base")"
else
	log "git am: the postings together do NOT apply to $(tree_version "$base")"
	rc=1
fi
rm -rf "$OUT/am"
t=$OUT/model
mkdir -p "$t"

# 6. Optionally, /dev/zero's read() in 4 KiB, timed and fixed extents,
# modelled in userspace with rep_stos_alternative() as the base has it
# (upstream/test/read_zero_model.c).
if ((model)); then
	sed -n '/^SYM_FUNC_START(rep_stos_alternative)/,/^SYM_FUNC_END(rep_stos_alternative)/p' \
		"$base/arch/x86/lib/clear_page_64.S" >"$t/rsa_base.S"
	if gcc -c -DERMS=0 -include "$UP/test/rep_stos_shim.h" -x assembler-with-cpp \
		"$t/rsa_base.S" -o "$t/rsa.o" &&
		objcopy --redefine-sym rep_stos_alternative=rsa_base "$t/rsa.o" "$t/rsa_base.o" &&
		gcc -O2 -mno-red-zone -Wall -Wextra -Werror -I"$REPO/userspace" -I"$REPO/driver" \
			-I"$REPO/driver/arch/x86" -I"$REPO/userspace/shim" "$UP/test/read_zero_model.c" \
			"$REPO/userspace/benchlib.c" "$t/rsa_base.o" -lm -o "$t/read_zero_model" &&
		"$t/read_zero_model" >"$OUT/read_zero_model.txt"; then
		log "read_zero_model (mode native userspace): $OUT/read_zero_model.txt"
		cat "$OUT/read_zero_model.txt" >&2
	else
		log "read_zero_model: FAILED"
		rc=1
	fi
fi

# 7. Optionally, the touched objects after each patch (W=1: warnings are errors).
if ((build)); then
	src=$OUT/linux obj=$OUT/obj pristine=$base
	# A tree built in place (the debug tier's) refuses O=: use a clean one.
	[[ -e $base/.config ]] && pristine=$(fetch_source $BASE_PKG $BASE_VER $BASE_SUITE)
	if [[ ! -f $src/.fz-base || $(cat "$src/.fz-base") != "$pristine" ]]; then
		rm -rf "$src" "$obj" && cp -al "$pristine" "$src" && echo "$pristine" >"$src/.fz-base"
	fi
	# The tree is hard-linked to the source: patch replaces files, never
	# writes into them; each run starts again from the unpatched files.
	for f in "${files[@]}"; do
		rm -f "$src/$f" && cp "$pristine/$f" "$src/$f"
	done
	mkdir -p "$obj"
	{ cat "$REPO/tests/vm/debug.config"; echo CONFIG_PREEMPT_LAZY=y; echo CONFIG_PREEMPT_DYNAMIC=y; } >"$obj/allconfig"
	nice -n 19 make -s -C "$src" O="$obj" KCONFIG_ALLCONFIG="$obj/allconfig" allnoconfig
	for f in "$OUT"/out/*/000[1-9]-*.patch; do
		patch -s -p1 -d "$src" --no-backup-if-mismatch <"$f"
		mapfile -t objs < <(sed -n 's|^+++ b/\(.*\)\.[cS]$|\1.o|p' "$f")
		if nice -n 19 make -s -C "$src" O="$obj" W=1 KCFLAGS=-Werror -j"$(nproc)" "${objs[@]}" >"$OUT/build.log" 2>&1; then
			log "W=1 build: clean after $(basename "$f"): ${objs[*]}"
		else
			log "W=1 build: FAILED after $(basename "$f"):"
			cat "$OUT/build.log" >&2
			rc=1
		fi
	done
fi

log "the series: $OUT/out"
exit $rc
