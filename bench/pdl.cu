// pdl.cu: is the gap of the mid-sized single sweeps (Himeno M ~90% of
// copy, CG's apply at 256^3 ~79%, both ~0.09 ms per launch) a fixed cost
// per launch (blocks ramping up, the last partial wave draining), and does
// Hopper's programmatic dependent launch (PDL) recover it?  With PDL the
// next launch's blocks start while the previous launch drains; they may
// read what no earlier launch writes (Himeno's 12 coefficient fields)
// before `griddepcontrol.wait`, and everything else after it.
//
// What a launch before may still write is read through plain pointers:
// through const __restrict__ ones nvcc emits ld.global.nc, and ptxas moves
// those above griddepcontrol.wait (the 04:27 run's SASS: every load of p
// ahead of the wait, a race that happened to give the right numbers).
//
// Variants, each timed against the copy bandwidth measured here, each
// field compared with the plain launch's after the same launches:
//   plain    <<< >>> launches
//   pdl      PDL launch, wait before the first load
//   pdl+pre  PDL launch, read-only fields loaded before the wait
// and for Himeno with its residual, combined per block (shuffles, shared
// memory, two barriers: what stencilc prints) or per warp (shuffles only).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o pdl bench/pdl.cu && ./pdl
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>

#include "harness.cuh"

static cudaStream_t S;

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

template <typename K, typename... A> static void launch(bool pdl, dim3 g, dim3 b, K kernel, A... args)
{
  harness_launch(S, pdl, g, b, kernel, args...);
}

// ms per launch: best of 5 runs of n launches (step(l) issues launch l).
template <typename F> static float per_launch(F step, int n)
{
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  step(0);
  CK(cudaStreamSynchronize(S));
  float best = 1e30f;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a, S));
    for (int l = 0; l < n; l++)
      step(l);
    CK(cudaEventRecord(b, S));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    best = fminf(best, ms / n);
  }
  CK(cudaGetLastError());
  return best;
}

static double BW;
static void report(const char *what, float ms, double bytes)
{
  printf("  %-44s %8.4f ms  %7.1f GB/s  %5.1f%% of copy\n", what, ms, bytes / (ms * 1e-3) / 1e9, 100 * bytes / (ms * 1e-3) / 1e9 / BW);
}

static float *falloc(size_t n)
{
  float *p;
  CK(cudaMalloc(&p, n * sizeof(float)));
  return p;
}

static void fill(float *d, size_t n, unsigned seed, float lo, float hi)
{
  std::vector<float> h(n);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = lo + (hi - lo) * (seed >> 8) / 16777216.0f;
  }
  CK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

static double maxdiff(const float *a, const float *b, size_t n)
{
  std::vector<float> x(n), y(n);
  CK(cudaMemcpy(x.data(), a, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(y.data(), b, n * 4, cudaMemcpyDeviceToHost));
  double m = 0;
  for (size_t i = 0; i < n; i++)
    m = fmax(m, fabs((double)x[i] - y[i]));
  return m;
}

// ---- copy ----------------------------------------------------------------
template <int MODE>
__global__ void copy_k(const float4 *a, float4 *__restrict__ b, size_t n)
{
  if (MODE) {
    pdl_trigger();
    pdl_wait();
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = a[i];
}

// ---- Himeno --------------------------------------------------------------
struct Coef {
  const float *a0, *a1, *a2, *a3, *b0, *b1, *b2, *c0, *c1, *c2, *wrk1, *bnd;
};

// MODE 0: plain, 1: wait first, 2: coefficients before the wait.
// RED 0: no residual; 1: the residual per block (shuffles, shared memory,
// two barriers, as stencilc's stn_block_reduce) into part[block]; 2: per
// warp (shuffles only) into part[block * warps + warp].
template <int MODE, int RED = 0>
__global__ void __launch_bounds__(512) himeno_k(Coef c, const float *p, float *__restrict__ w, int mi, int mj, int mk, double *part)
{
  const int k = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i = 1 + blockIdx.z;
  if (MODE)
    pdl_trigger();
  if (MODE == 1)
    pdl_wait();
  double g = 0;
  if (k < mk - 1 && j < mj - 1) {
    const long sj = mk, si = (long)mj * mk, x = i * si + j * sj + k;
    float a0 = c.a0[x], a1 = c.a1[x], a2 = c.a2[x], a3 = c.a3[x], b0 = c.b0[x], b1 = c.b1[x], b2 = c.b2[x];
    float c0 = c.c0[x], c1 = c.c1[x], c2 = c.c2[x], wrk1 = c.wrk1[x], bnd = c.bnd[x];
    if (MODE == 2)
      pdl_wait();
    float s0 = a0 * p[x + si] + a1 * p[x + sj] + a2 * p[x + 1]
             + b0 * (p[x + si + sj] - p[x + si - sj] - p[x - si + sj] + p[x - si - sj])
             + b1 * (p[x + sj + 1] - p[x - sj + 1] - p[x + sj - 1] + p[x - sj - 1])
             + b2 * (p[x + si + 1] - p[x - si + 1] - p[x + si - 1] + p[x - si - 1])
             + c0 * p[x - si] + c1 * p[x - sj] + c2 * p[x - 1] + wrk1;
    float ss = (s0 * a3 - p[x]) * bnd;
    g = (double)(ss * ss);
    w[x] = p[x] + 0.8f * ss;
  }
  if (MODE == 2)
    pdl_wait();
  if (RED == 0)
    return;
  const int t = threadIdx.x + blockDim.x * threadIdx.y, lane = t & 31, warp = t >> 5;
  const int nwarps = (blockDim.x * blockDim.y + 31) >> 5;
  const int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  for (int d = 16; d > 0; d >>= 1)
    g += __shfl_down_sync(0xffffffffu, g, d);
  if (RED == 2) {
    if (lane == 0)
      part[(size_t)blk * nwarps + warp] = g;
    return;
  }
  __shared__ double wp[32];
  if (lane == 0)
    wp[warp] = g;
  __syncthreads();
  if (warp == 0) {
    g = lane < nwarps ? wp[lane] : 0.0;
    for (int d = 16; d > 0; d >>= 1)
      g += __shfl_down_sync(0xffffffffu, g, d);
  }
  __syncthreads();
  if (t == 0)
    part[blk] = g;
}

static double sum_parts(const double *part, size_t n)
{
  std::vector<double> h(n);
  CK(cudaMemcpy(h.data(), part, n * 8, cudaMemcpyDeviceToHost));
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += h[i];
  return s;
}

template <int MODE, int RED> static void himeno_variant(const char *name, Coef c, float *const P[2], float *init, size_t n, dim3 g, dim3 b,
                                                        int mi, int mj, int mk, double *part, double bytes)
{
  auto step = [&](int l) {
    launch(MODE != 0, g, b, himeno_k<MODE, RED>, c, (const float *)P[l % 2], P[(l + 1) % 2], mi, mj, mk, part);
  };
  CK(cudaMemcpy(P[0], init, n * 4, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(P[1], init, n * 4, cudaMemcpyDeviceToDevice));
  float ms = per_launch(step, 200);
  char what[96];
  snprintf(what, sizeof what, "%dx%d %s", b.x, b.y, name);
  report(what, ms, bytes);
}

static void himeno(const char *name, int mi, int mj, int mk)
{
  size_t n = (size_t)mi * mj * mk;
  float *f[14];
  for (int q = 0; q < 14; q++) {
    f[q] = falloc(n);
    fill(f[q], n, 17 + q, q < 12 ? 0.0f : 0.5f, q < 12 ? 0.2f : 1.0f);
  }
  Coef c = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11]};
  float *p0 = falloc(n), *p1 = falloc(n), *r0 = falloc(n), *r1 = falloc(n);
  double *part;
  CK(cudaMalloc(&part, sizeof(double) * n));
  double bytes = 14.0 * 4 * (mi - 2) * (double)(mj - 2) * (mk - 2);
  printf("Himeno %s (%dx%dx%d), 14 words per point (200 launches each):\n", name, mi, mj, mk);
  float *P[2] = {p0, p1}, *R[2] = {r0, r1};
  for (int by : {1, 2, 4}) {
    dim3 b(128, by), g((mk - 2 + 127) / 128, (mj - 2 + by - 1) / by, mi - 2);
    himeno_variant<0, 0>(" plain", c, R, f[12], n, g, b, mi, mj, mk, part, bytes);
    himeno_variant<1, 0>(" pdl", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    printf("    max |p - plain's p| = %g, %g\n", maxdiff(P[0], r0, n), maxdiff(P[1], r1, n));
    himeno_variant<2, 0>(" pdl+pre", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    printf("    max |p - plain's p| = %g, %g\n", maxdiff(P[0], r0, n), maxdiff(P[1], r1, n));
    size_t blocks = (size_t)g.x * g.y * g.z, warps = blocks * ((b.x * b.y + 31) / 32);
    himeno_variant<0, 1>(" plain, block residual", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    double s1 = sum_parts(part, blocks);
    himeno_variant<2, 1>(" pdl+pre, block residual", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    double s2 = sum_parts(part, blocks);
    himeno_variant<0, 2>(" plain, warp residual", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    double s3 = sum_parts(part, warps);
    himeno_variant<2, 2>(" pdl+pre, warp residual", c, P, f[12], n, g, b, mi, mj, mk, part, bytes);
    double s4 = sum_parts(part, warps);
    printf("    residuals (sums of the partials): %.15g %.15g %.15g %.15g\n", s1, s2, s3, s4);
  }
  for (int q = 0; q < 14; q++)
    CK(cudaFree(f[q]));
  CK(cudaFree(p0));
  CK(cudaFree(p1));
  CK(cudaFree(r0));
  CK(cudaFree(r1));
  CK(cudaFree(part));
}

// ---- 7-point star, double (CG's apply without its dot product) -------------
template <int MODE>
__global__ void __launch_bounds__(512) apply_k(const double *p, double *__restrict__ q, int m)
{
  const int k = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i = 1 + blockIdx.z;
  if (MODE) {
    pdl_trigger();
    pdl_wait();
  }
  if (k >= m - 1 || j >= m - 1)
    return;
  const long sj = m, si = (long)m * m, x = i * si + j * sj + k;
  q[x] = 6.0 * p[x] - p[x - 1] - p[x + 1] - p[x - sj] - p[x + sj] - p[x - si] - p[x + si];
}

static void apply(int n)
{
  int m = n + 2;
  size_t cnt = (size_t)m * m * m;
  double *a, *b;
  CK(cudaMalloc(&a, cnt * 8));
  CK(cudaMalloc(&b, cnt * 8));
  CK(cudaMemset(a, 0, cnt * 8));
  CK(cudaMemset(b, 0, cnt * 8));
  double bytes = 16.0 * n * (double)n * n;
  printf("7-point star %d^3 double (CG's apply shape), 16 bytes per point:\n", n);
  for (int by : {2, 4}) {
    dim3 bl(128, by), g((n + 127) / 128, (n + by - 1) / by, n);
    for (int mode = 0; mode < 2; mode++) {
      auto step = [&](int l) {
        double *src = l % 2 ? b : a, *dst = l % 2 ? a : b;
        if (mode)
          launch(true, g, bl, apply_k<1>, (const double *)src, dst, m);
        else
          launch(false, g, bl, apply_k<0>, (const double *)src, dst, m);
      };
      for (int n_ : {20, 200}) {
        float ms = per_launch(step, n_);
        char what[96];
        snprintf(what, sizeof what, "128x%d %s, %d launches", by, mode ? "pdl" : "plain", n_);
        report(what, ms, bytes);
      }
    }
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
}

int main()
{
  CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  BW = copy_bandwidth();
  printf("copy bandwidth (best of cudaMemcpy and a float4 kernel, 1 GiB): %.1f GB/s\n", BW);
  printf("float4 copy at several sizes (bytes read + written):\n");
  for (size_t mb : {64, 240, 1024, 2048}) {
    size_t bytes = mb << 20;
    float4 *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 0, bytes));
    size_t n4 = bytes / 16;
    for (int mode = 0; mode < 2; mode++) {
      auto step = [&](int l) {
        float4 *s = l % 2 ? b : a, *d = l % 2 ? a : b;
        if (mode)
          launch(true, dim3(132 * 8), dim3(256), copy_k<1>, (const float4 *)s, d, n4);
        else
          launch(false, dim3(132 * 8), dim3(256), copy_k<0>, (const float4 *)s, d, n4);
      };
      float ms = per_launch(step, 50);
      char what[96];
      snprintf(what, sizeof what, "%zu MiB %s", mb, mode ? "pdl" : "plain");
      report(what, ms, 2.0 * bytes);
      float ms2 = per_launch([&](int l) { CK(cudaMemcpyAsync(l % 2 ? a : b, l % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, S)); }, 50);
      if (!mode)
        report("  cudaMemcpy", ms2, 2.0 * bytes);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  himeno("M", 129, 129, 257);
  himeno("L", 257, 257, 513);
  apply(256);
  return 0;
}
