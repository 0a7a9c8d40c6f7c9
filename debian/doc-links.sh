#!/bin/bash
# doc-links.sh - point the installed docs' links at the files as installed: X.md or, compressed by dh_compress, X.md.gz.
#
# usage: debian/doc-links.sh DOCDIR...   (debian/rules, after dh_compress)
#
# DOCDIR is a package's /usr/share/doc/PACKAGE in the build tree: README.md
# and docs/*.md, each as it was installed, or gzipped when over 4 KiB.  In
# every one, a relative markdown link [text](path#anchor) to a file of the
# package gets that file's installed name (the anchor kept); a link to a
# file of the source tree that the package does not ship (results/,
# userspace/, tests/) becomes its text and the path, in code, "in the
# source tree".  Links with a scheme (https:) and anchors alone stay.
# Compressed files are written back with gzip -9n, as dh_compress does.
set -euo pipefail

# relink DOCDIR FILE: rewrite FILE (relative to DOCDIR) in place
relink() {
	local root=$1 f=$2 text
	if [[ $f == *.gz ]]; then text=$(zcat "$root/$f"); else text=$(cat "$root/$f"); fi
	text=$(ROOT=$root DIR=$(dirname "$f") perl -pe '
		sub norm {	# "docs/../README.md" -> "README.md"; "" if above the root
			my @out;
			for my $p (split m{/}, $_[0]) {
				next if $p eq "" || $p eq ".";
				if ($p eq "..") { return "" unless @out; pop @out; next }
				push @out, $p;
			}
			return join "/", @out;
		}
		sub fix {
			my ($bang, $label, $path, $anchor) = @_;
			my $in = norm("$ENV{DIR}/$path");
			my $orig = "$bang\[$label\]($path$anchor)";
			return $orig if $path eq "" || $path =~ m{^[a-z]+:} || $path =~ m{^/};
			return $orig if $in ne "" && -e "$ENV{ROOT}/$in";
			return "$bang\[$label\]($path.gz$anchor)" if $in ne "" && -e "$ENV{ROOT}/$in.gz";
			my $src = $in ne "" ? $in : $path;
			return "`$src` (in the source tree)" if $label eq $src || $label eq "`$src`";
			return ($bang ? "($label: " : "$label (") . "`$src` in the source tree)";
		}
		s{(!?)\[([^\]]*)\]\(([^)#\s]*)(#[^)\s]*)?\)}{fix($1, $2, $3, $4 // "")}ge;
	' <<<"$text")
	if [[ $f == *.gz ]]; then
		printf '%s\n' "$text" | gzip -9n >"$root/$f"
	else
		printf '%s\n' "$text" >"$root/$f"
	fi
}

for root in "$@"; do
	[[ -d $root ]] || { echo "doc-links.sh: no directory $root" >&2; exit 1; }
	while IFS= read -r f; do
		relink "$root" "${f#"$root"/}"
	done < <(find "$root" -name '*.md' -o -name '*.md.gz')
done
