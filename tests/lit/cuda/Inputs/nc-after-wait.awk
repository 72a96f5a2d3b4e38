# For each PTX .entry: count ld.global.nc after its first griddepcontrol.wait,
# except loads of the CUDA math library's own constant tables (a register
# set from a __cudart_ symbol, or an address computed from one: sin()
# reads its coefficients so).
/^\.visible \.entry|^\.entry/ { waited = 0; delete table }
/mov\.u64.*__cudart_/ { r = $2; sub(/,$/, "", r); table[r] = 1 }
/add\.s64/ { r = $2; a = $3; b = $4; sub(/,$/, "", r); sub(/,$/, "", a); sub(/;$/, "", b); if ((a in table) || (b in table)) table[r] = 1 }
/griddepcontrol\.wait/ { if (!waited) kernels++; waited = 1 }
/ld\.global\.nc/ && waited {
  a = $0; sub(/.*\[/, "", a); sub(/[\]+].*/, "", a)
  if (!(a in table)) { bad++; print "ld.global.nc after the wait: " FILENAME ": " $0 > "/dev/stderr" }
}
END { printf "kernels with griddepcontrol.wait: %d\nld.global.nc after the wait: %d\n", kernels, bad + 0 }
