// harness.cuh: what the hand-written CUDA harnesses of bench/ (tma.cu,
// mlp.cu) share: a checked call, timing (best of `reps` runs of 10
// launches, after one checked warm-up launch), the copy kernel, and the device's copy
// bandwidth measured the way bench/copybw.cu does (bytes read + written,
// best of cudaMemcpy and a float4 copy kernel over 1 GiB, after two
// warm-up copies), so that every ratio they print is against a ceiling
// measured in the same program.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = a[i];
}

// GB/s (1e9 bytes per second), read + write.
static double copy_bandwidth()
{
  size_t bytes = (size_t)1 << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best = 1e30f, ms;
  for (int r = 0; r < 12; r++) {
    CK(cudaEventRecord(e0));
    if (r % 2)
      copy4<<<132 * 8, 256>>>((const float4 *)a, (float4 *)b, bytes / 16);
    else
      CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 2 && ms < best)
      best = ms;
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 2.0 * bytes / (best * 1e-3) / 1e9;
}

// Milliseconds per launch.
template <typename F> static float time_it(F launch, int reps)
{
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(a));
    for (int x = 0; x < 10; x++)
      launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    best = fminf(best, ms / 10);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return best;
}

// Largest |a[i] - b[i]| of two device arrays of n floats (copied to the
// host; the buffers are kept for the next call of the same size).
static double max_abs_diff(const float *a, const float *b, size_t n)
{
  static float *h1, *h2;
  static size_t have;
  if (have < n) {
    free(h1);
    free(h2);
    h1 = (float *)malloc(n * sizeof(float));
    h2 = (float *)malloc(n * sizeof(float));
    have = n;
  }
  CK(cudaMemcpy(h1, a, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h2, b, n * sizeof(float), cudaMemcpyDeviceToHost));
  double md = 0;
  for (size_t i = 0; i < n; i++)
    md = fmax(md, fabs((double)h1[i] - h2[i]));
  return md;
}

// A launch on stream s: plain, or programmatic (PDL: the launch may start
// while the one before it in the stream drains; the kernel waits with
// griddepcontrol.wait before it reads what that one writes).
template <typename K, typename... A> static void harness_launch(cudaStream_t s, bool pdl, dim3 g, dim3 b, K kernel, A... args)
{
  if (!pdl) {
    kernel<<<g, b, 0, s>>>(args...);
    return;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = g;
  cfg.blockDim = b;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
