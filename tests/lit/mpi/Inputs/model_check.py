"""model_check.py MODEL ROWS TOLERANCE: bench/model.py's efficiency for
each measured row, and whether it is within TOLERANCE points."""
import subprocess
import sys

model, rows, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
LINK = ["--slabs", "--parallel-links", "--bandwidth", "87", "--latency", "11", "--overhead", "0",
        "--pack-gbs", "255", "--step-overhead", "12.4"]
worst, n = 0.0, 0
for line in open(rows):
    if not line.strip() or line.startswith("#"):
        continue
    f = line.split()
    measured, t1, grid, ranks, bpp, extra = float(f[0]), f[1], f[2], f[3], f[4], f[5:]
    out = subprocess.run([sys.executable, model, "--t1", t1, "--grid", grid, "--ranks", ranks,
                          "--halo-bytes-per-point", bpp] + LINK + extra, capture_output=True, text=True, check=True)
    pred = float(out.stdout.strip().splitlines()[-1].split()[-1].rstrip("%"))
    miss = abs(pred - measured)
    worst, n = max(worst, miss), n + 1
    print(f"{grid} {ranks} {' '.join(extra)}: model {pred:.1f}% measured {measured:.1f}%"
          + (" OFF" if miss > tol else ""))
print(f"{n} rows, worst {worst:.1f} points")
