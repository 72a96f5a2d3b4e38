// copybw.cu: the device's copy bandwidth, the ceiling bench/gpu.sh reports
// every kernel against. Two measures, best of 20 each: cudaMemcpy device to
// device, and a plain float4 copy kernel; bytes read plus bytes written.
// Prints one number: GB/s (1e9 bytes per second).
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "copybw: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = a[i];
}

int main()
{
  const size_t bytes = (size_t)2 << 30;  // 2 GiB each way: far beyond L2
  void *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 1, bytes));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float best_memcpy = 1e30f, best_kernel = 1e30f, ms;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int rep = 0; rep < 22; rep++) {
    CHECK(cudaEventRecord(t0));
    CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (rep >= 2 && ms < best_memcpy) best_memcpy = ms;
    CHECK(cudaEventRecord(t0));
    copy4<<<sms * 8, 256>>>((const float4 *)a, (float4 *)b, bytes / 16);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (rep >= 2 && ms < best_kernel) best_kernel = ms;
  }
  double gbs_memcpy = 2.0 * bytes / (best_memcpy * 1e-3) / 1e9;
  double gbs_kernel = 2.0 * bytes / (best_kernel * 1e-3) / 1e9;
  fprintf(stderr, "copybw: cudaMemcpy %.0f GB/s, copy kernel %.0f GB/s\n", gbs_memcpy, gbs_kernel);
  printf("%.1f\n", gbs_memcpy > gbs_kernel ? gbs_memcpy : gbs_kernel);
  return 0;
}
