#!/bin/bash
# The thread table of issue 50 on a lent machine, run from the repository's root with the folder that
# bench/device/pack.sh made (default build-device): make bench's thread table (k = 24, k = 32 and the
# 320-host fat-tree on 1, 2, 4, 8 and 16 threads), k = 24 on 16 threads with no barrier spin, then k = 64 on
# every core, then the 8,192-GPU iteration
# of scenarios/ai/scale_8192.toml on 1 and 16 threads (issue 45). Writes
# the tables and the machine's description under $OUT (default ./device-out). Usage:
#   bench/device/run.sh [PACKED_DIR] [ROUNDS]
# Each run's data (the workloads' CDFs) is read from this checkout's data/ through $ROCESIM_DATA_DIR.
set -uo pipefail
packed=${1:-build-device}
rounds=${2:-1}
out=${OUT:-device-out}
mkdir -p "$out"
export ROCESIM_DATA_DIR="$PWD/data"
bin="$PWD/$packed/bin"
{
  echo "commit: $(cat "$packed/commit" 2>/dev/null)"
  echo "date: $(date -u +%FT%TZ)"
  echo "cores: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo
  grep -m1 -i 'cache size' /proc/cpuinfo
  free -g | head -2
} > "$out/machine.txt"
cat "$out/machine.txt"
"$bin/rocesim" --version > /dev/null || { echo "run.sh: the packed rocesim does not start here" >&2; exit 1; }
"$bin/bench_scaling" --rocesim "$bin/rocesim" --cases k24,k32,fat320 --threads 1,2,4,8,16 \
  --rounds "$rounds" --csv "$out/threads.csv" | tee "$out/threads.txt"
# The window barrier's spin (docs/parallel.md, "The barrier"): k = 24 on 16 threads again with waiters that
# sleep at once, against the table's row.
ROCESIM_BARRIER_SPIN_US=0 "$bin/bench_scaling" --rocesim "$bin/rocesim" --cases k24 --threads 16 \
  --csv "$out/k24_nospin.csv" | tee "$out/k24_nospin.txt"
"$bin/bench_scaling" --rocesim "$bin/rocesim" --cases k64 --threads 0 --csv "$out/k64.csv" |
  tee "$out/k64.txt"
# The run's folders stay in a scratch folder (flows.csv alone is tens of MB); its summary.json comes back.
scratch=$(mktemp -d)
timer=""
[ -x /usr/bin/time ] && timer="/usr/bin/time -v"
for t in 1 16; do
  $timer "$bin/rocesim" run scenarios/ai/scale_8192.toml -o "$scratch/t$t" --threads "$t" -q \
    2> "$out/scale8192_t$t.stderr"
  cp "$scratch/t$t/summary.json" "$out/scale8192_t$t.summary.json" 2>/dev/null
  grep -E "Elapsed|Maximum resident" "$out/scale8192_t$t.stderr"
done
rm -rf "$scratch"
