#!/usr/bin/env python3
"""bench/model.py: predicted parallel efficiency of a stencilc --mpi run on
P GPUs, from times measured on one GPU and on two (docs/mpi.md, "Planning
beyond one host").

For a grid of N0 x N1 x N2 points split as MPI_Dims_create splits it over
P ranks, one step on a rank takes

    t(P) = t1 / P                       its share of the one-GPU step
         + step overhead                (launching the step in parts)
         + pack + unpack                (kernels; scale with the halo bytes)
         + max(0, x(P) - interior(P))   the exchange not hidden (overlap), or
           x(P)                         all of it (-fno-overlap)

    x(P) = bytes(P) / bandwidth + latency + messages(P) * overhead

(the messages of an exchange are posted together, so their latencies
overlap; each still costs a software overhead; with --parallel-links,
GPUs joined pairwise by NVLink, bytes(P) is the largest message, since
the neighbours' messages travel side by side)

with bytes(P) what the largest part sends per step (the faces and edges
its kernel reads; stencilc --mpi --report prints them for a given
--ranks), and interior(P) the part of t1 / P spent on points that read no
ghost point. Efficiency E(P) = t1 / (P t(P)).

usage: model.py --t1 MS --halo-bytes-per-point B --grid N0xN1xN2
                [--reach R] [--edges] [--bandwidth GB/s] [--latency US] [--overhead US] [--pack-gbs GB/s]
                [--step-overhead US] [--slabs] [--parallel-links] [--no-overlap] [--ranks 2,8,64,512]
"""
import argparse


def dims_create(p, r):
    """MPI_Dims_create: factors as equal as possible, non-increasing."""
    best = None
    def rec(rem, k, prefix):
        nonlocal best
        if k == 1:
            f = prefix + [rem]
            if f == sorted(f, reverse=True):
                spread = f[0] - f[-1]
                if best is None or spread < best[0]:
                    best = (spread, f)
            return
        for a in range(rem, 0, -1):
            if rem % a == 0:
                rec(rem // a, k - 1, prefix + [a])
    rec(p, r, [])
    return best[1]


def model(a, p):
    n = a.grid
    d = [p] + [1] * (len(n) - 1) if a.slabs else dims_create(p, len(n))
    part = [-(-n[i] // d[i]) for i in range(len(n))]  # the largest part
    pts = 1
    for x in part:
        pts *= x
    # the largest part's neighbours: both sides along a dimension split in
    # 3 or more, one side where it is split in 2 (edges alike)
    side = [0 if d[i] == 1 else 1 if d[i] == 2 else 2 for i in range(len(n))]
    faces = edges = 0.0
    msgs = 0
    biggest = 0.0  # the largest single message, points
    for i in range(len(n)):
        if side[i]:
            face = a.reach * pts / part[i]
            faces += side[i] * face
            msgs += side[i]
            biggest = max(biggest, face)
    if a.edges:  # Himeno's 19 points read the 12 edges
        for i in range(len(n)):
            for j in range(i + 1, len(n)):
                if side[i] and side[j]:
                    edges += side[i] * side[j] * a.reach * a.reach * pts / part[i] / part[j]
                    msgs += side[i] * side[j]
    halo = (faces + edges) * a.halo_bytes_per_point
    wire = biggest * a.halo_bytes_per_point if a.parallel_links else halo
    x = wire / (a.bandwidth * 1e9) + a.latency * 1e-6 + msgs * a.overhead * 1e-6
    comp = a.t1 * 1e-3 / p
    shell = 1.0
    for i in range(len(n)):
        shell *= max(0.0, 1 - side[i] * a.reach / part[i])
    interior = comp * shell
    pack = 2 * halo / (a.pack_gbs * 1e9)
    exposed = x if a.no_overlap else max(0.0, x - interior)
    t = comp + a.step_overhead * 1e-6 + pack + exposed
    return d, part, halo, x, t, (a.t1 * 1e-3) / (p * t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--t1", type=float, required=True, help="ms per step on one GPU (measured)")
    ap.add_argument("--halo-bytes-per-point", type=float, required=True,
                    help="bytes exchanged per ghost point (Himeno: 4, one float field)")
    ap.add_argument("--grid", required=True, help="N0xN1xN2")
    ap.add_argument("--reach", type=int, default=1)
    ap.add_argument("--edges", action="store_true", help="the kernel reads edges too (Himeno)")
    ap.add_argument("--bandwidth", type=float, default=25.0, help="link GB/s per rank (default 25: HDR InfiniBand)")
    ap.add_argument("--latency", type=float, default=3.0, help="microseconds, once per exchange")
    ap.add_argument("--overhead", type=float, default=0.5, help="microseconds per message")
    ap.add_argument("--pack-gbs", type=float, default=1000.0, help="pack/unpack kernels' GB/s")
    ap.add_argument("--step-overhead", type=float, default=0.0,
                    help="microseconds per step for launching it in parts (interior, shell)")
    ap.add_argument("--slabs", action="store_true", help="split dimension 0 only (--ranks=P)")
    ap.add_argument("--parallel-links", action="store_true",
                    help="each neighbour over a link of its own (NVLink): the largest message sets the time, "
                         "not the sum")
    ap.add_argument("--no-overlap", action="store_true")
    ap.add_argument("--ranks", default="2,8,64,512")
    a = ap.parse_args()
    a.grid = [int(x) for x in a.grid.split("x")]
    print(f"{'GPUs':>6} {'ranks':>10} {'part':>16} {'halo MB':>9} {'exchange ms':>12} {'step ms':>9} {'efficiency':>10}")
    for p in (int(x) for x in a.ranks.split(",")):
        d, part, halo, x, t, e = model(a, p)
        print(f"{p:>6} {'x'.join(map(str, d)):>10} {'x'.join(map(str, part)):>16} {halo / 1e6:>9.3f} {x * 1e3:>12.4f} "
              f"{t * 1e3:>9.4f} {100 * e:>9.1f}%")


if __name__ == "__main__":
    main()
