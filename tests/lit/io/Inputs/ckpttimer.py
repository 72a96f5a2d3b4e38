"""ckpttimer.py CHECKPOINT FULL RESTARTED: the time a checkpoint saved for
timer t (its var stn_timer_t, a little-endian double in hex) against the
times printed ("Time [s] : X") by the run that wrote it (FULL: it went on
to the end) and by the run restarted from it (RESTARTED). The saved time
is part of the full run's, and a timer around a restarted loop counts the
run before the checkpoint too, so the restarted run prints at least the
saved time (tests/lit/io/checkpoint.test: the checkpoint falls near the
end, so without that it would print much less)."""
import re
import struct
import sys


def printed(path):
    with open(path) as f:
        return float(re.search(r'Time \[s\] : (\S+)', f.read()).group(1))


with open(sys.argv[1], 'rb') as f:
    m = re.search(rb'\nvar stn_timer_t 8 ([0-9a-f]{16})\n', f.read())
if not m:
    sys.exit('FAIL: the checkpoint saves no time for timer t')
spent = struct.unpack('<d', bytes.fromhex(m.group(1).decode()))[0]
full, restarted = printed(sys.argv[2]), printed(sys.argv[3])
if not 0 < spent <= full:
    sys.exit('FAIL: the checkpoint saved %g s spent, of a run that took %g s' % (spent, full))
if not spent <= restarted <= 20 * full + 1:
    sys.exit('FAIL: saved %g s before the checkpoint, the restarted run printed %g s' % (spent, restarted))
print('the restarted run timed %.3g s, the run before the checkpoint %.3g s of it' % (restarted, spent))
