#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# t_bench_report.sh - make bench's table and plots read right: every ratio with its spread, noise marked, the mode and "higher is better" on every plot, clearbench's every loop plotted; TAP.
#
# No device and no timing: report.sh gets a raw directory as collect.sh
# leaves it, written here, of a /dev/zero against /dev/zero run (the
# stand-in fastzero-bench takes with FASTZERO_DEV=/dev/zero) whose samples
# are chosen: a row whose spread exceeds its effect, and one clearly
# apart.  microbench.sh --plot gets a clearbench CSV with a clzero series,
# labelled native under a "-tcg-" name, and one labelled tcg.  gnuplot
# (gnuplot-nox) is installed when missing, as make bench does.
#
# usage: tests/host/t_bench_report.sh    Exit status: 0 when every test passed.  ~3 s.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO/userspace/bench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=SCRIPTDIR/tap.sh
source "$REPO/tests/host/tap.sh"

# raw MODE: a collect.sh directory, /dev/zero against itself
raw() {
	local d=$T/raw-$1
	mkdir -p "$d"
	printf 'mode=%s\ndev=/dev/zero\nref=/dev/zero\nkernel=6.12.0-test\nunrolled=0 (not asked (-u))\n' \
		"$1" >"$d/meta.txt"
	# 16M: medians 1.04 and 1.00 with spreads ~80% (the effect, 4%, is
	# far inside them); 1M: 2.0 against 1.0, spreads ~2%
	awk 'BEGIN {
		split("1.04 0.30 1.10", a); split("1.00 0.95 1.75", b)
		for (i = 1; i <= 3; i++) {
			printf "dd 16M A /dev/zero %d 1 1 %s\n", i, a[i]
			printf "dd 16M B /dev/zero %d 1 1 %s\n", i, b[i]
			printf "dd 1M A /dev/zero %d 1 1 %.2f\n", i, 2.00 + 0.02 * (i - 2)
			printf "dd 1M B /dev/zero %d 1 1 %.2f\n", i, 1.00 + 0.01 * (i - 2)
		}
	}' >"$d/dd.raw"
	printf 'client head null A 1 1 1 1.0\nclient head null B 1 1 1 1.0\n' >"$d/clients.raw"
	echo "$d"
}

out=$("$B/report.sh" "$(raw native)" "$T/native" 2>"$T/err")
ok $? "report.sh runs" "$(cat "$T/err")"
row() { awk -v w="$1" -v p="$2" '$1 == w && $3 == p' <<<"$out"; }
# columns: tool workload param ref spread dev spread ratio spread
r=$(row dd 16M)
[[ $(awk '{ print $8 }' <<<"$r") == 1.040\? ]]
ok $? "a ratio inside its spread is marked ?" "row: $r"
[[ $(awk '{ print $9 }' <<<"$r") == +([0-9.])% ]]
ok $? "... with its spread beside it" "row: $r"
r=$(row dd 1M)
[[ $(awk '{ print $8 }' <<<"$r") == 2.000 && $(awk '{ print $9 }' <<<"$r") == +([0-9.])% ]]
ok $? "a ratio beyond its spread is not marked, and has its spread" "row: $r"
r=$(row client null)
[[ $(awk '{ print $8, $9 }' <<<"$r") == "1.000 -" ]]
ok $? "a ratio of single samples has no spread to mark (-)" "row: $r"
[[ $(awk -F, 'NR > 1 && $3 == "read" && $4 == "16M" { print $NF }' "$T/native.csv") == 1 &&
	$(awk -F, 'NR > 1 && $3 == "read" && $4 == "1M" { print $NF }' "$T/native.csv") == 0 ]]
ok $? "the CSV's noise column says the same"
grep -q '"?" marks a ratio whose spread exceeds' <<<"$out"
ok $? "the table says what ? means"
[[ $out == *'higher is better'* ]]
ok $? "the table says which way is better"

# title FILE: the text of an SVG (gnuplot writes each title line as text)
svgtext() { sed -n 's/.*<text[^>]*>\([^<]*\)<\/text>.*/\1/p; s/.*<tspan[^>]*>\([^<]*\)<\/tspan>.*/\1/p' "$1"; }
t=$(svgtext "$T/native.svg")
[[ $t == *'mode native'* && $t != *'NOT hardware'* ]]
ok $? "the bench plot of a native run says mode native"
k=$(grep -c "higher is better" <<<"$t")
((k >= 2))
ok $? "... and 'higher is better' on both panels" "$k times"
"$B/report.sh" "$(raw tcg)" "$T/tcg" >/dev/null 2>&1
t=$(svgtext "$T/tcg.svg")
[[ $t == *'mode TCG'*'NOT hardware'* ]]
ok $? "the bench plot of a TCG run says TCG is not hardware"

# clearbench: every loop of the CSV in the key, the CSV's mode in the title
csv=$T/20261205-host-6.12.0-tcg-clearbench.csv
{
	echo "tool,mode,workload,param,series,unit,median,min,max,spread_pct,n,ratio,aux_name,aux"
	for l in unrolled rep_stosq erms rep_stosb nt clzero; do
		for c in 4K 64K; do
			echo "clearbench,native,matrix-1M,$c,$l,GB/s,50,49,51,4,3,1,,n/a"
		done
	done
} >"$csv"
"$B/microbench.sh" --plot "$csv" "${csv%.csv}" >/dev/null 2>"$T/err"
ok $? "microbench.sh --plot runs" "$(cat "$T/err")"
t=$(svgtext "${csv%.csv}.svg")
missing=()
for l in unrolled rep_stosq erms rep_stosb nt clzero; do
	grep -qx "$l" <<<"$t" || missing+=("$l")
done
ok "${#missing[@]}" "the clearbench plot has every loop of its CSV, clzero too" "missing: ${missing[*]}"
[[ $t == *'mode native (userspace, this CPU: real hardware)'* && $t == *'higher is better'* ]]
ok $? "... its title says the CSV's mode, native, under a -tcg- file name, and which way is better"
sed -i 's/,native,/,tcg,/' "$csv"
"$B/microbench.sh" --plot "$csv" "$T/cb-tcg" >/dev/null 2>&1
[[ $(svgtext "$T/cb-tcg.svg") == *'mode TCG'*'NOT hardware'* ]]
ok $? "... and TCG, not hardware, for a CSV measured under TCG"

tap_done
