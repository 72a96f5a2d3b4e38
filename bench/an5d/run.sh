#!/bin/bash
# bench/an5d/run.sh: AN5D's benchmark suite side by side with stencilc on
# one GPU, in one call (bench/gpu.sh SECTIONS=an5d runs it):
#   1. verify stencilc's default build and --tb=1..8 of every stencil
#      against its --target=c result at a small odd size (-fmad=false,
#      fused passes forced with STN_TB=1; fields within 1e-6 relative;
#      u and un saved, then u alone: the two instances of a pass, F_ in
#      3-D, P_ in 2-D);
#   2. time AN5D's tuned V100 configurations built for this GPU (the
#      first AN5D_TOP of each stencil's list, in the order of AN5D's own
#      model), keep each stencil's fastest, then run it and stencilc's
#      default build alternately AN5D_REPS times at AN5D's benchmark sizes
#      (-s 16384 -t 1000 in 2-D, -s 512 -t 1000 in 3-D) and print the table
#      of GCells/s with ratios (best of the repetitions for both);
#   3. with AN5D_SWEEP=1, time stencilc's other schedules (--tb depths,
#      tiles) of every stencil: how far the default is from the best.
#
#   usage: bench/an5d/run.sh     (needs nvcc, a GPU and bench/an5d/vendor:
#                                 bench/an5d/prepare.sh AN5D_DIR makes it)
#   env:   AN5D_CASES="j2d5pt box3d1r.double ..."  the stencils (NAME or
#                      NAME.double, bench/an5d/NAME[.double].stn, or
#                      bench/unseen/NAME.stn: shapes the defaults were not
#                      tuned on, with AN5D_TABLE=0, timed at their own N;
#                      the sweep's line "best:" says how far --tb=auto is
#                      from the best schedule and how fast against --tb=1)
#          AN5D_TOP=N  AN5D configurations tried per stencil (default 3;
#                      best: only the one bench/an5d/best.h100 names, the
#                      fastest measured on the H100; a third of the builds)
#          AN5D_REPS=N alternate runs (default 3)
#          AN5D_VERIFY_TRIAL=0  no check of the default's timed first passes
#                         (stn_cuda_tb_trial; else defaults that time their
#                         candidates run 8 passes and a step against the CPU)
#          AN5D_VERIFY=0  no verification; AN5D_VERIFY_STEPS="default 3 8:--tb-vec=4"
#          the builds it verifies (default: default 1 2 ... 8 8:--tb-vec=4, the
#          last with the edge columns in shared memory; T:FLAGS: --tb=T and
#          FLAGS, ':' joining them, T a number; default:FLAGS: --tb=auto's
#          choice under FLAGS, e.g. default:--tb-exchange=shfl); AN5D_SANITIZE=1  compute-sanitizer
#          (racecheck, memcheck) on the verified default, T = 3 and 8;
#          AN5D_VERIFY_FLAGS="-fno-rsqrt"  flags for every verified build
#          (a program that amplifies last-bit differences, bench/unseen/tv2d:
#          the GPU's arithmetic then the CPU's, as -fmad=false does for FMAs);
#          AN5D_TABLE=0  no AN5D table; AN5D_NVCC_FLAGS=" "  AN5D's kernels
#          without --use_fast_math (its artifact's flag, the default), for
#          exact maths on both sides;
#          AN5D_SWEEP=1  the sweep; AN5D_SWEEP_FLAGS="--tb=4:--tb-vec=4 ..."
#          its schedules instead of the usual ones (':' joins flags);
#          AN5D_SWEEP_FLAGS2, AN5D_SWEEP_FLAGS3: the same for 2-D or 3-D only
#          AN5D_N=N   every stencil's size instead (default: AN5D's, or
#                      the unseen program's own N)
#          AN5D_STEPS=N   time steps (default 1000); AN5D_SWEEP_STEPS=N
#          the sweep's (default the same); AN5D_GPU=h100|h200  the time
#          model's GPU for the predictions (stencilc --gpu; default native:
#          this GPU's where the model has its constants, else h100); AN5D_BUILD_LIMIT=S seconds a
#          build may take (default 240); OUT=dir for logs
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
export STENCILC_RUNTIME_DIR="$root/runtime" STENCILC_LIB_DIR="$root/build"
V=bench/an5d/vendor
B=$(mktemp -d "${TMPDIR:-/tmp}/stn-an5d.XXXXXX")
LOG=${OUT:-$B}
mkdir -p "$LOG"
say() { printf '%s\n' "$*" | tee -a "$LOG/an5d.log"; }
fail=0

# AN5D's seven of issue 19's table, its double configurations, then other
# shapes: higher-radius stars and boxes, a 9-point box, a compute-heavy one
CASES=${AN5D_CASES:-"j2d5pt j2d9pt box2d1r star2d2r star3d1r box3d1r j3d27pt j2d5pt.double star3d1r.double box3d1r.double star2d3r star2d4r box2d2r box2d3r j2d9pt-gol gradient2d star3d2r star3d3r box3d2r box3d3r box3d4r star3d4r box3d2r.double box3d3r.double box3d4r.double j2d9pt.double star2d2r.double j3d27pt.double"}
TABLE="j2d5pt j2d9pt box2d1r star2d2r star3d1r box3d1r j3d27pt"
TOP=${AN5D_TOP:-3}
REPS=${AN5D_REPS:-3}
STEPS=${AN5D_STEPS:-1000}
SWEEP_STEPS=${AN5D_SWEEP_STEPS:-$STEPS}
VSTEPS=${AN5D_VERIFY_STEPS:-default 1 2 3 4 5 6 7 8 8:--tb-vec=4}
[ "${AN5D_TABLE:-1}" = 0 ] || [ -f "$V/common.h" ] || { echo "run.sh: no $V: fetch AN5D's artifact (git clone https://github.com/khaki3/AN5D-Artifact) and run bench/an5d/prepare.sh on it" >&2; exit 2; }
[ -x build/stencilc ] || make all >/dev/null || exit 2
# the verification's comparison (a missing one would read as a mismatch)
[ "${AN5D_VERIFY:-1}" = 0 ] || [ -x build/tools/fieldcmp ] || make tools >/dev/null ||
  { echo "run.sh: no build/tools/fieldcmp to compare fields with, and 'make tools' failed" >&2; exit 2; }
dims_of() { case $1 in *3d*) echo 3 ;; *) echo 2 ;; esac; }
# a stencil of AN5D's suite (bench/an5d) or one it was not tuned on
# (bench/unseen: timed at its own N, a table of schedules, no AN5D)
src_of() { if [ -f "bench/an5d/$1.stn" ]; then echo "bench/an5d/$1.stn"; else echo "bench/unseen/$1.stn"; fi; }
size_of() {
  [ -n "${AN5D_N:-}" ] && { echo "$AN5D_N"; return; }
  case $(src_of "$1") in
    bench/unseen/*) sed -n 's/^param int N = \([0-9]*\).*/\1/p' "$(src_of "$1")" ;;
    *) [ "$(dims_of "$1")" = 3 ] && echo 512 || echo 16384 ;;
  esac
}
prec_of() { case $1 in *.double) echo double ;; *) echo float ;; esac; }
base_of() { echo "${1%.double}"; }
# AN5D's configurations of a stencil, in its CSV's (its model's) order
configs_of() {
  local st; st=$(base_of "$1")
  # AN5D_TOP=best: the configuration bench/an5d/best.h100 names (else the first)
  if [ "$TOP" = best ]; then
    local b; b=$(awk -v c="$1" '$1 == c { print $2 }' bench/an5d/best.h100)
    if [ -n "$b" ] && [ -f "$V/$(prec_of "$1")/${b}_host.cu" ]; then echo "$b"; return; fi
    TOP=1 configs_of "$1"; return
  fi
  awk -F, -v s="$st" '$1 == s { if ($3 == "") print s "-" $2 "-" $4 "-" $5; else print s "-" $2 "x" $3 "-" $4 "-" $5 }' \
    "$V/v100_$(prec_of "$1").csv" | while read -r c; do [ -f "$V/$(prec_of "$1")/${c}_host.cu" ] && echo "$c"; done | head -n "$TOP"
}
# stencilc's schedules for the sweep
sweep_of() {
  if [ -n "${AN5D_SWEEP_FLAGS:-}" ]; then echo "$AN5D_SWEEP_FLAGS"; return; fi
  local d; d=$(dims_of "$1")
  if [ "$d" = 3 ] && [ -n "${AN5D_SWEEP_FLAGS3:-}" ]; then echo "$AN5D_SWEEP_FLAGS3"; return; fi
  if [ "$d" = 2 ] && [ -n "${AN5D_SWEEP_FLAGS2:-}" ]; then echo "$AN5D_SWEEP_FLAGS2"; return; fi
  if [ "$d" = 3 ]; then
    echo "--tb=auto --tb=1 --tb=2 --tb=3 --tb=4 --tb=5 --tb=6 --tb=2:--block=32x16 --tb=3:--block=32x16 --tb=4:--block=64x16"
  else
    echo "--tb=auto --tb=1 --tb=2 --tb=4 --tb=6 --tb=8 --tb=4:--tb-vec=2 --tb=8:--tb-vec=2 --tb=8:--block=256"
  fi
}
tag() { echo "$1" | tr -c 'A-Za-z0-9=.\n' '_'; }
# why the build of program $1 (a path in $B) failed: its time limit, or the
# first error in its log
build_failure() {
  if awk -v n="$(basename "$1")" '$3 == n && ($2 == 124 || $2 == 137) { f = 1 } END { exit !f }' "$LOG/build-times.log" 2>/dev/null; then
    echo "timed out after ${AN5D_BUILD_LIMIT:-240} s; AN5D_BUILD_LIMIT=S allows more"
  else
    grep -m1 -E "${2:-error}" "$1.log"
  fi
}

# the time model's constants for this GPU where it has them (stencilc
# --gpu=native: by nvidia-smi's name, else the H100's)
MODEL_GPU=${AN5D_GPU:-native}
say "an5d: $(date -u '+%Y-%m-%d %H:%M UTC')   gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)   time model: $(build/stencilc --target=cuda --gpu="$MODEL_GPU" --report --no-ptxas bench/an5d/j2d5pt.stn 2>/dev/null | sed -n "1s/.*by the \(.*\)'s time model.*/\1/p") (--gpu=$MODEL_GPU)"
say "an5d: cases: $CASES; AN5D configurations tried: $TOP each; $REPS alternate runs; $STEPS steps"

# GCells/s of an AN5D binary: its "Average: X GFLOPS" over its flops per point
an5d_rate() { # case configuration size
  local fpp out
  fpp=$(grep -m1 -o 'BENCH_FPP [0-9]*' "$V/$(prec_of "$1")/${2}_host.cu" | awk '{print $2}')
  out=$("$B/an5d.$(prec_of "$1").$2" -s "$3" -t "$STEPS" -n 1 2>&1) || { echo 0; return; }
  echo "$out" | awk -v f="$fpp" '/^Average:/ { printf "%.1f\n", $2 / f }'
}
stn_rate() { # binary size [steps]
  local a="--N=$2 --STEPS=${3:-$STEPS}"
  local out
  # shellcheck disable=SC2086
  out=$("$1" $a 2>&1)
  echo "$out" | awk '/^GCells\/s :/ { printf "%.1f\n", $3 }'
  # a run that prints no rate: what it said goes to the log
  echo "$out" | grep -q '^GCells/s :' || printf '%s %s: no rate: %s\n' "$1" "$a" "$(echo "$out" | tail -3 | tr '\n' ' ')" >> "$LOG/an5d.log"
}
max() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { print (a + 0 > b + 0) ? a : b }'; }

# ---- build everything at once ---------------------------------------------
mkdir -p "$B/jobs"
for c in $CASES; do
  src=$(src_of "$c")
  [ -f "$src" ] || { say "  $c: no $src"; fail=1; continue; }
  [ -n "$(size_of "$c")" ] || { say "  $c: no 'param int N = <number>' line in $src to size it by"; fail=1; continue; }
  prec=$(prec_of "$c")
  [ "${AN5D_TABLE:-1}" = 1 ] && for cfg in $(configs_of "$c"); do
    # as the artifact's nvcc_compile_top5.sh, for sm_90 (doubles: -D SB_TYPE=double)
    echo "nvcc -O3 -arch=sm_90 ${AN5D_NVCC_FLAGS---use_fast_math} -Xcompiler -fopenmp -D SB_TYPE=$prec -I$V -I$V/$prec -o $B/an5d.$prec.$cfg $V/$prec/${cfg}_host.cu $V/$prec/${cfg}_kernel.cu > $B/an5d.$prec.$cfg.log 2>&1" \
      > "$B/jobs/an5d.$prec.$cfg.sh"
  done
  echo "build/stencilc --target=cuda --build -o $B/$c.default $src > $B/$c.default.log 2>&1" > "$B/jobs/$c.default.sh"
  # the default's predicted time per step and its reasons (--report)
  echo "build/stencilc --target=cuda --gpu=$MODEL_GPU --report $src -o $B/$c.report > /dev/null 2>&1" > "$B/jobs/$c.report.sh"
  if [ "${AN5D_VERIFY:-1}" = 1 ]; then
    echo "build/stencilc --target=c --cflags='-O2 -ffp-contract=off' --build -o $B/$c.cpu $src > $B/$c.cpu.log 2>&1" > "$B/jobs/$c.cpu.sh"
    for t in $VSTEPS; do
      case $t in
        default) fl="" ;;
        default:*) fl="${t#default:}"; fl="${fl//:/ }" ;;
        [1-8] | [1-8]:*) fl="--tb=${t//:/ }" ;;
        *) echo "run.sh: AN5D_VERIFY_STEPS: '$t' is not default, default:FLAGS, T or T:FLAGS (T from 1 to 8)" >&2; exit 2 ;;
      esac
      echo "build/stencilc --target=cuda $fl ${AN5D_VERIFY_FLAGS:-} --cflags='-O3 -fmad=false' --build -o $B/$c.v$(tag "$t") $src > $B/$c.v$(tag "$t").log 2>&1" > "$B/jobs/$c.v$(tag "$t").sh"
    done
  fi
  if [ "${AN5D_SWEEP:-0}" = 1 ]; then
    for v in $(sweep_of "$c"); do
      echo "build/stencilc --target=cuda ${v//:/ } --build -o $B/$c.s$(tag "$v") $src > $B/$c.s$(tag "$v").log 2>&1" > "$B/jobs/$c.s$(tag "$v").sh"
    done
  fi
done
t0=$(date +%s)
# each build at most AN5D_BUILD_LIMIT seconds (a build that takes longer is
# reported as failed, with its time); the slowest ones are listed
find "$B/jobs" -name '*.sh' -print0 |
  xargs -0 -P "$(nproc)" -I{} sh -c 's=$(date +%s); timeout -k 5 '"${AN5D_BUILD_LIMIT:-240}"' sh "$1"; rc=$?; echo "$(( $(date +%s) - s )) $rc $(basename "$1" .sh)" >> "$2"' _ {} "$LOG/build-times.log"
say "an5d: built $(find "$B/jobs" -name '*.sh' | wc -l) programs in $(( $(date +%s) - t0 )) s; slowest: $(sort -rn "$LOG/build-times.log" | head -3 | awk '{printf "%s %.0f s; ", $3, $1}')"
[ "${AN5D_BUILD_ONLY:-0}" = 1 ] && exit 0

# ---- 1. verification --------------------------------------------------------
if [ "${AN5D_VERIFY:-1}" = 1 ]; then
  say ""
  say "verification (stencilc default and --tb=1..8, -fmad=false${AN5D_VERIFY_FLAGS:+ $AN5D_VERIFY_FLAGS}, STN_TB=1, against --target=c; u and un within 1e-6 relative):"
  for c in $CASES; do
    [ -x "$B/$c.cpu" ] || { say "  $c: CPU BUILD FAILED"; fail=1; continue; }
    # small odd sizes: several 2-D strips and 3-D tiles, 13 steps (remainders for most T)
    if [ "$(dims_of "$c")" = 3 ]; then args="--N=45 --STEPS=13"; else args="--N=301 --STEPS=13"; fi
    prec=$(prec_of "$c")
    # shellcheck disable=SC2086
    "$B/$c.cpu" $args --save=u="$B/$c.cpu.u" --save=un="$B/$c.cpu.un" > "$B/$c.cpu.out" 2>&1 || { say "  $c: CPU RUN FAILED"; fail=1; continue; }
    line="  $c:"
    for t in $VSTEPS; do
      exe=$B/$c.v$(tag "$t")
      [ -x "$exe" ] || { line="$line $t BUILD FAILED ($(build_failure "$exe" 'error|note'))"; fail=1; continue; }
      # shellcheck disable=SC2086
      STN_TB=1 "$exe" $args --save=u="$exe.u" --save=un="$exe.un" > "$exe.out" 2>&1 || { line="$line $t RUN FAILED"; fail=1; continue; }
      if build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.u" "$B/$c.cpu.u" >> "$LOG/an5d.log" 2>&1 &&
         build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.un" "$B/$c.cpu.un" >> "$LOG/an5d.log" 2>&1; then
        line="$line $t:ok"
      else
        line="$line $t:MISMATCH"; fail=1
      fi
      # saving u alone: nothing reads un after the loop, so a pass takes
      # the instance that writes no step T - 1 into next (3-D: F_, 2-D: P_
      # false), which the run above (un saved) does not
      # shellcheck disable=SC2086
      if STN_TB=1 "$exe" $args --save=u="$exe.fu" > "$exe.fout" 2>&1 &&
         build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.fu" "$B/$c.cpu.u" >> "$LOG/an5d.log" 2>&1; then
        line="$line(u alone ok)"
      else
        line="$line(u alone MISMATCH)"; fail=1
      fi
      # a kernel compiled in variants (passes/gpu.c, decide_variants): the
      # ones its first call did not pick, forced with STN_VARIANT
      variants=-  # one run, STN_VARIANT unset
      if grep -q stn_cuda_pick_variant "$exe" 2>/dev/null; then
        variants="0 1 2"
        for v in 0 1 2; do
          # shellcheck disable=SC2086
          if STN_VARIANT=$v STN_TB=1 "$exe" $args --save=u="$exe.u$v" --save=un="$exe.un$v" > "$exe.out$v" 2>&1 &&
             build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.u$v" "$B/$c.cpu.u" >> "$LOG/an5d.log" 2>&1 &&
             build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.un$v" "$B/$c.cpu.un" >> "$LOG/an5d.log" 2>&1; then
            line="$line(variant $v ok)"
          else
            line="$line(variant $v MISMATCH)"; fail=1
          fi
        done
      fi
      # the default's timed first passes (--tb=auto's 3-D loops,
      # stn_cuda_tb_trial: single steps and fused passes in turn, then the
      # faster), timed under STN_TB=1 with STN_TB_TRIAL=1: 8 T + 1 steps,
      # 8 passes and a single step (AN5D's boxes of reach 3 and 4 grow past
      # float's range in 37 steps)
      # (T: the default's steps a pass, from its --report of the build jobs)
      tt=
      if [ "$t" = default ] && [ "${AN5D_VERIFY_TRIAL:-1}" = 1 ]; then  # a loop that times its candidates
        # (the depth of this build: the verified flags can change it, as
        # -fno-rsqrt does gradient2d's)
        # shellcheck disable=SC2086
        tt=$(build/stencilc --target=cuda ${AN5D_VERIFY_FLAGS:-} --report --no-ptxas "$(src_of "$c")" -o /dev/stdout 2>/dev/null |
          sed -n 's/.*temporal blocking: loop at line [0-9]*: \([0-9]*\) steps\{0,1\} per pass.*first passes, timed, find.*/\1/p' | head -1)
      fi
      if [ -n "$tt" ]; then
        targs=${args/--STEPS=13/--STEPS=$((8 * tt + 1))}
        # shellcheck disable=SC2086
        "$B/$c.cpu" $targs --save=u="$B/$c.cpu.tu" --save=un="$B/$c.cpu.tun" > /dev/null 2>&1
        # shellcheck disable=SC2086
        if STN_TB=1 STN_TB_TRIAL=1 "$exe" $targs --profile --save=u="$exe.tu" --save=un="$exe.tun" > "$exe.tout" 2>&1 &&
           build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.tu" "$B/$c.cpu.tu" >> "$LOG/an5d.log" 2>&1 &&
           build/tools/fieldcmp --type="$prec" --atol=1e-6 --rtol=1e-6 "$exe.tun" "$B/$c.cpu.tun" >> "$LOG/an5d.log" 2>&1; then
          if grep -q "temporal blocking timed" "$exe.tout"; then
            line="$line(timed passes ok, then $(grep -m1 -o '\(single steps\|half passes\|fused passes\)\( ([0-9]*% faster or more)\)\{0,1\}$' "$exe.tout" | cut -d' ' -f1-2))"
          else
            line="$line(timed passes MISSING)"; fail=1
          fi
        else
          line="$line(timed passes MISMATCH)"; fail=1
        fi
      fi
      # AN5D_SANITIZE=1: compute-sanitizer's racecheck and memcheck on the default, T = 3 and 8, and
      # every entry with flags of its own (each variant where there are several)
      case "${AN5D_SANITIZE:-0}:$t" in
        1:default|1:3|1:8|1:*:*)
          for v in $variants; do
            [ "$v" = - ] && v=
            for tool in racecheck memcheck; do
              # shellcheck disable=SC2086
              if env ${v:+STN_VARIANT=$v} STN_TB=1 compute-sanitizer --tool $tool --error-exitcode 9 "$exe" $args > "$exe.$tool" 2>&1; then
                line="$line($tool${v:+ $v} clean)"
              else
                line="$line($tool${v:+ $v}: $(grep -m1 -E 'ERROR|Error|error' "$exe.$tool" | cut -c1-80))"; fail=1
              fi
            done
          done ;;
      esac
    done
    say "$line"
  done
fi

# ---- 2. AN5D against stencilc's default -------------------------------------
if [ "${AN5D_TABLE:-1}" = 1 ]; then

say ""
say "AN5D against stencilc's default (GCells/s, best of $REPS alternate runs; AN5D: the fastest of its first $TOP V100 configurations built for sm_90 by nvcc -O3 ${AN5D_NVCC_FLAGS---use_fast_math}):"
say ""
say "| stencil | AN5D | AN5D configuration | stencilc default | ratio | model's prediction | measured against it |"
say "|---|---|---|---|---|---|---|"
: > "$B/ratios"
for c in $CASES; do
  s=$(size_of "$c")
  best=0 bestcfg=""
  for cfg in $(configs_of "$c"); do
    exe=$B/an5d.$(prec_of "$c").$cfg
    [ -x "$exe" ] || { say "  ($c: AN5D $cfg BUILD FAILED: $(build_failure "$exe"))"; continue; }
    r=$(an5d_rate "$c" "$cfg" "$s")
    echo "$c $cfg $r" >> "$LOG/an5d-configs.log"
    if [ "$(max "$r" "$best")" = "$r" ] && [ "$r" != "$best" ]; then best=$r bestcfg=$cfg; fi
  done
  [ -x "$B/$c.default" ] || { say "| $c | $best | $bestcfg | BUILD FAILED | | | |"; fail=1; continue; }
  a=0 m=0
  for _ in $(seq "$REPS"); do
    [ -n "$bestcfg" ] && a=$(max "$a" "$(an5d_rate "$c" "$bestcfg" "$s")")
    m=$(max "$m" "$(stn_rate "$B/$c.default" "$s")")
  done
  ratio=$(awk -v a="$a" -v m="$m" 'BEGIN { if (a > 0) printf "%.2f", m / a; else print "-" }')
  # the time model's prediction for the default (--report), and how far off it is
  pred=$(build/stencilc --target=cuda --gpu="$MODEL_GPU" --report --no-ptxas "$(src_of "$c")" -o /dev/stdout 2>/dev/null |
    sed -n '/^kernel step/,/^kernel sum/p' |
    awk '/^  points:/ { p = $2 } /^  predicted:/ && /time model/ { printf "%.0f", p / ($2 * 1e6) }')
  off=$(awk -v p="${pred:-0}" -v m="$m" 'BEGIN { if (p > 0 && m > 0) printf "%+.0f%%", (m / p - 1) * 100; else print "-" }')
  say "| $c | $a | $bestcfg | $m | $ratio | ${pred:--} | $off |"
  [ "$ratio" != - ] && echo "$c $ratio" >> "$B/ratios"
done
awk -v table=" $TABLE " '{ if ($1 ~ /\.double$/) { d += log($2); nd++ } else if (index(table, " " $1 " ")) { t += log($2); nt++ } else { o += log($2); no++ } }
     END { if (nt) printf "geometric mean, issue 19 table (%d): %.2f\n", nt, exp(t / nt);
           if (nd) printf "geometric mean, double (%d): %.2f\n", nd, exp(d / nd);
           if (no) printf "geometric mean, other shapes (%d): %.2f\n", no, exp(o / no) }' "$B/ratios" | while read -r l; do say "$l"; done
fi

# ---- 3. stencilc's schedules -------------------------------------------------
if [ "${AN5D_SWEEP:-0}" = 1 ]; then
  say ""
  say "stencilc's schedules (GCells/s, one run each of $SWEEP_STEPS steps; in brackets the time model's prediction, --report):"
  for c in $CASES; do
    s=$(size_of "$c")
    line="  $c:"
    best=0 bestv="" auto="" one=""
    for v in $(sweep_of "$c"); do
      exe=$B/$c.s$(tag "$v")
      if [ -x "$exe" ]; then r=$(stn_rate "$exe" "$s" "$SWEEP_STEPS"); else r="build-failed($(grep -m1 -E 'error|note' "$exe.log" | cut -c1-60))"; fi
      [ -n "$r" ] || { r="RUN-FAILED"; fail=1; }
      # the time model's prediction for the same build (--report: its step kernel's predicted time)
      # shellcheck disable=SC2086
      pred=$(build/stencilc --target=cuda --gpu="$MODEL_GPU" ${v//:/ } --report --no-ptxas "$(src_of "$c")" -o /dev/stdout 2>/dev/null |
        sed -n '/^kernel step/,/^kernel sum/p' |
        awk '/^  points:/ { p = $2 } /^  predicted:/ && /time model/ { printf "%.0f", p / ($2 * 1e6) }')
      line="$line ${v//:/ }=$r${pred:+ (model $pred)}"
      echo "$c|${v//:/ }|$r|$pred" >> "$LOG/sweep.csv"
      case $r in [0-9]*) if [ "$(max "$r" "$best")" = "$r" ] && [ "$r" != "$best" ]; then best=$r bestv=$v; fi ;; esac
      case $v in --tb=auto) auto=$r ;; --tb=1) one=$r ;; esac
    done
    say "$line"
    # --tb=auto against the sweep's best and against single steps (issue 19:
    # within 5% of the best, and never slower than --tb=1)
    say "    best: ${bestv//:/ } $best$(awk -v a="$auto" -v b="$best" -v o="$one" 'BEGIN {
      if (a + 0 > 0 && b + 0 > 0) printf "; --tb=auto %+.1f%% against it", (a / b - 1) * 100
      if (a + 0 > 0 && o + 0 > 0) printf ", %.2fx --tb=1", a / o }')"
  done
fi

cp "$B"/*.report "$LOG"/ 2>/dev/null
[ $fail = 0 ] && say "an5d: all verified" || say "an5d: FAILURES above"
exit $fail
