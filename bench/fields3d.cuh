// fields3d.cuh: what the hand-written 3-D single-sweep harnesses of bench/
// (mlp.cu, prefetch.cu) share: vectors of V values for wide loads, the
// layout of an n^3 field like stencilc's, a block's sum of a double and
// the sum of the blocks' partials, the largest difference of two fields'
// interiors, and a field of deterministic values on the device.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>

#include "harness.cuh"

template <typename T, int V> struct Vec;
template <typename T> struct Vec<T, 1> { T v[1]; };
template <> struct __align__(8) Vec<float, 2> { float v[2]; };
template <> struct __align__(16) Vec<float, 4> { float v[4]; };
template <> struct __align__(16) Vec<double, 2> { double v[2]; };

template <typename T, int V> __device__ __forceinline__ Vec<T, V> ld(const T *p) { return *(const Vec<T, V> *)p; }

// A field of n^3 points with a halo of one, rows padded like stencilc's
// (16 elements before k = 0, rounded to 16), D + 2 spare planes at the end
// so that fetching ahead never leaves the allocation.
struct Layout {
  long n, ak, aj, ai, s1, s0, origin, total;
  explicit Layout(long n_) : n(n_)
  {
    ak = (16 + n + 1 + 15) / 16 * 16;
    aj = n + 2;
    ai = n + 2 + 6;
    s1 = ak;
    s0 = ak * aj;
    origin = s0 + s1 + 16;
    total = ai * aj * ak;
  }
};

__device__ __forceinline__ double block_sum(double v)
{
  __shared__ double part[32];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  const int t = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
  if (t % 32 == 0)
    part[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < (nt + 31) / 32 ? part[t] : 0.0;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

template <typename T> static double max_diff(const T *x, const T *y, const Layout &L)
{
  T *a = (T *)malloc(L.total * sizeof(T)), *b = (T *)malloc(L.total * sizeof(T));
  CK(cudaMemcpy(a, x, L.total * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b, y, L.total * sizeof(T), cudaMemcpyDeviceToHost));
  double d = 0;
  for (long i = 1; i < L.n - 1; i++)
    for (long j = 1; j < L.n - 1; j++)
      for (long k = 1; k < L.n - 1; k++) {
        long x = L.origin + i * L.s0 + j * L.s1 + k;
        double e = fabs((double)a[x] - (double)b[x]);
        if (!(e <= d))
          d = e;
      }
  free(a);
  free(b);
  return d;
}

template <typename T> static T *field(const Layout &L, unsigned seed)
{
  T *h = (T *)malloc(L.total * sizeof(T)), *d;
  for (long x = 0; x < L.total; x++)
    h[x] = (T)(((x + seed) * 2654435761u) % 1000) / (T)1000 + (T)0.5;
  CK(cudaMalloc(&d, L.total * sizeof(T)));
  CK(cudaMemcpy(d, h, L.total * sizeof(T), cudaMemcpyHostToDevice));
  free(h);
  return d;
}

// The sum of the first nb block partials (in block order) on the host.
static double partials_sum(const double *part, size_t nb)
{
  double *h = (double *)malloc(nb * sizeof(double)), sum = 0;
  CK(cudaMemcpy(h, part, nb * sizeof(double), cudaMemcpyDeviceToHost));
  for (size_t b = 0; b < nb; b++)
    sum += h[b];
  free(h);
  return sum;
}
