// The runtime's bookkeeping for programmatic launches (runtime/stn_cuda.h)
// in the order a generated Himeno makes its calls. It needs no GPU: the
// launches fail without one, but the sequence numbers move all the same.
#include "stn_cuda.h"
#include <cstdio>

__global__ void kernel_(float *x)
{
  if (x)
    x[0] = 1;
}

static stn_field a_, p_, w_;

// init: reads nothing before its wait, so always programmatic; writes all.
static const char *init()
{
  const bool pdl_ = stn_cuda_pdl;
  stn_cuda_launch(pdl_, dim3(1), dim3(1), 0, kernel_, (float *)nullptr);
  stn_cuda_wrote(&a_);
  stn_cuda_wrote(&p_);
  stn_cuda_wrote(&w_);
  return pdl_ ? "programmatic" : "plain";
}

// jacobi: reads a before its wait, reads p, writes w.
static const char *jacobi()
{
  const bool pdl_ = stn_cuda_pdl && stn_cuda_settled(&a_);
  stn_cuda_launch(pdl_, dim3(1), dim3(1), 0, kernel_, (float *)nullptr);
  stn_cuda_wrote(&w_);
  return pdl_ ? "programmatic" : "plain";
}

int main(int argc, char **argv)
{
  if (argc > 1)
    stn_cuda_pdl = 0;
  printf("init: %s\n", init());
  for (int n = 0; n < 3; n++) {
    printf("jacobi %d: %s\n", n, jacobi());
    stn_field_swap(&p_, &w_);
  }
  // A kernel writes a between two loops (programmatically): the next
  // jacobi may not read it early, so it waits for everything before it.
  const bool pdl_ = stn_cuda_pdl;
  stn_cuda_launch(pdl_, dim3(1), dim3(1), 0, kernel_, (float *)nullptr);
  stn_cuda_wrote(&a_);
  printf("a written, then jacobi: %s\n", jacobi());
  printf("jacobi: %s\n", jacobi());
  // A swap moves the sequence numbers with the buffers.
  p_.wseq = 7;
  w_.wseq = 100;
  stn_field_swap(&p_, &w_);
  printf("swapped: p %lu, w %lu\n", p_.wseq, w_.wseq);
  return 0;
}
