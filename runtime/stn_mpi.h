/* stn_mpi.h: distributed runs (stencilc --mpi; libstn_mpi.a, built with
 * Open MPI's mpicc). Each grid is split over a Cartesian communicator; a
 * rank's stn_grid holds its own points (n, global_lo) with the usual halo
 * around them, and the generated kernels loop over their region's part on
 * this rank in local indices, computing positions as global ones.
 *
 * Halo exchange: before a kernel that reads fields at offsets, the fields
 * it reads whose ghost points are stale (halo_ok == 0: written since their
 * last exchange) are exchanged with the neighbours: only the sides the
 * kernel reads (faces, and edges or corners only when it reads
 * diagonally), every field of the kernel in one message per neighbour,
 * non-blocking. With overlap the kernel computes the part of its region
 * that reads no ghost point while the messages travel (stn_mpi_begin),
 * then waits (stn_mpi_end) and computes the shell. Periodic dimensions
 * wrap through the communicator; ghost points at the grid's physical
 * edges keep their boundary values.
 *
 * Temporal blocking across ranks (--tb=T, communication-avoiding): a grid's
 * halos are D = T x reach deep and the exchange sends them whole, once
 * every T steps. A field's halo_ok counts the layers of its ghost points
 * that are current; a kernel that reads f at reach r needs r of them, and
 * computes past its part (into its ghost points, on the sides that have a
 * neighbour rank, and inside the kernel's region) by as many layers e as
 * its inputs allow (each field's current layers minus its reach), so that
 * what it writes stays current e layers deep and the next step needs no
 * exchange. Only what every rank decides alike goes into these decisions
 * (the layers, never a rank's place), so neighbours always agree on
 * whether they exchange. The ghost points outside a kernel's region (at
 * the physical edges of the neighbours' parts) are not recomputed: a
 * field's rim says whose writes left them current (STN_RIM_ALL after an
 * exchange). Reductions count the rank's own points only (parts.nown).
 * See docs/mpi.md. */
#ifndef STN_MPI_H
#define STN_MPI_H
#include "stn.h"
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STN_MPI_DIRS 27            /* 3^rank neighbour directions, the centre included */

/* Sets MPI up and reads --ranks=PxQxR out of argv (before stn_init). */
void stn_mpi_init(stn_program *p, int *argc, char ***argv);
/* Library mode (--emit=lib --mpi): MPI_Init unless the host program has
 * called it (then MPI_Finalize at exit), --ranks from STN_RANKS=PxQxR. */
void stn_mpi_lib_init(stn_program *p);
/* stn_grid_init for this rank's part of the grid: decomposes it (after
 * --ranks, or MPI_Dims_create), checks that every part is at least as
 * thick as the halo, and allocates nothing. periodic[d]: dimension d wraps. */
void stn_mpi_grid_init(stn_grid *g, const char *name, int rank, const long *n, const int *halo_lo,
                       const int *halo_hi, const char *const *size_names, const int *periodic);
/* The grids are set up: errors are now a rank's own (stn_fatal_collective off). */
void stn_mpi_setup_done(void);
/* A region given in global indices [lo, hi) becomes this rank's part of it,
 * in local indices (empty: lo == hi). */
void stn_mpi_local_box(const stn_grid *g, long *lo, long *hi);
int stn_mpi_rank(void);

/* One field a kernel reads at offsets: how far past its part it reads
 * below index 0 (lo) and above n - 1 (hi) per dimension, and which ghost
 * regions (bit e for direction e, e = sum over d of (side_d + 1) 3^(rank-1-d))
 * it reads at all. */
typedef struct stn_mpi_xfield {
  stn_field *f;
  int lo[STN_MAX_RANK], hi[STN_MAX_RANK];
  uint32_t dirs;
  int role;                         /* --tb across ranks: STN_X_* (0: read only) */
  int deep;                         /* --tb across ranks: the halo exchanged, this deep on every side (0: lo, hi) */
} stn_mpi_xfield;
enum {
  STN_X_WFULL = 1,                  /* the kernel writes every point of its region */
  STN_X_WPART = 2,                  /* the kernel writes some (a predicated store) */
  STN_X_NOREAD = 4                  /* the kernel does not read it */
};
#define STN_RIM_ALL ((const void *)1) /* stn_field.rim: every ghost point current, halo_ok deep */
#define STN_MPI_MAXPARTS (1 + 4 * STN_MAX_RANK)

typedef struct stn_mpi_xprof {
  long calls, exchanges;
  double bytes, pack, unpack, wait, flight;   /* seconds: packing, unpacking, waiting, post to complete */
} stn_mpi_xprof;

/* A kernel's exchange (static in the generated code). */
typedef struct stn_mpi_xch {
  const char *kernel;
  stn_grid *g;
  int nfields;
  stn_mpi_xfield *fields;
  int overlap;                      /* -fno-overlap: 0 */
  int deep;                         /* --tb across ranks: the grid's halo depth D (0: exchange per step) */
  /* run time */
  int region;                       /* rlo, rhi set (stn_mpi_region) */
  long rlo[STN_MAX_RANK], rhi[STN_MAX_RANK];
  int ext;                          /* the layers past its part this call computes */
  int pending, nreq;
  unsigned char sel[64];            /* fields in this exchange */
  MPI_Request req[2 * STN_MPI_DIRS];
  double t_post;
  stn_mpi_xprof prof;
  struct stn_mpi_xch *next;         /* registered for the profile on first use */
} stn_mpi_xch;

/* The boxes a kernel computes, in order; stn_mpi_end comes before box `wait`
 * (-1: nothing to wait for); boxes from nown on lie past the rank's part
 * (--tb across ranks: their points are the neighbours', computed again
 * here, and count in no reduction). */
typedef struct stn_mpi_parts {
  int n, wait, nown;
  long lo[STN_MPI_MAXPARTS][STN_MAX_RANK], hi[STN_MPI_MAXPARTS][STN_MAX_RANK];
} stn_mpi_parts;
/* --tb across ranks: the kernel's region in global indices (before
 * stn_mpi_local_box), for the points past the rank's part it computes. */
void stn_mpi_region(stn_mpi_xch *x, const long *lo, const long *hi);

/* Posts the exchange of x's stale fields and splits the local box [lo, hi)
 * into the interior (first, while the messages travel) and the shell. */
void stn_mpi_begin(stn_mpi_xch *x, const long *lo, const long *hi, stn_mpi_parts *parts);
/* Waits for the messages and unpacks them into the ghost points. */
void stn_mpi_end(stn_mpi_xch *x);

/* For the CUDA runtime's exchange (stn_cuda_mpi.cu), which packs on the
 * device with the same messages: x's grid's communicator and its
 * neighbour in each direction (MPI_PROC_NULL: none), x registered for the
 * profile; the box of points of field xf a message in direction e carries
 * (send: this rank's points the neighbour there reads; else the ghost
 * points on side e); and the parts stn_mpi_begin splits [lo, hi) into
 * (any: an exchange is pending). */
MPI_Comm stn_mpi_xch_setup(stn_mpi_xch *x, int *nbr);
void stn_mpi_msg_box(const stn_grid *g, const stn_mpi_xfield *xf, const int *e, int send, long *lo, long *hi);
void stn_mpi_split(const stn_mpi_xch *x, const long *lo, const long *hi, int any, stn_mpi_parts *parts);
/* Directions as both runtimes number them: offsets e[d] in {-1, 0, 1}
 * along each of `rank` dimensions, index sum of (e[d] + 1) 3^(rank-1-d). */
int stn_mpi_dir_index(int rank, const int *e);
void stn_mpi_dir_of(int rank, int idx, int *e);
/* What stn_mpi_begin decides, for both runtimes: which fields to exchange
 * (x->sel; returns whether any), how far past the part to compute (x->ext),
 * and the parts. stn_mpi_exchanged: the selected fields' ghost points are
 * now current. */
int stn_mpi_plan(stn_mpi_xch *x, const long *lo, const long *hi, stn_mpi_parts *parts);
void stn_mpi_exchanged(stn_mpi_xch *x);
/* --tb across ranks: after the kernel, its written fields are current
 * x->ext layers deep. */
void stn_mpi_wrote_deep(const stn_mpi_xch *x);

/* A kernel wrote these fields: their ghost points are stale. */
static inline void stn_mpi_wrote(stn_field *const *f, int n)
{
  for (int i = 0; i < n; i++) {
    f[i]->halo_ok = 0;
    f[i]->rim = NULL;
  }
}

/* Reductions over all ranks (op: 0 sum, 1 max, 2 min). */
double stn_mpi_reduce_double(double v, int op);
float stn_mpi_reduce_float(float v, int op);
int stn_mpi_reduce_int(int v, int op);

/* The exact sum over all ranks, rounded to double (the same on every rank). */
double stn_mpi_xsum(stn_xsum *x);

/* write and --save: the field gathered on rank 0, which writes the same
 * file a single process would. */
void stn_mpi_field_write(const stn_field *f, const char *path);
void stn_mpi_field_write_image(const stn_field *f, const char *path, double lo, double hi, const char *colormap);
/* stn_finish for a distributed run: the profile (rank 0, with each kernel's
 * exchanges), --save gathered, then MPI_Finalize. */
void stn_mpi_finish(stn_program *p);
/* CUDA (stn_cuda_mpi.cu): the field's points are on the device; the
 * gather asks this hook for a host copy (NULL: the host memory is current). */
extern void (*stn_mpi_host_copy)(const stn_field *f, void *dense);
/* CUDA: called (collectively) at the end of stn_mpi_grid_init with the
 * grid's neighbours (nbr[e] for each direction e: ranks of
 * MPI_COMM_WORLD, which the grid's Cartesian communicator keeps;
 * MPI_PROC_NULL where none), so that the halo transport can connect to
 * them before the time loop. */
extern void (*stn_mpi_grid_hook)(const int *nbr, int ndirs);

#ifdef __cplusplus
}
#endif
#endif
