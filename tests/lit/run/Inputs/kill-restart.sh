#!/bin/bash
# kill-restart.sh: a run killed with SIGKILL at a random moment after its
# first checkpoint, restarted from its last one, must end with the same
# fields (bit for bit) and print the same lines as an uninterrupted run.
#   usage: kill-restart.sh DIR EVERY 'RUN' ['RESTART']
#   RUN (and RESTART, default RUN) write u.npy in DIR and print; both get
#   --checkpoint=DIR/ck --checkpoint-every=EVERY, the restart --restart too.
set -u
dir=$1 every=$2 run=$3 restart=${4:-$3}
mkdir -p "$dir" && cd "$dir" || exit 2
rm -f ck ck.tmp u.npy ref.npy
eval "$run" > ref.txt 2> ref.err || { echo "FAIL: the uninterrupted run failed"; cat ref.err; exit 1; }
mv u.npy ref.npy
setsid bash -c "$run --checkpoint=ck --checkpoint-every=$every > /dev/null 2>&1" &
pid=$!
for _ in $(seq 1 2000); do [ -f ck ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.01; done
[ -f ck ] || { echo "FAIL: no checkpoint was written"; exit 1; }
sleep "$(printf '0.%02d' $(( RANDOM % 30 )))"
kill -0 $pid 2>/dev/null || { echo "FAIL: the run ended before it was killed (make it longer)"; exit 1; }
# SIGKILL to the whole tree (mpirun's ranks have process groups of their own)
tree() { local c; for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$c"; done; echo "$1"; }
kill -9 $(tree $pid) 2>/dev/null
wait $pid 2>/dev/null
sleep 0.2
at=$(grep -a '^loop ' ck | head -1)
echo "killed; the last checkpoint: $at"
[ -f u.npy ] && { echo "FAIL: the killed run wrote its output"; exit 1; }
eval "$restart --checkpoint=ck --restart=ck" > out.txt 2> out.err || { echo "FAIL: the restart failed"; cat out.err; exit 1; }
grep -q "resumed from ck at step" out.err || { echo "FAIL: the restart did not resume"; cat out.err; exit 1; }
cmp -s u.npy ref.npy || { echo "FAIL: the fields differ from the uninterrupted run's"; exit 1; }
cmp -s out.txt ref.txt || { echo "FAIL: the printed lines differ"; diff ref.txt out.txt; exit 1; }
echo "restarted: fields and printed lines identical"
