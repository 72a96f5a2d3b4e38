#!/bin/bash
# bench/an5d/prepare.sh AN5D_DIR: copy what bench/an5d/run.sh builds of
# AN5D's artifact (github.com/khaki3/AN5D-Artifact: its common.h, its
# tuned V100 configurations compiled/v100_{float,double}.csv and those
# configurations' generated CUDA) into bench/an5d/vendor/, which git
# ignores: AN5D's code is never committed here. AN5D_DIR is a checkout of
# the artifact (git clone https://github.com/khaki3/AN5D-Artifact).
set -eu
src=${1:?usage: bench/an5d/prepare.sh AN5D_DIR (a checkout of github.com/khaki3/AN5D-Artifact)}
here=$(cd "$(dirname "$0")" && pwd)
dst=$here/vendor
[ -f "$src/common.h" ] && [ -f "$src/compiled/v100_float.csv" ] ||
  { echo "prepare.sh: $src is not a checkout of AN5D-Artifact (no common.h or compiled/v100_float.csv)" >&2; exit 2; }
rm -rf "$dst"
mkdir -p "$dst/float" "$dst/double"
cp "$src/common.h" "$dst/"
n=0
for prec in float double; do
  cp "$src/compiled/v100_$prec.csv" "$dst/"
  # stencil,bS1,bS2,bT,sl,"model": 2-D files are NAME-bS1-bT-sl, 3-D NAME-bS1xbS2-bT-sl
  while IFS=, read -r st b1 b2 bt sl _; do
    if [ -z "$b2" ]; then cfg=$st-$b1-$bt-$sl; else cfg=$st-${b1}x$b2-$bt-$sl; fi
    # the artifact lacks a few of the configurations its CSV lists
    [ -f "$src/compiled/$prec/${cfg}_host.cu" ] || { missing="${missing:-} $prec/$cfg"; continue; }
    for f in _host.cu _kernel.cu _kernel.hu; do cp "$src/compiled/$prec/$cfg$f" "$dst/$prec/"; done
    echo "$prec,$cfg" >> "$dst/configs"
    n=$((n + 1))
  done < "$src/compiled/v100_$prec.csv"
done
echo "prepare.sh: $n AN5D configurations in $dst${missing:+ (not in the artifact:$missing)}"
