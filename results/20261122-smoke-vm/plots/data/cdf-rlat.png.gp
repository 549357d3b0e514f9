set terminal pngcairo size 1000,620 font "Sans,11"
set output "results/20261122-smoke-vm/plots/cdf-rlat.png"
set grid
set key outside right top
set termoption noenhanced
set xlabel 'latency (usec, log scale)'
set logscale x
set ylabel 'fraction of iterations'
set yrange [0:1.02]
set title 'RDMA READ latency (round trip): CDF'
plot "results/20261122-smoke-vm/plots/data/cdf-rlat-0.dat" using 1:2 with steps lw 2 dt 1 title "krping_npu host 64 B", \
  "results/20261122-smoke-vm/plots/data/cdf-rlat-1.dat" using 1:2 with steps lw 2 dt 1 title "krping_npu host 65536 B"
