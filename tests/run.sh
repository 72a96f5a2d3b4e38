#!/bin/sh
# Runs the whole test suite twice: once against build/stencilc (all tests),
# once against the ASan/UBSan build (compiler tests only; run tests are
# marked UNSUPPORTED: sanitized). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
LIT=$(command -v lit || echo "python3 /usr/lib/llvm-14/build/utils/lit/lit.py")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
$LIT -sv -j"$(nproc)" tests/lit 2>&1 | tee "$out/plain" || status=1
$LIT -sv -j"$(nproc)" -Dstencilc="$PWD/build/asan/stencilc" -Dsanitized=1 tests/lit 2>&1 |
  sed 's/^/[asan] /' | tee "$out/asan" || status=1
count() { grep -hE "^(\[asan\] )? *$1 *: +[0-9]+" "$out/plain" "$out/asan" | awk '{s += $NF} END {print s + 0}'; }
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count 'Unexpectedly Passed') + $(count Unresolved) + $(count 'Timed Out') ))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ $status -eq 0 ]
