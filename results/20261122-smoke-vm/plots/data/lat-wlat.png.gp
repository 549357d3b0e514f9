set terminal pngcairo size 1000,620 font "Sans,11"
set output "results/20261122-smoke-vm/plots/lat-wlat.png"
set grid
set key outside right top
set termoption noenhanced
set logscale x 2
set xlabel 'message size (bytes, log scale)'
set offsets graph 0.03, graph 0.03, 0, 0
set xtics ("64" 64, "4K" 4096, "64K" 65536)
set ylabel 'usec (log scale)'
set logscale y
set title 'RDMA WRITE latency (half round trip): median, p99, p99.9'
plot "results/20261122-smoke-vm/plots/data/wlat-0.dat" using 1:2 with linespoints lw 2 pt 7 lc 1 dt 1 title "krping_npu host t_typical", \
  "results/20261122-smoke-vm/plots/data/wlat-0.dat" using 1:3 with points pt 6 ps 1.3 lc 1 title "krping_npu host p99", \
  "results/20261122-smoke-vm/plots/data/wlat-0.dat" using 1:4 with points pt 8 ps 1.3 lc 1 title "krping_npu host p99.9", \
  "results/20261122-smoke-vm/plots/data/wlat-3.dat" using 1:2 with linespoints lw 2 pt 7 lc 2 dt 1 title "krping_npu npu t_typical", \
  "results/20261122-smoke-vm/plots/data/wlat-3.dat" using 1:3 with points pt 6 ps 1.3 lc 2 title "krping_npu npu p99", \
  "results/20261122-smoke-vm/plots/data/wlat-3.dat" using 1:4 with points pt 8 ps 1.3 lc 2 title "krping_npu npu p99.9", \
  "results/20261122-smoke-vm/plots/data/wlat-6.dat" using 1:2 with linespoints lw 2 pt 7 lc 3 dt 1 title "perftest host t_typical", \
  "results/20261122-smoke-vm/plots/data/wlat-6.dat" using 1:3 with points pt 6 ps 1.3 lc 3 title "perftest host p99", \
  "results/20261122-smoke-vm/plots/data/wlat-6.dat" using 1:4 with points pt 8 ps 1.3 lc 3 title "perftest host p99.9"
