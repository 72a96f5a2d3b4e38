#!/bin/bash
# bench/gpu.sh: on a GPU machine, in one go: build, verify every example x
# CUDA strategy against the CPU (`--target=c`) result of the same program,
# then time the large sizes and report each against the device's copy
# bandwidth measured in the same run (bench/copybw.cu).
#
#   usage: bench/gpu.sh            (needs nvcc and a GPU; ~5 minutes on an H100)
#   env:   SANITIZE=1  also run compute-sanitizer on the small sizes
#          QUICK=1     verification only, no timing
#          OUT=dir     where logs go (default: a temporary folder)
#
# Verification builds the GPU code with -fmad=false so that it rounds like
# the CPU reference; fields start as NaN (STN_POISON=1) so that a point a
# kernel should write but does not shows up. Tolerances: reductions 1e-9
# relative (only the summation order differs), fields 1e-6 absolute.
# Timing builds use the default flags (-O3, FMA contraction on).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
# A stencilc built elsewhere and carried here finds the runtime through these.
export STENCILC_RUNTIME_DIR="$root/runtime" STENCILC_LIB_DIR="$root/build"
T=$(mktemp -d "${TMPDIR:-/tmp}/stn-gpu.XXXXXX")
LOG=${OUT:-$T}
mkdir -p "$LOG"
fail=0
say() { printf '%s\n' "$*" | tee -a "$LOG/gpu.log"; }

# ---- build ---------------------------------------------------------------
if [ ! -x build/stencilc ] || [ ! -f build/libstn_cuda.a ] || [ ! -x build/tools/fieldcmp ]; then
  make all tools >"$LOG/make.log" 2>&1 || { cat "$LOG/make.log"; echo "gpu.sh: make failed"; exit 2; }
fi
nvcc -O3 -arch=sm_90 -o "$T/copybw" bench/copybw.cu || exit 2
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
BW=$("$T/copybw" 2>>"$LOG/gpu.log") || { echo "gpu.sh: copybw failed"; exit 2; }
say "date: $(date -u '+%Y-%m-%d %H:%M UTC')   gpu: $gpu   nvcc: $(nvcc --version | tail -1)"
say "copy bandwidth (read + write, best of cudaMemcpy and a float4 kernel): $BW GB/s"

STRATS="naive stream smem"
# example | small args | fields to compare (name:type) | printed values to compare
small() {
  case $1 in
    himeno) echo "--NI=33 --NJ=33 --NK=65 --ITERS=20|p:float wrk2:float|Gosa :" ;;
    diffusion3d) echo "--N=40 --STEPS=15|f:float fn:float|Total heat :;Peak :" ;;
    jacobi2d) echo "--N=70 --M=90 --MAXIT=40|u:double uold:double|Residual :;Solution Error :;Iterations :" ;;
    lazy) echo "--N=40 --STEPS=13|u:double un:double|a :;b :;c :;cnt :;trail :;last change :;peak :;total :;points :" ;;
  esac
}

# ---- verify --------------------------------------------------------------
say ""
say "verification (small sizes, against --target=c):"
for ex in himeno diffusion3d jacobi2d lazy; do
  IFS='|' read -r args fields values <<<"$(small $ex)"
  src=examples/$ex.stn
  [ -f "$src" ] || src=bench/$ex.stn
  build/stencilc --target=c --cflags="-O2 -ffp-contract=off" --build -o "$T/$ex.cpu" $src || exit 2
  saves=""
  for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.cpu.${f%%:*}"; done
  # shellcheck disable=SC2086
  "$T/$ex.cpu" $args $saves >"$T/$ex.cpu.out" || exit 2
  for s in $STRATS; do
    build/stencilc --target=cuda --cuda-strategy=$s --cflags="-O3 -fmad=false" --build -o "$T/$ex.$s" \
      $src >"$T/build.$ex.$s.log" 2>&1 || {
      cp "$T/build.$ex.$s.log" "$LOG/"; say "  $ex $s: BUILD FAILED (see build.$ex.$s.log)"; fail=1; continue; }
    saves=""
    for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.$s.${f%%:*}"; done
    # shellcheck disable=SC2086
    if ! STN_POISON=1 "$T/$ex.$s" $args $saves >"$T/$ex.$s.out" 2>"$T/$ex.$s.err"; then
      say "  $ex $s: RUN FAILED: $(head -3 "$T/$ex.$s.err")"; fail=1; continue
    fi
    ok=1
    for f in $fields; do
      n=${f%%:*} ty=${f##*:}
      build/tools/fieldcmp --type=$ty --atol=1e-6 "$T/$ex.$s.$n" "$T/$ex.cpu.$n" >"$T/cmp.$ex.$s.$n" 2>&1 || { ok=0; cat "$T/cmp.$ex.$s.$n" >>"$LOG/gpu.log"; }
    done
    IFS=';' read -ra labels <<<"$values"
    for l in "${labels[@]}"; do
      tests/tools/numcmp.sh "$l" 1e-9 "$T/$ex.$s.out" "$T/$ex.cpu.out" >>"$LOG/gpu.log" 2>&1 || ok=0
    done
    if [ $ok = 1 ]; then say "  $ex $s: ok ($fields; $values)"; else say "  $ex $s: MISMATCH"; fail=1; fi
    if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
      # shellcheck disable=SC2086
      if compute-sanitizer --tool memcheck --error-exitcode 9 "$T/$ex.$s" $args >"$LOG/sanitize.$ex.$s.log" 2>&1; then
        say "  $ex $s: compute-sanitizer memcheck clean ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$LOG/sanitize.$ex.$s.log"))"
      else
        say "  $ex $s: compute-sanitizer memcheck REPORTED ERRORS"; fail=1
      fi
      if [ "$s" = smem ]; then
        # shellcheck disable=SC2086
        if compute-sanitizer --tool racecheck --error-exitcode 9 "$T/$ex.$s" $args >"$LOG/race.$ex.$s.log" 2>&1; then
          say "  $ex $s: compute-sanitizer racecheck clean ($(grep -o 'RACECHECK SUMMARY: [0-9]* hazard[s]*' "$LOG/race.$ex.$s.log" | head -1))"
        else
          say "  $ex $s: compute-sanitizer racecheck REPORTED HAZARDS"; fail=1
        fi
      fi
    fi
  done
done
# Deterministic reductions: two runs, bit-identical sums.
build/stencilc --target=cuda --build -o "$T/det" examples/himeno.stn >/dev/null 2>&1
a=$("$T/det" --NI=129 --NJ=129 --NK=257 --ITERS=3 | grep Gosa); b=$("$T/det" --NI=129 --NJ=129 --NK=257 --ITERS=3 | grep Gosa)
if [ "$a" = "$b" ]; then say "  deterministic reductions: two runs print the same '$a'"; else say "  deterministic reductions: DIFFER ($a / $b)"; fail=1; fi

[ "${QUICK:-0}" = 1 ] && { [ $fail = 0 ] && say "all verified" || say "FAILURES above"; exit $fail; }

# ---- time ----------------------------------------------------------------
# example | label | args | bytes per point | flops per point | interior points | iterations
cases() {
  cat <<'CASES'
himeno|M|--NI=129 --NJ=129 --NK=257 --ITERS=2000|56|34|127*127*255|2000
himeno|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|56|34|255*255*511|300
bench/himeno_nored|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|56|32|255*255*511|300
diffusion3d|512^3|--N=512 --STEPS=300|8|8|510*510*510|300
jacobi2d|8192^2|--N=8192 --M=8192 --MAXIT=300 --TOL=1e-300|24|13|8190*8190|300
CASES
}
# Variants: "default" (the compiler's choice), each strategy, and with
# TUNE=1 a sweep of block shapes and marching lengths.
variants() {
  echo "default||"
  echo "atomic-red|--no-deterministic-reductions|"
  for s in $STRATS; do echo "$s|--cuda-strategy=$s|"; done
  if [ "${TUNE:-0}" = 1 ]; then
    for blk in 32x4 64x4 128x4 256x1 32x8 128x2 64x8; do
      echo "naive:$blk|--cuda-strategy=naive --block=$blk|"
      for m in 4 8 32; do echo "stream:$blk/m$m|--cuda-strategy=stream --block=$blk --march=$m|"; done
      for m in 4 16 64; do echo "smem:$blk/m$m|--cuda-strategy=smem --block=$blk --march=$m|"; done
    done
  fi
}
mkdir -p "$T/v"
n=0
while IFS='|' read -r ex _; do
  while IFS='|' read -r name flags _; do
    n=$((n + 1))
    id=$(basename "$ex").$n
    src=examples/$ex.stn
    [ -f "$src" ] || src=$ex.stn
    printf '%s|%s|%s\n' "$ex" "$name" "$T/v/$id" > "$T/v/$id.id"
    # One script per build, run many at once (nvcc is slow, cores are many).
    printf 'build/stencilc --target=cuda %s --build -o %s %s > %s.log 2>&1\n' \
      "$flags" "$T/v/$id" "$src" "$T/v/$id" > "$T/v/$id.sh"
  done < <(variants)
done < <(cases | cut -d'|' -f1 | sort -u)
find "$T/v" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
say ""
say "timing (default flags; each number from the program's own timer around its time loop, which waits for the device):"
printf '%-12s %-7s %-22s %-22s %10s %9s %9s %7s %7s\n' example size variant "strategy/block/march" "ms/step" GFLOPS GCells/s "GB/s" "%copy" | tee -a "$LOG/gpu.log"
while IFS='|' read -r ex size args bpp fpp pts iters; do
  for id in "$T"/v/"$(basename "$ex")".*.id; do
    IFS='|' read -r _ name exe < "$id"
    [ -x "$exe" ] || { say "$ex $name: build failed ($(head -2 "$exe.log"))"; fail=1; continue; }
    case $ex in *himeno*) kn=jacobi ;; diffusion3d) kn=step ;; *) kn=sweep ;; esac
    desc=$(awk -v kn="$kn" 'index($0, "/* kernel " kn " (") == 1 {f = 1}
      f && /^ \* strategy/ {s = $3; sub(":", "", s)}
      f && /^ \* block/ {b = $3; sub(",", "", b); m = ""; if ($0 ~ /marching/) m = "/m" $5; print s "/" b m; exit}' "$exe.cu")
    # shellcheck disable=SC2086
    t=$("$exe" $args 2>>"$LOG/gpu.log" | awk -F': ' '/^Time \[s\]/ {print $2}')
    [ -n "$t" ] || { say "$ex $size $name: no time printed"; fail=1; continue; }
    awk -v ex=$ex -v size=$size -v v="$name" -v d="$desc" -v t="$t" -v it="$iters" -v b="$bpp" -v f="$fpp" \
        -v expr="$pts" -v bw="$BW" 'BEGIN {
      n = split(expr, fac, "*"); pts = 1; for (q = 1; q <= n; q++) pts *= fac[q];
      step = t / it; gbs = b * pts / step / 1e9;
      printf "%-12s %-7s %-22s %-22s %10.4f %9.1f %9.2f %7.0f %6.1f%%\n", ex, size, v, d, step * 1e3,
             f * pts / step / 1e9, pts / step / 1e9, gbs, 100 * gbs / bw }' | tee -a "$LOG/gpu.log"
  done
done < <(cases)
# ---- hand-written kernels beside ------------------------------------------
say ""
say "hand-written CUDA (bench/handwritten.cu), same GPU, same run; % of its own copy measurement:"
if nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime -o "$T/handwritten" bench/handwritten.cu 2>>"$LOG/gpu.log"; then
  "$T/handwritten" 2>&1 | tee -a "$LOG/gpu.log"
else
  say "  handwritten.cu: BUILD FAILED"; fail=1
fi

# ---- autotune -------------------------------------------------------------
# First run: tunes (inside its timer, so its time is not used) and writes the
# cache; second run: must read the cache, not tune again; its time against
# the default shape's, measured just before.
say ""
say "autotune (--autotune --tune-cache=$T/tune.txt): second run (from the cache) vs the default shape"
printf '%-12s %-7s %-44s %10s %10s %8s\n' example size "kernel: tuned shape" "default ms" "tuned ms" "ratio" | tee -a "$LOG/gpu.log"
while IFS='|' read -r ex size args bpp fpp pts iters; do
  exe=$(grep -l '|default|' "$T"/v/"$(basename "$ex")".*.id | head -1 | xargs cut -d'|' -f3)
  [ -x "$exe" ] || continue
  # shellcheck disable=SC2086
  t0=$("$exe" $args 2>/dev/null | awk -F': ' '/^Time \[s\]/ {print $2}')
  # shellcheck disable=SC2086
  "$exe" $args --autotune --tune-cache="$T/tune.txt" >/dev/null 2>"$T/tune1.err"
  # shellcheck disable=SC2086
  t1=$("$exe" $args --autotune --tune-cache="$T/tune.txt" 2>"$T/tune2.err" | awk -F': ' '/^Time \[s\]/ {print $2}')
  cat "$T/tune1.err" "$T/tune2.err" >> "$LOG/gpu.log"
  case $ex in *himeno*) kn=jacobi ;; diffusion3d) kn=step ;; *) kn=sweep ;; esac
  shape=$(grep "autotune: $kn:" "$T/tune1.err" | head -1 | sed 's/autotune: //')
  grep -q "autotune: $kn: .*from the cache" "$T/tune2.err" || { say "  $ex $size: second run did not use the cache"; fail=1; }
  grep -q "shapes in" "$T/tune2.err" && { say "  $ex $size: second run tuned again"; fail=1; }
  awk -v ex="$ex" -v size="$size" -v sh="${shape:0:44}" -v a="$t0" -v b="$t1" -v it="$iters" 'BEGIN {
    printf "%-12s %-7s %-44s %10.4f %10.4f %7.3fx\n", ex, size, sh, a / it * 1e3, b / it * 1e3, a / b }' | tee -a "$LOG/gpu.log"
done < <(cases)
[ $fail = 0 ] && say "all verified" || say "FAILURES above"
exit $fail
