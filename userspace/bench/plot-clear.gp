# plot-clear.gp - clearbench's CSV as four panels: GB/s vs chunk size per loop
# for the cache- and the DRAM-resident buffer (matrix section), and the short
# clears (GB/s, and speed relative to unrolled) vs length (short section).
#
#   gnuplot -e "csvfile='x.csv'; outbase='x'; plottitle='...'" plot-clear.gp
#
# csvfile: what clearbench --csv writes (tool,mode,workload,param,series,unit,
# median,min,max,...,ratio,...).  Optional: subtitle, a second title line;
# cachewl / dramwl / shortwl, the workloads of the matrix panels and of the
# short ones ('' = not measured); cacheticks / dramticks / shortticks, the x
# tics as clearbench prints sizes ("4K 64K 2M"); ermsthr, fz_erms_threshold
# in bytes (0: no marker).  microbench.sh sets all of them.  The chunk section
# is not plotted.
# Writes outbase.svg and outbase.png.  Points are medians, bars min..max.
if (!exists("csvfile")) csvfile = 'clearbench.csv'
if (!exists("outbase")) outbase = csvfile[1:strlen(csvfile) - 4]
if (!exists("plottitle")) plottitle = 'clearbench: GB/s, higher is better'
if (!exists("subtitle")) subtitle = ''
if (!exists("cachewl")) cachewl = 'matrix-1M'
if (!exists("dramwl")) dramwl = 'matrix-1G'
if (!exists("cacheticks")) cacheticks = '4K 64K'
if (!exists("dramticks")) dramticks = '4K 64K 2M 32M 1G'
if (!exists("shortticks")) shortticks = '8 16 32 64 128 256 512 1K 2K 4K'
if (!exists("shortwl")) shortwl = 'short'
if (!exists("ermsthr")) ermsthr = 0

# "64K" -> 65536, as clearbench's bl_fmt_size() writes them
unit(s) = s[strlen(s):strlen(s)]
mult(u) = u eq 'K' ? 2**10 : u eq 'M' ? 2**20 : u eq 'G' ? 2**30 : 0
bytes(s) = mult(unit(s)) ? mult(unit(s)) * real(s[1:strlen(s) - 1]) : real(s)

# one colour and point type per loop, the same in every panel; every loop
# clearbench can time (driver/arch/x86/clear_loops.h's FZ_LOOP_NAMES): a loop this
# CPU does not run has no rows, and no points
loops = 'unrolled rep_stosq erms rep_stosb nt clzero'
shortloops = 'unrolled rep_stosb erms'
set linetype 5 linecolor rgb '#d55e00'	# nt: the default yellow is too pale
set linetype 6 linecolor rgb '#000000'	# clzero
loopidx(s) = s eq 'unrolled' ? 1 : s eq 'rep_stosq' ? 2 : s eq 'erms' ? 3 : s eq 'rep_stosb' ? 4 : s eq 'nt' ? 5 : 6
pick(wl, s) = strcol(3) eq wl && strcol(5) eq s && strcol(7) ne 'n/a'
# rows of other series become NaN, which "missing NaN" skips without a gap
x_of(wl, s) = pick(wl, s) ? bytes(strcol(4)) : NaN

set datafile separator ','
set datafile missing NaN
set logscale x 2
set grid
set key outside right top vertical
set style data yerrorlines
set bars small
set pointsize 0.8

# x tics at the measured sizes, labelled like clearbench ("4K", "2M")
ticlist(list) = (t = '', sum [i=1:words(list)] (t = t . (i > 1 ? ', ' : '') . \
	sprintf('"%s" %.0f', word(list, i), bytes(word(list, i))), 0), t)
settics(list) = sprintf('set xtics (%s); set xrange [%g:%g]', ticlist(list), \
	bytes(word(list, 1)) / 1.5, bytes(word(list, words(list))) * 1.5)

# a panel for a section that was not run (a plot without points is an error)
empty_panel = ' \
	set label 99 "not measured" at graph 0.5, graph 0.5 center; \
	unset xtics; unset ytics; unset xlabel; unset ylabel; \
	set xrange [1:2]; set yrange [0:1]; \
	plot -1 notitle; \
	unset label 99; set xtics; set ytics'

matrix_panel = ' \
	set title sprintf("matrix: %s buffer, %s-resident", wl eq "" ? "-" : wl[8:], where); \
	if (wl eq "") { eval empty_panel } else { \
		eval settics(ticks); \
		set xlabel "chunk size (bytes per loop call)"; \
		set ylabel "GB/s (median; bars: min..max; higher is better)"; \
		set yrange [0:*]; \
		plot for [s in loops] csvfile skip 1 using (x_of(wl, s)):7:8:9 \
			linecolor loopidx(s) pointtype loopidx(s) title s; \
	}'

thr_marker = ' \
	if (ermsthr > 0) { \
		set arrow 1 from ermsthr, graph 0 to ermsthr, graph 1 nohead dashtype 3 linecolor rgb "gray30"; \
		set label 1 sprintf("fz_erms_threshold %d", ermsthr) at ermsthr, graph 0.97 right offset -0.5, 0 textcolor rgb "gray30"; \
	}'

short_panels = ' \
	set title "short clears: GB/s vs length"; \
	if (shortwl eq "") { eval empty_panel } else { \
		eval settics(shortticks); \
		set xlabel "length (bytes per call, cache hot)"; \
		set ylabel "GB/s (median; bars: min..max; higher is better)"; \
		set yrange [0:*]; \
		eval thr_marker; \
		plot for [s in shortloops] csvfile skip 1 using (x_of(shortwl, s)):7:8:9 \
			linecolor loopidx(s) pointtype loopidx(s) title s; \
	}; \
	set title "short clears: speed relative to unrolled (higher is better: >1 faster; crossover at 1)"; \
	if (shortwl eq "") { eval empty_panel } else { \
		set ylabel "GB/s ratio vs unrolled (median)"; \
		plot 1 with lines dashtype 2 linecolor loopidx("unrolled") title "unrolled = 1", \
		     for [s in "rep_stosb erms"] csvfile skip 1 using (x_of(shortwl, s)):12 \
			with linespoints linecolor loopidx(s) pointtype loopidx(s) title s; \
		unset arrow 1; unset label 1; \
	}'

do for [t in 'svg pngcairo'] {
	if (t eq 'svg') {
		set terminal svg size 1500,1000 dynamic noenhanced font 'sans,12'
		set output outbase.'.svg'
	} else {
		set terminal pngcairo size 1500,1000 noenhanced font 'sans,10'
		set output outbase.'.png'
	}
	set multiplot layout 2,2 title plottitle.(subtitle eq '' ? '' : "\n".subtitle) font ',13'
	wl = cachewl; ticks = cacheticks; where = 'cache'
	eval matrix_panel
	wl = dramwl; ticks = dramticks; where = 'DRAM'
	eval matrix_panel
	eval short_panels
	unset multiplot
	unset output
}
