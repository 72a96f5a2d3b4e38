// rsqrt.cu: how far runtime/stn.h's stn_rsqrtf (what x / sqrt(y) becomes
// on the GPU, passes/hoist.c) is from 1 / sqrt(x), over every positive
// float, against the division the program was written with. For each x it
// computes, on the device,
//   ref  1 / sqrt(x) in double, rounded once to float (the correctly
//        rounded reciprocal square root),
//   div  1.0f / sqrtf(x) (two correctly rounded operations: what the CPU
//        and -fno-recip compute),
//   new  stn_rsqrtf(x),
// and counts the floats where new and div differ from ref by 0, 1, 2 and
// more units in the last place, and where new differs from div; and the
// normal floats where stn_rsqrtf_normal (the unscaled variant for
// arguments known to be normal, ir_at_least_normal) differs from new in
// any bit. Then the special values (zeros, infinities, NaN, negatives)
// against div. Prints one line per count and "rsqrt: ok" when new is
// never more than 1 ulp from ref nor 2 from div, the normal variant is
// new bit for bit, and every special value matches div; exit 1 otherwise.
//   usage: nvcc -O3 -arch=sm_90 -Iruntime -o rsqrt bench/rsqrt.cu && ./rsqrt
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include "stn.h"

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "rsqrt: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

enum { NBIN = 4 };  // 0, 1, 2, more ulp

__device__ unsigned ulps(float a, float b)
{
  int ia = __float_as_int(a), ib = __float_as_int(b);  // same sign here: positive
  unsigned d = ia > ib ? ia - ib : ib - ia;
  return d < NBIN - 1 ? d : NBIN - 1;
}

// x over every positive finite float bit pattern 1 .. 0x7f7fffff
__global__ void sweep(unsigned long long *counts)
{
  __shared__ unsigned long long c[3][NBIN];
  if (threadIdx.x < 3 * NBIN)
    c[threadIdx.x / NBIN][threadIdx.x % NBIN] = 0;
  __syncthreads();
  unsigned local[3][NBIN] = {};
  for (unsigned b = 1 + blockIdx.x * blockDim.x + threadIdx.x; b <= 0x7f7fffffu; b += gridDim.x * blockDim.x) {
    float x = __int_as_float((int)b);
    float ref = (float)(1.0 / sqrt((double)x));
    float div = 1.0f / sqrtf(x);
    float nw = stn_rsqrtf(x);
    local[0][ulps(nw, ref)]++;
    local[1][ulps(div, ref)]++;
    local[2][ulps(nw, div)]++;
    if (b >= 0x00800000u && __float_as_int(stn_rsqrtf_normal(x)) != __float_as_int(nw))
      atomicAdd(&counts[3 * NBIN], 1ull);
  }
  for (int s = 0; s < 3; s++)
    for (int u = 0; u < NBIN; u++)
      if (local[s][u])
        atomicAdd(&c[s][u], local[s][u]);
  __syncthreads();
  if (threadIdx.x < 3 * NBIN)
    atomicAdd(&counts[threadIdx.x], c[threadIdx.x / NBIN][threadIdx.x % NBIN]);
}

/* nf[i]: 0 where x[i] is not a normal float or stn_rsqrtf_normal gives
 * stn_rsqrtf's bits (or both NaN), 1 where the normal form differs */
__global__ void specials(const float *x, float *nw, float *div, int *nf, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    nw[i] = stn_rsqrtf(x[i]);
    div[i] = 1.0f / sqrtf(x[i]);
    float r = stn_rsqrtf_normal(x[i]);
    nf[i] = !(x[i] < 1.17549435e-38f) && !isinf(nw[i]) && __float_as_int(r) != __float_as_int(nw[i]) &&
            !(isnan(nw[i]) && isnan(r));
  }
}

int main()
{
  unsigned long long *d, h[3 * NBIN + 1];
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemset(d, 0, sizeof h));
  sweep<<<132 * 8, 256>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  const char *what[3] = { "stn_rsqrtf against 1/sqrt rounded once",
                          "1.0f / sqrtf against 1/sqrt rounded once",
                          "stn_rsqrtf against 1.0f / sqrtf" };
  for (int s = 0; s < 3; s++)
    printf("%-42s 0 ulp %llu, 1 ulp %llu, 2 ulp %llu, more %llu\n", what[s], h[s * NBIN], h[s * NBIN + 1],
           h[s * NBIN + 2], h[s * NBIN + 3]);
  printf("%-42s %llu\n", "stn_rsqrtf_normal differing, normal floats", h[3 * NBIN]);
  int ok = h[0 * NBIN + 2] == 0 && h[0 * NBIN + 3] == 0 && h[2 * NBIN + 3] == 0 && h[3 * NBIN] == 0;

  const float sx[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -1e-40f, 1e-45f, 1.17549435e-38f, 3.4028235e38f, 1.0f, 4.0f };
  const int n = sizeof sx / sizeof sx[0];
  float *dx, *dn, *dd, hn[n], hd[n];
  int *df, hf[n];
  CHECK(cudaMalloc(&dx, sizeof sx));
  CHECK(cudaMalloc(&dn, sizeof sx));
  CHECK(cudaMalloc(&dd, sizeof sx));
  CHECK(cudaMalloc(&df, sizeof hf));
  CHECK(cudaMemcpy(dx, sx, sizeof sx, cudaMemcpyHostToDevice));
  specials<<<1, 32>>>(dx, dn, dd, df, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hn, dn, sizeof hn, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hd, dd, sizeof hd, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hf, df, sizeof hf, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int same = (std::isnan(hn[i]) && std::isnan(hd[i])) || memcmp(&hn[i], &hd[i], sizeof(float)) == 0 ||
               (std::isfinite(hd[i]) && hd[i] != 0 && fabsf(hn[i] - hd[i]) <= 2.5e-7f * fabsf(hd[i]));
    printf("x = %-14g stn_rsqrtf %-14g 1.0f / sqrtf %-14g %s, normal form %s\n", sx[i], hn[i], hd[i],
           same ? "ok" : "DIFFER", hf[i] ? "DIFFER" : "ok");
    ok &= same && !hf[i];
  }
  printf("rsqrt: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
