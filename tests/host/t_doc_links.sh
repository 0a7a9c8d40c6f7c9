#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_doc_links.sh - the packaged README and docs link to what the .debs install (X.md.gz where dh_compress compressed X.md); TAP.
#
# The docs are laid out as debian/*.docs installs them (README.md, docs/),
# every file over 4 KiB gzipped as dh_compress does, then
# debian/doc-links.sh runs on them as debian/rules runs it.  Every
# relative link must then name a file there; a link to a file the
# packages do not ship must be gone, its path named as text.
#
# usage: tests/host/t_doc_links.sh    Exit status: 0 when every test passed.  ~1 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"

D=$T/usr/share/doc/fastzero-tools
mkdir -p "$D/docs"
cp "$REPO/README.md" "$D/"
cp "$REPO"/docs/*.md "$D/docs/"
find "$D" -name '*.md' -size +4k -exec gzip -9n {} +
"$REPO/debian/doc-links.sh" "$D"
ok $? "doc-links.sh runs"

bad=() n_links=0
while IFS= read -r f; do
	rel=${f#"$D"/}
	while IFS= read -r l; do
		n_links=$((n_links + 1))
		p=${l%%#*}
		[[ -z $p || $p == *:* || -e $(dirname "$f")/$p ]] || bad+=("$rel: $l")
	done < <(if [[ $f == *.gz ]]; then zcat "$f"; else cat "$f"; fi |
		grep -oE '\]\([^)[:space:]]+\)' | sed 's/^](//; s/)$//')
done < <(find "$D" -name '*.md' -o -name '*.md.gz')
ok "${#bad[@]}" "every relative link of the installed docs names an installed file ($n_links links)" \
	"${bad[*]}"

readme=$(zcat "$D/README.md.gz" 2>/dev/null || cat "$D/README.md")
[[ $readme == *'](docs/install.md.gz#'* || ! -e $D/docs/install.md.gz ]]
ok $? "the README links install.md as installed, compressed"
[[ $readme != *'](results/'* && $readme != *'](userspace/'* ]]
ok $? "the README links nothing the packages leave out (results/, userspace/)"

tap_done
