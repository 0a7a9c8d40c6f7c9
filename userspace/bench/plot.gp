# plot.gp - make bench's plot: throughput vs block size, both devices (top),
# and the ratio to compare for every other row (bottom).
#
#   gnuplot -e "datafile='x.dat'; outbase='x'; plottitle='...'" plot.gp
#
# datafile (written by report.sh): four blocks separated by two blank lines
# (gnuplot "index").  0 = fzbench read(2), 1 = dd, 2 = fio psync; columns:
# block size in bytes, reference GB/s, device GB/s, device GB/s with
# force_variant=unrolled (nan if not measured; plotted, dotted, only when
# hasunrolled=1).  3 = every other row (fio io_uring, mmap and numjobs,
# fzbench readv, splice and mmap, the clients): its name (quoted), the
# ratio to compare (report.sh's figure: u.ratio where measured, else the
# ratio), and that ratio -/+ half its spread.  plottitle carries the mode;
# every panel says which way is better.  Writes outbase.svg and outbase.png.
if (!exists("datafile")) datafile = 'bench.dat'
if (!exists("outbase")) outbase = 'bench'
if (!exists("plottitle")) plottitle = 'fastzero read throughput'
if (!exists("refname")) refname = '/dev/zero'
if (!exists("devname")) devname = '/dev/fastzero'
if (!exists("unrolledname")) unrolledname = devname.' unrolled'
if (!exists("hasunrolled")) hasunrolled = 0

tools = 'fzbench-read dd fio-psync'
stats datafile index 3 using 2 nooutput
nbars = STATS_records
pw = hasunrolled ? 1280 : 1100
# pixels: the title, the top panel, the bottom one (a line per bar)
th = 70; tp = 540; bp = nbars > 0 ? 130 + 16 * nbars : 0
ph = th + tp + bp

throughput_panel = ' \
	set title "read throughput vs block size: GB/s, higher is better".(hasunrolled ? "\ndotted: ".unrolledname." = ".devname." with force_variant=unrolled (/dev/zero'."'".'s movq loop)" : "") noenhanced; \
	set xlabel "block size (bytes)"; \
	set ylabel "GB/s (median; higher is better)"; \
	set logscale x 2; set format x "%.0b%B"; unset logscale y; set format y "%g"; \
	set xtics autofreq; set ytics autofreq; \
	set grid; set key outside right top vertical Left reverse samplen 3 noenhanced; \
	set xrange [*:*]; set yrange [0:*]; \
	set style data linespoints; \
	if (hasunrolled) { \
		plot for [i=0:2] datafile index i using 1:2 dashtype 2 pointtype 4+2*i linecolor i+1 title refname." (".word(tools, i+1).")", \
		     for [i=0:2] datafile index i using 1:3 dashtype 1 pointtype 5+2*i linecolor i+1 title devname." (".word(tools, i+1).")", \
		     for [i=0:2] datafile index i using 1:4 dashtype 3 pointtype 1+i linecolor i+1 title unrolledname." (".word(tools, i+1).")" \
	} else { \
		plot for [i=0:2] datafile index i using 1:2 dashtype 2 pointtype 4+2*i linecolor i+1 title refname." (".word(tools, i+1).")", \
		     for [i=0:2] datafile index i using 1:3 dashtype 1 pointtype 5+2*i linecolor i+1 title devname." (".word(tools, i+1).")" \
	}'

# horizontal bars on a log axis: 1 (level) is the middle; bars from 1
ratio_panel = ' \
	set title "the other rows: ".devname." / ".refname.(hasunrolled ? " (u.ratio where measured, else the ratio)" : "")."\nhigher is better: right of 1, ".devname." is faster; bars: the spread" noenhanced; \
	unset xlabel; set ylabel ""; \
	set xlabel "ratio (log scale; higher is better)"; \
	set logscale x 2; set format x "%gx"; set xtics autofreq; \
	set ytics nomirror noenhanced font ",9"; set yrange [nbars:-1]; \
	set xrange [*:*]; \
	set grid x; set key off; \
	set style fill solid 0.5; \
	set arrow 1 from 1, graph 0 to 1, graph 1 nohead dashtype 2 linecolor rgb "gray30"; \
	plot datafile index 3 using (1):0:(1):2:($0-0.35):($0+0.35):ytic(1) with boxxyerror linecolor 2 notitle, \
	     datafile index 3 using 2:0:3:4 with xerrorbars pointtype 7 pointsize 0.4 linecolor rgb "black" notitle; \
	unset arrow 1'

do for [t in 'svg pngcairo'] {
	if (t eq 'svg') {
		set terminal svg size pw,ph dynamic noenhanced
		set output outbase.'.svg'
	} else {
		set terminal pngcairo size pw,ph noenhanced
		set output outbase.'.png'
	}
	set multiplot title plottitle noenhanced
	set size 1, real(tp) / ph
	set origin 0, real(bp) / ph
	eval throughput_panel
	unset logscale; unset grid; unset key
	if (nbars > 0) {
		set size 1, real(bp) / ph
		set origin 0, 0
		eval ratio_panel
	}
	unset multiplot
	unset output
}
