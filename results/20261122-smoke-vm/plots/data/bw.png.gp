set terminal pngcairo size 1000,620 font "Sans,11"
set output "results/20261122-smoke-vm/plots/bw.png"
set grid
set key outside right top
set termoption noenhanced
set logscale x 2
set xlabel 'message size (bytes, log scale)'
set offsets graph 0.03, graph 0.03, 0, 0
set xtics ("4K" 4096, "64K" 65536)
set ylabel 'BW_average (MiB/s)'
set title 'RDMA WRITE bandwidth vs message size'
set yrange [0:*]
plot "results/20261122-smoke-vm/plots/data/bw-0.dat" using 1:2 with linespoints lw 2 dt 1 title "krping_npu host", \
  "results/20261122-smoke-vm/plots/data/bw-1.dat" using 1:2 with linespoints lw 2 dt 1 title "krping_npu npu", \
  "results/20261122-smoke-vm/plots/data/bw-2.dat" using 1:2 with linespoints lw 2 dt 1 title "perftest host"
