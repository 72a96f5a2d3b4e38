#!/bin/sh
# Prints the grammar of the stencil language in plain BNF, taken from the
# bison file itself (bison's report), so grammar/stencil.bnf cannot drift
# from the parser. `make grammar/stencil.bnf` regenerates it; a lit test
# checks that the committed copy is current.
#   usage: tools/extract-grammar.sh compiler/front/parser.y
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LC_ALL=C bison --report=state --report-file="$tmp/report" -o "$tmp/p.c" "$1"
echo "# The grammar of the stencil language (normative), extracted from"
echo "# compiler/front/parser.y by tools/extract-grammar.sh. Do not edit."
echo "# Terminals are quoted, or in capitals: keywords are spelled in lower case (PARAM is"
echo "# param), TYPE is int, float, double or bool. docs/language.md explains each construct."
echo "# Operator precedence, lowest first: ?: , ||, &&, == !=, < > <= >=, + -, * / %, unary - + ! (cast)."
# The "Grammar" section: numbered rules, '|' continuations; drop the numbers
# and bison's internal start rule.
awk '/^Grammar$/ {on = 1; next}
     /^Terminals, with rules/ {on = 0}
     on && /\$accept/ {next}
     on {sub(/^ *[0-9]+ /, ""); print}' "$tmp/report" | sed -e 's/[[:space:]]*$//' | cat -s
