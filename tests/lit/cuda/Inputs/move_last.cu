// The run times' lists of pending reductions (runtime/stn_cuda.h
// stn_move_last): a kernel launched again moves to the end, so that
// results are delivered in the order of the latest launches. Host code
// only: it needs no GPU.
#include "stn_cuda.h"
#include <cstdio>

struct wide { int id; double pad[40]; }; // larger than a pointer, as stn_cuda_mpi.cu's combine

static void show(const char *what, const int *a, int n)
{
  printf("%s:", what);
  for (int i = 0; i < n; i++)
    printf(" %d", a[i]);
  printf("\n");
}

int main()
{
  int a[] = { 1, 2, 3, 4 };
  stn_move_last(a, 4, sizeof *a, 0);
  show("first to last", a, 4);
  stn_move_last(a, 4, sizeof *a, 3);
  show("last stays", a, 4);
  stn_move_last(a, 4, sizeof *a, 1);
  show("middle to last", a, 4);
  wide w[3];
  for (int i = 0; i < 3; i++) {
    w[i].id = i + 1;
    for (int k = 0; k < 40; k++)
      w[i].pad[k] = 10 * (i + 1) + k;
  }
  stn_move_last(w, 3, sizeof *w, 0);
  int ids[3], whole = 1;
  for (int i = 0; i < 3; i++) {
    ids[i] = w[i].id;
    for (int k = 0; k < 40; k++)
      whole &= w[i].pad[k] == 10 * w[i].id + k;
  }
  show("structs", ids, 3);
  printf("structs moved whole: %s\n", whole ? "yes" : "no");
  return 0;
}
