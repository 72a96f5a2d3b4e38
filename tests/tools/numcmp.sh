#!/bin/sh
# numcmp.sh - compare one printed number in two program outputs.
#
#   numcmp.sh LABEL RTOL FILE_A FILE_B
#       Finds the first line starting with LABEL (e.g. "Gosa :") in each file,
#       takes the last whitespace-separated field on it as a number, and
#       passes when |a - b| <= RTOL * |b| (FILE_B is the reference; RTOL 0
#       demands equality).
#   numcmp.sh --max LABEL LIMIT FILE
#       Passes when the number on FILE's LABEL line is <= LIMIT.
#   numcmp.sh --atol LABEL ATOL FILE_A FILE_B
#       Passes when |a - b| <= ATOL (iteration counts: --atol 1).
#
# Prints the values; exits 0 on pass, 1 on failure (a missing label, a
# non-number such as nan, or a difference too large), 2 on bad usage.
set -u

usage() {
    echo "usage: numcmp.sh LABEL RTOL FILE_A FILE_B | numcmp.sh --max LABEL LIMIT FILE | numcmp.sh --atol LABEL ATOL FILE_A FILE_B" >&2
    exit 2
}

# value LABEL FILE: prints the last field of the first line starting with LABEL.
value() {
    if [ ! -r "$2" ]; then
        echo "FAIL: cannot read $2" >&2
        return 1
    fi
    awk -v label="$1" 'index($0, label) == 1 { print $NF; found = 1; exit }
                       END { if (!found) exit 1 }' "$2"
}

# is_number TEXT: a plain decimal floating-point number (no nan/inf).
is_number() {
    echo "$1" | grep -Eq '^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$'
}

# get LABEL FILE: value with the checks; sets $got.
get() {
    if ! got=$(value "$1" "$2"); then
        echo "FAIL: no line starting with '$1' in $2"
        exit 1
    fi
    if ! is_number "$got"; then
        echo "FAIL: '$got' on the '$1' line of $2 is not a number"
        exit 1
    fi
}

if [ "${1:-}" = "--max" ]; then
    [ $# -eq 4 ] || usage
    label=$2 limit=$3 file=$4
    is_number "$limit" || usage
    get "$label" "$file"
    echo "$label $got (limit $limit)"
    if awk -v v="$got" -v lim="$limit" 'BEGIN { exit !(v + 0 <= lim + 0) }'; then
        echo "PASS"
        exit 0
    fi
    echo "FAIL: $label $got is above $limit"
    exit 1
fi

atol=0
if [ "${1:-}" = "--atol" ]; then
    atol=1
    shift
fi
[ $# -eq 4 ] || usage
label=$1 rtol=$2 file_a=$3 file_b=$4
is_number "$rtol" || usage
get "$label" "$file_a"
a=$got
get "$label" "$file_b"
b=$got
echo "$label $a ($file_a)"
echo "$label $b ($file_b, reference)"
if awk -v a="$a" -v b="$b" -v rtol="$rtol" -v atol="$atol" 'BEGIN {
        a += 0; b += 0; rtol += 0
        d = a - b; if (d < 0) d = -d
        m = atol ? 1 : b < 0 ? -b : b
        printf "abs diff %.6g, allowed %.6g\n", d, rtol * m
        exit !(d <= rtol * m)
    }'; then
    echo "PASS"
    exit 0
fi
if [ $atol = 1 ]; then echo "FAIL: $label differs by more than $rtol"; else echo "FAIL: $label differs by more than rtol=$rtol"; fi
exit 1
