#!/bin/bash
# bench/mpi.sh: distributed runs (stencilc --mpi) on the GPU machine, in one
# go; bench/gpu.sh runs it as its `mpi` section (SECTIONS=mpi).
#
#   usage: bench/mpi.sh
#   env:   PARTS=a,b  only these of:
#            verify   every example (and two AN5D stars whose single steps
#                     are compiled in variants, each also forced with
#                     STN_VARIANT) built --target=cuda --mpi under 1, 2
#                     and 4 ranks (on the machine's GPUs, shared where there
#                     are fewer GPUs than ranks), staged (STN_MPI_STAGED=1)
#                     and the default path (one rank: copies on the GPU;
#                     one GPU per rank: NCCL), against the single-process CPU
#                     result (gpu.sh's tolerances: fields 1e-6 absolute,
#                     reductions 1e-9 relative), -fno-overlap too, and
#                     compute-sanitizer (memcheck) at 2 ranks; and lib
#            lib      library mode (--emit=lib --mpi --target=cuda): a host
#                     program on 1 and 3 ranks against the CPU library
#            links    only whether --mpi programs link here (mpicc, and the
#                     library directories build/stencilc links them with):
#                     exit 0, or 2 with what is missing (bench/gpu.sh's fuzz
#                     section asks it)
#            overlap  Himeno M on 2 ranks of one GPU: time per sweep with
#                     and without overlap, beside 1 rank, and --profile's
#                     exchange table (pack, wait, unpack, flight, hidden)
#            scale    with 2 or more GPUs: Himeno L and XL strong scaling,
#                     L per GPU weak scaling, diffusion3d 1024^3 and lbm
#                     16384^2 strong scaling; overlap on/off, NCCL and
#                     staged, --tb=4 across ranks; each against 1 GPU of
#                     the same machine in the same call; then every
#                     program's fields on 2, 4, 8 GPUs against 1 GPU's,
#                     and Himeno's residual with --deterministic-reductions,
#                     bit for bit
#          OUT=dir    where logs go
#          OVERLAP_SIZE=L  the overlap part on Himeno L instead of M
#          SCALE_GPUS="2 4"  the GPU counts to scale to (default 2 4 8, up to the machine's)
#          SCALE_ROWS=a,b  only these rows of scale: himeno, weak, diffusion, lbm, profile, memcheck
#          SCALE_TIMES=0   scale's bit-for-bit checks only; SCALE_CHECKS=0 its timings only
#          SCALE_PATHS="aware staged"  the transfer paths scale times (default all)
#          VERIFY_GPU=n  verify on GPU n alone (the ranks share it)
#          VERIFY_ONLY=regex  verify only the matching examples
#          STN_NCCL_LIBRARY=path  libnccl.so.2 (default: the Python wheel's, if any)
#          MPI_HOME=dir  the MPI installed in dir instead of the PATH's (for
#                     a CUDA-aware Open MPI built for the measurement:
#                     docs/mpi.md); where the MPI is CUDA-aware, verify and
#                     scale add "aware" rows (STN_MPI_NCCL=0: device
#                     buffers handed to MPI)
#
# Verification builds use -fmad=false (they round like the CPU); timing
# builds use the defaults. Ratios only: a time alone means little here.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
export STENCILC_RUNTIME_DIR="$root/runtime" STENCILC_LIB_DIR="$root/build"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -n "${MPI_HOME:-}" ]; then
  MPI_HOME=$(cd "$MPI_HOME" && pwd) || { echo "mpi.sh: MPI_HOME: no such directory"; exit 2; }
  export PATH=$MPI_HOME/bin:$PATH OPAL_PREFIX=$MPI_HOME LD_LIBRARY_PATH=$MPI_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/stn-mpi.XXXXXX")
LOG=${OUT:-$T}
mkdir -p "$LOG"
fail=0
say() { printf '%s\n' "$*" | tee -a "$LOG/mpi.log"; }
want() { [ -z "${PARTS:-}" ] || [[ ",$PARTS," == *",$1,"* ]]; }
via() { # a transfer path's name -> the environment that asks for it
  case $1 in
    staged) echo STN_MPI_STAGED=1 ;;    # through pinned host buffers and MPI
    NCCL) echo STN_MPI_NCCL=1 ;;        # GPU to GPU through NCCL
    aware) echo STN_MPI_NCCL=0 ;;       # device buffers to a CUDA-aware MPI
    *) echo STN_MPI_STAGED=0 ;;         # the runtime's own choice
  esac
}
MPIRUN="mpirun --oversubscribe --bind-to none"
# API errors are not counted: NCCL's initialisation probes kernel images
# for other GPUs (cudaErrorNoKernelImageForDevice, 4 per rank), and the
# runtime checks every CUDA call of its own and stops on a failure
SANFLAGS="--error-exitcode=9 --report-api-errors no"
san_failed() { # a memcheck log that failed: kept whole, its first reports in mpi.log
  fail=1
  cp "$1" "$LOG/"
  grep -m12 -E '^========= +(Invalid|Program hit|Error|Address|Saved host|at )' "$1" >>"$LOG/mpi.log"
}

# ---- build ---------------------------------------------------------------
# The MPI runtimes against this machine's MPI (stencilc itself may be
# carried: it needs no MPI).
command -v mpicc >/dev/null || { echo "mpi.sh: no mpicc here"; exit 2; }
if [ ! -x build/stencilc ]; then
  make all tools >"$LOG/make.log" 2>&1 || { tail -20 "$LOG/make.log"; echo "mpi.sh: make failed"; exit 2; }
fi
# A carried stencilc links --mpi programs with the library directories of
# the machine it was built on (the parallel HDF5's, where it had one)
for d in $(build/stencilc --mpi --print-libs | tr ' ' '\n' | sed -n 's/^-L//p'); do
  [ -d "$d" ] && continue
  echo "mpi.sh: build/stencilc links --mpi programs with -L$d, which this machine lacks; build it for"
  echo "  this machine, or without the parallel HDF5 (make B=build/dev HDF5_MPI_LIBS= HDF5_MPI_CFLAGS= build/dev/stencilc,"
  echo "  then copy build/dev/stencilc over build/stencilc here)"
  exit 2
done
[ "${PARTS:-}" = links ] && { echo "mpi.sh: --mpi programs link here"; exit 0; }
mkdir -p build/runtime
mpicc -O2 -g -fopenmp -Iruntime -c -o build/runtime/stn_mpi.o runtime/stn_mpi.c &&
  ar rcs build/libstn_mpi.a build/runtime/stn_mpi.o || { echo "mpi.sh: libstn_mpi.a failed"; exit 2; }
if [ -f runtime/stn_cuda_mpi.cu ]; then
  # with the flags the programs get (the per-thread default stream)
  nvcc -O2 -arch=sm_90 $(build/stencilc --mpi --target=cuda --print-cflags) -ccbin mpicxx -c -o build/runtime/stn_cuda_mpi.o \
    runtime/stn_cuda_mpi.cu &&
    ar rcs build/libstn_cuda_mpi.a build/runtime/stn_cuda_mpi.o || { echo "mpi.sh: libstn_cuda_mpi.a failed"; exit 2; }
fi
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
# NCCL for the halos (the runtime opens libnccl.so.2 at run time): the
# loader's, else the nvidia-nccl Python wheel's
if [ -z "${STN_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
  d=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)
  [ -n "$d" ] && [ -f "$d/lib/libnccl.so.2" ] && export STN_NCCL_LIBRARY=$d/lib/libnccl.so.2
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
aware=$(ompi_info --parsable --all 2>/dev/null | grep -m1 'mpi_built_with_cuda_support:value' | sed 's/.*://')
# verify's transfer paths: staged, the runtime's choice (NCCL where each
# rank has a GPU of its own, else as aware, else staged), and device
# buffers handed to MPI where it is CUDA-aware
vpaths="staged default"
[ "$aware" = true ] && vpaths="staged default aware"
say "date: $(date -u '+%Y-%m-%d %H:%M UTC')   gpus: $ngpu x $gpu   $(mpirun --version 2>&1 | head -1)   CUDA-aware: ${aware:-unknown}   NCCL: ${STN_NCCL_LIBRARY:-libnccl.so.2 from the loader path, if any}"
nvidia-smi topo -m >>"$LOG/mpi.log" 2>&1

# ---- every program, built at once (nvcc is slow, cores are many) ------------
mkdir -p "$T/jobs"
job() { printf '%s > %s 2>&1\n' "$2" "$T/b.$1.log" >"$T/jobs/$1.sh"; }
built() { [ -x "$T/$1" ] || { cp "$T/b.$1.log" "$LOG/" 2>/dev/null; say "  $1: BUILD FAILED (b.$1.log)"; fail=1; return 1; }; }

# ---- verify --------------------------------------------------------------
cases() { # VERIFY_ONLY=regex: only the matching examples
  grep -E "${VERIFY_ONLY:-.}" <<'CASES'
himeno|examples/himeno.stn|--NI=33 --NJ=33 --NK=65 --ITERS=20|p:float wrk2:float|rel:Gosa ::1e-9
diffusion3d|examples/diffusion3d.stn|--N=40 --STEPS=15|f:float fn:float|rel:Total heat ::1e-9;rel:Peak ::1e-9
jacobi2d|examples/jacobi2d.stn|--N=70 --M=90 --MAXIT=40|u:double uold:double|rel:Residual ::1e-9;rel:Iterations ::0
lbm_d2q9|examples/lbm_d2q9.stn|--NY=32 --NX=16 --STEPS=600|ux:float umag:float|rel:L2 error ::1e-6;rel:Mass change ::1e-3
cg_poisson|examples/cg_poisson.stn|--N=24|x:double|abs:Iterations ::1;max:Relative residual ::1e-8;max:Solution error ::1e-7
star3d3r|bench/an5d/star3d3r.stn|--N=45 --STEPS=13|u:float un:float|rel:Checksum ::1e-9
star3d4r.double|bench/an5d/star3d4r.double.stn|--N=45 --STEPS=13|u:double un:double|rel:Checksum ::1e-9
CASES
}

check_run() { # NAME OUT PREFIX FIELDS CHECKS EX -> ok 0/1
  local ok=1
  for f in $4; do
    n=${f%%:*} ty=${f##*:}
    build/tools/fieldcmp --type=$ty --atol=1e-6 "$3.$n" "$T/$6.cpu.$n" >"$T/cmp.txt" 2>&1 || { ok=0; cat "$T/cmp.txt" >>"$LOG/mpi.log"; }
  done
  IFS=';' read -ra cks <<<"$5"
  for c in "${cks[@]}"; do
    kind=${c%%:*} rest=${c#*:} label=${rest%:*} tol=${rest##*:}
    case $kind in
      rel) tests/tools/numcmp.sh "$label" "$tol" "$2" "$T/$6.cpu.out" >>"$LOG/mpi.log" 2>&1 || ok=0 ;;
      abs) tests/tools/numcmp.sh --atol "$label" "$tol" "$2" "$T/$6.cpu.out" >>"$LOG/mpi.log" 2>&1 || ok=0 ;;
      max) tests/tools/numcmp.sh --max "$label" "$tol" "$2" >>"$LOG/mpi.log" 2>&1 || ok=0 ;;
    esac
  done
  echo $ok
}

if want verify; then
  while IFS='|' read -r ex src _; do
    job "$ex.cpu" "build/stencilc --target=c --cflags='-O2 -ffp-contract=off' --build -o $T/$ex.cpu $src"
    job "$ex.overlap" "build/stencilc --mpi --target=cuda --cflags='-O3 -fmad=false' --build -o $T/$ex.overlap $src"
    job "$ex.no-overlap" "build/stencilc --mpi --target=cuda -fno-overlap --cflags='-O3 -fmad=false' --build -o $T/$ex.no-overlap $src"
    job "$ex.tb4" "build/stencilc --mpi --target=cuda --tb=4 --cflags='-O3 -fmad=false' --build -o $T/$ex.tb4 $src"
    job "$ex.det" "build/stencilc --mpi --target=cuda --deterministic-reductions --build -o $T/$ex.det $src"
  done < <(cases)
fi
if want overlap; then
  job h1 "build/stencilc --target=cuda --tb=1 --build -o $T/h1 examples/himeno.stn"
  job hov "build/stencilc --mpi --target=cuda --build -o $T/hov examples/himeno.stn"
  job hno "build/stencilc --mpi --target=cuda -fno-overlap --build -o $T/hno examples/himeno.stn"
  job hca "build/stencilc --mpi --target=cuda --tb=4 --build -o $T/hca examples/himeno.stn"
fi
if want scale && [ "$ngpu" -ge 2 ]; then
  job hm "build/stencilc --mpi --target=cuda --build -o $T/hm examples/himeno.stn"
  job hmno "build/stencilc --mpi --target=cuda -fno-overlap --build -o $T/hmno examples/himeno.stn"
  job hmtb "build/stencilc --mpi --target=cuda --tb=4 --build -o $T/hmtb examples/himeno.stn"
  job hdet "build/stencilc --mpi --target=cuda --deterministic-reductions --build -o $T/hdet examples/himeno.stn"
  job dm "build/stencilc --mpi --target=cuda --build -o $T/dm examples/diffusion3d.stn"
  job dmno "build/stencilc --mpi --target=cuda -fno-overlap --build -o $T/dmno examples/diffusion3d.stn"
  job lm "build/stencilc --mpi --target=cuda --build -o $T/lm examples/lbm_d2q9.stn"
  job lmno "build/stencilc --mpi --target=cuda -fno-overlap --build -o $T/lmno examples/lbm_d2q9.stn"
  job hs "build/stencilc --target=cuda --build -o $T/hs examples/himeno.stn"
  job ds "build/stencilc --target=cuda --build -o $T/ds examples/diffusion3d.stn"
  job ls "build/stencilc --target=cuda --build -o $T/ls examples/lbm_d2q9.stn"
fi
tb=$(date +%s)
find "$T/jobs" -name '*.sh' -print0 | xargs -0 -r -P "$(nproc)" -n 1 sh
say "built $(ls "$T/jobs" | wc -l) programs in $(( $(date +%s) - tb )) s"

if want verify; then
  # all the GPUs (ranks share them where there are more ranks than GPUs)
  [ -n "${VERIFY_GPU:-}" ] && export CUDA_VISIBLE_DEVICES=$VERIFY_GPU
  vg=${VERIFY_GPU:-all $ngpu}
  say ""
  say "verify (GPUs: $vg): --target=cuda --mpi against the single-process CPU result (fields 1e-6, reductions 1e-9):"
  while IFS='|' read -r -u 3 ex src args fields checks; do
    built "$ex.cpu" || continue
    saves=""
    for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.cpu.${f%%:*}"; done
    # shellcheck disable=SC2086
    (cd "$T" && "$T/$ex.cpu" $args $saves >"$T/$ex.cpu.out") || { say "  $ex: CPU RUN FAILED"; fail=1; continue; }
    for v in overlap no-overlap tb4; do
      built "$ex.$v" || continue
      line="  $ex $v:"
      for np in 1 2 4; do
        for path in $vpaths; do
          [ $v != overlap ] && [ $path != staged ] && continue
          [ $v = tb4 ] && [ $np = 1 ] && continue
          saves=""
          for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.$v.$np.${f%%:*}"; done
          # shellcheck disable=SC2086
          if ! (cd "$T" && env "$(via $path)" $MPIRUN -np $np "$T/$ex.$v" $args $saves >"$T/$ex.$v.$np.out" 2>"$T/$ex.$v.$np.err"); then
            line="$line np$np/$path RUN FAILED ($(grep -m1 error "$T/$ex.$v.$np.err"))"; fail=1; continue
          fi
          ok=$(check_run "$ex" "$T/$ex.$v.$np.out" "$T/$ex.$v.$np" "$fields" "$checks" "$ex")
          [ "$ok" = 1 ] && line="$line np$np/$path ok" || { line="$line np$np/$path MISMATCH"; fail=1; }
        done
      done
      say "$line"
    done
    case $ex in star3d*) # single steps compiled in variants (passes/gpu.c): each forced, 2 ranks
      line="  $ex variants (STN_VARIANT, 2 ranks, staged):"
      for vv in 0 1 2; do
        saves=""
        for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.var$vv.${f%%:*}"; done
        # shellcheck disable=SC2086
        if ! (cd "$T" && env STN_VARIANT=$vv STN_MPI_STAGED=1 $MPIRUN -np 2 "$T/$ex.overlap" $args $saves >"$T/$ex.var$vv.out" 2>"$T/$ex.var$vv.err"); then
          line="$line $vv RUN FAILED"; fail=1; continue
        fi
        ok=$(check_run "$ex" "$T/$ex.var$vv.out" "$T/$ex.var$vv" "$fields" "$checks" "$ex")
        [ "$ok" = 1 ] && line="$line $vv ok" || { line="$line $vv MISMATCH"; fail=1; }
      done
      say "$line" ;;
    esac
    if command -v compute-sanitizer >/dev/null; then
      # shellcheck disable=SC2086
      sargs=$args
      [ "$ex" = lbm_d2q9 ] && sargs="--NY=32 --NX=16 --STEPS=60"
      (cd "$T" && $MPIRUN -np 2 compute-sanitizer --tool memcheck $SANFLAGS "$T/$ex.overlap" $sargs \
         >"$T/$ex.san.out" 2>&1)
      rc=$?
      errs=$(grep -m1 -o 'ERROR SUMMARY: [0-9]* error' "$T/$ex.san.out")
      say "  $ex memcheck at 2 ranks: rc $rc, ${errs:-no summary}"
      [ $rc = 0 ] || san_failed "$T/$ex.san.out"
      case $ex in himeno|diffusion3d)
        # shellcheck disable=SC2086
        (cd "$T" && $MPIRUN -np 2 compute-sanitizer --tool memcheck $SANFLAGS "$T/$ex.tb4" $sargs \
           >"$T/$ex.san4.out" 2>&1)
        rc=$?
        errs=$(grep -m1 -o 'ERROR SUMMARY: [0-9]* error' "$T/$ex.san4.out")
        say "  $ex --tb=4 memcheck at 2 ranks: rc $rc, ${errs:-no summary}"
        [ $rc = 0 ] || san_failed "$T/$ex.san4.out" ;;
      esac
    fi
  done 3< <(cases)

  # --deterministic-reductions on the GPU: exact sums, so every printed
  # number and every field the same, bit for bit, for any rank count and
  # decomposition (CG's fields depend on its dot products)
  say ""
  say "determinism (GPUs: $vg): --mpi --deterministic-reductions on 2, 3, 4 ranks and forced decompositions, against 1 rank, exactly:"
  while IFS='|' read -r -u 3 ex src args fields checks; do
    built "$ex.det" || continue
    line="  $ex:"
    for run in 1 2 3 4 4:--ranks=4 4:--ranks=1x4 3:--ranks=1x1x3; do
      np=${run%%:*} extra=""
      [ "$run" != "$np" ] && extra=${run#*:}
      case $ex in jacobi2d|lbm_d2q9) [ "$extra" = --ranks=1x1x3 ] && continue ;; esac
      saves=""
      for f in $fields; do saves="$saves --save=${f%%:*}=$T/$ex.det.$np${extra#--ranks=}.${f%%:*}"; done
      # shellcheck disable=SC2086
      if ! (cd "$T" && $MPIRUN -np "$np" "$T/$ex.det" $args $extra $saves >"$T/$ex.det.$np${extra#--ranks=}.out" 2>&1 </dev/null); then
        line="$line $run RUN FAILED"; fail=1; continue
      fi
      [ "$run" = 1 ] && continue
      ok=1
      for f in $fields; do
        cmp -s "$T/$ex.det.$np${extra#--ranks=}.${f%%:*}" "$T/$ex.det.1.${f%%:*}" || ok=0
      done
      IFS=';' read -ra cks <<<"$checks"
      for c in "${cks[@]}"; do
        rest=${c#*:} label=${rest%:*}
        a=$(grep -m1 "^$label" "$T/$ex.det.$np${extra#--ranks=}.out") b=$(grep -m1 "^$label" "$T/$ex.det.1.out")
        [ -n "$a" ] && [ "$a" = "$b" ] || ok=0
      done
      [ $ok = 1 ] && line="$line $run ok" || { line="$line $run DIFFERS"; fail=1; }
    done
    say "$line"
  done 3< <(cases)
  # the control: without the flag CG's x is expected to differ between 1
  # and 2 ranks (its dot products' block partials differ), which is what
  # the check above would catch
  if [ -f "$T/cg_poisson.overlap.1.x" ] && [ -f "$T/cg_poisson.overlap.2.x" ]; then
    cmp -s "$T/cg_poisson.overlap.1.x" "$T/cg_poisson.overlap.2.x" &&
      say "  control: without --deterministic-reductions CG's x on 2 ranks is bit for bit 1 rank's too" ||
      say "  control: without --deterministic-reductions CG's x differs between 1 and 2 ranks (as expected)"
  fi
  unset CUDA_VISIBLE_DEVICES
fi

if want verify || want lib; then
  [ -n "${VERIFY_GPU:-}" ] && export CUDA_VISIBLE_DEVICES=$VERIFY_GPU
  # library mode on the GPU under --mpi: tests/lit/mpi/lib.test's host
  # program on 1 and 3 ranks, each rank's part on the device, against the
  # CPU library (fields 1e-6, and the GPU runs against each other exactly)
  L=$T/lib
  mkdir -p "$L/one" "$L/dist"
  # compiled with what --print-cflags names (the runtime's headers, the
  # per-thread default stream), linked with what --print-libs names
  # (libstn.a needs HDF5, PNG, ...)
  if { build/stencilc --emit=lib --target=c --deterministic-reductions -o "$L/one/heat.c" examples/embed-make/heat.stn &&
       cc -O2 -I"$L/one" -Iruntime -o "$L/one/host" tests/lit/mpi/Inputs/heat_host.c "$L/one/heat.c" \
         $(build/stencilc --print-libs) &&
       build/stencilc --emit=lib --target=cuda --mpi --deterministic-reductions --cflags="-fmad=false" \
         -o "$L/dist/heat.cu" examples/embed-make/heat.stn &&
       nvcc -O2 -fmad=false -arch=sm_90 -ccbin mpicxx -I"$L/dist" $(build/stencilc --mpi --target=cuda --print-cflags) \
         -c "$L/dist/heat.cu" -o "$L/dist/heat.o" &&
       mpicc -O2 -DHOST_MPI -I"$L/dist" -Iruntime -c tests/lit/mpi/Inputs/heat_host.c -o "$L/dist/host.o" &&
       nvcc -arch=sm_90 -ccbin mpicxx -o "$L/dist/host" "$L/dist/host.o" "$L/dist/heat.o" \
         $(build/stencilc --target=cuda --mpi --print-libs) -Xcompiler -fopenmp; } >"$L/build.log" 2>&1; then
    "$L/one/host" "$L/one.raw" >"$L/one.out" 2>&1
    $MPIRUN -np 1 "$L/dist/host" "$L/g1.raw" >"$L/g1.out" 2>&1 </dev/null
    $MPIRUN -np 3 "$L/dist/host" "$L/g3.raw" >"$L/g3.out" 2>&1 </dev/null
    ok=1
    build/tools/fieldcmp --type=double --atol=1e-6 "$L/g1.raw" "$L/one.raw" >>"$LOG/mpi.log" 2>&1 || ok=0
    cmp -s "$L/g1.raw" "$L/g3.raw" && diff -q "$L/g1.out" "$L/g3.out" >/dev/null || ok=0
    grep -q 'step 19 heat' "$L/g3.out" || ok=0
    [ $ok = 1 ] && say "  library mode (--emit=lib --mpi --target=cuda): 1 rank against the CPU library ok, 3 ranks against 1 exactly ok" ||
      { say "  library mode (--emit=lib --mpi --target=cuda): MISMATCH"; fail=1; tail -5 "$L/g3.out" >>"$LOG/mpi.log"; }
  else
    say "  library mode (--emit=lib --mpi --target=cuda): BUILD FAILED"; fail=1; cat "$L/build.log" >>"$LOG/mpi.log"
  fi
  unset CUDA_VISIBLE_DEVICES
fi

# ---- overlap -------------------------------------------------------------
# per sweep: the program's timer over ITERS sweeps (its "Time [s] :" line)
sweep() { awk -v it="$2" '/^Time \[s\] :/ { printf "%.4f", 1e3 * $NF / it }' "$1"; }
gflops() { awk '/^MFLOPS measured :/ { printf "%.1f", $NF / 1e3 }' "$1"; }

if want overlap; then
  built h1 && built hov && built hno && built hca || exit 1
  # OVERLAP_SIZE=L: Himeno L (257x257x513), 100 sweeps, instead of M
  if [ "${OVERLAP_SIZE:-M}" = L ]; then
    M="--NI=257 --NJ=257 --NK=513 --ITERS=100" its=100 mname="Himeno L (257x257x513)"
  else
    M="--NI=129 --NJ=129 --NK=257 --ITERS=500" its=500 mname="Himeno M (129x129x257)"
  fi
  best() { # CMD... -> best ms per sweep of 3
    local b=""
    for r in 1 2 3; do
      # shellcheck disable=SC2068
      CUDA_VISIBLE_DEVICES=0 $@ >"$T/o.out" 2>"$T/o.err" </dev/null || { echo "FAILED"; return; }
      t=$(sweep "$T/o.out" "$its")
      b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (a == "" || t < a) ? t : a }')
    done
    echo "$b"
  }
  overlap_set() { # LABEL: the ranks share the GPU as LABEL says
    say ""
    say "overlap, $1: $mname on one GPU, $its sweeps; ms per sweep by the program's timer (best of 3):"
    s1=$(best "$T/h1" $M)
    m1=$(best $MPIRUN -np 1 "$T/hov" $M)
    ov=$(best $MPIRUN -np 2 "$T/hov" $M --ranks=2)
    no=$(best $MPIRUN -np 2 "$T/hno" $M --ranks=2)
    ca=$(best $MPIRUN -np 2 "$T/hca" $M --ranks=2)
    say "  single process (no --mpi)        $s1 ms"
    say "  --mpi, 1 rank                    $m1 ms ($(awk -v a="$s1" -v b="$m1" 'BEGIN { printf "%.3f", a / b }')x the single process)"
    say "  --mpi, 2 ranks (slabs), overlap  $ov ms ($(awk -v a="$s1" -v b="$ov" 'BEGIN { printf "%.3f", a / b }')x the single process)"
    say "  --mpi, 2 ranks, -fno-overlap     $no ms (overlap is $(awk -v a="$no" -v b="$ov" 'BEGIN { printf "%.3f", a / b }')x faster)"
    say "  --mpi, 2 ranks, --tb=4 (deep)    $ca ms ($(awk -v a="$ov" -v b="$ca" 'BEGIN { printf "%.3f", a / b }')x the overlapped single steps)"
    for b in hov hno hca; do
      CUDA_VISIBLE_DEVICES=0 $MPIRUN -np 2 "$T/$b" $M --ranks=2 --profile >"$T/$b.prof.out" 2>"$T/$b.prof.err" </dev/null
      say "  --profile, $b:"
      sed -n '/^kernel /,$p' "$T/$b.prof.err" | sed 's/^/    /' | tee -a "$LOG/mpi.log"
    done
  }
  overlap_set "ranks time-sliced on the GPU (no MPS)"
  # Under MPS the two ranks' kernels run on the GPU at once, as they would
  # on two GPUs (each with half the SMs): the nearest one GPU comes to it.
  if command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=$T/mps CUDA_MPS_LOG_DIRECTORY=$T/mps
    mkdir -p "$T/mps"
    if nvidia-cuda-mps-control -d 2>>"$LOG/mpi.log"; then
      sleep 1
      overlap_set "ranks sharing the GPU through MPS"
      echo quit | nvidia-cuda-mps-control
      sleep 1
    else
      say "  (MPS did not start: no MPS measurement)"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
fi

# ---- scaling ---------------------------------------------------------------
# One rank per GPU. "NCCL" rows send the halos GPU to GPU through NCCL
# (STN_MPI_NCCL=1; the default where it loads); "staged" rows through
# pinned host buffers and MPI (STN_MPI_STAGED=1; the default where NCCL
# does not load and MPI is not CUDA-aware); "aware" rows, where MPI is
# CUDA-aware (MPI_HOME=), hand it the device buffers (STN_MPI_NCCL=0: the
# default where NCCL does not load). Each size's one-GPU
# time is the --mpi build on one rank of this machine in the same call;
# the fields (and, built --deterministic-reductions, the printed residual)
# of every rank count are compared with it bit for bit.
if want scale && [ "$ngpu" -ge 2 ]; then
  say ""
  # the paths timed: NCCL, device buffers to MPI where it is CUDA-aware, staged
  spaths="NCCL staged"
  [ "$aware" = true ] && spaths="NCCL aware staged"
  spaths=${SCALE_PATHS:-$spaths}
  say "scaling: one rank per GPU, against 1 GPU of this machine in the same run; the program's timer, best of 2; NCCL (STN_MPI_NCCL=1 rows): ${STN_NCCL_LIBRARY:-libnccl.so.2 from the loader path}"
  for b in hm hmno hmtb hdet dm dmno lm lmno hs ds ls; do built $b || exit 1; done
  rate() { # the program's rate line, as GFLOPS (Himeno, diffusion3d) or GLUPS (lbm)
    awk '/^MFLOPS measured :/ { printf "%.1f GFLOPS", $NF / 1e3 } /^GFLOPS :/ { printf "%.1f GFLOPS", $NF }
         /^MLUPS :/ { printf "%.2f GLUPS", $NF / 1e3 }' "$1"
  }
  run_best() { # NP PROG ARGS -> "seconds|rate" best of 2
    local np=$1 prog=$2; shift 2
    local bt="" br=""
    for r in 1 2; do
      # shellcheck disable=SC2068
      $MPIRUN -np "$np" "$prog" $@ >"$T/s.out" 2>"$T/s.err" </dev/null || { echo "FAILED|$(grep -m1 error "$T/s.err")"; return; }
      t=$(awk '/^Time \[s\] :/ { print $NF }' "$T/s.out")
      if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then bt=$t; br=$(rate "$T/s.out"); fi
    done
    echo "$bt|$br"
  }
  row() { # LABEL G ONE-RESULT G-RESULT
    local a=${3%%|*} b=${4%%|*}
    case "$a $b" in *FAILED*) say "  $1 on $2 GPUs: FAILED ${4#*|}"; fail=1; return ;; esac
    say "$(printf '  %-46s 1 GPU %8.4f s %14s | %d GPUs %8.4f s %14s | speed-up %.3f, efficiency %5.1f%%' "$1" \
      "$a" "${3#*|}" "$2" "$b" "${4#*|}" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')" \
      "$(awk -v a="$a" -v b="$b" -v g="$2" 'BEGIN { print 100 * a / b / g }')")"
  }
  same() { # LABEL FILE-A FILE-B
    if cmp -s "$2" "$3"; then say "  $1: identical, bit for bit"; else say "  $1: DIFFERS"; fail=1; fi
  }
  L="--NI=257 --NJ=257 --NK=513 --ITERS=400" XL="--NI=513 --NJ=513 --NK=1025 --ITERS=100"
  D="--N=1024 --STEPS=50" LB="--NY=16384 --NX=16384 --STEPS=100"
  declare -A one
  rw() { [ -z "${SCALE_ROWS:-}" ] || [[ ",$SCALE_ROWS," == *",$1,"* ]]; }
  if [ "${SCALE_TIMES:-1}" = 1 ]; then
    for sz in L XL; do rw himeno || rw weak || rw profile && one[h$sz]=$(run_best 1 "$T/hm" ${!sz}); done
    rw diffusion && one[d]=$(run_best 1 "$T/dm" $D)
    rw lbm && one[l]=$(run_best 1 "$T/lm" $LB)
    # the same programs without --mpi, for reference (the single process's defaults)
    say "  without --mpi (one process, the default build): Himeno L $(run_best 1 "$T/hs" $L | tr '|' ' '), XL $(run_best 1 "$T/hs" $XL | tr '|' ' '),"
    say "    diffusion3d $(run_best 1 "$T/ds" $D | tr '|' ' '), lbm $(run_best 1 "$T/ls" $LB | tr '|' ' ')"
  fi
  for G in ${SCALE_GPUS:-2 4 8}; do
    [ "$G" -le "$ngpu" ] && [ "${SCALE_TIMES:-1}" = 1 ] || continue
    say ""
    say "  on $G GPUs (slabs: --ranks=$G):"
    for sz in L XL; do
      rw himeno || continue
      a=${!sz}
      for v in $spaths; do
        row "Himeno $sz strong, overlap, $v" "$G" "${one[h$sz]}" "$(export "$(via $v)"; run_best "$G" "$T/hm" $a --ranks=$G)"
        row "Himeno $sz strong, -fno-overlap, $v" "$G" "${one[h$sz]}" "$(export "$(via $v)"; run_best "$G" "$T/hmno" $a --ranks=$G)"
      done
      for v in $spaths; do
        row "Himeno $sz strong, --tb=4 across ranks, $v" "$G" "${one[h$sz]}" "$(export "$(via $v)"; run_best "$G" "$T/hmtb" $a --ranks=$G)"
      done
    done
    W="--NI=$((256 * G + 1)) --NJ=257 --NK=513 --ITERS=400 --ranks=$G"
    for v in $spaths; do
      rw weak || continue
      wk=$(export "$(via $v)"; run_best "$G" "$T/hm" $W)
      say "$(printf '  %-46s 1 GPU %8.4f s | %d GPUs (NI=%d) %8.4f s %14s | weak efficiency %5.1f%%' "Himeno L per GPU, weak, overlap, $v" \
        "${one[hL]%%|*}" "$G" $((256 * G + 1)) "${wk%%|*}" "${wk#*|}" "$(awk -v a="${one[hL]%%|*}" -v b="${wk%%|*}" 'BEGIN { print 100 * a / b }')")"
    done
    for prog in "diffusion|diffusion3d 1024^3|d|dm|dmno|$D" "lbm|lbm_d2q9 16384^2|l|lm|lmno|$LB"; do
      IFS='|' read -r key name base ov no args <<<"$prog"
      rw "$key" || continue
      for v in $spaths; do
        # shellcheck disable=SC2086
        row "$name strong, overlap, $v" "$G" "${one[$base]}" "$(export "$(via $v)"; run_best "$G" "$T/$ov" $args --ranks=$G)"
        # shellcheck disable=SC2086
        [ $v = staged ] || row "$name strong, -fno-overlap, $v" "$G" "${one[$base]}" "$(export "$(via $v)"; run_best "$G" "$T/$no" $args --ranks=$G)"
      done
    done
    # the device paths under compute-sanitizer (memcheck), one GPU per rank
    if rw memcheck && command -v compute-sanitizer >/dev/null; then
      for v in $spaths; do
        [ $v = staged ] && continue
        for run in "hm:--NI=65 --NJ=65 --NK=129 --ITERS=10" "dm:--N=64 --STEPS=10"; do
          b=${run%%:*}
          # shellcheck disable=SC2086
          (cd "$T" && env "$(via $v)" $MPIRUN -np "$G" compute-sanitizer --tool memcheck $SANFLAGS "$T/$b" \
             ${run#*:} --ranks=$G >"$T/$b.nsan.$G.out" 2>&1 </dev/null)
          rc=$?
          say "  memcheck, $b on $G GPUs, $v: rc $rc, $(grep -m1 -o 'ERROR SUMMARY: [0-9]* error' "$T/$b.nsan.$G.out")"
          [ $rc = 0 ] || san_failed "$T/$b.nsan.$G.out"
        done
      done
    fi
    # where the time goes: --profile's exchange table (rank 0's kernels)
    for v in $spaths; do
      rw profile || continue
      (cd "$T" && env "$(via $v)" $MPIRUN -np "$G" "$T/hm" $XL --ranks=$G --profile >"$T/p.out" 2>"$T/p.err" </dev/null)
      say "  --profile, Himeno XL, $v:"
      sed -n '/^halo exchanges/,$p' "$T/p.err" | sed 's/^/    /' | tee -a "$LOG/mpi.log"
      grep -q '^halo exchanges' "$T/p.err" || tail -5 "$T/p.err" | sed 's/^/    /' | tee -a "$LOG/mpi.log"
    done
  done

  # the same results on 1 and G GPUs, bit for bit: fields of every program
  # (decompositions with edges, a periodic dimension split so that both
  # neighbours are one rank), --tb=4 across ranks, staged and NCCL; and
  # the residual printed to the last digit with --deterministic-reductions
  [ "${SCALE_CHECKS:-1}" = 1 ] || GPUCHECK=skip
  [ "${GPUCHECK:-}" = skip ] || say ""
  [ "${GPUCHECK:-}" = skip ] || say "  results on several GPUs against 1 GPU, bit for bit:"
  HB="--NI=257 --NJ=257 --NK=513 --ITERS=50" DB="--N=256 --STEPS=20" LBB="--NY=1024 --NX=1024 --STEPS=200"
  [ "${GPUCHECK:-}" = skip ] || (cd "$T" && $MPIRUN -np 1 "$T/hm" $HB --save=p=h1.p >/dev/null 2>&1 </dev/null &&
     $MPIRUN -np 1 "$T/hdet" $HB --save=p=hd1.p >"$T/hd1.out" 2>&1 </dev/null &&
     $MPIRUN -np 1 "$T/hm" $HB --save=p=hn1.p >"$T/hn1.out" 2>&1 </dev/null &&
     $MPIRUN -np 1 "$T/dm" $DB --save=f=d1.f >/dev/null 2>&1 </dev/null &&
     $MPIRUN -np 1 "$T/lm" $LBB --save=ux=l1.ux >/dev/null 2>&1 </dev/null) || { say "  1-GPU reference runs FAILED"; fail=1; }
  for G in ${SCALE_GPUS:-2 4 8}; do
    [ "$G" -le "$ngpu" ] && [ "${GPUCHECK:-}" != skip ] || continue
    runs="hm:--ranks=$G:NCCL hm:--ranks=$G:staged hmtb:--ranks=$G:NCCL hm:--ranks=$(( G / 2 ))x2:NCCL"
    [ "$aware" = true ] && runs="$runs hm:--ranks=$G:aware hmtb:--ranks=$G:aware"
    for run in $runs; do
      IFS=: read -r b r v <<<"$run"
      (cd "$T" && env "$(via "$v")" $MPIRUN -np "$G" "$T/$b" $HB $r --save=p=hg.p >/dev/null 2>&1 </dev/null)
      same "Himeno p, $b $r, $v, $G GPUs" "$T/h1.p" "$T/hg.p"
    done
    (cd "$T" && $MPIRUN -np "$G" "$T/hdet" $HB --ranks=$G --save=p=hdg.p >"$T/hdg.out" 2>&1 </dev/null)
    same "Himeno p, --deterministic-reductions, $G GPUs" "$T/hd1.p" "$T/hdg.p"
    a=$(grep -m1 '^Gosa' "$T/hd1.out") b=$(grep -m1 '^Gosa' "$T/hdg.out")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then say "  Himeno Gosa, --deterministic-reductions, $G GPUs: '$b', the same as 1 GPU's"
    else say "  Himeno Gosa, --deterministic-reductions, $G GPUs: '$b' DIFFERS from 1 GPU's '$a'"; fail=1; fi
    (cd "$T" && $MPIRUN -np "$G" "$T/hm" $HB --ranks=$G >"$T/hng.out" 2>&1 </dev/null)
    say "  (control: Gosa without the flag: 1 GPU '$(grep -m1 '^Gosa' "$T/hn1.out")', $G GPUs '$(grep -m1 '^Gosa' "$T/hng.out")')"
    for r in "--ranks=$G" "--ranks=$(( G / 2 ))x2"; do
      (cd "$T" && STN_MPI_NCCL=1 $MPIRUN -np "$G" "$T/dm" $DB $r --save=f=dg.f >/dev/null 2>&1 </dev/null)
      same "diffusion3d f, $r, NCCL, $G GPUs" "$T/d1.f" "$T/dg.f"
    done
    for r in "--ranks=$G" "--ranks=1x$G"; do
      (cd "$T" && STN_MPI_NCCL=1 $MPIRUN -np "$G" "$T/lm" $LBB $r --save=ux=lg.ux >/dev/null 2>&1 </dev/null)
      same "lbm_d2q9 ux, $r, NCCL, $G GPUs" "$T/l1.ux" "$T/lg.ux"
    done
  done
fi

say ""
[ $fail = 0 ] && say "mpi.sh: all checks passed" || say "mpi.sh: SOME CHECKS FAILED (details in $LOG/mpi.log)"
exit $fail
