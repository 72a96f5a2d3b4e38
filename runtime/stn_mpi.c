/* stn_mpi.c: decomposition, halo exchange, reductions and gathered output
 * of distributed runs (see stn_mpi.h). */
#define _POSIX_C_SOURCE 200809L
#include "stn_mpi.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void (*stn_mpi_host_copy)(const stn_field *f, void *dense);
void (*stn_mpi_grid_hook)(const int *nbr, int ndirs);

static int world_rank, world_size;
static int forced_dims[STN_MAX_RANK], nforced;   /* --ranks=PxQxR */
static const char *forced_text;

/* Each grid's decomposition. */
typedef struct decomp {
  const stn_grid *g;
  MPI_Comm cart;
  int dims[STN_MAX_RANK], coords[STN_MAX_RANK];
  int nbr[STN_MAX_RANK == 3 ? 27 : 27];    /* rank of the neighbour in each direction, or MPI_PROC_NULL */
} decomp;
static decomp decomps[16];
static int ndecomps;
static stn_mpi_xch *xch_list;

/* Staging buffers, one per direction each way (one exchange at a time). */
static char *sbuf[STN_MPI_DIRS], *rbuf[STN_MPI_DIRS];
static size_t scap[STN_MPI_DIRS], rcap[STN_MPI_DIRS];

static void mpi_check(int err, const char *what)
{
  if (err == MPI_SUCCESS)
    return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, msg, &len);
  stn_fatal("MPI: %s failed: %s", what, msg);
}

static void dist_abort(int collective)
{
  if (collective && world_size > 1 && world_rank != 0) {
    /* rank 0 reports and aborts every rank; wait for it */
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static void dist_exit(int status)
{
  MPI_Finalize();
  exit(status);
}

int stn_mpi_rank(void) { return world_rank; }

static int take_ranks_option(const char *arg)
{
  if (strncmp(arg, "--ranks=", 8) != 0)
    return 0;
  forced_text = arg + 8;
  const char *s = arg + 8;
  nforced = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || nforced == STN_MAX_RANK || (*end && *end != 'x'))
      stn_fatal("%s: expected --ranks=P, PxQ or PxQxR with positive numbers, one per grid dimension", arg);
    forced_dims[nforced++] = (int)v;
    s = *end ? end + 1 : end;
  }
  if (!nforced)
    stn_fatal("%s: expected --ranks=P, PxQ or PxQxR", arg);
  return 1;
}

static int (*next_option)(const char *arg);
static int option(const char *arg) { return take_ranks_option(arg) || (next_option && next_option(arg)); }

static void *gather_dense(const stn_field *f);
static int agree_max(int v);
#ifdef STN_HAVE_PHDF5
static long long mpio_fapl(void);
#endif

void stn_mpi_init(stn_program *p, int *argc, char ***argv)
{
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited)
    mpi_check(MPI_Init(argc, argv), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  stn_dist.rank = world_rank;
  stn_dist.size = world_size;
  stn_dist.abort = dist_abort;
  stn_dist.exit = dist_exit;
  stn_dist.agree = agree_max;
  stn_dist.gather = gather_dense;
#ifdef STN_HAVE_PHDF5
  stn_h5_fapl = mpio_fapl;
#endif
  stn_fatal_collective = 1;
  next_option = p->option;
  p->option = option;
  static char help[512];
  snprintf(help, sizeof help, "%s  --ranks=PxQxR      ranks along each grid dimension (default: MPI_Dims_create); "
                              "--ranks=P splits dimension 0 only (slabs)\n", p->option_help ? p->option_help : "");
  p->option_help = help;
}

static void finalize_at_exit(void)
{
  int done = 0;
  MPI_Finalized(&done);
  if (!done)
    MPI_Finalize();
}

void stn_mpi_lib_init(stn_program *p)
{
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    mpi_check(MPI_Init(NULL, NULL), "MPI_Init");
    atexit(finalize_at_exit);
  }
  int argc = 0;
  char **argv = NULL;
  if (!stn_dist.abort)
    stn_mpi_init(p, &argc, &argv);
  stn_fatal_collective = 1;
  const char *env = getenv("STN_RANKS");
  if (env && *env) {
    char arg[256];
    snprintf(arg, sizeof arg, "--ranks=%s", env);
    take_ranks_option(arg);
  }
}

void stn_mpi_setup_done(void) { stn_fatal_collective = 0; }

int stn_mpi_dir_index(int rank, const int *e)
{
  int idx = 0;
  for (int d = 0; d < rank; d++)
    idx = idx * 3 + e[d] + 1;
  return idx;
}

void stn_mpi_dir_of(int rank, int idx, int *e)
{
  for (int d = rank - 1; d >= 0; d--) {
    e[d] = idx % 3 - 1;
    idx /= 3;
  }
}

static decomp *decomp_of(const stn_grid *g)
{
  for (int i = 0; i < ndecomps; i++)
    if (decomps[i].g == g)
      return &decomps[i];
  stn_fatal("internal error: grid %s has no decomposition (a stencilc bug; please report it)", g->name);
}

void stn_mpi_grid_init(stn_grid *g, const char *name, int rank, const long *n, const int *halo_lo,
                       const int *halo_hi, const char *const *size_names, const int *periodic)
{
  stn_ckpt_check_grid(name, rank, n);
  /* a library's second context on the same grid reuses its communicator */
  decomp *dc = NULL;
  for (int i = 0; i < ndecomps && !dc; i++)
    if (decomps[i].g == g)
      dc = &decomps[i];
  MPI_Comm old_cart = dc ? dc->cart : MPI_COMM_NULL;
  if (!dc) {
    if (ndecomps == (int)(sizeof decomps / sizeof decomps[0]))
      stn_fatal("internal error: too many grids for the MPI runtime (a stencilc bug; please report it)");
    dc = &decomps[ndecomps++];
  }
  memset(dc, 0, sizeof *dc);
  dc->g = g;
  int dims[STN_MAX_RANK] = { 0, 0, 0 };
  if (nforced) {
    int prod = 1;
    for (int d = 0; d < nforced; d++)
      prod *= forced_dims[d];
    if (nforced > rank)
      stn_fatal("--ranks=%s names %d dimensions, but grid %s has %d", forced_text, nforced, name, rank);
    if (prod != world_size)
      stn_fatal("--ranks=%s makes %d ranks, but the program runs on %d (mpirun -np %d)", forced_text, prod,
                world_size, world_size);
    for (int d = 0; d < rank; d++)
      dims[d] = d < nforced ? forced_dims[d] : 1;
  } else {
    mpi_check(MPI_Dims_create(world_size, rank, dims), "MPI_Dims_create");
  }
  for (int d = 0; d < rank; d++)
    if (n[d] < dims[d])
      stn_fatal("grid %s: dimension %d has %ld points (from %s), fewer than the %d ranks along it%s%s; use fewer ranks "
                "along it (--ranks=...)", name, d, n[d], size_names[d], dims[d], nforced ? " from --ranks=" : "",
                nforced ? forced_text : "");
  int periods[STN_MAX_RANK] = { 0, 0, 0 };
  for (int d = 0; d < rank; d++)
    periods[d] = periodic[d];
  if (old_cart != MPI_COMM_NULL)
    MPI_Comm_free(&old_cart);
  /* reorder 0: the ranks stay MPI_COMM_WORLD's (NCCL's, on the GPU) */
  mpi_check(MPI_Cart_create(MPI_COMM_WORLD, rank, dims, periods, 0, &dc->cart), "MPI_Cart_create");
  MPI_Comm_set_errhandler(dc->cart, MPI_ERRORS_RETURN);
  mpi_check(MPI_Cart_coords(dc->cart, world_rank, rank, dc->coords), "MPI_Cart_coords");
  long local[STN_MAX_RANK], lo[STN_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    dc->dims[d] = dims[d];
    /* uneven sizes: the first n % P ranks get one point more */
    long base = n[d] / dims[d], extra = n[d] % dims[d], c = dc->coords[d];
    local[d] = base + (c < extra);
    lo[d] = c * base + (c < extra ? c : extra);
    int halo = halo_lo[d] > halo_hi[d] ? halo_lo[d] : halo_hi[d];
    if (dims[d] > 1 && base < halo)
      stn_fatal("grid %s: dimension %d (%s = %ld) split over %d ranks leaves %ld point%s on some ranks, thinner than "
                "the halo of %d point%s its kernels read past a rank's edge; use fewer ranks along dimension %d "
                "(--ranks=...) or a larger grid", name, d, size_names[d], n[d], dims[d], base, base == 1 ? "" : "s",
                halo, halo == 1 ? "" : "s", d);
  }
  stn_grid_init(g, name, rank, local, halo_lo, halo_hi, size_names);
  for (int d = 0; d < rank; d++) {
    g->global_lo[d] = lo[d];
    g->global_n[d] = n[d];
    g->wrap[d] = periodic[d];
  }
  int ndirs = 1;
  for (int d = 0; d < rank; d++)
    ndirs *= 3;
  for (int e = 0; e < ndirs; e++) {
    int dir[STN_MAX_RANK], c[STN_MAX_RANK], out = 0;
    stn_mpi_dir_of(rank, e, dir);
    for (int d = 0; d < rank; d++) {
      c[d] = dc->coords[d] + dir[d];
      if (c[d] < 0 || c[d] >= dims[d]) {
        if (periodic[d])
          c[d] = (c[d] + dims[d]) % dims[d];
        else
          out = 1;
      }
    }
    if (out)
      dc->nbr[e] = MPI_PROC_NULL;
    else
      mpi_check(MPI_Cart_rank(dc->cart, c, &dc->nbr[e]), "MPI_Cart_rank");
  }
  if (stn_mpi_grid_hook)
    stn_mpi_grid_hook(dc->nbr, ndirs);
}

void stn_mpi_local_box(const stn_grid *g, long *lo, long *hi)
{
  for (int d = 0; d < g->rank; d++) {
    long l = lo[d] - g->global_lo[d], h = hi[d] - g->global_lo[d];
    if (l < 0)
      l = 0;
    if (h > g->n[d])
      h = g->n[d];
    if (h < l)
      h = l;
    lo[d] = l;
    hi[d] = h;
  }
}

/* ---- halo exchange ------------------------------------------------------- */

/* The box of points a message in direction e carries (send: this rank's
 * own points the neighbour at e reads; recv: the ghost points on side e). */
static void msg_box(const stn_grid *g, const stn_mpi_xfield *xf, const int *e, int send, long *lo, long *hi)
{
  for (int d = 0; d < g->rank; d++) {
    long n = g->n[d];
    if (e[d] == 0) {
      lo[d] = 0;
      hi[d] = n;
    } else if (send) {
      /* the neighbour above reads our top lo[d] points below its index 0 */
      const long wl = xf->deep ? xf->deep : xf->lo[d], wh = xf->deep ? xf->deep : xf->hi[d];
      lo[d] = e[d] > 0 ? n - wl : 0;
      hi[d] = e[d] > 0 ? n : wh;
    } else {
      const long wl = xf->deep ? xf->deep : xf->lo[d], wh = xf->deep ? xf->deep : xf->hi[d];
      lo[d] = e[d] > 0 ? n : -wl;
      hi[d] = e[d] > 0 ? n + wh : 0;
    }
  }
  for (int d = g->rank; d < STN_MAX_RANK; d++) {
    lo[d] = 0;
    hi[d] = 1;
  }
}

void stn_mpi_msg_box(const stn_grid *g, const stn_mpi_xfield *xf, const int *e, int send, long *lo, long *hi)
{
  msg_box(g, xf, e, send, lo, hi);
}

MPI_Comm stn_mpi_xch_setup(stn_mpi_xch *x, int *nbr)
{
  decomp *dc = decomp_of(x->g);
  if (!x->prof.calls++) {
    x->next = xch_list;
    xch_list = x;
  }
  memcpy(nbr, dc->nbr, sizeof dc->nbr);
  return dc->cart;
}

static size_t box_points(const long *lo, const long *hi)
{
  size_t n = 1;
  for (int d = 0; d < STN_MAX_RANK; d++)
    n *= (size_t)(hi[d] > lo[d] ? hi[d] - lo[d] : 0);
  return n;
}

/* Copies a box of f's points to (pack) or from a dense buffer, row by row. */
static size_t copy_box(const stn_field *f, const long *lo, const long *hi, char *buf, int pack)
{
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long st[STN_MAX_RANK] = { 0, 0, 0 };
  for (int d = 0; d < g->rank; d++)
    st[d] = g->stride[d];
  /* the contiguous dimension is the grid's last */
  int last = g->rank - 1;
  size_t row = (size_t)(hi[last] - lo[last]) * es, off = 0;
  long olo[3] = { 0, 0, 0 }, ohi[3] = { 1, 1, 1 };
  for (int d = 0; d < last; d++) {
    olo[d] = lo[d];
    ohi[d] = hi[d];
  }
  if (!box_points(lo, hi))
    return 0;
  for (long a = olo[0]; a < ohi[0]; a++)
    for (long b = olo[1]; b < ohi[1]; b++) {
      long c = a * st[0] + b * st[1] + lo[last]; /* st of the dimensions past the rank is 0 */
      char *p = (char *)f->origin + (long)es * c;
      if (pack)
        memcpy(buf + off, p, row);
      else
        memcpy(p, buf + off, row);
      off += row;
    }
  return off;
}

static char *grow(char **buf, size_t *cap, size_t need)
{
  if (need > *cap) {
    free(*buf);
    *buf = malloc(need);
    if (!*buf)
      stn_fatal("cannot allocate %zu bytes for a halo exchange buffer", need);
    *cap = need;
  }
  return *buf;
}

/* The parts of the local box [lo, hi) a kernel computes: everything at
 * once, or with overlap (and an exchange pending) the interior first. */
void stn_mpi_split(const stn_mpi_xch *x, const long *lo, const long *hi, int any, stn_mpi_parts *parts)
{
  const stn_grid *g = x->g;
  decomp *dc = decomp_of(g);
  int rank = g->rank;
  parts->n = 1;
  parts->wait = any ? 0 : -1;
  for (int d = 0; d < STN_MAX_RANK; d++) {
    parts->lo[0][d] = d < rank ? lo[d] : 0;
    parts->hi[0][d] = d < rank ? hi[d] : 1;
  }
  if (!any || !x->overlap)
    return;
  /* interior: the points whose reads stay inside this rank's part, along
   * every side that receives ghost points */
  long in_lo[STN_MAX_RANK], in_hi[STN_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    int rlo = 0, rhi = 0;
    for (int i = 0; i < x->nfields; i++) {
      rlo = x->fields[i].lo[d] > rlo ? x->fields[i].lo[d] : rlo;
      rhi = x->fields[i].hi[d] > rhi ? x->fields[i].hi[d] : rhi;
    }
    int face[STN_MAX_RANK] = { 0, 0, 0 };
    face[d] = -1;
    int has_lo = dc->nbr[stn_mpi_dir_index(rank, face)] != MPI_PROC_NULL;
    face[d] = 1;
    int has_hi = dc->nbr[stn_mpi_dir_index(rank, face)] != MPI_PROC_NULL;
    in_lo[d] = lo[d] > (has_lo ? rlo : 0) ? lo[d] : (has_lo ? rlo : 0);
    in_hi[d] = hi[d] < g->n[d] - (has_hi ? rhi : 0) ? hi[d] : g->n[d] - (has_hi ? rhi : 0);
    if (in_hi[d] <= in_lo[d])
      return; /* no interior: wait first */
  }
  /* part 0 the interior; then per dimension the slabs below and above it,
   * over the interior of the dimensions before and the whole box after */
  int np = 0;
  for (int d = 0; d < STN_MAX_RANK; d++) {
    parts->lo[np][d] = d < rank ? in_lo[d] : 0;
    parts->hi[np][d] = d < rank ? in_hi[d] : 1;
  }
  np++;
  for (int d = 0; d < rank; d++)
    for (int side = 0; side < 2; side++) {
      for (int c = 0; c < STN_MAX_RANK; c++) {
        if (c >= rank) {
          parts->lo[np][c] = 0;
          parts->hi[np][c] = 1;
        } else if (c < d) {
          parts->lo[np][c] = in_lo[c];
          parts->hi[np][c] = in_hi[c];
        } else if (c > d) {
          parts->lo[np][c] = lo[c];
          parts->hi[np][c] = hi[c];
        } else {
          parts->lo[np][c] = side ? in_hi[c] : lo[c];
          parts->hi[np][c] = side ? hi[c] : in_lo[c];
        }
      }
      if (parts->hi[np][d] > parts->lo[np][d])
        np++;
    }
  if (np == 1) {
    /* No point of the part reads a ghost point (the kernel reads only
     * away from this rank's neighbours), but the exchange must still
     * complete here (the neighbours read ours): an empty part to wait at.
     * Without it a GPU rank never sent, and its neighbour waited forever
     * (tests/fuzz/diff --gpu, seeds 4 and 5). */
    for (int d = 0; d < STN_MAX_RANK; d++)
      parts->lo[np][d] = parts->hi[np][d] = 0;
    np++;
  }
  parts->n = np;
  parts->wait = 1;
}

void stn_mpi_region(stn_mpi_xch *x, const long *lo, const long *hi)
{
  for (int d = 0; d < x->g->rank; d++) {
    x->rlo[d] = lo[d];
    x->rhi[d] = hi[d];
  }
  x->region = 1;
}

static int rim_ok(const stn_field *f, const stn_mpi_xch *x) { return f->rim == STN_RIM_ALL || f->rim == x; }

/* How far past its reads a field reaches (the largest over the sides). */
static int reach_of(const stn_mpi_xfield *xf, int rank)
{
  int r = 0;
  if (xf->role & STN_X_NOREAD)
    return 0;
  for (int d = 0; d < rank; d++) {
    r = xf->lo[d] > r ? xf->lo[d] : r;
    r = xf->hi[d] > r ? xf->hi[d] : r;
  }
  return r;
}

/* Whether the kernel's points depend on field i's ghost points: it reads
 * it, or writes some points only, or writes its region but the ghost
 * points outside it are not known to be current. */
static int needs(const stn_mpi_xch *x, int i)
{
  const stn_mpi_xfield *xf = &x->fields[i];
  return !(xf->role & STN_X_NOREAD) || !(xf->role & STN_X_WFULL) || !rim_ok(xf->f, x);
}

/* The box E of the region past the part (ext layers on each side with a
 * neighbour) minus the part O, appended to parts as slabs. */
static void extension_parts(const stn_mpi_xch *x, stn_mpi_parts *parts)
{
  const stn_grid *g = x->g;
  decomp *dc = decomp_of(g);
  const int rank = g->rank;
  long elo[STN_MAX_RANK], ehi[STN_MAX_RANK], olo[STN_MAX_RANK], ohi[STN_MAX_RANK];
  int owned = 1;
  for (int d = 0; d < rank; d++) {
    int face[STN_MAX_RANK] = { 0, 0, 0 };
    face[d] = -1;
    const long el = dc->nbr[stn_mpi_dir_index(rank, face)] != MPI_PROC_NULL ? -x->ext : 0;
    face[d] = 1;
    const long eh = g->n[d] + (dc->nbr[stn_mpi_dir_index(rank, face)] != MPI_PROC_NULL ? x->ext : 0);
    const long rl = x->rlo[d] - g->global_lo[d], rh = x->rhi[d] - g->global_lo[d];
    elo[d] = rl > el ? rl : el;
    ehi[d] = rh < eh ? rh : eh;
    if (ehi[d] <= elo[d])
      return; /* nothing of the region there */
    olo[d] = rl > 0 ? rl : 0;
    ohi[d] = rh < g->n[d] ? rh : g->n[d];
    owned &= ohi[d] > olo[d];
  }
  if (!owned) { /* none of the region on this rank: all of E */
    int q = parts->n++;
    for (int d = 0; d < STN_MAX_RANK; d++) {
      parts->lo[q][d] = d < rank ? elo[d] : 0;
      parts->hi[q][d] = d < rank ? ehi[d] : 1;
    }
    return;
  }
  /* peel E around O, dimension by dimension */
  long clo[STN_MAX_RANK], chi[STN_MAX_RANK];
  memcpy(clo, elo, sizeof clo);
  memcpy(chi, ehi, sizeof chi);
  for (int d = 0; d < rank; d++) {
    for (int side = 0; side < 2; side++) {
      const long a = side ? ohi[d] : clo[d], b = side ? chi[d] : olo[d];
      if (b <= a)
        continue;
      int q = parts->n++;
      for (int c = 0; c < STN_MAX_RANK; c++) {
        parts->lo[q][c] = c >= rank ? 0 : c == d ? a : clo[c];
        parts->hi[q][c] = c >= rank ? 1 : c == d ? b : chi[c];
      }
    }
    clo[d] = olo[d];
    chi[d] = ohi[d];
  }
}

int stn_mpi_plan(stn_mpi_xch *x, const long *lo, const long *hi, stn_mpi_parts *parts)
{
  const int rank = x->g->rank;
  int any = 0;
  x->ext = 0;
  if (!x->deep) {
    for (int i = 0; i < x->nfields; i++) {
      x->sel[i] = !x->fields[i].f->halo_ok;
      any |= x->sel[i];
    }
    stn_mpi_split(x, lo, hi, any, parts);
    parts->nown = parts->n;
    return any;
  }
  /* Exchange when some input lacks the layers its reads need; then every
   * input short of the full depth, once. The layers are the same on every
   * rank, so every rank decides alike. */
  int fail = 0, writes = 0;
  for (int i = 0; i < x->nfields; i++) {
    x->sel[i] = 0;
    writes |= x->fields[i].role & (STN_X_WFULL | STN_X_WPART);
    if (needs(x, i) && x->fields[i].f->halo_ok < reach_of(&x->fields[i], rank))
      fail = 1;
  }
  for (int i = 0; i < x->nfields && fail; i++) {
    x->sel[i] = needs(x, i) && x->fields[i].f->halo_ok < x->deep;
    any |= x->sel[i];
  }
  /* past the part: as many layers as every input still has beyond its reach */
  int ext = x->deep;
  for (int i = 0; i < x->nfields; i++)
    if (needs(x, i)) {
      const int have = x->sel[i] ? x->deep : x->fields[i].f->halo_ok, e = have - reach_of(&x->fields[i], rank);
      ext = e < ext ? e : ext;
    }
  x->ext = writes && ext > 0 ? ext : 0;
  stn_mpi_split(x, lo, hi, any, parts);
  parts->nown = parts->n;
  if (x->ext && x->region)
    extension_parts(x, parts);
  return any;
}

void stn_mpi_exchanged(stn_mpi_xch *x)
{
  for (int i = 0; i < x->nfields; i++)
    if (x->sel[i]) {
      stn_field *f = x->fields[i].f;
      f->halo_ok = x->deep ? x->deep : 1;
      if (x->deep)
        f->rim = STN_RIM_ALL;
    }
}

void stn_mpi_wrote_deep(const stn_mpi_xch *x)
{
  for (int i = 0; i < x->nfields; i++) {
    const stn_mpi_xfield *xf = &x->fields[i];
    stn_field *f = xf->f;
    if (!(xf->role & (STN_X_WFULL | STN_X_WPART)))
      continue;
    /* the region's points are current x->ext layers deep; the points it
     * does not write keep what they had */
    const int full = (xf->role & STN_X_WFULL) && rim_ok(f, x);
    f->halo_ok = full || f->halo_ok > x->ext ? x->ext : f->halo_ok;
    f->rim = rim_ok(f, x) ? x : NULL;
  }
}

void stn_mpi_begin(stn_mpi_xch *x, const long *lo, const long *hi, stn_mpi_parts *parts)
{
  const stn_grid *g = x->g;
  decomp *dc = decomp_of(g);
  int rank = g->rank, ndirs = rank == 1 ? 3 : rank == 2 ? 9 : 27;
  if (!x->prof.calls++ ) {
    x->next = xch_list;
    xch_list = x;
  }
  if (x->pending)
    stn_fatal("internal error in the --mpi runtime: kernel %s starts an exchange while its last one was never "
              "completed (please report it with the .stn file)", x->kernel);
  const int any = stn_mpi_plan(x, lo, hi, parts);
  x->pending = any;
  x->nreq = 0;
  if (!any)
    return;
  x->prof.exchanges++;
  double t0 = stn_time();
  x->t_post = t0;
  for (int e = 0; e < ndirs; e++) {
    if (e == ndirs / 2)
      continue;
    int dir[STN_MAX_RANK], back[STN_MAX_RANK];
    stn_mpi_dir_of(rank, e, dir);
    for (int d = 0; d < rank; d++)
      back[d] = -dir[d];
    int eb = stn_mpi_dir_index(rank, back);
    /* receive the ghost points on side e from the neighbour there */
    if (dc->nbr[e] != MPI_PROC_NULL) {
      size_t bytes = 0;
      for (int i = 0; i < x->nfields; i++)
        if (x->sel[i] && (x->fields[i].dirs >> e & 1)) {
          long blo[3], bhi[3];
          msg_box(g, &x->fields[i], dir, 0, blo, bhi);
          bytes += box_points(blo, bhi) * stn_type_size(x->fields[i].f->type);
        }
      if (bytes) {
        grow(&rbuf[e], &rcap[e], bytes);
        mpi_check(MPI_Irecv(rbuf[e], (int)bytes, MPI_BYTE, dc->nbr[e], eb, dc->cart, &x->req[x->nreq++]), "MPI_Irecv");
      }
    }
  }
  for (int e = 0; e < ndirs; e++) {
    if (e == ndirs / 2 || dc->nbr[e] == MPI_PROC_NULL)
      continue;
    int dir[STN_MAX_RANK], back[STN_MAX_RANK];
    stn_mpi_dir_of(rank, e, dir);
    for (int d = 0; d < rank; d++)
      back[d] = -dir[d];
    int eb = stn_mpi_dir_index(rank, back);
    /* send what the neighbour at e reads on its side -e */
    size_t bytes = 0;
    for (int i = 0; i < x->nfields; i++)
      if (x->sel[i] && (x->fields[i].dirs >> eb & 1)) {
        long blo[3], bhi[3];
        msg_box(g, &x->fields[i], dir, 1, blo, bhi);
        bytes += box_points(blo, bhi) * stn_type_size(x->fields[i].f->type);
      }
    if (!bytes)
      continue;
    char *buf = grow(&sbuf[e], &scap[e], bytes);
    size_t off = 0;
    for (int i = 0; i < x->nfields; i++)
      if (x->sel[i] && (x->fields[i].dirs >> eb & 1)) {
        long blo[3], bhi[3];
        msg_box(g, &x->fields[i], dir, 1, blo, bhi);
        off += copy_box(x->fields[i].f, blo, bhi, buf + off, 1);
      }
    x->prof.bytes += (double)bytes;
    mpi_check(MPI_Isend(buf, (int)bytes, MPI_BYTE, dc->nbr[e], e, dc->cart, &x->req[x->nreq++]), "MPI_Isend");
  }
  double t1 = stn_time();
  x->prof.pack += t1 - t0;
  x->t_post = t1;
}

void stn_mpi_end(stn_mpi_xch *x)
{
  if (!x->pending)
    return;
  const stn_grid *g = x->g;
  decomp *dc = decomp_of(g);
  int rank = g->rank, ndirs = rank == 1 ? 3 : rank == 2 ? 9 : 27;
  double t0 = stn_time();
  mpi_check(MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE), "MPI_Waitall (halo exchange)");
  double t1 = stn_time();
  for (int e = 0; e < ndirs; e++) {
    if (e == ndirs / 2 || dc->nbr[e] == MPI_PROC_NULL)
      continue;
    int dir[STN_MAX_RANK];
    stn_mpi_dir_of(rank, e, dir);
    size_t off = 0;
    for (int i = 0; i < x->nfields; i++)
      if (x->sel[i] && (x->fields[i].dirs >> e & 1)) {
        long blo[3], bhi[3];
        msg_box(g, &x->fields[i], dir, 0, blo, bhi);
        off += copy_box(x->fields[i].f, blo, bhi, rbuf[e] + off, 0);
      }
  }
  stn_mpi_exchanged(x);
  double t2 = stn_time();
  x->prof.wait += t1 - t0;
  x->prof.flight += t1 - x->t_post;
  x->prof.unpack += t2 - t1;
  x->pending = 0;
}

/* ---- reductions ---------------------------------------------------------- */

static MPI_Op op_of(int op) { return op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN; }

double stn_mpi_reduce_double(double v, int op)
{
  double r;
  mpi_check(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, op_of(op), MPI_COMM_WORLD), "MPI_Allreduce");
  return r;
}

float stn_mpi_reduce_float(float v, int op)
{
  float r;
  mpi_check(MPI_Allreduce(&v, &r, 1, MPI_FLOAT, op_of(op), MPI_COMM_WORLD), "MPI_Allreduce");
  return r;
}

int stn_mpi_reduce_int(int v, int op)
{
  int r;
  mpi_check(MPI_Allreduce(&v, &r, 1, MPI_INT, op_of(op), MPI_COMM_WORLD), "MPI_Allreduce");
  return r;
}

double stn_mpi_xsum(stn_xsum *x)
{
  stn_xsum_carry(x);
  stn_xsum all;
  mpi_check(MPI_Allreduce(x->d, all.d, STN_XSUM_DIGITS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce (exact sum)");
  mpi_check(MPI_Allreduce(&x->special, &all.special, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD), "MPI_Allreduce");
  if (all.special & 4 || (all.special & 3) == 3)
    return NAN;
  if (all.special)
    return all.special & 1 ? INFINITY : -INFINITY;
  return stn_xsum_value(&all);
}

/* ---- output -------------------------------------------------------------- */

/* This rank's points of f, dense in host memory (malloc'd; *points: how many). */
static char *local_points(const stn_field *f, size_t *points)
{
  size_t mine = 1;
  for (int d = 0; d < f->grid->rank; d++)
    mine *= (size_t)f->grid->n[d];
  char *dense = malloc(mine * stn_type_size(f->type) + 1);
  if (!dense)
    stn_fatal("cannot allocate %zu bytes for field '%s''s points", mine * stn_type_size(f->type), f->name);
  if (stn_mpi_host_copy)
    stn_mpi_host_copy(f, dense);
  else
    stn_field_get(f, dense);
  *points = mine;
  return dense;
}

/* The whole field on rank 0 (a field on a grid without halo), NULL elsewhere. */
static stn_field *gather(const stn_field *f)
{
  const stn_grid *g = f->grid;
  decomp *dc = decomp_of(g);
  size_t es = stn_type_size(f->type), mine;
  char *dense = local_points(f, &mine);
  long box[2 * STN_MAX_RANK];
  for (int d = 0; d < STN_MAX_RANK; d++) {
    box[d] = d < g->rank ? g->global_lo[d] : 0;
    box[STN_MAX_RANK + d] = d < g->rank ? g->n[d] : 1;
  }
  int size;
  MPI_Comm_size(dc->cart, &size);
  int me;
  MPI_Comm_rank(dc->cart, &me);
  long *boxes = me == 0 ? malloc(sizeof(long) * 2 * STN_MAX_RANK * (size_t)size) : NULL;
  mpi_check(MPI_Gather(box, 2 * STN_MAX_RANK, MPI_LONG, boxes, 2 * STN_MAX_RANK, MPI_LONG, 0, dc->cart), "MPI_Gather");
  int *counts = NULL, *displs = NULL;
  char *all = NULL;
  stn_field *out = NULL;
  if (me == 0) {
    counts = malloc(sizeof(int) * (size_t)size);
    displs = malloc(sizeof(int) * (size_t)size);
    size_t total = 0;
    for (int r = 0; r < size; r++) {
      size_t pts = 1;
      for (int d = 0; d < STN_MAX_RANK; d++)
        pts *= (size_t)boxes[r * 2 * STN_MAX_RANK + STN_MAX_RANK + d];
      if (pts * es > (size_t)2147483647 || total * es > (size_t)2147483647)
        stn_fatal("field '%s' is too large to gather on one rank (more than 2 GiB per message)", f->name);
      counts[r] = (int)(pts * es);
      displs[r] = (int)(total * es);
      total += pts;
    }
    all = malloc(total * es + 1);
    if (!all || !counts || !displs)
      stn_fatal("cannot allocate %zu bytes to gather field '%s' on rank 0", total * es, f->name);
  }
  mpi_check(MPI_Gatherv(dense, (int)(mine * es), MPI_BYTE, all, counts, displs, MPI_BYTE, 0, dc->cart), "MPI_Gatherv");
  free(dense);
  if (me == 0) {
    stn_grid *whole = calloc(1, sizeof *whole);
    out = calloc(1, sizeof *out);
    int zero[STN_MAX_RANK] = { 0, 0, 0 };
    const char *names[STN_MAX_RANK] = { "n0", "n1", "n2" };
    stn_grid_init(whole, g->name, g->rank, g->global_n, zero, zero, names);
    stn_field_alloc(out, f->name, f->type, whole);
    for (int r = 0; r < size; r++) {
      const long *b = &boxes[r * 2 * STN_MAX_RANK];
      long lo[3], hi[3];
      for (int d = 0; d < STN_MAX_RANK; d++) {
        lo[d] = d < g->rank ? b[d] : 0;
        hi[d] = d < g->rank ? b[d] + b[STN_MAX_RANK + d] : 1;
      }
      copy_box(out, lo, hi, all + displs[r], 0);
    }
    free(all);
    free(counts);
    free(displs);
    free(boxes);
  }
  return out;
}

static void free_gathered(stn_field *w)
{
  if (!w)
    return;
  stn_grid *g = w->grid;
  stn_field_free(w);
  free(w);
  free(g);
}

/* stn_dist.gather: the whole field's points, dense, on rank 0. */
static void *gather_dense(const stn_field *f)
{
  stn_field *w = gather(f);
  if (!w)
    return NULL;
  size_t bytes = stn_type_size(f->type);
  for (int d = 0; d < f->grid->rank; d++)
    bytes *= (size_t)f->grid->global_n[d];
  void *dense = malloc(bytes + 1);
  if (!dense)
    stn_fatal("out of memory gathering field '%s'", f->name);
  stn_field_get(w, dense);
  free_gathered(w);
  return dense;
}

static int agree_max(int v)
{
  int out = v;
  mpi_check(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce (checkpoint)");
  return out;
}

#ifdef STN_HAVE_PHDF5
#include <hdf5.h>
/* Parallel HDF5: the file opened by every rank through MPI-IO. */
static long long mpio_fapl(void)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  return (long long)fapl;
}
#endif

void stn_mpi_field_write(const stn_field *f, const char *path)
{
  size_t len = strlen(path);
  if (stn_h5_fapl && len > 3 && strcmp(path + len - 3, ".h5") == 0) {
    /* one file from every rank: each writes its own part */
    size_t points;
    char *dense = local_points(f, &points);
    const char *why = "";
    if (!stn_h5_write_part(f, path, dense, &why) && world_rank == 0)
      fprintf(stderr, "error: cannot write field '%s' to '%s': %s\n", f->name, path, why);
    free(dense);
    return;
  }
  stn_field *w = gather(f);
  if (w)
    stn_field_write(w, path);
  free_gathered(w);
}

void stn_mpi_field_write_image(const stn_field *f, const char *path, double lo, double hi, const char *colormap)
{
  stn_field *w = gather(f);
  if (w)
    stn_field_write_image(w, path, lo, hi, colormap);
  free_gathered(w);
}

static void exchange_profile(void)
{
  if (!stn_profiling || !xch_list)
    return;
  /* each kernel's exchange: the largest time over the ranks */
  if (world_rank == 0)
    fprintf(stderr, "halo exchanges (%d ranks; seconds are the largest over the ranks):\n%-22s %8s %10s %9s %9s %9s "
                    "%9s %8s\n", world_size, "kernel", "exchanges", "MB sent", "pack ms", "wait ms", "unpack ms",
            "flight ms", "% hidden");
  for (stn_mpi_xch *x = xch_list; x; x = x->next) {
    double mine[5] = { x->prof.pack, x->prof.wait, x->prof.unpack, x->prof.flight, x->prof.bytes }, most[5];
    MPI_Reduce(mine, most, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (world_rank == 0 && x->prof.exchanges) /* (the same count on every rank) */
      fprintf(stderr, "%-22s %8ld %10.2f %9.3f %9.3f %9.3f %9.3f %7.1f%%\n", x->kernel, x->prof.exchanges,
              most[4] / 1e6, 1e3 * most[0], 1e3 * most[1], 1e3 * most[2], 1e3 * most[3],
              most[3] > 0 ? 100.0 * (1.0 - most[1] / most[3]) : 0.0);
  }
}

void stn_mpi_finish(stn_program *p)
{
  if (world_rank == 0)
    stn_prof_report(p);
  exchange_profile();
  const char *field, *path;
  for (int s = 0; stn_save_request(s, &field, &path); s++)
    for (int i = 0; i < p->nfields; i++)
      if (strcmp(p->fields[i]->name, field) == 0)
        stn_mpi_field_write(p->fields[i], path);
  stn_profiling = 0;
  stn_save_clear();
  stn_finish(p);
  MPI_Finalize();
}
