#!/bin/bash
# bench/gpu.sh: on a GPU machine, in one go: build, verify every example x
# CUDA strategy against the CPU (`--target=c`) result of the same program,
# then time the large sizes and report each against the device's copy
# bandwidth measured in the same run (bench/copybw.cu).
#
#   usage: bench/gpu.sh            (needs nvcc and a GPU; ~5 minutes on an H100)
#   env:   SANITIZE=1  also run compute-sanitizer on the small sizes
#          QUICK=1     verification only, no timing
#          ONLY=a|b   verify only these cases (names as in verify_cases)
#          SKIP_TB=1   no temporal-blocking sections; TB_ONLY=1 only those
#          TB_CASES=regex  only the temporal-blocking programs that match
#          TB_VARIANTS="1 2 s3 ..."  the --tb builds they are verified with
#          OUT=dir     where logs go (default: a temporary folder)
#          SECTIONS=a,b  only these of: verify (with ONLY=), steps (the
#                      optimization steps of docs/optimizations.md), lib
#                      (library mode and the embedding examples on the GPU),
#                      vec (points per thread x block shapes, by --profile;
#                      VEC_ONLY=regex picks its lines), shapes (launch
#                      shapes by the program's timer), harness
#                      (bench/prefetch.cu, the hand-written lead), mpi
#                      (bench/mpi.sh: --mpi verified and timed; PARTS=),
#                      fuzz (tests/fuzz/diff --gpu: random programs on every
#                      CUDA variant; FUZZ_SEEDS=A..B, FUZZ_NO_REDUCE=1,
#                      FUZZ_SANITIZE_SEEDS=A..B: compute-sanitizer too,
#                      FUZZ_SAMPLE=K, FUZZ_PROGRAMS=P, FUZZ_SECONDS=S,
#                      FUZZ_CPU_SEEDS=A..B: a CPU campaign beside it,
#                      FUZZ_MUTATE_SEEDS=A..B: tests/fuzz/mutate with nvcc,
#                      FUZZ_SEEDS=none: no GPU campaign), an5d
#                      (bench/an5d/run.sh: AN5D's suite beside stencilc's
#                      defaults, verified; AN5D_SWEEP=1 for every schedule),
#                      unseen (bench/unseen: shapes the defaults were not
#                      tuned on, verified, --tb=auto against a sweep;
#                      UNSEEN_VERIFY_STEPS, UNSEEN_SWEEP2, UNSEEN_SWEEP3),
#                      io (bench/io.sh: reads, checkpoint/restart, writes
#                      against the disk, Himeno L's checkpoint cost),
#                      himeno (the default build of Himeno M and L against
#                      bench/handwritten.cu's one-sweep kernel; HIMENO_REPS),
#                      persist (bench/persist.cu: relaunched single steps
#                      against a CUDA graph and a persistent grid), graph
#                      (time loops replayed as CUDA graphs: values against
#                      launching every kernel, and timed; GRAPH_REPS),
#                      choices (every program where fused passes, timed
#                      passes and graphs engage, against each forced off)
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
# Verified variants: each strategy, and points per thread (--vec) forced:
# NAME-vV is strategy NAME with --vec=V (clamped by the compiler to 16-byte
# vectors; kernels that wrap keep one point).
# pipe-vV: the stream strategy with -fstream-pipeline (software pipelining).
# burstM-vV: the stream strategy issuing M planes' loads at once (--burst=M).
# pipe2-tight: pipelined, 2 points per thread, 32x4 blocks, at most 72
# registers (CG's apply: its hand-written harness's occupancy).
# default: the compiler's choices, temporal blocking included (--tb=auto
# is the CUDA default); every other variant runs single steps (--tb=1), so
# that the strategy it names computes every step.
VARIANTS=${VARIANTS:-default naive stream smem stream-v1 naive-v1 naive-v4 stream-v4 pipe-v1 pipe-v4 burst2-v4 burst3-v1 burst4-v2}
# Flags that run single steps: --tb=1 in front, unless they set --tb.
single() { case $1 in *--tb=*) echo "$1" ;; *) echo "--tb=1${1:+ }$1" ;; esac; }
flags_of() {
  case $1 in
    default) echo "" ;;
    pipe-v*) single "--cuda-strategy=stream -fstream-pipeline --vec=${1##*-v}" ;;
    pipe2-tight) single "--cuda-strategy=stream -fstream-pipeline --vec=2 --block=32x4 --max-regs=72" ;;
    burst*-v*) b=${1%-v*}; single "--cuda-strategy=stream --burst=${b#burst} --vec=${1##*-v}" ;;
    *-v*) single "--cuda-strategy=${1%-v*} --vec=${1##*-v}" ;;
    *) single "--cuda-strategy=$1" ;;
  esac
}
# The verification cases: name | program | args | fields to compare
# (name:type, atol 1e-6) | printed values: rel:LABEL:RTOL (against the CPU),
# abs:LABEL:ATOL (against the CPU), max:LABEL:LIMIT (the GPU's alone),
# file:NAME (a file the program writes, byte for byte) | extra args for
# the compute-sanitizer runs (shorter runs: every launch is checked) |
# "zero" when the program relies on fields starting at zero (the language
# says they do), so the GPU run cannot start them as NaN. himeno_m is large
# enough for --tb=auto's timed first passes (fields beyond the L2, eight
# passes or more) and its choice between fused passes and single steps.
verify_cases() {
  cat <<'CASES'
himeno|examples/himeno.stn|--NI=33 --NJ=33 --NK=65 --ITERS=20|p:float wrk2:float|rel:Gosa ::1e-9
himeno_m|examples/himeno.stn|--NI=129 --NJ=129 --NK=257 --ITERS=40|p:float wrk2:float|rel:Gosa ::1e-9|--ITERS=10
diffusion3d|examples/diffusion3d.stn|--N=40 --STEPS=15|f:float fn:float|rel:Total heat ::1e-9;rel:Peak ::1e-9
jacobi2d|examples/jacobi2d.stn|--N=70 --M=90 --MAXIT=40|u:double uold:double|rel:Residual ::1e-9;rel:Solution Error ::1e-9;rel:Iterations ::0
lazy|bench/lazy.stn|--N=40 --STEPS=13|u:double un:double|rel:a ::1e-9;rel:b ::1e-9;rel:c ::1e-9;rel:cnt ::1e-9;rel:trail ::1e-9;rel:last change ::1e-9;rel:peak ::1e-9;rel:total ::1e-9;rel:points ::1e-9
lbm_d2q9|examples/lbm_d2q9.stn|--NY=32 --NX=16 --STEPS=6000|ux:float umag:float|rel:L2 error ::1e-6;max:L2 error ::1e-2;max:Mass change ::1e-5;file:lbm_speed.png|--STEPS=60
cg_poisson|examples/cg_poisson.stn|--N=24|x:double|abs:Iterations ::1;max:Relative residual ::1e-8;max:Solution error ::1e-7||zero
periodic|tests/lit/run/periodic.stn|--N=7 --M=5 --K=6 --T=4|a:double b:double c:double|rel:sums ::1e-12||zero
boundary|tests/lit/run/boundary.stn|--N=9 --M=7 --K=6 --T=5|u:double v:float wo:int|rel:sums ::1e-12||zero
images|tests/lit/run/images.stn||u:double v:float|file:gray.png;file:rows.png;file:clamp.png;file:nan.png;file:cube.png;file:cube.vtk
asymmetric|tests/lit/run/asymmetric.stn|--N=12 --M=9 --K=17 --T=3|u:double v:double|rel:sum ::1e-12
semantics|tests/lit/run/semantics.stn||a:double b:double m:int|rel:old:0;rel:div:0;rel:names:0
recoef|tests/lit/run/recoef.stn|--N=20 --M=14 --K=37 --T=5|u:float v:float a:float b:float|rel:first ::1e-9;rel:second ::1e-9
grayscott|examples/grayscott.stn|--N=64 --STEPS=300|u:double v:double|rel:Total u ::1e-9;rel:Total v ::1e-9;rel:Peak v ::1e-9
funclap|tests/lit/func/Inputs/lap.stn||a:double b:double d:double|abs:lap(lap(u)) against the 13 points in its order::0;abs:lap(u)[1, -1] against lap at (1, -1)::0;rel:sum::1e-9||zero
reduceorder|tests/lit/run/reduce-order.stn||u:double|rel:last ::1e-12
CASES
}

# ---- verify --------------------------------------------------------------
section_verify() {
say ""
say "verification (small sizes, against --target=c; fields start as NaN on the GPU unless the program relies on zeros):"
# Build every case x variant first, many at once (nvcc is slow, cores are many).
mkdir -p "$T/vb"
while IFS='|' read -r ex src _; do
  for s in $VARIANTS; do
    printf 'build/stencilc --target=cuda %s --cflags="-O3 -fmad=false" --build -o %s %s > %s 2>&1\n' \
      "$(flags_of $s)" "$T/$ex.$s" "$src" "$T/build.$ex.$s.log" > "$T/vb/$ex.$s.sh"
  done
done < <(verify_cases | grep -E "^(${ONLY:-.*})\|")
find "$T/vb" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
while IFS='|' read -r ex src args fields checks sanargs start; do
  poison=1
  [ "$start" = zero ] && poison=0
  build/stencilc --target=c --cflags="-O2 -ffp-contract=off" --build -o "$T/$ex.cpu" "$src" >"$T/build.$ex.cpu.log" 2>&1 || {
    cat "$T/build.$ex.cpu.log"; say "  $ex: CPU BUILD FAILED"; fail=1; continue; }
  mkdir -p "$T/run.$ex.cpu"
  saves=""
  for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.cpu.${f%%:*}"; done
  # shellcheck disable=SC2086
  (cd "$T/run.$ex.cpu" && "$T/$ex.cpu" $args $saves >"$T/$ex.cpu.out") || { say "  $ex: CPU RUN FAILED"; fail=1; continue; }
  for s in $VARIANTS; do
    [ -x "$T/$ex.$s" ] || {
      cp "$T/build.$ex.$s.log" "$LOG/"; say "  $ex $s: BUILD FAILED (see build.$ex.$s.log)"; fail=1; continue; }
    saves=""
    for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.$s.${f%%:*}"; done
    mkdir -p "$T/run.$ex.$s"
    # shellcheck disable=SC2086
    if ! (cd "$T/run.$ex.$s" && STN_POISON=$poison "$T/$ex.$s" $args $saves >"$T/$ex.$s.out" 2>"$T/$ex.$s.err"); then
      say "  $ex $s: RUN FAILED: $(head -3 "$T/$ex.$s.err")"; fail=1; continue
    fi
    ok=1
    for f in $fields; do
      n=${f%%:*} ty=${f##*:}
      build/tools/fieldcmp --type=$ty --atol=1e-6 "$T/$ex.$s.$n" "$T/$ex.cpu.$n" >"$T/cmp.$ex.$s.$n" 2>&1 || { ok=0; cat "$T/cmp.$ex.$s.$n" >>"$LOG/gpu.log"; }
    done
    IFS=';' read -ra cks <<<"$checks"
    for ck in "${cks[@]}"; do
      kind=${ck%%:*} rest=${ck#*:}
      label=${rest%:*} tol=${rest##*:}
      case $kind in
        rel) tests/tools/numcmp.sh "$label" "$tol" "$T/$ex.$s.out" "$T/$ex.cpu.out" >>"$LOG/gpu.log" 2>&1 || ok=0 ;;
        abs) tests/tools/numcmp.sh --atol "$label" "$tol" "$T/$ex.$s.out" "$T/$ex.cpu.out" >>"$LOG/gpu.log" 2>&1 || ok=0 ;;
        max) tests/tools/numcmp.sh --max "$label" "$tol" "$T/$ex.$s.out" >>"$LOG/gpu.log" 2>&1 || ok=0 ;;
        file) cmp "$T/run.$ex.$s/$rest" "$T/run.$ex.cpu/$rest" >>"$LOG/gpu.log" 2>&1 || ok=0 ;;
      esac
    done
    if [ $ok = 1 ]; then say "  $ex $s: ok ($fields; $checks)"; else say "  $ex $s: MISMATCH"; fail=1; fi
    if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
      # shellcheck disable=SC2086
      if (cd "$T/run.$ex.$s" && compute-sanitizer --tool memcheck --error-exitcode 9 "$T/$ex.$s" $args $sanargs) >"$LOG/sanitize.$ex.$s.log" 2>&1; then
        say "  $ex $s: compute-sanitizer memcheck clean ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$LOG/sanitize.$ex.$s.log"))"
        rm -f "$LOG/sanitize.$ex.$s.log"
      else
        say "  $ex $s: compute-sanitizer memcheck REPORTED ERRORS"; fail=1
      fi
      if [ "$s" = smem ]; then
        # shellcheck disable=SC2086
        if (cd "$T/run.$ex.$s" && compute-sanitizer --tool racecheck --error-exitcode 9 "$T/$ex.$s" $args $sanargs) >"$LOG/race.$ex.$s.log" 2>&1; then
          say "  $ex $s: compute-sanitizer racecheck clean ($(grep -o 'RACECHECK SUMMARY: [0-9]* hazard[s]*' "$LOG/race.$ex.$s.log" | head -1))"
          rm -f "$LOG/race.$ex.$s.log"
        else
          say "  $ex $s: compute-sanitizer racecheck REPORTED HAZARDS"; fail=1
        fi
      fi
    fi
  done
done < <(verify_cases | grep -E "^(${ONLY:-.*})\|")
# Deterministic reductions: two runs, bit-identical sums.
[ -n "${ONLY:-}" ] || {
build/stencilc --target=cuda --build -o "$T/det" examples/himeno.stn >/dev/null 2>&1
a=$("$T/det" --NI=129 --NJ=129 --NK=257 --ITERS=3 | grep Gosa); b=$("$T/det" --NI=129 --NJ=129 --NK=257 --ITERS=3 | grep Gosa)
if [ "$a" = "$b" ]; then say "  deterministic reductions: two runs print the same '$a'"; else say "  deterministic reductions: DIFFER ($a / $b)"; fail=1; fi
}
}

# ---- optimization steps (docs/optimizations.md) ----------------------------
# Each program built step by step, each step adding one optimization (or
# choosing another strategy), all timed at one size in this run. Every
# step's printed result is checked against the first step's (the verify
# section checks the default build against the CPU).
# program | size | args | label checked (rel 1e-4) | bytes per point | points | steps | step@flags;...
# A step's flags "AUTOTUNE" mean the default build run with --autotune,
# timed on its second run (from the tuning cache).
steps_cases() {
  cat <<'CASES'
himeno|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|Gosa :|56|255*255*511|300|as written (naive, one point per thread, no scalar passes)@--cuda-strategy=naive --vec=1 -fno-fold -fno-cse -fno-hoist -fno-recip;+ fold, CSE, hoist, reciprocal@--cuda-strategy=naive --vec=1;+ 4 points per thread (vector loads)@--cuda-strategy=naive;shared-memory tiles of p@--cuda-strategy=smem;2.5-D streaming@--cuda-strategy=stream --vec=1 -fno-queue;2.5-D + register queue@--cuda-strategy=stream --vec=1;2.5-D + queue + 4 points per thread@--cuda-strategy=stream;single-step default (naive, 64x4, 4 points per thread, programmatic launches)@;single-step default + --autotune@AUTOTUNE;temporal blocking --tb=2 -fno-tb-reuse@--tb=2 -fno-tb-reuse;temporal blocking --tb=2 (reuse, the default: --tb=auto)@--tb=2;temporal blocking --tb=3@--tb=3;temporal blocking --tb=4@--tb=4
lbm_d2q9|4096^2|--NY=4096 --NX=4096 --STEPS=300|L2 error :|72|4096*4096|300|as written (naive, no scalar passes)@-fno-fold -fno-cse -fno-hoist -fno-recip;+ exact scalar passes (fold, CSE, hoist)@-fno-fold-zeros -fno-recip;+ zeros folded, one reciprocal of rho (the single-step default)@;single-step default + --autotune@AUTOTUNE;temporal blocking --tb=2@--tb=2;temporal blocking --tb=3@--tb=3;temporal blocking --tb=4 (the default: --tb=auto)@--tb=4;temporal blocking --tb=6@--tb=6;temporal blocking --tb=6 -fno-tb-own-smem@--tb=6 -fno-tb-own-smem;temporal blocking --tb=8@--tb=8;temporal blocking --tb=3 -fno-fold-zeros -fno-recip@--tb=3 -fno-fold-zeros -fno-recip
CASES
}
section_steps() {
  say ""
  say "optimization steps (docs/optimizations.md): program's own timer; GB/s = minimum bytes per point x points / time per step"
  mkdir -p "$T/steps" "$T/scratch"
  local n=0 ex size args label bpp pts iters list st name flags
  while IFS='|' read -r ex size args label bpp pts iters list; do
    IFS=';' read -ra st <<<"$list"
    for step in "${st[@]}"; do
      n=$((n + 1))
      name=${step%%@*} flags=${step#*@}
      [ "$flags" = AUTOTUNE ] && flags=""
      flags=$(single "$flags") # the rows without --tb run single steps
      printf '%s|%s\n' "$ex" "$step" > "$T/steps/$n.id"
      printf 'build/stencilc --target=cuda %s --build -o %s examples/%s.stn > %s.log 2>&1\n' "$flags" "$T/steps/$n" "$ex" "$T/steps/$n" > "$T/steps/$n.sh"
    done
  done < <(steps_cases)
  find "$T/steps" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
  printf '%-10s %-7s %-40s %10s %8s %7s %8s %s\n' example size step "ms/step" "GB/s" "%copy" "speed-up" "check" | tee -a "$LOG/gpu.log"
  while IFS='|' read -r ex size args label bpp pts iters list; do
    local base="" ref=""
    for m in $(seq 1 "$n"); do
      IFS='|' read -r iex step < "$T/steps/$m.id"
      [ "$iex" = "$ex" ] || continue
      name=${step%%@*} flags=${step#*@}
      exe=$T/steps/$m
      [ -x "$exe" ] || { say "$ex $name: BUILD FAILED ($(grep -m1 error "$exe.log"))"; fail=1; continue; }
      extra=""
      if [ "$flags" = AUTOTUNE ]; then
        extra="--autotune --tune-cache=$T/steps/tune.txt"
        # shellcheck disable=SC2086
        (cd "$T/scratch" && "$exe" $args $extra > /dev/null 2>> "$LOG/gpu.log")
      fi
      # shellcheck disable=SC2086
      (cd "$T/scratch" && "$exe" $args $extra > "$exe.out" 2>> "$LOG/gpu.log")
      t=$(awk -F': ' '/^Time \[s\]/ {print $2}' "$exe.out")
      [ -n "$t" ] || { say "$ex $name: no time printed"; fail=1; continue; }
      if [ -z "$ref" ]; then ref=$exe.out; check="reference"
      elif tests/tools/numcmp.sh "$label" 1e-4 "$exe.out" "$ref" >> "$LOG/gpu.log" 2>&1; then check="$label same"
      else check="$label DIFFERS"; fail=1; fi
      [ -z "$base" ] && base=$t
      awk -v ex="$ex" -v size="$size" -v nm="$name" -v t="$t" -v it="$iters" -v b="$bpp" -v expr="$pts" -v bw="$BW" \
          -v base="$base" -v ck="$check" 'BEGIN {
        n = split(expr, fac, "*"); p = 1; for (q = 1; q <= n; q++) p *= fac[q];
        step = t / it; gbs = b * p / step / 1e9;
        printf "%-10s %-7s %-40s %10.4f %8.0f %6.1f%% %7.2fx %s\n", ex, size, nm, step * 1e3, gbs, 100 * gbs / bw, base / t, ck }' |
        tee -a "$LOG/gpu.log"
    done
  done < <(steps_cases)
}

# ---- library mode on the GPU ------------------------------------------------
# Installs stencilc, then: himeno.stn as a CUDA library driven by a C host
# (two contexts interleaved; p against the CPU programs of both sizes), and
# the two embedding examples with their kernels as CUDA (each checks its
# own result: heat against plain C, poisson its convergence and error).
section_lib() {
  say ""
  say "library mode (--emit=lib --target=cuda) against a fresh make install:"
  local L=$T/lib
  mkdir -p "$L"
  # what was built (and carried here) is installed as it is: -o all
  make -s -o all install PREFIX="$L/inst" > "$L/install.log" 2>&1 || { say "  make install FAILED"; fail=1; return; }
  # the installed stencilc finds its own runtime, not the source tree's
  unset STENCILC_RUNTIME_DIR STENCILC_LIB_DIR
  local stc=$L/inst/bin/stencilc
  # shellcheck disable=SC2046
  if "$stc" --emit=lib --target=cuda -o "$L/himeno.cu" examples/himeno.stn &&
     nvcc -O3 -fmad=false -arch=sm_90 $("$stc" --print-cflags) -c -o "$L/himeno.o" "$L/himeno.cu" &&
     cc -O2 -I"$L" -c -o "$L/host.o" tests/lit/lib/Inputs/himeno_host.c &&
     cc -o "$L/host" "$L/host.o" "$L/himeno.o" $("$stc" --print-libs --target=cuda); then
    (cd "$L" && STN_PROFILE=1 ./host 20 a.p b.p > host.out 2> host.err)
    build/stencilc --target=c --cflags="-O2 -ffp-contract=off" --build -o "$L/cpu" examples/himeno.stn > /dev/null 2>&1
    (cd "$L" && ./cpu --NI=33 --NJ=33 --NK=65 --ITERS=20 --save=p=a.ref > a.out && ./cpu --NI=17 --NJ=25 --NK=33 --ITERS=20 --save=p=b.ref > b.out)
    sed -n 's/^Gosa A :/Gosa :/p' "$L/host.out" > "$L/a.host"
    if grep -q '^ok' "$L/host.out" && build/tools/fieldcmp --type=float --atol=1e-6 "$L/a.p" "$L/a.ref" >> "$LOG/gpu.log" 2>&1 &&
       build/tools/fieldcmp --type=float --atol=1e-6 "$L/b.p" "$L/b.ref" >> "$LOG/gpu.log" 2>&1 &&
       tests/tools/numcmp.sh "Gosa :" 1e-9 "$L/a.host" "$L/a.out" >> "$LOG/gpu.log" 2>&1; then
      say "  himeno library, C host, two contexts: ok (p of both within 1e-6 of the CPU programs, Gosa 1e-9)"
      sed -n '/^profile of/,$p' "$L/host.err" | tee -a "$LOG/gpu.log"
    else
      say "  himeno library: MISMATCH or FAILED ($(head -2 "$L/host.err"))"; fail=1
    fi
  else
    say "  himeno library: BUILD FAILED"; fail=1
  fi
  cp -r examples/embed-make "$L/em" && rm -rf "$L/em/gen" "$L/em/heat"
  if make -C "$L/em" STENCILC_PREFIX="$L/inst" TARGET=cuda > "$L/em.log" 2>&1 && (cd "$L/em" && ./heat 500 > heat.out 2>&1); then
    say "  embed-make, TARGET=cuda: $(tail -1 "$L/em/heat.out")"
  else
    say "  embed-make, TARGET=cuda: FAILED: $(tail -3 "$L/em.log" "$L/em/heat.out" 2>/dev/null)"; fail=1
  fi
  if command -v cmake > /dev/null; then
    cp -r examples/embed-cmake "$L/ec" && rm -rf "$L/ec/build"
    if cmake -S "$L/ec" -B "$L/ec/build" -DCMAKE_PREFIX_PATH="$L/inst" -DSTENCIL_TARGET=cuda > "$L/ec.log" 2>&1 &&
       cmake --build "$L/ec/build" >> "$L/ec.log" 2>&1 && "$L/ec/build/poisson" 257 > "$L/ec.out" 2>&1; then
      say "  embed-cmake, STENCIL_TARGET=cuda: $(tr '\n' ' ' < "$L/ec.out")"
    else
      say "  embed-cmake, STENCIL_TARGET=cuda: FAILED: $(tail -3 "$L/ec.log" "$L/ec.out" 2>/dev/null)"; fail=1
    fi
  else
    say "  embed-cmake: no cmake on this machine (make test builds it on the CPU side)"
  fi
  export STENCILC_RUNTIME_DIR="$root/runtime" STENCILC_LIB_DIR="$root/build"
}

# ---- points per thread (--vec) with block shapes ------------------------------
# Each program x flags built at once, then run with --profile: the kernel's
# mean time per call and % of the copy bandwidth the program measures.
# program | size | args | kernel | flags;flags;...
# Builds, many at once, every flag set of the case lines on standard input
# (first field: the program, examples/NAME.stn or NAME.stn; last field:
# ;-separated flag sets) as DIR/1, DIR/2, ... in the order of the lines.
build_flag_sets() {
  local dir=$1 n=0 line ex src flags
  mkdir -p "$dir"
  while IFS= read -r line; do
    ex=${line%%|*}
    src=examples/$ex.stn
    [ -f "$src" ] || src=$ex.stn
    IFS=';' read -ra fl <<<"${line##*|}"
    for flags in "${fl[@]}"; do
      n=$((n + 1))
      printf 'build/stencilc --target=cuda %s --build -o %s %s > %s.log 2>&1\n' "$(single "$flags")" "$dir/$n" "$src" "$dir/$n" > "$dir/$n.sh"
    done
  done
  find "$dir" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
}
vec_cases() {
  cat <<'CASES'
himeno|M|--NI=129 --NJ=129 --NK=257 --ITERS=2000|jacobi|--vec=1;--vec=2;--vec=4;--vec=4 --block=32x4;--vec=4 --block=64x2;--vec=4 --block=32x1;--vec=4 --block=64x1;--vec=2 --block=64x1;--vec=2 --block=64x2;--vec=4 --max-regs=jacobi=64;--vec=4 --max-regs=jacobi=56;--vec=4 --block=32x4 --max-regs=jacobi=64
himeno|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|jacobi|--vec=1;--vec=2;--vec=4;--vec=4 --block=32x4;--vec=4 --block=64x2;--vec=4 --block=32x1;--vec=4 --block=64x1;--vec=2 --block=64x1;--vec=2 --block=64x2
bench/himeno_nored|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|jacobi|--vec=1;--vec=4;--vec=4 --block=32x4;--vec=4 --block=64x2;--vec=4 --block=32x8;--vec=4 --block=128x1;--vec=2 --block=64x4
diffusion3d|512^3|--N=512 --STEPS=300|step|--vec=1;--vec=2;--vec=4;--vec=4 --block=32x4;--vec=4 --block=64x2;--vec=4 --march=8;--vec=4 --block=32x8 --march=8;--vec=2 --block=64x4;-fstream-pipeline;-fstream-pipeline --block=32x4;-fstream-pipeline --march=8;-fstream-pipeline --march=16;-fstream-pipeline --block=32x4 --march=16
cg_poisson|256^3|--N=256 --MAXIT=100 --TOL=1e-300 --EVERY=1000|apply|--vec=1;--vec=2;--vec=2 --block=32x4;--vec=1 --max-regs=apply=32;--vec=2 --max-regs=apply=40;--vec=2 --max-regs=apply=48;--vec=2 --block=32x4 --max-regs=apply=40;-fstream-pipeline;-fstream-pipeline --march=8;-fstream-pipeline --march=16;-fstream-pipeline --block=64x4 --march=8;-fstream-pipeline --vec=2 --block=32x4
bench/apply_only|256^3|--N=256 --ITERS=100|apply|--vec=1;--block=128x4;--vec=2 -fstream-pipeline --block=64x2
CASES
}
section_vec() {
  say ""
  say "points per thread (--vec) x block, single steps (--tb=1): the kernel's mean time per call and % of copy, from --profile"
  mkdir -p "$T/scratch"
  local n=0 ex size args kn list
  build_flag_sets "$T/vec" < <(vec_cases | grep -E "${VEC_ONLY:-.}")
  printf '%-18s %-7s %-8s %-36s %10s %8s\n' example size kernel flags "mean ms" "% copy" | tee -a "$LOG/gpu.log"
  n=0
  while IFS='|' read -r ex size args kn list; do
    IFS=';' read -ra fl <<<"$list"
    for flags in "${fl[@]}"; do
      n=$((n + 1))
      [ -x "$T/vec/$n" ] || { say "$ex $flags: BUILD FAILED ($(grep -m1 error "$T/vec/$n.log"))"; fail=1; continue; }
      # shellcheck disable=SC2086
      (cd "$T/scratch" && "$T/vec/$n" $args --profile > "$T/vec/$n.out" 2> "$T/vec/$n.err")
      awk -v ex="$ex" -v size="$size" -v kn="$kn" -v fl="$flags" '$1 == kn && NF >= 8 {
        printf "%-18s %-7s %-8s %-36s %10.4f %8s\n", ex, size, kn, fl, $4, $NF; exit}' "$T/vec/$n.err" | tee -a "$LOG/gpu.log"
    done
  done < <(vec_cases | grep -E "${VEC_ONLY:-.}")
}

# Launch shapes timed by the program's own timer (--profile's events keep
# programmatic launches from overlapping): example|size|args|bytes per
# point|points|iterations|flag sets (;-separated)
shape_cases() {
  cat <<'CASES'
himeno|M|--NI=129 --NJ=129 --NK=257 --ITERS=2000|56|127*127*255|2000|;-fno-pdl;--block=64x2;--vec=1;--vec=1 --block=128x2;--vec=1 --block=128x4;--vec=1 --block=256x2;--vec=4 --block=32x4;--vec=4 --block=64x4;--vec=4 --block=32x8;--vec=2 --block=64x4
himeno|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|56|255*255*511|300|;-fno-pdl;--block=64x2;--vec=1;--vec=1 --block=128x2;--vec=1 --block=128x4;--vec=1 --block=256x2;--vec=4 --block=32x4;--vec=4 --block=64x4;--vec=4 --block=32x8;--vec=2 --block=64x4
CASES
}
section_shapes() {
  say ""
  say "launch shapes of single steps (--tb=1), program's own timer (default = the compiler's choice; % of the copy bandwidth)"
  mkdir -p "$T/scratch"
  local n=0 ex size args bpp pts iters list
  build_flag_sets "$T/sh" < <(shape_cases)
  n=0
  while IFS='|' read -r ex size args bpp pts iters list; do
    IFS=';' read -ra fl <<<"$list"
    for flags in "${fl[@]}"; do
      n=$((n + 1))
      [ -x "$T/sh/$n" ] || { say "$ex $flags: BUILD FAILED"; fail=1; continue; }
      # shellcheck disable=SC2086
      t=$(cd "$T/scratch" && "$T/sh/$n" $args | awk -F': ' '/^Time \[s\]/ {print $2}')
      awk -v ex="$ex" -v size="$size" -v fl="${flags:-default}" -v t="$t" -v it="$iters" -v b="$bpp" -v expr="$pts" -v bw="$BW" 'BEGIN {
        n = split(expr, fac, "*"); pts = 1; for (q = 1; q <= n; q++) pts *= fac[q];
        step = t / it; gbs = b * pts / step / 1e9;
        printf "%-10s %-4s %-28s %9.4f ms %7.0f GB/s %6.1f%%\n", ex, size, fl, step * 1e3, gbs, 100 * gbs / bw }' | tee -a "$LOG/gpu.log"
    done
  done < <(shape_cases)
}

# The hand-written harness of the next lead (not in the full run):
# software-pipelined, burst and shuffle variants of diffusion3d's and CG's
# single sweeps, each against the copy bandwidth it measures itself.
section_harness() {
  say ""
  say "bench/prefetch.cu (hand-written single sweeps; % of the copy bandwidth it measures):"
  nvcc -O3 -arch=sm_90 -std=c++17 -o "$T/prefetch" bench/prefetch.cu >"$LOG/prefetch.build.log" 2>&1 || {
    say "  prefetch: BUILD FAILED (prefetch.build.log)"; fail=1; return; }
  "$T/prefetch" 2>&1 | tee -a "$LOG/gpu.log"
}

# Issue 19's "a persistent grid where it beats relaunching" (not in the
# full run): j2d5pt's single step relaunched, by PDL, in a CUDA graph and
# as one cooperative launch with grid.sync() between steps, N = 64..8192,
# each variant's field equal to the plain launches' bit for bit; then the
# default build of bench/an5d/j2d5pt.stn at the same sizes and steps.
section_persist() {
  say ""
  say "bench/persist.cu (us a step: relaunch, PDL, CUDA graph, persistent grid):"
  nvcc -O3 -arch=sm_90 -std=c++17 -o "$T/persist" bench/persist.cu >"$LOG/persist.build.log" 2>&1 || {
    say "  persist: BUILD FAILED (persist.build.log)"; fail=1; return; }
  "$T/persist" > "$T/persist.out" 2>&1
  say "$(cat "$T/persist.out")"
  grep -q 'all variants equal' "$T/persist.out" || fail=1
  build/stencilc --target=cuda --build -o "$T/j2d5pt" bench/an5d/j2d5pt.stn >"$LOG/persist.j2d5pt.log" 2>&1 || {
    say "  j2d5pt: BUILD FAILED (persist.j2d5pt.log)"; fail=1; return; }
  say "stencilc's j2d5pt default (the program's timer), us a step:"
  local n st g
  for n in 64 128 256 512 1024 2048 4096 8192; do
    st=$((4000000000 / (n * n))); [ $st -lt 400 ] && st=400; [ $st -gt 20000 ] && st=20000; st=$((st / 2 * 2))
    g=$("$T/j2d5pt" --N=$n --STEPS=$st | awk '/^GCells/ {print $3}')
    say "  N=$n steps=$st: $(awk -v g="$g" -v n=$n 'BEGIN { printf "%.2f", n * n / (g * 1e3) }')"
  done
}

# Time loops replayed as CUDA graphs (passes/graph.c, runtime/stn_cuda.h
# stn_cuda_graph), in the full run: each program (name | source | timed
# args | checked args | field saved | build flags: the default where
# empty; periodic and Dirichlet boundaries, a strategy forced, --tb=4 on a
# grid too small for fused passes) prints the same values with STN_GRAPH=1 (replayed wherever
# recording works) as with STN_GRAPH=0 (every kernel launched; the verify
# section checks those against the CPU), timing and rate lines aside, and
# saves the same field bit for bit where the case names one; compute-sanitizer's
# memcheck on two forced replays. Then the default (replayed where its
# first replay took under 95% of as many plain iterations) against
# STN_GRAPH=0, alternately, GRAPH_REPS times, best of each, at sizes from
# launch-bound to not: seconds of the program's timer.
graph_cases() {
  cat <<'CASES'
j2d5pt|bench/an5d/j2d5pt.stn|--N=64 --STEPS=4000|--N=301 --STEPS=200|u
j2d5pt|bench/an5d/j2d5pt.stn|--N=256 --STEPS=4000|
j2d5pt|bench/an5d/j2d5pt.stn|--N=1024 --STEPS=4000|
j2d5pt|bench/an5d/j2d5pt.stn|--N=2048 --STEPS=2000|
j2d5pt|bench/an5d/j2d5pt.stn|--N=8192 --STEPS=400|
star3d1r|bench/an5d/star3d1r.stn|--N=64 --STEPS=4000|--N=45 --STEPS=150|u
star3d1r|bench/an5d/star3d1r.stn|--N=128 --STEPS=2000|
lbm_d2q9|examples/lbm_d2q9.stn|--STEPS=100000|--STEPS=300|ux
lbm_d2q9|examples/lbm_d2q9.stn|--NX=1024 --NY=1024 --STEPS=2000|
grayscott|examples/grayscott.stn||--N=64 --STEPS=300
himeno|examples/himeno.stn|--NI=33 --NJ=33 --NK=65 --ITERS=4000|--NI=17 --NJ=17 --NK=33 --ITERS=200
himeno|examples/himeno.stn|--ITERS=2000|
diffusion3d|examples/diffusion3d.stn|--STEPS=4000|--N=40 --STEPS=150
diffusion3d|examples/diffusion3d.stn|--N=256 --STEPS=200|
periodic|tests/lit/run/periodic.stn||--N=7 --M=5 --K=6 --T=150|a
boundary|tests/lit/run/boundary.stn||--N=9 --M=7 --K=6 --T=150|u
asymmetric|tests/lit/run/asymmetric.stn||--N=12 --M=9 --K=17 --T=150|u
recoef|tests/lit/run/recoef.stn||--N=20 --M=14 --K=37 --T=150|u
j2d5pt.naive|bench/an5d/j2d5pt.stn||--N=301 --STEPS=200|u|--cuda-strategy=naive --tb=4
diffusion3d.smem|examples/diffusion3d.stn||--N=40 --STEPS=150|f|--cuda-strategy=smem
lbm_obstacle|examples/lbm_obstacle.stn|--STEPS=20000|--STEPS=400 --OUT=100|speed
graphs|bench/graphs.stn||--STEPS=101|u
CASES
}
section_graph() {
  say ""
  say "CUDA graphs of time loops: values with STN_GRAPH=1 against STN_GRAPH=0; the default against STN_GRAPH=0, seconds (lbm_obstacle: 1 / MLUPS; best of ${GRAPH_REPS:-2}):"
  mkdir -p "$T/graph/out"
  ln -sfn "$root/examples" "$T/graph/examples" # lbm_obstacle reads examples/obstacle.png, writes out/
  local ex src args check field flags built=" " a b r t0 t1 x choice
  local vals='time|gcells|gflops|mflops|mlups|per second|rate'
  # the program's time, or where it prints none, the inverse of its rate (lbm_obstacle's MLUPS): the ratio is the same
  local secs='tolower($0) ~ /^time/ {print $2; exit} tolower($0) ~ /^mlups/ {r = 1 / $2} END {if (r) print r}'
  while IFS='|' read -r ex src args check field flags; do
    if [ "${built/ $ex /}" = "$built" ]; then
      # shellcheck disable=SC2086
      build/stencilc --target=cuda $flags --build -o "$T/graph/$ex" "$src" >"$LOG/graph.$ex.build.log" 2>&1 || {
        say "  $ex: BUILD FAILED (graph.$ex.build.log)"; fail=1; continue; }
      built="$built$ex "
    fi
    if [ -n "$check" ]; then
      rm -f "$T/graph/f.g1" "$T/graph/f.g0"
      # shellcheck disable=SC2086
      (cd "$T/graph" && STN_GRAPH=1 STN_GRAPH_VERBOSE=1 "./$ex" $check ${field:+--save=$field=f.g1} > "$ex.g1" 2>"$ex.g1.err"
       STN_GRAPH=0 "./$ex" $check ${field:+--save=$field=f.g0} > "$ex.g0" 2>/dev/null)
      if ! grep -q 'ms as a CUDA graph' "$T/graph/$ex.g1.err"; then
        say "  $ex $check: NOT REPLAYED with STN_GRAPH=1: $(head -1 "$T/graph/$ex.g1.err")"; fail=1
      elif ! cmp -s <(grep -Eiv "$vals" "$T/graph/$ex.g1") <(grep -Eiv "$vals" "$T/graph/$ex.g0"); then
        say "  $ex $check: VALUES DIFFER with STN_GRAPH=1"; diff "$T/graph/$ex.g1" "$T/graph/$ex.g0" | head -6 | tee -a "$LOG/gpu.log"; fail=1
      elif [ "$ex" = graphs ] && ! grep -q 'recorded again' "$T/graph/$ex.g1.err"; then
        say "  $ex $check: the re-entered loop did NOT RECORD AGAIN"; fail=1
      elif [ -n "$field" ] && ! cmp -s "$T/graph/f.g1" "$T/graph/f.g0"; then
        say "  $ex $check: SAVED $field DIFFERS with STN_GRAPH=1"; fail=1
      else
        say "  $ex $check: replayed, values equal to STN_GRAPH=0's${field:+, $field bit for bit}"
      fi
    fi
    [ -n "$args" ] || continue # checked only (grayscott prints no time)
    t0=1e30 t1=1e30 choice=
    for r in $(seq 1 "${GRAPH_REPS:-2}"); do
      # shellcheck disable=SC2086
      a=$(cd "$T/graph" && STN_GRAPH=0 "./$ex" $args 2>/dev/null | awk -F': ' "$secs")
      # shellcheck disable=SC2086
      b=$(cd "$T/graph" && STN_GRAPH_VERBOSE=1 "./$ex" $args 2>"$ex.v.err" | awk -F': ' "$secs")
      [ -z "$choice" ] && choice=$(sed -n 's/.*as a CUDA graph: //p' "$T/graph/$ex.v.err" | head -1)
      t0=$(awk -v x="$t0" -v y="$a" 'BEGIN {print (y != "" && y < x ? y : x)}')
      t1=$(awk -v x="$t1" -v y="$b" 'BEGIN {print (y != "" && y < x ? y : x)}')
    done
    awk -v ex="$ex" -v args="$args" -v a="$t0" -v b="$t1" -v c="${choice:-not timed (fused passes, or too few iterations)}" 'BEGIN {
      if (a >= 1e30 || b >= 1e30) printf "  %-11s %-38s no time printed\n", ex, args
      else printf "  %-11s %-38s STN_GRAPH=0 %9.5f  default %9.5f  %5.2fx  (%s)\n", ex, args, a, b, a / b, c }' | tee -a "$LOG/gpu.log"
  done < <(graph_cases)
  (cd "$T/graph" && STN_GRAPH=1 compute-sanitizer --tool memcheck ./j2d5pt --N=67 --STEPS=60 > san.j2d5pt 2>&1
   STN_GRAPH=1 compute-sanitizer --tool memcheck ./himeno --NI=17 --NJ=17 --NK=33 --ITERS=60 > san.himeno 2>&1)
  for x in j2d5pt himeno; do
    if grep -q 'ERROR SUMMARY: 0 errors' "$T/graph/san.$x"; then say "  memcheck, $x replayed: 0 errors"
    else say "  memcheck, $x replayed: ERRORS"; tail -5 "$T/graph/san.$x" | tee -a "$LOG/gpu.log"; fail=1; fi
  done
}

# Issue 19's point 2: Himeno M and L, the default build against the
# hand-written one-sweep kernel with its residual (bench/handwritten.cu,
# the best of its block shapes), in the same run; each program's time is
# the best of HIMENO_REPS runs, taken in turns with the other size.
section_himeno() {
  say ""
  say "himeno: the default build against bench/handwritten.cu's one-sweep kernel (best shape of 'red kernel only'), ms a sweep"
  nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime -o "$T/handwritten" bench/handwritten.cu >"$LOG/handwritten.build.log" 2>&1 || {
    say "  handwritten: BUILD FAILED (handwritten.build.log)"; fail=1; return; }
  build/stencilc --target=cuda --build -o "$T/himeno_default" examples/himeno.stn >"$LOG/himeno_default.build.log" 2>&1 || {
    say "  himeno default: BUILD FAILED (himeno_default.build.log)"; fail=1; return; }
  mkdir -p "$T/scratch"
  local reps=${HIMENO_REPS:-3} r sz args iters t
  declare -A best=()
  for r in $(seq 1 "$reps"); do
    SKIPD=1 "$T/handwritten" > "$T/handwritten.$r.out" 2>&1 || { say "  handwritten failed:"; cat "$T/handwritten.$r.out"; fail=1; return; }
    for sz in M L; do
      if [ $sz = M ]; then args="--NI=129 --NJ=129 --NK=257 --ITERS=2000" iters=2000; else args="--NI=257 --NJ=257 --NK=513 --ITERS=300" iters=300; fi
      # shellcheck disable=SC2086
      t=$(cd "$T/scratch" && "$T/himeno_default" $args | tee "$T/himeno_$sz.$r.out" | awk -F': ' '/^Time \[s\]/ {print $2}')
      [ -n "$t" ] || { say "  himeno $sz: no time printed"; fail=1; return; }
      best[$sz]=$(awk -v t="$t" -v it="$iters" -v b="${best[$sz]:-1e30}" 'BEGIN { x = t / it * 1e3; print (x < b ? x : b) }')
    done
  done
  cat "$T"/handwritten.*.out >> "$LOG/gpu.log"
  # Every timed run's Gosa against single steps' (STN_TB=0): --tb=auto's
  # timed first passes switch kernels mid-loop, and once left a fused
  # pass's stale residual (docs/benchmarks.md 2026-11-29 11:12).
  for sz in M L; do
    if [ $sz = M ]; then args="--NI=129 --NJ=129 --NK=257 --ITERS=2000"; else args="--NI=257 --NJ=257 --NK=513 --ITERS=300"; fi
    # shellcheck disable=SC2086
    (cd "$T/scratch" && STN_TB=0 "$T/himeno_default" $args > "$T/himeno_$sz.single.out") || { say "  himeno $sz STN_TB=0: RUN FAILED"; fail=1; }
    for r in $(seq 1 "$reps"); do
      tests/tools/numcmp.sh "Gosa :" 1e-6 "$T/himeno_$sz.$r.out" "$T/himeno_$sz.single.out" >>"$LOG/gpu.log" 2>&1 || {
        say "  himeno $sz, run $r: Gosa MISMATCH against single steps (STN_TB=0)"; fail=1; }
    done
  done
  for sz in M L; do
    local hdr=129x129x257
    [ $sz = L ] && hdr=257x257x513
    awk -v sz="$sz" -v hdr="himeno $hdr" -v gen="${best[$sz]}" -v gosa="$(grep -h 'Gosa' "$T/himeno_$sz.1.out" | head -1)" '
      /^himeno / { in_sz = ($0 == hdr) } /^copy bandwidth/ { bw = $3 }
      in_sz && /^red kernel only/ { if (!hw || $(NF-4) + 0 < hw) { hw = $(NF-4) + 0; sh = $4 } }
      END { printf "  %s: default %.4f ms, hand-written %.4f ms (%s, copy %s GB/s): %.2fx   %s\n", sz, gen, hw, sh, bw, hw / gen, gosa }' \
      "$T"/handwritten.*.out | tee -a "$LOG/gpu.log"
  done
}

# ---- run-time choices at scale --------------------------------------------
# The verification's sizes are small, where fused passes do not pay and
# loops run single steps. Here every program runs where the run time's
# choices engage (fused passes, --tb=auto's timed first passes, CUDA
# graphs), with its choices as they fall and each forced another way:
# STN_TB=0 (single steps), STN_TB_TRIAL=0 (fused passes, untimed),
# STN_GRAPH=0 (every kernel launched). The printed values must agree
# (relative tolerance as listed: FMA contraction differs between the
# kernels). Himeno M once printed a stale Gosa after the timed passes
# chose single steps (docs/benchmarks.md 2026-11-29 11:12).
choice_cases() {
  cat <<'CASES'
himeno_m|examples/himeno.stn|--NI=129 --NJ=129 --NK=257 --ITERS=64|Gosa :|1e-6
himeno_l|examples/himeno.stn|--NI=257 --NJ=257 --NK=513 --ITERS=40|Gosa :|1e-6
diffusion3d|examples/diffusion3d.stn|--N=256 --STEPS=64|Total heat :;Peak :|1e-6
grayscott|examples/grayscott.stn|--N=2048 --STEPS=200|Total u :;Total v :;Peak v :|1e-6
lbm_d2q9|examples/lbm_d2q9.stn|--NX=2048 --NY=2048 --STEPS=120|L2 error :|1e-6
cg_poisson|examples/cg_poisson.stn|--N=256 --MAXIT=300|Relative residual :;Solution error :|1e-6
jacobi2d|examples/jacobi2d.stn|--N=4096 --M=4096 --MAXIT=200|Residual :;Solution Error :|1e-6
recoef|tests/lit/run/recoef.stn|--N=300 --M=301 --K=299 --T=40|first :;second :|1e-6
tblock|tests/lit/run/tblock.stn|--N=301 --M=299 --K=257 --STEPS=41|sums :|1e-6
star3d1r|bench/an5d/star3d1r.stn|--N=256 --STEPS=64|Checksum :|1e-7
box3d1r|bench/an5d/box3d1r.stn|--N=256 --STEPS=64|Checksum :|1e-7
graphs|bench/graphs.stn|--N=96 --STEPS=101|the last reduction in the loop|1e-9
CASES
}
section_choices() {
  say ""
  say "run-time choices at scale: each program's printed values with its choices as they fall against STN_TB=0, STN_TB_TRIAL=0 and STN_GRAPH=0:"
  mkdir -p "$T/ch" "$T/scratch"
  while IFS='|' read -r ex src _; do
    printf 'build/stencilc --target=cuda --build -o %s %s > %s 2>&1\n' "$T/ch/$ex" "$src" "$T/ch/$ex.build.log"
  done < <(choice_cases) | xargs -P "$(nproc)" -I{} sh -c '{}'
  while IFS='|' read -r ex src args labels tol; do
    [ -x "$T/ch/$ex" ] || { say "  $ex: BUILD FAILED"; cp "$T/ch/$ex.build.log" "$LOG/"; fail=1; continue; }
    local ok=1 cfg
    for cfg in default STN_TB=0 STN_TB_TRIAL=0 STN_GRAPH=0; do
      local e=""
      [ $cfg = default ] || e=$cfg
      # shellcheck disable=SC2086
      (cd "$T/scratch" && env $e "$T/ch/$ex" $args > "$T/ch/$ex.$cfg.out" 2>&1) || { say "  $ex $cfg: RUN FAILED: $(tail -2 "$T/ch/$ex.$cfg.out")"; ok=0; continue; }
    done
    IFS=';' read -ra lbs <<<"$labels"
    for cfg in STN_TB=0 STN_TB_TRIAL=0 STN_GRAPH=0; do
      for lb in "${lbs[@]}"; do
        tests/tools/numcmp.sh "$lb" "$tol" "$T/ch/$ex.default.out" "$T/ch/$ex.$cfg.out" >>"$LOG/gpu.log" 2>&1 || {
          say "  $ex: '$lb' differs from $cfg's"; ok=0; }
      done
    done
    if [ $ok = 1 ]; then say "  $ex $args: ok (${labels//;/, } within $tol)"; else fail=1; fi
  done < <(choice_cases)
}

section_mpi() { OUT="$LOG" bash bench/mpi.sh || fail=1; }

# Data in and out (bench/io.sh): reads on CUDA, kill and restart, a 512^3
# field written against the disk's speed, Himeno L's checkpoint cost
section_io() { OUT="$LOG" bash bench/io.sh || fail=1; }

# AN5D's suite side by side with stencilc's defaults (bench/an5d/run.sh;
# AN5D_* settings pass through; needs bench/an5d/vendor, prepare.sh)
section_an5d() { OUT="$LOG" bash bench/an5d/run.sh || fail=1; }

# Stencils nobody tuned the defaults on (bench/unseen): every one verified
# against --target=c (default and --tb=1..4, STN_TB=1), then a sweep of
# --tb depths and tiles: --tb=auto against the best and against --tb=1.
# Verified with -fno-rsqrt: tv2d's explicit step is unstable where the
# image is flat, so the reciprocal square root's last-bit differences from
# the CPU's division grow past 1e-6 in 13 steps; the AN5D section verifies
# the reciprocal square root on gradient2d.
section_unseen() {
  local cases
  cases=$(cd bench/unseen && ls ./*.stn | sed 's|^\./||; s|\.stn$||' | tr '\n' ' ')
  OUT="$LOG/unseen" AN5D_TABLE=0 AN5D_SWEEP=1 AN5D_CASES="$cases" AN5D_VERIFY_STEPS="${UNSEEN_VERIFY_STEPS:-default 1 2 3 4}" \
    AN5D_VERIFY_FLAGS="${UNSEEN_VERIFY_FLAGS:--fno-rsqrt}" \
    AN5D_SWEEP_FLAGS3="${UNSEEN_SWEEP3:---tb=auto --tb=1 --tb=2 --tb=3 --tb=4 --tb=2:--block=32x16 --tb=2:--block=32x32 --tb=3:--block=32x16}" \
    AN5D_SWEEP_FLAGS2="${UNSEEN_SWEEP2:---tb=auto --tb=1 --tb=2 --tb=4 --tb=6 --tb=8 --tb=8:--tb-vec=1 --tb=8:--tb-vec=2 --tb=4:--block=256 --tb=8:--block=256}" \
    bash bench/an5d/run.sh || fail=1
}

# The random-program campaign on the GPU (tests/fuzz/diff --gpu): every
# CUDA strategy, --tb=1..8 and auto with STN_TB=0/1, a vector width, a
# burst and --mpi, against the CPU reference, for FUZZ_SEEDS (default
# 1..31); reproducers into $LOG.
section_fuzz() {
  say ""
  say "fuzz: tests/fuzz/diff --gpu --seeds ${FUZZ_SEEDS:-1..31}"
  # the MPI runtimes against this machine's MPI, as bench/mpi.sh builds them
  if command -v mpicc >/dev/null; then
    mpicc -O2 -g -fopenmp -Iruntime -c -o build/runtime/stn_mpi.o runtime/stn_mpi.c && ar rcs build/libstn_mpi.a build/runtime/stn_mpi.o
    nvcc -O2 -arch=sm_90 -ccbin mpicxx -Iruntime -c -o build/runtime/stn_cuda_mpi.o runtime/stn_cuda_mpi.cu &&
      ar rcs build/libstn_cuda_mpi.a build/runtime/stn_cuda_mpi.o
  fi
  # FUZZ_CPU_SEEDS: a CPU campaign (every CPU and --mpi variant) beside it,
  # on the cores nvcc leaves; FUZZ_SAMPLE=K: K builds of each program,
  # rotating (tests/fuzz/diff --sample); FUZZ_PROGRAMS=P at a time;
  # FUZZ_SECONDS: stop both after this long
  local cpu_pid=""
  if [ -n "${FUZZ_CPU_SEEDS:-}" ]; then
    tests/fuzz/diff --cpu --seeds "$FUZZ_CPU_SEEDS" --out "$LOG" --jobs 2 --programs "${FUZZ_CPU_PROGRAMS:-4}" \
      ${FUZZ_SECONDS:+--seconds $FUZZ_SECONDS} ${FUZZ_NO_REDUCE:+--no-reduce} > "$LOG/cpu-fuzz.log" 2>&1 &
    cpu_pid=$!
  fi
  # FUZZ_MUTATE_SEEDS=A..B: tests/fuzz/mutate with nvcc beside it (for
  # FUZZ_SECONDS at most)
  local mut_pid=""
  if [ -n "${FUZZ_MUTATE_SEEDS:-}" ]; then
    tests/fuzz/mutate --seeds "$FUZZ_MUTATE_SEEDS" ${FUZZ_SECONDS:+--seconds $FUZZ_SECONDS} --out "$LOG" \
      > "$LOG/mutate.log" 2>&1 &
    mut_pid=$!
  fi
  # A stencilc carried here links --mpi programs with the library
  # directories of the machine it was built on: where bench/mpi.sh finds
  # they do not link here, the --mpi variants are left out
  local only=""
  if ! PARTS=links OUT="$T/mpi-links" bash bench/mpi.sh > "$T/mpi-links.log" 2>&1; then
    say "fuzz: no --mpi variants: $(tr '\n' ' ' < "$T/mpi-links.log")"
    only="^(?!.*mpi)"
  fi
  if [ "${FUZZ_SEEDS:-}" != none ]; then
    tests/fuzz/diff --gpu --seeds "${FUZZ_SEEDS:-1..31}" --out "$LOG" --jobs "${FUZZ_JOBS:-$(nproc)}" ${only:+--only "$only"} \
      --programs "${FUZZ_PROGRAMS:-1}" ${FUZZ_SAMPLE:+--sample $FUZZ_SAMPLE} ${FUZZ_SECONDS:+--seconds $FUZZ_SECONDS} \
      ${FUZZ_NO_REDUCE:+--no-reduce} 2>&1 | tee "$T/fuzz.log" | tee -a "$LOG/gpu.log" | grep -E 'FAIL|reproducer|^fuzz:' || true
    grep -q '^fuzz: .*, 0 failed' "$T/fuzz.log" || fail=1
  fi
  if [ -n "$cpu_pid" ]; then
    wait "$cpu_pid"
    say "fuzz (CPU beside it): $(grep -E '^fuzz: [0-9]' "$LOG/cpu-fuzz.log")"
    grep FAIL "$LOG/cpu-fuzz.log" | head -20 | while read -r l; do say "  $l"; done
    grep -q '^fuzz: .*, 0 failed' "$LOG/cpu-fuzz.log" || fail=1
  fi
  if [ -n "$mut_pid" ]; then
    wait "$mut_pid"
    grep '^mutate:' "$LOG/mutate.log" | while read -r l; do say "fuzz (mutate beside it): $l"; done
    grep FAIL "$LOG/mutate.log" | head -20 | while read -r l; do say "  $l"; done
    grep -q '^mutate: .*, 0 failed' "$LOG/mutate.log" || fail=1
  fi
  # compute-sanitizer over the generated CUDA of some of the campaign's
  # programs: memcheck on the single-step strategies, racecheck on shared
  # memory and the fused passes, initcheck on the default
  if [ -n "${FUZZ_SANITIZE_SEEDS:-}" ]; then
    for t in "memcheck|cuda-(naive|smem|stream)-tb1$" "racecheck|cuda-smem-tb1$|cuda-stream-tb4-STN_TB=1" "initcheck|cuda-naive-tb1$"; do
      tool=${t%%|*} only=${t#*|}
      say "fuzz: compute-sanitizer $tool, seeds $FUZZ_SANITIZE_SEEDS, variants /$only/"
      tests/fuzz/diff --gpu --seeds "$FUZZ_SANITIZE_SEEDS" --only "$only" --sanitize "$tool" --no-reduce --out "$LOG" \
        --jobs "$(nproc)" 2>&1 | tee "$T/san.log" | tee -a "$LOG/gpu.log" | grep -E 'FAIL|^fuzz:' || true
      grep -q '^fuzz: .*, 0 failed' "$T/san.log" || fail=1
    done
  fi
}

if [ -n "${SECTIONS:-}" ]; then
  for sec in ${SECTIONS//,/ }; do "section_$sec"; done
  [ $fail = 0 ] && say "all verified" || say "FAILURES above"
  exit $fail
fi
[ "${TB_ONLY:-0}" = 1 ] || section_verify

# ---- temporal blocking: verification --------------------------------------
# Each program built with --tb=T (T = 1..8) for CUDA (-fmad=false) against
# the single-step --target=c run: fields within 1e-6, printed values as
# listed (the step counts are not multiples of most T: remainders run).
# 2-D kernels also with their other realisations: sT is --tb=T
# --tb-exchange=shfl (warp shuffles), vT --tb=T --tb-vec=2 (two columns per
# thread through shared memory), rT --tb=T -fno-tb-own-smem (own columns
# in registers, for more than two pairs). With SANITIZE=1, compute-sanitizer's
# racecheck and memcheck run the T = 3 and T = 8 builds too.
TB_VARIANTS=${TB_VARIANTS:-1 2 3 4 5 6 7 8 s2 s3 s5 s8 v3 v8 r4 r6}
tb_flags() {
  case $1 in
    s*) echo "--tb=${1#s} --tb-exchange=shfl" ;;
    v*) echo "--tb=${1#v} --tb-vec=2" ;;
    r*) echo "--tb=${1#r} -fno-tb-own-smem" ;;
    *) echo "--tb=$1" ;;
  esac
}
# name | program | args | fields | printed values (rel tol 1e-9); the -cur cases save only
# the current fields, so that no next field is read after the loop (3-D strip: the fast instance)
tb_cases() {
  cat <<'CASES' | grep -E "${TB_CASES:-.}"  # TB_CASES=regex: only the matching programs
tblock|tests/lit/run/tblock.stn|--STEPS=13|a:double an:double b:double bn:double c:double cn:double d:double e:double g:double gn:double h:double hn:double|sums :
himeno|examples/himeno.stn|--NI=33 --NJ=33 --NK=65 --ITERS=13|p:float wrk2:float|Gosa :
diffusion3d|examples/diffusion3d.stn|--N=40 --STEPS=13|f:float fn:float|Total heat :;Peak :
diffusion3d-cur|examples/diffusion3d.stn|--N=40 --STEPS=13|f:float|Total heat :;Peak :
himeno-cur|examples/himeno.stn|--NI=33 --NJ=33 --NK=65 --ITERS=13|p:float|Gosa :
tblock-cur|tests/lit/run/tblock.stn|--STEPS=13|a:double b:double c:double d:double e:double g:double h:double|sums :
lbm_d2q9|examples/lbm_d2q9.stn|--NY=32 --NX=16 --STEPS=61|ux:float umag:float|L2 error :
lbm_d2q9-tall|examples/lbm_d2q9.stn|--NY=203 --NX=24 --STEPS=37|ux:float umag:float|L2 error :
jacobi5|bench/jacobi5.stn|--N=300 --STEPS=37|u:float un:float|Checksum :
tb-predicate|tests/lit/run/tb-predicate.stn|--N=300|u:double un:double w:double wn:double|
recoef|tests/lit/run/recoef.stn|--N=20 --M=14 --K=37 --T=13|u:float v:float a:float b:float|first :;second :
heat3d-double|tests/lit/cuda/Inputs/heat3d-double.stn|--N=40 --STEPS=13|f:double fn:double|
own-rows|tests/lit/cuda/Inputs/own-rows.stn|--N=203 --M=45 --STEPS=13|a:float an:float b:float bn:float c:float cn:float|
along3|tests/lit/cuda/Inputs/along3.stn|--N=67 --M=45 --STEPS=13|a:float an:float b:float bn:float c:float cn:float|
band-far|tests/lit/cuda/Inputs/band-far.stn|--N=203 --M=45 --STEPS=13|u:float un:float|
band-hoisted|tests/lit/cuda/Inputs/band-hoisted.stn|--N=203 --M=45 --STEPS=13|u:float un:float|
band-param|tests/lit/cuda/Inputs/band-param.stn|--N=203 --M=45 --K=20 --STEPS=13|u:float un:float|
CASES
}
if [ "${SKIP_TB:-0}" != 1 ]; then
  say ""
  say "temporal blocking: verification (--tb=T for T = 1..8 on CUDA against single steps on the CPU):"
  # These sizes fit in L2, where a program runs single steps by itself
  # (stn_cuda_tb_pays): STN_TB=1 makes it run the fused passes.
  export STN_TB=1
  mkdir -p "$T/tb"
  while IFS='|' read -r ex src args fields values; do
    build/stencilc --target=c --cflags="-O2 -ffp-contract=off" --build -o "$T/tb/$ex.cpu" "$src" >/dev/null 2>&1 || { say "  $ex: CPU BUILD FAILED"; fail=1; }
    for t in $TB_VARIANTS; do
      printf 'build/stencilc --target=cuda %s --cflags="-O3 -fmad=false" --build -o %s %s > %s.log 2>&1\n' \
        "$(tb_flags "$t")" "$T/tb/$ex.tb$t" "$src" "$T/tb/$ex.tb$t" > "$T/tb/$ex.tb$t.sh"
    done
  done < <(tb_cases)
  find "$T/tb" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
  ncase=0
  while IFS='|' read -r ex src args fields values; do
    saves=""
    for f in $fields; do saves="$saves --save=${f%%:*}=$T/tb/$ex.cpu.${f%%:*}"; done
    mkdir -p "$T/tb/run.$ex.cpu"
    # shellcheck disable=SC2086
    (cd "$T/tb/run.$ex.cpu" && "$T/tb/$ex.cpu" $args $saves > "$T/tb/$ex.cpu.out") || { say "  $ex: CPU RUN FAILED"; fail=1; continue; }
    line="  $ex:"
    ncase=$((ncase + 1))
    for t in $TB_VARIANTS; do
      exe="$T/tb/$ex.tb$t"
      [ -x "$exe" ] || { line="$line T=$t BUILD FAILED ($(grep -m1 error "$exe.log"))"; fail=1; continue; }
      saves=""
      for f in $fields; do saves="$saves --save=${f%%:*}=$exe.${f%%:*}"; done
      mkdir -p "$exe.run"
      # shellcheck disable=SC2086
      if ! (cd "$exe.run" && "$exe" $args $saves > "$exe.out" 2> "$exe.err"); then
        line="$line T=$t RUN FAILED ($(head -1 "$exe.err"))"; fail=1; continue
      fi
      ok=1
      for f in $fields; do
        build/tools/fieldcmp --type=${f##*:} --atol=1e-6 "$exe.${f%%:*}" "$T/tb/$ex.cpu.${f%%:*}" >> "$LOG/gpu.log" 2>&1 || ok=0
      done
      IFS=';' read -ra labels <<<"$values"
      for l in "${labels[@]}"; do
        tests/tools/numcmp.sh "$l" 1e-9 "$exe.out" "$T/tb/$ex.cpu.out" >> "$LOG/gpu.log" 2>&1 || ok=0
      done
      if [ $ok = 1 ]; then line="$line T=$t ok"; else line="$line T=$t MISMATCH"; fail=1; fi
      case " ${SANITIZE:-0}:$t " in
        " 1:3 "|" 1:8 ")
          for tool in racecheck memcheck; do
            # shellcheck disable=SC2086
            if (cd "$exe.run" && compute-sanitizer --tool $tool --error-exitcode 9 "$exe" $args > "$exe.$tool" 2>&1); then
              line="$line ($tool clean)"
            else
              line="$line ($tool: $(grep -m1 -E 'ERROR|Error|error' "$exe.$tool"))"; fail=1
            fi
          done ;;
      esac
    done
    say "$line"
  done < <(tb_cases)
  [ "$ncase" -gt 0 ] || { say "  no program verified (TB_CASES=$TB_CASES matches none)"; fail=1; }
  unset STN_TB
fi

[ "${QUICK:-0}" = 1 ] && { [ $fail = 0 ] && say "all verified" || say "FAILURES above"; exit $fail; }

if [ "${TB_ONLY:-0}" != 1 ]; then
# ---- time ----------------------------------------------------------------
# example | label | args | bytes per point | flops per point | points | steps | the kernel whose
# strategy the table shows. Bytes and flops are the IR's (--emit=ir, "; cost:") per point and step:
# for cg_poisson the sum over one iteration's three kernels (apply 24, update 64, direction 24 bytes).
cases() {
  cat <<'CASES'
himeno|M|--NI=129 --NJ=129 --NK=257 --ITERS=2000|56|34|127*127*255|2000|jacobi
himeno|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|56|34|255*255*511|300|jacobi
bench/himeno_nored|L|--NI=257 --NJ=257 --NK=513 --ITERS=300|56|32|255*255*511|300|jacobi
diffusion3d|512^3|--N=512 --STEPS=300|8|8|510*510*510|300|step
jacobi2d|8192^2|--N=8192 --M=8192 --MAXIT=300 --TOL=1e-300|24|13|8190*8190|300|sweep
lbm_d2q9|4096^2|--NY=4096 --NX=4096 --STEPS=300|72|193|4096*4096|300|step
cg_poisson|256^3|--N=256 --MAXIT=100 --TOL=1e-300 --EVERY=1000|112|37|254*254*254|100|apply
CASES
}
# Variants: "default" (the compiler's choice: temporal blocking where
# --tb=auto takes it), "single steps" (--tb=1, the default of every kernel
# otherwise), each strategy, and with TUNE=1 a sweep of block shapes and
# marching lengths; all but "default" run single steps.
variants() {
  echo "default||"
  echo "single steps||"
  echo "atomic-red|--no-deterministic-reductions|"
  echo "plain launches|-fno-pdl|"
  for s in $STRATS; do echo "$s|--cuda-strategy=$s|"; done
  for v in 1 2 4; do echo "default --vec=$v|--vec=$v|"; done
  echo "default, no burst|--burst=1|"
  echo "default, burst 4|--burst=4|"
  # -fstream-pipeline: the kernels the heuristic streams, software pipelined
  echo "default pipelined|-fstream-pipeline|"
  echo "default pipelined, march 8|-fstream-pipeline --march=8|"
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
    [ "$name" = default ] || flags=$(single "$flags")
    # One script per build, run many at once (nvcc is slow, cores are many).
    printf 'build/stencilc --target=cuda %s --build -o %s %s > %s.log 2>&1\n' \
      "$flags" "$T/v/$id" "$src" "$T/v/$id" > "$T/v/$id.sh"
  done < <(variants)
done < <(cases | cut -d'|' -f1 | sort -u)
find "$T/v" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
say ""
say "timing (default flags; each number from the program's own timer around its time loop, which waits for the device):"
printf '%-12s %-7s %-22s %-22s %10s %9s %9s %7s %7s\n' example size variant "strategy/block/march" "ms/step" GFLOPS GCells/s "GB/s" "%copy" | tee -a "$LOG/gpu.log"
mkdir -p "$T/scratch"
while IFS='|' read -r ex size args bpp fpp pts iters kn; do
  for id in "$T"/v/"$(basename "$ex")".*.id; do
    IFS='|' read -r _ name exe < "$id"
    [ -x "$exe" ] || { say "$ex $name: build failed ($(head -2 "$exe.log"))"; fail=1; continue; }
    desc=$(awk -v kn="$kn" 'index($0, "/* kernel " kn " (") == 1 {f = 1}
      f && /^ \* strategy/ {s = $3; sub(":", "", s)}
      f && /^ \* block/ {b = $3; sub(",", "", b); m = ""; if ($0 ~ /marching/) m = "/m" $5
        nl = $0; while (nl !~ /\*\// && (getline nl) > 0) {
          if (nl ~ /points per thread/) {split(nl, a, " "); m = m "/v" a[2]}
          if (nl ~ /in a burst/) m = m "/burst" }
        print s "/" b m; exit}' "$exe.cu")
    # shellcheck disable=SC2086
    t=$(cd "$T/scratch" && "$exe" $args 2>>"$LOG/gpu.log" | awk -F': ' '/^Time \[s\]/ {print $2}')
    [ -n "$t" ] || { say "$ex $size $name: no time printed"; fail=1; continue; }
    awk -v ex=$ex -v size=$size -v v="$name" -v d="$desc" -v t="$t" -v it="$iters" -v b="$bpp" -v f="$fpp" \
        -v expr="$pts" -v bw="$BW" 'BEGIN {
      n = split(expr, fac, "*"); pts = 1; for (q = 1; q <= n; q++) pts *= fac[q];
      step = t / it; gbs = b * pts / step / 1e9;
      printf "%-12s %-7s %-22s %-22s %10.4f %9.1f %9.2f %7.0f %6.1f%%\n", ex, size, v, d, step * 1e3,
             f * pts / step / 1e9, pts / step / 1e9, gbs, 100 * gbs / bw }' | tee -a "$LOG/gpu.log"
  done
done < <(cases)
# ---- run-time profile -------------------------------------------------------
# Each example's default build with --profile at the large size: per kernel
# GB/s and % of the copy bandwidth the program measures itself; for the
# loop kernel, its total time against the program's own timer.
say ""
say "profile (--profile) of each single-step default build (--tb=1) at its large size:"
while IFS='|' read -r ex size args bpp fpp pts iters kn; do
  exe=$(grep -l '|single steps|' "$T"/v/"$(basename "$ex")".*.id | head -1 | xargs cut -d'|' -f3)
  [ -x "$exe" ] || continue
  # shellcheck disable=SC2086
  (cd "$T/scratch" && "$exe" $args --profile >"$T/prof.out" 2>"$T/prof.err")
  say "--- $ex $size"
  sed -n '/^profile of/,$p' "$T/prof.err" | tee -a "$LOG/gpu.log"
  t=$(awk -F': ' '/^Time \[s\]/ {print $2}' "$T/prof.out")
  k=$(awk -v kn="$kn" '$1 == kn {print $3}' "$T/prof.err")
  [ -n "$t" ] && [ -n "$k" ] && awk -v t="$t" -v k="$k" -v kn="$kn" 'BEGIN {
    printf "%s total %.3f ms, program timer %.3f ms: ratio %.3f\n", kn, k, 1e3 * t, k / (1e3 * t) }' | tee -a "$LOG/gpu.log"
done < <(cases)

fi
# ---- temporal blocking: timing ---------------------------------------------
# example | size | args | cells per step | steps | variants (flags|...; "1" is single steps)
tb_timing() {
  cat <<'CASES' | grep -E "${TB_CASES:-.}"  # TB_CASES=regex: only the matching programs
bench/jacobi5|16384^2 x1000|--N=16384 --STEPS=1000|16382*16382|1000|--tb=1;--tb=4;--tb=6;--tb=8;--tb=8 --march=128;--tb=8 --march=512;--tb=8 --block=64;--tb=8 --block=256;--tb=8 --tb-vec=2;--tb=8 --tb-exchange=shfl --tb-vec=2;--tb=4 --tb-exchange=shfl
diffusion3d|512^3 x1000|--N=512 --STEPS=1000|510*510*510|1000|--tb=1;--tb=2;--tb=3;--tb=4;--tb=5;--tb=6;--tb=2 --block=32x16;--tb=3 --block=32x16;--tb=4 --block=32x16;--tb=3 --march=32;--tb=3 --march=128
himeno|L x300|--NI=257 --NJ=257 --NK=513 --ITERS=300|255*255*511|300|--tb=1;--tb=2;--tb=2 -fno-tb-reuse;--tb=2 --march=24;--tb=2 --march=48;--tb=2 --march=64;--tb=2 --block=32x32;--tb=3;--tb=4
lbm_d2q9|4096^2 x300|--NY=4096 --NX=4096 --STEPS=300|4096*4096|300|--tb=1;--tb=2;--tb=3;--tb=4;--tb=5;--tb=6;--tb=7;--tb=8;--tb=6 --block=64;--tb=6 --block=256;--tb=6 --tb-vec=2;--tb=3 -fno-fold-zeros;--tb=3 -fno-recip;--tb=3 -fno-fold-zeros -fno-recip;--tb=6 --march=128;--tb=6 --march=256;--tb=6 --tb-exchange=shfl
CASES
}
if [ "${SKIP_TB:-0}" != 1 ]; then
  say ""
  say "temporal blocking: timing (program's own timer; GCells/s = cells x steps / time)"
  mkdir -p "$T/tbt" "$T/scratch"
  n=0
  while IFS='|' read -r ex size args cells steps variants; do
    src=examples/$ex.stn
    [ -f "$src" ] || src=$ex.stn
    IFS=';' read -ra vs <<<"$variants"
    for v in "${vs[@]}"; do
      n=$((n + 1))
      printf '%s|%s\n' "$ex" "$v" > "$T/tbt/$n.id"
      printf 'build/stencilc --target=cuda %s --build -o %s %s > %s.log 2>&1\n' "$v" "$T/tbt/$n" "$src" "$T/tbt/$n" > "$T/tbt/$n.sh"
    done
  done < <(tb_timing)
  find "$T/tbt" -name '*.sh' -print0 | xargs -0 -P "$(nproc)" -n 1 sh
  printf '%-16s %-14s %-26s %10s %10s %9s\n' example size flags "ms/step" "GCells/s" "vs T=1" | tee -a "$LOG/gpu.log"
  while IFS='|' read -r ex size args cells steps variants; do
    base=""
    for m in $(seq 1 "$n"); do
      id=$T/tbt/$m.id
      IFS='|' read -r iex v < "$id"
      [ "$iex" = "$ex" ] || continue
      exe=${id%.id}
      [ -x "$exe" ] || { say "$ex $v: BUILD FAILED ($(grep -m1 error "$exe.log"))"; fail=1; continue; }
      # shellcheck disable=SC2086
      t=$(cd "$T/scratch" && "$exe" $args 2>>"$LOG/gpu.log" | awk -F': ' '/^Time \[s\]/ {print $2}')
      [ -n "$t" ] || { say "$ex $v: no time printed"; fail=1; continue; }
      [ -z "$base" ] && base=$t
      awk -v ex="$ex" -v size="$size" -v v="$v" -v t="$t" -v c="$cells" -v s="$steps" -v b="$base" 'BEGIN {
        n = split(c, f, "*"); pts = 1; for (q = 1; q <= n; q++) pts *= f[q];
        printf "%-16s %-14s %-26s %10.4f %10.1f %8.2fx\n", ex, size, v, t / s * 1e3, pts * s / t / 1e9, b / t }' | tee -a "$LOG/gpu.log"
    done
  done < <(tb_timing)
fi
[ "${TB_ONLY:-0}" = 1 ] && { [ $fail = 0 ] && say "all verified" || say "FAILURES above"; exit $fail; }

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
say "autotune of single steps (--tb=1 --autotune --tune-cache=$T/tune.txt): from the cache vs the default shape, best of two runs each, in turns"
printf '%-12s %-7s %-44s %10s %10s %8s\n' example size "kernel: tuned shape" "default ms" "tuned ms" "ratio" | tee -a "$LOG/gpu.log"
while IFS='|' read -r ex size args bpp fpp pts iters kn; do
  exe=$(grep -l '|single steps|' "$T"/v/"$(basename "$ex")".*.id | head -1 | xargs cut -d'|' -f3)
  [ -x "$exe" ] || continue
  # shellcheck disable=SC2086
  (cd "$T/scratch" && "$exe" $args --autotune --tune-cache="$T/tune.txt" >/dev/null 2>"$T/tune1.err")
  t0=1e30 t1=1e30
  for rep in 1 2; do
    # shellcheck disable=SC2086
    a=$(cd "$T/scratch" && "$exe" $args 2>/dev/null | awk -F': ' '/^Time \[s\]/ {print $2}')
    # shellcheck disable=SC2086
    b=$(cd "$T/scratch" && "$exe" $args --autotune --tune-cache="$T/tune.txt" 2>"$T/tune2.err" | awk -F': ' '/^Time \[s\]/ {print $2}')
    t0=$(awk -v x="$t0" -v y="$a" 'BEGIN {print (y < x ? y : x)}')
    t1=$(awk -v x="$t1" -v y="$b" 'BEGIN {print (y < x ? y : x)}')
  done
  cat "$T/tune1.err" "$T/tune2.err" >> "$LOG/gpu.log"
  shape=$(grep "autotune: $kn:" "$T/tune1.err" | head -1 | sed 's/autotune: //')
  grep -q "autotune: $kn: .*from the cache" "$T/tune2.err" || { say "  $ex $size: second run did not use the cache"; fail=1; }
  grep -q "shapes in" "$T/tune2.err" && { say "  $ex $size: second run tuned again"; fail=1; }
  awk -v ex="$ex" -v size="$size" -v sh="${shape:0:44}" -v a="$t0" -v b="$t1" -v it="$iters" 'BEGIN {
    printf "%-12s %-7s %-44s %10.4f %10.4f %7.3fx\n", ex, size, sh, a / it * 1e3, b / it * 1e3, a / b }' | tee -a "$LOG/gpu.log"
done < <(cases)
section_steps
section_lib
section_graph
section_choices
section_mpi
[ $fail = 0 ] && say "all verified" || say "FAILURES above"
exit $fail
