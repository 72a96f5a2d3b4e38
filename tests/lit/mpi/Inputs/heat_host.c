/* A host program over the library stencilc --emit=lib generates from
 * examples/embed-make/heat.stn, the same source built with and without
 * --mpi (tests/lit/mpi/lib.test). It sets a hot square, runs STEPS steps,
 * prints the heat each step returns, and writes the whole field (raw
 * doubles) on rank 0: with --mpi each rank sets and gets its own part
 * (heat_part) and rank 0 gathers them. */
#include "heat.h"
#include <stdio.h>
#include <stdlib.h>
#ifdef HOST_MPI
#include <mpi.h>
#endif

int main(int argc, char **argv)
{
  int steps = 20, rank = 0, size = 1;
#ifdef HOST_MPI
  MPI_Init(&argc, &argv); /* the host owns MPI; the library uses it */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
  const char *out = argc > 1 ? argv[1] : "u.raw";
  heat_params prm = heat_defaults();
  prm.NX = 37;
  prm.NY = 29;
  heat *h = heat_create(&prm);
  long lo[2] = { 0, 0 }, n[2] = { prm.NY, prm.NX };
#ifdef HOST_MPI
  heat_part(h, "u", lo, n);
#endif
  long pts = heat_points(h, "u");
  if (pts != n[0] * n[1]) {
    fprintf(stderr, "heat_points %ld, part %ld x %ld\n", pts, n[0], n[1]);
    return 1;
  }
  double *u = calloc((size_t)pts, sizeof *u);
  for (long y = 0; y < n[0]; y++)
    for (long x = 0; x < n[1]; x++) {
      long gy = lo[0] + y, gx = lo[1] + x;
      u[y * n[1] + x] = (gx > 8 && gx < 25 && gy > 5 && gy < 20) ? 1.0 + 0.01 * gx : 0.0;
    }
  heat_set(h, "u", u);
  for (int s = 0; s < steps; s++) {
    double total = heat_step(h, 0.2);
    heat_swap(h, "u", "un");
    if (rank == 0)
      printf("step %d heat %.17g\n", s, total);
  }
  heat_get(h, "u", u);
  double *all = u;
#ifdef HOST_MPI
  /* rank 0 gathers every part: its box, then its points */
  long box[4] = { lo[0], lo[1], n[0], n[1] }, *boxes = malloc(sizeof(long) * 4 * (size_t)size);
  MPI_Gather(box, 4, MPI_LONG, boxes, 4, MPI_LONG, 0, MPI_COMM_WORLD);
  int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
  double *parts = malloc(sizeof(double) * (size_t)prm.NX * prm.NY);
  all = calloc((size_t)prm.NX * prm.NY, sizeof *all);
  for (int r = 0, off = 0; r < size; r++) {
    counts[r] = (int)(boxes[4 * r + 2] * boxes[4 * r + 3]);
    displs[r] = off;
    off += counts[r];
  }
  MPI_Gatherv(u, (int)pts, MPI_DOUBLE, parts, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 0; r < size; r++)
      for (long y = 0; y < boxes[4 * r + 2]; y++)
        for (long x = 0; x < boxes[4 * r + 3]; x++)
          all[(boxes[4 * r] + y) * prm.NX + boxes[4 * r + 1] + x] = parts[displs[r] + y * boxes[4 * r + 3] + x];
#endif
  if (rank == 0) {
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(all, sizeof *all, (size_t)prm.NX * prm.NY, f) != (size_t)prm.NX * prm.NY || fclose(f))
      return 1;
  }
  heat_destroy(h);
#ifdef HOST_MPI
  MPI_Finalize();
#endif
  return 0;
}
