# For each PTX .entry with a griddepcontrol.wait: its name, and the global
# loads after the wait through the non-coherent path (nc=) and coherent
# loads (coherent=), leaving out the CUDA math library's constant tables
# (a register set from a __cudart_ symbol, or an address computed from
# one: sin() reads its coefficients so).
function flush() { if (name != "" && waited) printf "%s nc=%d coherent=%d\n", name, nc, co }
/^\.visible \.entry|^\.entry/ { flush(); name = $NF; sub(/\(.*/, "", name); waited = 0; nc = 0; co = 0; delete table }
/mov\.u64.*__cudart_/ { r = $2; sub(/,$/, "", r); table[r] = 1 }
/add\.s64/ { r = $2; a = $3; b = $4; sub(/,$/, "", r); sub(/,$/, "", a); sub(/;$/, "", b); if ((a in table) || (b in table)) table[r] = 1 }
/griddepcontrol\.wait/ { waited = 1 }
/ld\.global/ && waited {
  a = $0; sub(/.*\[/, "", a); sub(/[\]+].*/, "", a)
  if (a in table) next
  if ($0 ~ /ld\.global\.nc/) nc++; else co++
}
END { flush() }
