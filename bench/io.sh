#!/bin/bash
# bench/io.sh: data in and out on a GPU machine (issue 20), in one call
# (bench/gpu.sh SECTIONS=io runs it):
#   1. the read-back programs of tests/lit/io on CUDA: every format read
#      back to the last bit (every difference printed must be 0);
#   2. SIGKILL at a random moment, then restart from the last checkpoint,
#      on CUDA with single steps and with --tb=4: fields and printed lines
#      identical to an uninterrupted run (tests/lit/run/Inputs/kill-restart.sh);
#      and a checkpoint of the CPU restarted on CUDA and the other way round;
#   3. a 512^3 float field written from the CUDA target to .npy and .h5,
#      against the disk's sequential write speed measured in the same run
#      (dd, 512 MiB, fsync'd); the program's writes are timed with the
#      sync that puts them on the disk;
#   4. Himeno L with --checkpoint-every=1000 against the same run without,
#      alternately (IO_REPS times, default 3): the checkpoints' cost; and
#      a run restarted at 4/5 of its iterations prints the whole run's rate.
#   usage: bench/io.sh   (needs nvcc, a GPU, python3 with numpy and h5py)
#   env:   OUT=dir for logs; IO_REPS=N; IO_ITERS=N Himeno's iterations (default 10000)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
export STENCILC_RUNTIME_DIR="$root/runtime" STENCILC_LIB_DIR="$root/build"
S="$root/build/stencilc"
B=$(mktemp -d "${TMPDIR:-/tmp}/stn-io.XXXXXX")
LOG=${OUT:-$B}
mkdir -p "$LOG"
say() { printf '%s\n' "$*" | tee -a "$LOG/io.log"; }
fail=0
REPS=${IO_REPS:-3}
ITERS=${IO_ITERS:-10000}
say "io: $(date -u '+%Y-%m-%d %H:%M UTC')   gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# 1. formats on CUDA
say ""
say "io 1: every format read back on CUDA (tests/lit/io/Inputs/write.stn, read.stn)"
mkdir -p "$B/fmt" && cd "$B/fmt" || exit 2
if "$S" --target=cuda --build -o w "$root/tests/lit/io/Inputs/write.stn" > build.log 2>&1 &&
   "$S" --target=cuda --build -o r "$root/tests/lit/io/Inputs/read.stn" >> build.log 2>&1; then
  ./w > /dev/null && python3 "$root/tests/lit/io/Inputs/mkfiles.py" && ./r > r.out 2> r.err
  cat r.out | tee -a "$LOG/io.log"
  # every number printed is a largest difference: all must be 0
  if [ -s r.out ] && awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ && $i + 0 != 0) bad = 1 } END { exit bad }' r.out
  then say "io 1: ok"; else say "io 1: FAILED"; fail=1; fi
else
  say "io 1: BUILD FAILED"; cat build.log | tail -20 | tee -a "$LOG/io.log"; fail=1
fi
cd "$root"

# 2. kill and restart on CUDA
say ""
say "io 2: SIGKILL at a random moment after the first checkpoint, restart, compare (N=4096; 40000 steps, a checkpoint every 4000; --tb=auto: 160000, every 16000)"
mkdir -p "$B/ck" && cd "$B/ck" || exit 2
for v in "tb1:--tb=1:40000:4000" "tb4:--tb=4:40000:4000" "auto:--tb=auto:160000:16000"; do
  IFS=: read -r name flag steps every <<< "$v"
  if "$S" --target=cuda $flag --deterministic-reductions --build -o "$name" "$root/tests/lit/io/Inputs/ckpt.stn" > "$name.build" 2>&1; then
    out=$(bash "$root/tests/lit/run/Inputs/kill-restart.sh" "k_$name" "$every" "$B/ck/$name --N=4096 --STEPS=$steps" 2>&1)
    say "  cuda $flag ($steps steps): $(echo "$out" | tr '\n' ' ')"
    echo "$out" | grep -q "identical" || fail=1
  else
    say "  cuda $flag: BUILD FAILED"; tail -5 "$name.build" | tee -a "$LOG/io.log"; fail=1
  fi
done
# A 3-D loop whose --tb=auto passes are timed (fused passes against single
# steps): the restart keeps the choice its checkpoint saved.
if "$S" --target=cuda --build -o ck3d "$root/tests/lit/io/Inputs/ckpt3d.stn" > ck3d.build 2>&1; then
  out=$(bash "$root/tests/lit/run/Inputs/kill-restart.sh" "k_3d" 8000 "$B/ck/ck3d --N=256 --STEPS=40000 --save=u=u.npy" 2>&1)
  say "  cuda 3-D, timed passes (tests/lit/io/Inputs/ckpt3d.stn, 256^3, 40000 steps, a checkpoint every 8000): $(echo "$out" | tr '\n' ' ')"
  echo "$out" | grep -q "identical" || fail=1
else
  say "  cuda 3-D: BUILD FAILED"; tail -5 ck3d.build | tee -a "$LOG/io.log"; fail=1
fi
# A checkpoint of one target restarts the other (docs/language.md): the
# CPU's single steps (OpenMP) and CUDA's timed fused passes, each way, at
# step 200 of 400, against the uninterrupted CPU run; the uninterrupted
# CUDA run beside them shows how far the two targets' rounding differs.
if "$S" --target=openmp --build -o cpu3d "$root/tests/lit/io/Inputs/ckpt3d.stn" > cpu3d.build 2>&1 && [ -x ck3d ]; then
  a="--N=256 --STEPS=400"
  ./cpu3d $a --save=u=ref.raw > /dev/null && ./ck3d $a --save=u=gpu.raw > /dev/null &&
  ./cpu3d $a --checkpoint=c.ck --checkpoint-every=200 > /dev/null && ./ck3d $a --checkpoint=g.ck --checkpoint-every=200 > /dev/null
  for v in "cuda:ck3d:c.ck" "cpu:cpu3d:g.ck"; do
    IFS=: read -r name prog ck <<< "$v"
    note=$(./$prog $a --restart=$ck --save=u=$name.raw 2>&1 > /dev/null | grep -o 'resumed from .*')
    cmp=$("$root/build/tools/fieldcmp" --type=float --atol=0 --rtol=1e-4 $name.raw ref.raw 2>&1 | tr '\n' ' ')
    say "  $name restarted from the other target's checkpoint ($note): against the CPU's uninterrupted u: $cmp"
    case $note in *"at step 200") ;; *) fail=1 ;; esac
    echo "$cmp" | grep -q FAIL && fail=1
  done
  say "  (the uninterrupted CUDA run against the CPU's: $("$root/build/tools/fieldcmp" --type=float --atol=0 --rtol=1e-4 gpu.raw ref.raw 2>&1 | tr '\n' ' '))"
else
  say "  cross-target restart: BUILD FAILED"; tail -5 cpu3d.build | tee -a "$LOG/io.log"; fail=1
fi
cd "$root"

# 3. a 512^3 float field to .npy and .h5, against the disk
say ""
D=$(mktemp -d "${IO_DIR:-/tmp}/stn-io-disk.XXXXXX")
cat > "$B/big.stn" <<'STN'
param int N = 512;
grid G[N][N][N];
field float u on G;
kernel init over G { u = i * 0.001f + j * 0.002f + k * 0.003f; }
main {
  init();
  double t0 = 0;
  timer tn { write u to "big.npy"; }
  timer th { write u to "big.h5"; }
  print "npy write", tn, "h5 write", th;
}
STN
sync
dd_out=$(dd if=/dev/zero of="$D/dd.bin" bs=16M count=32 conv=fsync 2>&1 | tail -1)
rm -f "$D/dd.bin"
say "io 3: the disk ($D): dd 512 MiB, fsync'd: $dd_out"
if "$S" --target=cuda --build -o "$B/big" "$B/big.stn" > "$B/big.build" 2>&1; then
  for rep in 1 2; do
    (cd "$D" && rm -f big.npy big.h5 big.xdmf && sync &&
     t0=$(date +%s.%N) && "$B/big" > big.out && t1=$(date +%s.%N) && sync && t2=$(date +%s.%N) &&
     echo "$(cat big.out) run $(echo "$t1 - $t0" | awk '{print $1 - $3}') sync $(echo "$t2 $t1" | awk '{print $1 - $2}')") | tee -a "$LOG/io.log"
  done
  python3 - "$D" <<'PY' | tee -a "$LOG/io.log"
import sys, numpy as np, h5py
d = sys.argv[1]
a = np.load(d + '/big.npy', mmap_mode='r'); h = h5py.File(d + '/big.h5')['u']
print('io 3: read back: npy', a.shape, a.dtype, 'h5', h.shape, h.dtype, 'equal', bool(np.array_equal(a[100], h[100])))
PY
else
  say "io 3: BUILD FAILED"; tail -5 "$B/big.build" | tee -a "$LOG/io.log"; fail=1
fi
rm -rf "$D"

# 4. Himeno L with and without checkpoints
say ""
say "io 4: Himeno L, $ITERS iterations, default build, --checkpoint-every=1000 against none, alternately ($REPS times)"
D=$(mktemp -d "${IO_DIR:-/tmp}/stn-io-ck.XXXXXX")
if "$S" --target=cuda --build -o "$B/himeno" examples/himeno.stn > "$B/himeno.build" 2>&1; then
  for rep in $(seq 1 "$REPS"); do
    a=$("$B/himeno" --NI=257 --NJ=257 --NK=513 --ITERS="$ITERS" | awk '/Time/ {print $NF}')
    b=$("$B/himeno" --NI=257 --NJ=257 --NK=513 --ITERS="$ITERS" --checkpoint="$D/ck" --checkpoint-every=1000 2> "$B/ck.err" | awk '/Time/ {print $NF}')
    sed 's/^/    /' "$B/ck.err" | tee -a "$LOG/io.log"
    say "  rep $rep: without $a s, with checkpoints $b s, cost $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f%%", 100 * (b - a) / a }')"
  done
  ls -la "$D" | tee -a "$LOG/io.log"
  # A restart's timer counts the run before the checkpoint too: the
  # restarted run's MFLOPS are those of the whole run, not of its last
  # fifth (before 2026-11-29 they were about 5x too high).
  n=$((ITERS / 1000 * 1000)); [ "$n" -ge 1000 ] || n=$ITERS
  k=$((n * 4 / 5))
  h="$B/himeno --NI=257 --NJ=257 --NK=513 --ITERS=$n"
  whole=$($h | awk '/MFLOPS/ {print $NF}')
  rm -f "$D/rk"; $h --checkpoint="$D/rk" --checkpoint-every=$k > /dev/null 2>&1
  resumed=$($h --restart="$D/rk" 2> "$B/rk.err" | awk '/MFLOPS/ {print $NF}')
  say "  restarted at iteration $k of $n ($(grep -o 'resumed.*' "$B/rk.err")): MFLOPS $resumed, uninterrupted $whole, ratio $(awk -v a="$resumed" -v b="$whole" 'BEGIN { printf "%.2f", a / b }')"
  awk -v a="$resumed" -v b="$whole" 'BEGIN { exit !(a > 0.67 * b && a < 1.5 * b) }' || { say "  FAIL: the restarted run's rate is not the whole run's"; fail=1; }
else
  say "io 4: BUILD FAILED"; tail -5 "$B/himeno.build" | tee -a "$LOG/io.log"; fail=1
fi
rm -rf "$D"
say ""
[ $fail = 0 ] && say "io: all ok" || say "io: FAILED (above)"
exit $fail
