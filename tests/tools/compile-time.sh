#!/bin/sh
# usage: compile-time.sh LIMIT_MS STENCILC FILE...
# Fails if the best of 5 compilations of any FILE takes LIMIT_MS or more.
limit=$1 stencilc=$2
shift 2
status=0
for f in "$@"; do
  best=999999
  for _ in 1 2 3 4 5; do
    t0=$(date +%s%N)
    "$stencilc" -o /dev/null "$f" || exit 1
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 ))
    [ "$ms" -lt "$best" ] && best=$ms
  done
  echo "$f: ${best} ms"
  [ "$best" -lt "$limit" ] || { echo "FAIL: $f took ${best} ms (limit ${limit} ms)"; status=1; }
done
exit $status
