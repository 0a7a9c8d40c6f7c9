#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# nohistory.sh: fail on issue numbers and work history in code, tests and docs (git log holds the story, results/ the runs).
#
# Usage: tests/nohistory.sh [FILE...]   (default: every file git tracks
# outside results/ and debian/changelog)
# Prints one line per finding, FILE:LINE: TEXT; exit 1 on any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# "issue N", "issues N and M", "issue #N", "(#N)", "issueN": a tracker's
# number is history, not a reason; so is naming a review by number or an
# earlier session.
PATTERN='\bissues?[ _-]?#?[0-9]+|\(#[0-9]+\)|\breview [0-9]+\b|\b(previous|this|last) session\b'

if (($# == 0)); then
	mapfile -t files < <(git ls-files | grep -v -e '^results/' -e '^debian/changelog$' \
		-e '\.png$' -e '\.svg$')
	set -- "${files[@]}"
fi
if grep -n -i -E "$PATTERN" -- "$@"; then
	exit 1
fi
