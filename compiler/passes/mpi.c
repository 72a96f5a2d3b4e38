/* mpi.c: the distributed-run decisions (--mpi). Per kernel, which fields
 * are exchanged with the neighbouring ranks before it runs, how wide and on
 * which sides (faces always, edges and corners only where a read is
 * diagonal), and whether it computes its interior while the halos travel.
 * Per grid, the decomposition the report shows: the params' defaults on
 * --ranks ranks, split the way the runtime splits them (MPI_Dims_create,
 * or the --ranks factors). Periodic dimensions move from the kernels to
 * the exchange: a read past the edge reads the halo, which the wrapping
 * neighbour (possibly the rank itself) fills, so every CUDA strategy
 * serves periodic grids too. Without --mpi the pass does nothing. */
#include "passes/passes.h"
#include <stdlib.h>
#include <string.h>

/* MPI_Dims_create's result for p ranks over r dimensions: as equal as
 * possible, in non-increasing order. */
static void dims_create(int p, int r, int *dims)
{
  int best[MAX_RANK] = { p, 1, 1 }, cur[MAX_RANK];
  long best_spread = -1;
  /* every factorisation in non-increasing order; the smallest largest factor wins */
  for (int a = p; a >= 1; a--) {
    if (p % a)
      continue;
    for (int b = r >= 2 ? a : 1; b >= 1; b--) {
      if ((p / a) % b || (r < 2 && b != 1))
        continue;
      int c = p / a / b;
      if (r < 3 && c != 1)
        continue;
      if (c > b || b > a)
        continue;
      cur[0] = a;
      cur[1] = b;
      cur[2] = c;
      long spread = a - (r == 3 ? c : r == 2 ? b : a);
      if (best_spread < 0 || spread < best_spread) {
        best_spread = spread;
        memcpy(best, cur, sizeof best);
      }
    }
  }
  for (int d = 0; d < r; d++)
    dims[d] = best[d];
}

static int dir_index(int rank, const int *side)
{
  int idx = 0;
  for (int d = 0; d < rank; d++)
    idx = idx * 3 + side[d] + 1;
  return idx;
}

/* The ghost regions a read at offset off touches near the edges: every
 * combination of its nonzero sides (a diagonal read touches the faces
 * too, at points next to one edge only). */
static unsigned dirs_of(int rank, const int *off)
{
  unsigned dirs = 0;
  int combos = 1 << rank;
  for (int m = 1; m < combos; m++) {
    int side[MAX_RANK] = { 0, 0, 0 }, ok = 1;
    for (int d = 0; d < rank; d++)
      if (m >> d & 1) {
        if (!off[d])
          ok = 0;
        side[d] = off[d] < 0 ? -1 : 1;
      }
    if (ok)
      dirs |= 1u << dir_index(rank, side);
  }
  return dirs;
}

static void exchanges(IrProgram *p, IrKernel *k)
{
  for (int i = 0; i < k->nodes.len; i++) {
    const IrNode *n = &k->nodes.data[i];
    if (n->op != OP_LOAD)
      continue;
    int any = 0;
    for (int d = 0; d < k->rank; d++)
      any |= n->off[d] != 0;
    if (!any)
      continue;
    IrXField *x = NULL;
    for (int j = 0; j < k->xch.len; j++)
      if (k->xch.data[j].field == n->ref)
        x = &k->xch.data[j];
    if (!x) {
      IrXField nx = { .field = n->ref };
      vec_push(&k->xch, nx);
      x = &k->xch.data[k->xch.len - 1];
    }
    for (int d = 0; d < k->rank; d++) {
      if (n->off[d] < 0 && -n->off[d] > x->lo[d])
        x->lo[d] = -n->off[d];
      if (n->off[d] > 0 && n->off[d] > x->hi[d])
        x->hi[d] = n->off[d];
    }
    x->dirs |= dirs_of(k->rank, n->off);
  }
  if (!k->xch.len) /* k->overlap stays: pass_mpi_deep may give it an exchange */
    k->overlap_why = "no exchange: it reads no field at an offset";
}


/* What a rank with neighbours on every side sends per exchange, per
 * direction, for the grid's largest part (stn_mpi.c's msg_box). */
static void exchange_bytes(const IrProgram *p, IrKernel *k)
{
  const IrGrid *g = &p->grids.data[k->grid];
  int ndirs = k->rank == 1 ? 3 : k->rank == 2 ? 9 : 27;
  for (int e = 0; e < ndirs; e++) {
    int side[MAX_RANK], x = e, out = 0;
    for (int d = k->rank - 1; d >= 0; d--, x /= 3)
      side[d] = x % 3 - 1;
    int back = 0;
    for (int d = 0; d < k->rank; d++) {
      back = back * 3 + (-side[d]) + 1;
      out |= side[d] && g->ranks[d] == 1 && !g->wrap[d];   /* no neighbour there */
    }
    if (e == ndirs / 2 || out || !g->part[0])
      continue;
    for (int i = 0; i < k->xch.len; i++) {
      const IrXField *xf = &k->xch.data[i];
      if (!(xf->dirs >> back & 1))
        continue;
      int reach = 0; /* deep: a field read at its points only travels once */
      for (int d = 0; d < k->rank; d++)
        reach |= xf->lo[d] | xf->hi[d];
      if (k->deep && !reach)
        continue;
      double pts = 1;
      for (int d = 0; d < k->rank; d++)
        pts *= side[d] == 0 ? (double)g->part[d] : k->deep ? k->deep : side[d] > 0 ? xf->lo[d] : xf->hi[d];
      k->xbytes[e] += pts * (double)type_bytes(p->fields.data[xf->field].ty);
    }
  }
}

void pass_mpi(IrProgram *p, const PassOptions *o)
{
  /* --deterministic-reductions: exact sums on the CPU, with or without
   * --mpi, so the single-process program agrees with every rank count;
   * on CUDA with --mpi (integer digits per block, runtime/stn_cuda.h),
   * without it the fixed-order block partials, deterministic run to run */
  p->mpi_exact = o->mpi_exact && (o->target != TARGET_CUDA || o->mpi);
  if (!o->mpi)
    return;
  p->mpi = 1;
  p->mpi_ranks = o->mpi_ranks[0] ? 1 : 4;
  p->link_bw = o->link_bw > 0 ? o->link_bw : 25.0;
  for (int d = 0; d < MAX_RANK && o->mpi_ranks[d]; d++)
    p->mpi_ranks *= o->mpi_ranks[d];
  for (int g = 0; g < p->grids.len; g++) {
    IrGrid *gr = &p->grids.data[g];
    if (o->mpi_ranks[0])
      for (int d = 0; d < gr->rank; d++)
        gr->ranks[d] = o->mpi_ranks[d] ? o->mpi_ranks[d] : 1;
    else
      dims_create(p->mpi_ranks, gr->rank, gr->ranks);
    for (int d = 0; d < gr->rank; d++) {
      gr->wrap[d] = gr->periodic[d];
      gr->periodic[d] = 0;
    }
    for (int d = 0; d < gr->rank; d++) {
      double n;
      if (!ir_eval_default(p, &p->host, gr->dims[d], &n) || n < 1) {
        gr->part[0] = 0;
        break;
      }
      gr->part[d] = ((long)n + gr->ranks[d] - 1) / gr->ranks[d];
    }
  }
  for (int i = 0; i < p->kernels.len; i++) {
    IrKernel *k = p->kernels.data[i];
    k->overlap = !o->no_overlap;
    k->overlap_why = o->no_overlap ? "-fno-overlap: it waits for the halos, then computes" : NULL;
    exchanges(p, k);
    exchange_bytes(p, k);
    if (k->xch.len && k->overlap)
      k->overlap_why = "its interior (the points whose reads stay on the rank) while the halos travel, then the shell";
  }
}

/* --tb across ranks: every field the kernel reads (its reach, 0 at its
 * points) or writes (fully or through a predicate), in every direction. */
static void deep_exchanges(IrProgram *p, IrKernel *k)
{
  unsigned all = 0;
  int ndirs = k->rank == 1 ? 3 : k->rank == 2 ? 9 : 27;
  for (int e = 0; e < ndirs; e++)
    if (e != ndirs / 2)
      all |= 1u << e;
  for (int f = 0; f < p->fields.len; f++) {
    int reads = 0, full = 0, part = 0;
    IrXField nx = { .field = f, .dirs = all };
    for (int i = 0; i < k->nodes.len; i++) {
      const IrNode *n = &k->nodes.data[i];
      if (n->op != OP_LOAD || n->ref != f)
        continue;
      reads = 1;
      for (int d = 0; d < k->rank; d++) {
        if (-n->off[d] > nx.lo[d])
          nx.lo[d] = -n->off[d];
        if (n->off[d] > nx.hi[d])
          nx.hi[d] = n->off[d];
      }
    }
    for (int i = 0; i < k->effects.len; i++) {
      const IrEffect *e = &k->effects.data[i];
      if (e->kind == EFF_STORE && e->ref == f)
        *(e->pred < 0 ? &full : &part) = 1;
    }
    if (!reads && !full && !part)
      continue;
    nx.role = (full ? XF_WFULL : 0) | (part && !full ? XF_WPART : 0) | (reads ? 0 : XF_NOREAD);
    vec_push(&k->xch, nx);
  }
}

void pass_mpi_deep(IrProgram *p)
{
  for (int g = 0; g < p->grids.len; g++) {
    IrGrid *gr = &p->grids.data[g];
    if (!gr->ca_steps)
      continue;
    /* T steps of the kernel with the widest reach on the grid */
    int reach = 1;
    for (int i = 0; i < p->kernels.len; i++) {
      const IrKernel *k = p->kernels.data[i];
      for (int j = 0; j < k->xch.len && k->grid == g; j++)
        for (int d = 0; d < k->rank; d++) {
          reach = k->xch.data[j].lo[d] > reach ? k->xch.data[j].lo[d] : reach;
          reach = k->xch.data[j].hi[d] > reach ? k->xch.data[j].hi[d] : reach;
        }
    }
    gr->deep = gr->ca_steps * reach;
    for (int d = 0; d < gr->rank; d++) {
      gr->halo_lo[d] = gr->halo_lo[d] > gr->deep ? gr->halo_lo[d] : gr->deep;
      gr->halo_hi[d] = gr->halo_hi[d] > gr->deep ? gr->halo_hi[d] : gr->deep;
    }
    for (int i = 0; i < p->kernels.len; i++) {
      IrKernel *k = p->kernels.data[i];
      if (k->grid != g)
        continue;
      k->deep = gr->deep;
      k->xch.len = 0;
      deep_exchanges(p, k);
      if (!k->xch.len) { /* it reads and writes no field (a reduction of positions): nothing to keep deep */
        k->deep = 0;
        continue;
      }
      memset(k->xbytes, 0, sizeof k->xbytes);
      exchange_bytes(p, k);
      int reach = 0;
      for (int j = 0; j < k->xch.len; j++)
        for (int d = 0; d < k->rank; d++)
          reach |= k->xch.data[j].lo[d] | k->xch.data[j].hi[d];
      if (!k->overlap)
        k->overlap_why = "-fno-overlap: it waits for the halos, then computes";
      else
        k->overlap_why = reach ? "its interior (the points whose reads stay on the rank) while the halos travel, then "
                                 "the shell and the points past its part it computes for the next steps"
                               : "its part while the halos travel (it reads no field at an offset), then the points "
                                 "past its part";
    }
  }
}
