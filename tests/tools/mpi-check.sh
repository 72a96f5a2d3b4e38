#!/bin/sh
# mpi-check.sh - a program built with --mpi, run under mpirun on several
# rank counts and decompositions, against the same program built for one
# process.
#
#   mpi-check.sh [-d] [-f "FLAGS"] STENCILC FILE.stn TARGET FIELDS "PARAMS" RUN...
#
# FIELDS: the fields saved (--save) and compared bit for bit, separated by
# commas ("-": none). PARAMS: the program's command line. RUN: NP (the
# runtime's default decomposition) or NP:PxQxR (--ranks=PxQxR).
# FLAGS go to both builds (e.g. --tb=2). Printed numbers: every line of
# the single-process output except timings is compared, token by token,
# numbers within 1e-12 relative. With -d both builds get
# --deterministic-reductions and every output must be identical to the
# single-process one, digit for digit.
#
# Prints what it ran; exits 0 when everything matches, 1 otherwise.
set -u
exact=0 flags=""
while [ $# -gt 0 ]; do
  case "$1" in
    -d) exact=1; shift ;;
    -f) flags=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 6 ] || { echo "usage: mpi-check.sh [-d] [-f FLAGS] STENCILC FILE.stn TARGET FIELDS PARAMS RUN..." >&2; exit 2; }
stencilc=$1 src=$2 target=$3 fields=$4 params=$5
shift 5
[ $exact = 1 ] && flags="$flags --deterministic-reductions"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
# one thread per rank: the ranks share this machine's cores
export OMP_NUM_THREADS=1

saves() { # PREFIX: --save options for FIELDS
  [ "$fields" = - ] && return
  echo "$fields" | tr ',' '\n' | while read -r f; do printf ' --save=%s=%s/%s.%s.raw' "$f" "$dir" "$1" "$(echo "$f" | tr '[]' '__')"; done
}
# The numbers that must match: everything but timings and rates.
printed() { grep -Ev 'Time|time|MFLOPS|MLUPS|GFLOPS|it/s|\[s\]' "$1"; }

# shellcheck disable=SC2086
"$stencilc" --target="$target" $flags --build -o "$dir/single" "$src" >"$dir/build.log" 2>&1 ||
  { cat "$dir/build.log"; echo "FAIL: single-process build"; exit 1; }
# shellcheck disable=SC2086
"$stencilc" --mpi --target="$target" $flags --build -o "$dir/dist" "$src" >"$dir/build.log" 2>&1 ||
  { cat "$dir/build.log"; echo "FAIL: --mpi build"; exit 1; }
# shellcheck disable=SC2086
(cd "$dir" && ./single $params $(saves single) >single.out) || { echo "FAIL: the single-process run"; exit 1; }
printed "$dir/single.out" >"$dir/single.num"

status=0
for run in "$@"; do
  np=${run%%:*}
  ranks=""
  [ "$np" != "$run" ] && ranks="--ranks=${run#*:}"
  tag=$(echo "$run" | tr ':x' '__')
  # shellcheck disable=SC2086
  if ! (cd "$dir" && mpirun $root --oversubscribe --bind-to none -np "$np" ./dist $params $ranks $(saves "$tag") \
        >"$tag.out" 2>"$tag.err"); then
    cat "$dir/$tag.err"
    echo "FAIL: $run: mpirun -np $np $ranks"
    status=1
    continue
  fi
  printed "$dir/$tag.out" >"$dir/$tag.num"
  bad=""
  if [ "$fields" != - ]; then
    for f in $(echo "$fields" | tr ',[]' ' __'); do
      cmp -s "$dir/single.$f.raw" "$dir/$tag.$f.raw" || bad="$bad field $f differs;"
    done
  fi
  if [ $exact = 1 ]; then
    cmp -s "$dir/single.num" "$dir/$tag.num" || bad="$bad printed output differs;"
  elif ! awk -v rtol=1e-12 'NR == FNR { ref[FNR] = $0; n = FNR; next }
      { m = FNR; if (!(FNR in ref)) { bad = 1; next }
        na = split(ref[FNR], a); nb = split($0, b)
        if (na != nb) { bad = 1; next }
        for (t = 1; t <= na; t++) {
          if (a[t] == b[t]) continue
          if (a[t] !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || b[t] !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) { bad = 1; continue }
          d = a[t] - b[t]; if (d < 0) d = -d; s = a[t] < 0 ? -a[t] : a[t]
          if (d > rtol * s) bad = 1
        } }
      END { exit bad || m != n }' "$dir/single.num" "$dir/$tag.num"; then
    bad="$bad printed numbers differ by more than 1e-12;"
  fi
  if [ -n "$bad" ]; then
    echo "FAIL: $run:$bad"
    diff "$dir/single.num" "$dir/$tag.num" | head -20
    status=1
  else
    echo "ok: $run"
  fi
done
exit $status
