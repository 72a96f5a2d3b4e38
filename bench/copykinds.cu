// copykinds.cu: which copy kernel reaches cudaMemcpy's device-to-device
// rate? Every ratio in docs/benchmarks.md is against the better of
// cudaMemcpy (~3000 GB/s on the H100) and a float4 grid-stride kernel
// (~2820 GB/s); stencilc's single sweeps (diffusion3d 86% of the former)
// are kernels, so whatever lifts a plain copy kernel toward cudaMemcpy is
// the next thing to try in them. Variants (2 x 1 GiB, each compared with
// the source after the run):
//   stride B/SM     grid-stride float4, B blocks of 256 per SM
//   once xU         one launch covering the array, U float4 per thread
//                   (loads first, then stores), like a stencil's grid
//   once xU cs      the same with streaming (evict-first) loads and stores
//   once xU nc      loads through the read-only path (ld.global.nc)
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o copykinds bench/copykinds.cu && ./copykinds
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>

#include "harness.cuh"

template <int U, int HINT>
__global__ void __launch_bounds__(256) once_k(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
  const size_t base = (size_t)blockIdx.x * 256 * U + threadIdx.x;
  float4 v[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    size_t i = base + (size_t)u * 256;
    if (i < n)
      v[u] = HINT == 1 ? __ldcs(&a[i]) : HINT == 2 ? __ldg(&a[i]) : a[i];
  }
#pragma unroll
  for (int u = 0; u < U; u++) {
    size_t i = base + (size_t)u * 256;
    if (i < n) {
      if (HINT == 1)
        __stcs(&b[i], v[u]);
      else
        b[i] = v[u];
    }
  }
}

static double BWM;

int main()
{
  const size_t bytes = (size_t)1 << 30, n = bytes / 16;
  float4 *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  {
    std::vector<float> h(bytes / 4);
    for (size_t i = 0; i < h.size(); i++)
      h[i] = (float)(i % 1000003);
    CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float ms = time_it([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 5);
  BWM = 2.0 * bytes / (ms * 1e-3) / 1e9;
  printf("cudaMemcpy device to device, 1 GiB: %.1f GB/s (100%%)\n", BWM);
  auto check = [&](const char *what, float t) {
    std::vector<float> x(4096), y(4096);
    size_t off = (n * 4 - 4096) / 2;
    CK(cudaMemcpy(x.data(), (float *)a + off, 4096 * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(y.data(), (float *)b + off, 4096 * 4, cudaMemcpyDeviceToHost));
    float yl;
    CK(cudaMemcpy(&yl, (float *)b + n * 4 - 1, 4, cudaMemcpyDeviceToHost));
    bool ok = yl == (float)((n * 4 - 1) % 1000003);
    for (int i = 0; i < 4096; i++)
      ok = ok && x[i] == y[i];
    double gbs = 2.0 * bytes / (t * 1e-3) / 1e9;
    printf("  %-28s %7.1f GB/s  %5.1f%% of cudaMemcpy  %s\n", what, gbs, 100 * gbs / BWM, ok ? "ok" : "WRONG");
    CK(cudaMemset(b, 0, bytes));
  };
  for (int per : {4, 8, 16, 32}) {
    char what[64];
    snprintf(what, sizeof what, "stride %d blocks/SM", per);
    check(what, time_it([&] { copy4<<<sms * per, 256>>>(a, b, n); }, 5));
  }
#define ONCE(U, H, name)                                                                          \
  check(name, time_it([&] { once_k<U, H><<<(unsigned)((n + 256 * U - 1) / (256 * U)), 256>>>(a, b, n); }, 5))
  ONCE(1, 0, "once x1");
  ONCE(2, 0, "once x2");
  ONCE(4, 0, "once x4");
  ONCE(8, 0, "once x8");
  ONCE(1, 1, "once x1 cs");
  ONCE(4, 1, "once x4 cs");
  ONCE(1, 2, "once x1 nc");
  ONCE(4, 2, "once x4 nc");
  return 0;
}
