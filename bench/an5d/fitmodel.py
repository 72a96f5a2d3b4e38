#!/usr/bin/env python3
"""bench/an5d/fitmodel.py: fit the constants of stencilc's temporal-blocking
time model (compiler/passes/tbmodel.c) to measured rates, and print how far
the model is from each one.

For every row of a CSV of measurements (stencil, flags, GCells/s; the
sweeps and tables of bench/an5d/run.sh, bench/an5d/measured.csv), it asks
`stencilc --report=json` for the model's candidates with those flags,
takes the one of the steps the build fused, and predicts, per point and
step in picoseconds,

    single steps:  max(bytes / (B 0.9 occ),  c1 + cl neighbours + cf flops + cx special
                                             + cq neighbours flops / 1000)
                   (occ = min(1, warps / w0): the kernel's warps a multiprocessor
                   from ptxas's registers; neighbours: the loads a point issues,
                   a row's vector and its columns over the points a thread)
    one-step passes of the strip kernel ("strip": true at T = 1; 3-D boxes):
                   max(bytes / (B em),   recompute (p0 + ps wavefronts + pf flops pd + cx special))
                   (recompute: the whole tile computes partial sums; wavefronts:
                   accesses x element_bytes / 4, a double's load two; pd for doubles
                   only, 1 for floats: a double's flop costs pd times two of a float's)
    T fused steps: max(bytes / (B em),   recompute (c0 + cs accesses + cf flops + cx special) spill)
                   spill = 1 + ks max(0, registers - rcap)

(accesses: shared-memory loads and stores, the JSON's shared_words;
B the copy bandwidth, 3000 GB/s), separately for 2-D and 3-D kernels. The
constants minimise the squared log error over the rows; it prints them
as tbmodel.c's Consts lines, and each row's error with them and with the
constants stencilc has now.

The default builds' rows (no flags) weigh --default-weight times (20:
the model must predict what --tb=auto builds; at 8 the 270 sweep rows
of 2026-11-26 pulled 5 of 31 defaults past 15%).
Divisions and functions (special) count only where computed at every
point (not once a call); with no measured 3-D row that has one, 3-D
takes the 2-D cx. cq (single steps of large stencils: their registers)
is fitted in 3-D only; no 2-D row is a single step of one; p0, pf,
ps and pd too (no 2-D kernel takes one-step passes), and w0 (no 2-D
single step is short of warps). The single steps' warps come from ptxas:
those rows' reports run it (slower), the others' do not.

usage: fitmodel.py [--stencilc build/stencilc] [--csv bench/an5d/measured.csv] [--default-weight W]
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy.optimize import differential_evolution

NAMES = ["c1", "cl", "cf", "c0", "cs", "ks", "rcap", "em", "cx", "cq", "p0", "pf", "ps", "pd", "w0"]
BW = 3000.0


def candidate(stencilc, root, stencil, flags, ptxas=False):
    """The model's candidate for the build `flags` makes of bench/an5d/STENCIL.stn;
    a single step's again with ptxas (its warps)."""
    src = os.path.join(root, "bench", "an5d", stencil + ".stn")
    out = subprocess.run([stencilc, "--target=cuda", "--report=json", *([] if ptxas else ["--no-ptxas"]), *flags.split(), src,
                          "-o", "/dev/stdout"], capture_output=True, text=True, check=True).stdout
    rep = json.loads(out)
    k = [k for k in rep["kernels"] if k["name"] == "step"][0]
    tb = k["cuda"]["temporal_blocking"][0]
    steps = tb["steps"] if tb.get("steps") else 1
    cand = tb["model"][steps - 1]
    if steps == 1 and not cand.get("strip") and not ptxas:
        return candidate(stencilc, root, stencil, flags, True)
    return steps, cand


def num(v):
    """A constant as tbmodel.c writes it: 3 significant digits, 0.0 below 1e-6."""
    t = "%.3g" % v if v >= 1e-6 else "0.0"
    return t if any(ch in t for ch in ".e") else t + ".0"


def predict(c, steps, cand):
    f = cand["features"]
    if steps == 1 and not cand.get("strip"):
        occ = min(1.0, f["warps"] / c["w0"]) if f.get("warps") and c["w0"] > 0 else 1.0
        mem = f["bytes"] / (BW * 0.9 * occ) * 1e3
        chip = (c["c1"] + c["cl"] * f["neighbours"] + c["cf"] * f["flops"] + c["cx"] * f["special"] +
                c["cq"] * f["neighbours"] * f["flops"] / 1000)
    elif steps == 1:
        mem = f["bytes"] / (BW * c["em"]) * 1e3
        chip = cand["recompute"] * (c["p0"] + c["ps"] * f["shared_words"] * f["element_bytes"] / 4 +
                                    c["pf"] * f["flops"] * (c["pd"] if f["element_bytes"] == 8 else 1.0) +
                                    c["cx"] * f["special"])
    else:
        mem = f["bytes"] / (BW * c["em"]) * 1e3
        spill = 1 + c["ks"] * max(0.0, cand["registers"] - c["rcap"])
        chip = cand["recompute"] * (c["c0"] + c["cs"] * f["shared_words"] + c["cf"] * f["flops"] +
                                    c["cx"] * f["special"]) * spill
    return max(mem, chip)


def main():
    ap = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--stencilc", default=os.path.join(root, "build", "stencilc"))
    ap.add_argument("--csv", default=os.path.join(root, "bench", "an5d", "measured.csv"))
    ap.add_argument("--default-weight", type=float, default=20.0)
    a = ap.parse_args()
    rows = []
    with open(a.csv) as fh:
        for r in csv.DictReader(line for line in fh if not line.startswith("#")):
            steps, cand = candidate(a.stencilc, root, r["stencil"], r["flags"])
            dims = 3 if "3d" in r["stencil"] else 2
            # the defaults count DEFAULT_WEIGHT times: the model must predict what --tb=auto builds
            rows.append(dict(r, steps=steps, cand=cand, dims=dims, ps=1000.0 / float(r["gcells"]),
                             now=cand["ps"], weight=a.default_weight if not r["flags"] else 1.0))
    fitted = {}
    for dims in (2, 3):
        rs = [r for r in rows if r["dims"] == dims]

        # no row with a division or function (in 3-D none measured): cx is
        # the 2-D kernels' (the same instructions), not left free; cq only
        # in 3-D (no 2-D row is a single step of a large stencil)
        fixed = {}
        if dims == 3 and not any(r["cand"]["features"]["special"] > 0 for r in rs):
            fixed["cx"] = fitted[2]["cx"]
        if dims == 2:
            fixed.update(cq=0.0, p0=0.0, pf=0.0, ps=0.0, pd=0.0, w0=0.0)
        free = [n for n in NAMES if n not in fixed]

        def consts(x):
            return dict(fixed, **dict(zip(free, x)))

        def loss(x):
            c = consts(x)
            if min(x) < 0 or not 0.2 <= c["em"] <= 1.0:
                return 1e9
            return sum(r["weight"] * (math.log(predict(c, r["steps"], r["cand"]) / r["ps"])) ** 2 for r in rs)

        limits = dict(c1=(0, 20), cl=(0, 2), cf=(0, 0.5), c0=(0, 10), cs=(0, 2), ks=(0, 1), rcap=(0, 200),
                      em=(0.2, 1.0), cx=(0, 20), cq=(0, 2), p0=(0, 20), pf=(0, 0.5), ps=(0, 2), pd=(0.5, 4), w0=(0, 64))
        best = differential_evolution(loss, [limits[n] for n in free], seed=1, tol=1e-8, maxiter=3000, polish=True)
        c = consts(list(best.x))
        x = [c[n] for n in NAMES]
        # as tbmodel.c will have them: 3 significant digits
        fitted[dims] = dict(zip(NAMES, (float(num(v)) for v in x)))
    print("fitted constants (tbmodel.c):")
    for dims in (2, 3):
        c = fitted[dims]
        print("  static const Consts fit%dd = { %s };" % (dims, ", ".join(num(c[n]) for n in NAMES)))
    print("\n| stencil | flags | steps | measured GCells/s | model now | off | fitted | off |")
    print("|---|---|---|---|---|---|---|---|")
    errs_now, errs_fit = [], []
    for r in rows:
        fit = predict(fitted[r["dims"]], r["steps"], r["cand"])
        on, of = r["ps"] / r["now"] - 1, r["ps"] / fit - 1  # measured time against predicted
        errs_now.append(abs(on))
        errs_fit.append(abs(of))
        print("| %s | %s | %d | %s | %.0f | %+.0f%% | %.0f | %+.0f%% |" % (r["stencil"], r["flags"] or "default", r["steps"],
              r["gcells"], 1000 / r["now"], on * 100, 1000 / fit, of * 100))
    dflt = [i for i, r in enumerate(rows) if not r["flags"]]
    for name, e in (("now", errs_now), ("fitted", errs_fit), ("now, defaults", [errs_now[i] for i in dflt]),
                    ("fitted, defaults", [errs_fit[i] for i in dflt])):
        e = sorted(e)
        print("%s: median %.0f%%, within 15%%: %d of %d, worst %.0f%%" % (name, 100 * e[len(e) // 2],
              sum(x <= 0.15 for x in e), len(e), 100 * e[-1]))


if __name__ == "__main__":
    sys.exit(main())
