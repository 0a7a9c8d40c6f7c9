# plot.gp - throughput vs block size, both devices, log x axis.
#
#   gnuplot -e "datafile='x.dat'; outbase='x'; plottitle='...'" plot.gp
#
# datafile (written by report.sh): three blocks separated by two blank lines
# (gnuplot "index"): 0 = fzbench read(2), 1 = dd, 2 = fio psync; columns:
# block size in bytes, reference GB/s, device GB/s, device GB/s with
# force_variant=unrolled (nan if not measured; plotted, dotted, only when
# hasunrolled=1).  Writes outbase.svg and outbase.png.
if (!exists("datafile")) datafile = 'bench.dat'
if (!exists("outbase")) outbase = 'bench'
if (!exists("plottitle")) plottitle = 'fastzero read throughput'
if (!exists("refname")) refname = '/dev/zero'
if (!exists("devname")) devname = '/dev/fastzero'
if (!exists("unrolledname")) unrolledname = devname.' unrolled'
if (!exists("hasunrolled")) hasunrolled = 0

set title plottitle noenhanced
set xlabel 'block size (bytes)'
set ylabel 'GB/s (median)'
set logscale x 2
set format x '%.0b%B'
set grid
set key top left noenhanced
set yrange [0:*]
set style data linespoints

tools = 'fzbench-read dd fio-psync'
# nine series: the key goes right of the plot
pw = 960; ph = 600
if (hasunrolled) {
	pw = 1280; ph = 640
	set key outside right top vertical Left reverse samplen 3 noenhanced
	set title plottitle."\ndotted: ".unrolledname.' = '.devname.' with force_variant=unrolled (/dev/zero'."'".'s movq loop)' noenhanced
}
do for [t in 'svg pngcairo'] {
	if (t eq 'svg') {
		set terminal svg size pw,ph dynamic
		set output outbase.'.svg'
	} else {
		set terminal pngcairo size pw,ph
		set output outbase.'.png'
	}
	if (hasunrolled) {
		plot for [i=0:2] datafile index i using 1:2 dashtype 2 pointtype 4+2*i \
			linecolor i+1 title refname.' ('.word(tools, i+1).')', \
		     for [i=0:2] datafile index i using 1:3 dashtype 1 pointtype 5+2*i \
			linecolor i+1 title devname.' ('.word(tools, i+1).')', \
		     for [i=0:2] datafile index i using 1:4 dashtype 3 pointtype 1+i \
			linecolor i+1 title unrolledname.' ('.word(tools, i+1).')'
	} else {
		plot for [i=0:2] datafile index i using 1:2 dashtype 2 pointtype 4+2*i \
			linecolor i+1 title refname.' ('.word(tools, i+1).')', \
		     for [i=0:2] datafile index i using 1:3 dashtype 1 pointtype 5+2*i \
			linecolor i+1 title devname.' ('.word(tools, i+1).')'
	}
	unset output
}
