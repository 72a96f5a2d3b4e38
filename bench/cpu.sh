#!/bin/bash
# bench/cpu.sh -- Himeno on the CPU: stencilc-generated OpenMP C against the
# hand-written OpenMP C in bench/himeno_omp.c.
#
# Both programs are compiled with the same command ($CC $CFLAGS), run at size
# M (129x129x257) alternately REPS times each, and the best MFLOPS of each is
# compared.  The Gosa (residual) values must agree to a relative 1e-4, or the
# script exits 1.  The output is meant to be pasted into docs/benchmarks.md.
#
#   usage: bench/cpu.sh
#   environment (defaults in brackets):
#     CC [cc]   CFLAGS [-O3 -march=native -fopenmp]
#     OMP_NUM_THREADS [2]   ITERS [400]   REPS [3]
#     SIZE ["--NI=129 --NJ=129 --NK=257"]
#
# ITERS should make each run take a few seconds (2-4 s is good); raise it on
# fast machines or with many threads.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

CC=${CC:-cc}
CFLAGS=${CFLAGS:--O3 -march=native -fopenmp}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
ITERS=${ITERS:-400}
REPS=${REPS:-3}
SIZE=${SIZE:---NI=129 --NJ=129 --NK=257}

die() { echo "cpu.sh: $*" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stn-bench.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# --- build the compiler and the runtime, generate C for Himeno -------------
make -C "$root" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; die "make failed"; }
build/stencilc --target=openmp -o "$tmp/himeno_gen.c" examples/himeno.stn ||
  die "stencilc failed on examples/himeno.stn"

# --- compile both with the same command --------------------------------------
# $CFLAGS is split into words on purpose.
gen_cmd="$CC $CFLAGS -o $tmp/himeno_gen $tmp/himeno_gen.c $(build/stencilc --print-cflags) $(build/stencilc --print-libs)"
hand_cmd="$CC $CFLAGS -o $tmp/himeno_omp bench/himeno_omp.c"
$gen_cmd  || die "compiling the generated C failed: $gen_cmd"
$hand_cmd || die "compiling bench/himeno_omp.c failed: $hand_cmd"

# --- header --------------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
[ -n "$cpu" ] || cpu=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}')
[ -n "$cpu" ] || cpu=$(uname -m)
echo "date:        $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host:        $(uname -n), $(nproc) CPUs, ${cpu}"
echo "compiler:    $($CC --version 2>/dev/null | head -n 1)"
echo "generated:   $gen_cmd"
echo "hand-written: $hand_cmd"
echo "run:         OMP_NUM_THREADS=$OMP_NUM_THREADS${OMP_PROC_BIND:+ OMP_PROC_BIND=$OMP_PROC_BIND}${OMP_PLACES:+ OMP_PLACES=$OMP_PLACES} ./himeno $SIZE --ITERS=$ITERS  (best of $REPS, alternating)"
echo

# --- run ---------------------------------------------------------------------
# run NAME: runs $tmp/NAME once, appends MFLOPS to NAME.mflops and Gosa to NAME.gosa
run() {
  local out mf gosa
  # shellcheck disable=SC2086  # SIZE is a list of arguments
  out=$("$tmp/$1" $SIZE --ITERS="$ITERS" 2>&1) || { echo "$out" >&2; die "$1 failed"; }
  mf=$(echo "$out" | awk '/^MFLOPS measured/ {print $NF}')
  gosa=$(echo "$out" | awk '/^Gosa/ {print $NF}')
  if [ -z "$mf" ] || [ -z "$gosa" ]; then
    echo "$out" >&2; die "$1: no 'Gosa' or 'MFLOPS measured' line"
  fi
  echo "$mf" >>"$tmp/$1.mflops"
  echo "$gosa" >>"$tmp/$1.gosa"
}
for _ in $(seq "$REPS"); do
  run himeno_gen
  run himeno_omp
done

best() { sort -g "$tmp/$1.mflops" | tail -n 1; }
runs() { paste -sd' ' "$tmp/$1.mflops"; }
gen_best=$(best himeno_gen);  omp_best=$(best himeno_omp)
gen_gosa=$(tail -n 1 "$tmp/himeno_gen.gosa"); omp_gosa=$(tail -n 1 "$tmp/himeno_omp.gosa")

printf '%-14s %12s %18s   %s\n' program "best MFLOPS" Gosa "all runs (MFLOPS)"
printf '%-14s %12.1f %18s   %s\n' generated    "$gen_best" "$gen_gosa" "$(runs himeno_gen)"
printf '%-14s %12.1f %18s   %s\n' hand-written "$omp_best" "$omp_gosa" "$(runs himeno_omp)"
echo
awk -v g="$gen_best" -v h="$omp_best" 'BEGIN { printf "ratio generated/hand-written = %.3f\n", g / h }'

# Every run of either program must agree with the hand-written result.
bad=$(cat "$tmp/himeno_gen.gosa" "$tmp/himeno_omp.gosa" | awk -v ref="$omp_gosa" '
  { d = $1 - ref; if (d < 0) d = -d; m = ref < 0 ? -ref : ref
    if (!(d <= 1e-4 * m)) print $1 }')
if [ -n "$bad" ]; then
  echo "Gosa MISMATCH: hand-written $omp_gosa, disagreeing: $(echo "$bad" | paste -sd' ')" >&2
  exit 1
fi
echo "Gosa agree (relative 1e-4)"

# --- temporal blocking on the CPU (TB=1) -------------------------------------
# bench/jacobi5.stn (2-D, 4096^2) and examples/diffusion3d.stn (3-D, 256^3),
# OpenMP, each with --tb=1 (untiled) and blocked by T steps (2-D: overlapped
# tiles; 3-D: tiles marching along i),
# alternately, best of REPS; the checksums must agree exactly (the tiles
# compute the same values in the same order).
[ "${TB:-0}" = 1 ] || exit 0
echo
echo "temporal blocking (OpenMP, best of $REPS, alternating):"
tbrun() { # tbrun PROG ARGS...: prints "seconds checksum"
  local out
  out=$("$@" 2>&1) || { echo "$out" >&2; die "$1 failed"; }
  echo "$out" | awk -F': ' '/^Time \[s\]/ {t = $2} /^Checksum|^Total heat/ {c = $2} END {print t, c}'
}
for spec in "bench/jacobi5.stn|--N=4096 --STEPS=64|1 2 4 8" "examples/diffusion3d.stn|--N=256 --STEPS=24|1 2 3 4 8"; do
  IFS='|' read -r src args ts <<<"$spec"
  for t in $ts; do
    build/stencilc --target=openmp --tb="$t" --build -o "$tmp/tb$t" "$src" 2>/dev/null || die "stencilc --tb=$t $src failed"
  done
  base="" ; ref=""
  for t in $ts; do best[$t]=1e30; done
  for _ in $(seq "$REPS"); do
    for t in $ts; do
      # shellcheck disable=SC2086
      read -r sec sum <<<"$(tbrun "$tmp/tb$t" $args)"
      [ -z "$ref" ] && ref=$sum
      [ "$sum" = "$ref" ] || die "$src --tb=$t: checksum $sum differs from --tb=1's $ref"
      best[$t]=$(awk -v a="${best[$t]}" -v b="$sec" 'BEGIN { print (b < a ? b : a) }')
    done
  done
  for t in $ts; do
    [ -z "$base" ] && base=${best[$t]}
    awk -v s="$src" -v a="$args" -v t="$t" -v x="${best[$t]}" -v b="$base" 'BEGIN {
      printf "  %-26s %-24s --tb=%s  %8.4f s  %5.2fx\n", s, a, t, x, b / x }'
  done
done
