// tb2d.cu: what does 2-D temporal blocking need to reach AN5D's 1511
// GCells/s (5-point Jacobi, 16384^2 float, fixed boundary) on an H100?
// stencilc's kernel (--tb=8 --tb-vec=2, 762 GCells/s) runs each warp on
// its own strip: the warp's lanes pass neighbours by shuffles, so a strip
// of 32 V columns loses T columns on each side (25% at T = 8, V = 2).
// Here a whole block shares one strip through shared memory (AN5D's
// layout): NT threads of V columns each, T time levels, each level's last
// three rows in registers, the row every level hands to the next level's
// horizontal neighbours in shared memory (three slots per level, one
// barrier per row). Skewed schedule: at iteration s, level t computes row
// s - 2t from rows its predecessor computed in earlier iterations, so the
// T updates of an iteration are independent of one another.
//
// Each variant runs T steps per launch and is checked against T single
// steps of a plain kernel (max |diff| printed); GCells/s counts interior
// cell updates.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o tb2d bench/tb2d.cu && ./tb2d
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <type_traits>

#include "harness.cuh"

// One plain step of un = 0.2 (u + 4 neighbours) over the interior.
__global__ void step1(const float *__restrict__ u, float *__restrict__ un, int n)
{
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1) {
    long c = (long)i * n + j;
    un[c] = 0.2f * (u[c] + u[c - n] + u[c + n] + u[c - 1] + u[c + 1]);
  }
}

__global__ void init(float *u, float *un, int n)
{
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j < n) {
    float v = sinf(0.01f * i) * cosf(0.013f * j);
    u[(long)i * n + j] = v;
    un[(long)i * n + j] = v;
  }
}

// T steps in one pass. Block: NT threads x V columns, OWN of them its own;
// M rows of output per block.
template <int T, int V, int NT, bool FAST>
__global__ void __launch_bounds__(NT) tb_smem(const float *__restrict__ in, float *__restrict__ out, int n, int M)
{
  constexpr int W = NT * V + 2;  // one spare column each side
  constexpr int OWN = NT * V - 2 * T;
  extern __shared__ float sm[];  // [T][3][W]
  const int tx = threadIdx.x;
  const int j0 = blockIdx.x * OWN - T + tx * V;
  const int y0 = blockIdx.y * M, y1 = min(y0 + M, n);
  bool cin[V], cint[V], own[V];
#pragma unroll
  for (int v = 0; v < V; v++) {
    int j = j0 + v, l = tx * V + v;
    cin[v] = j >= 0 && j < n;
    cint[v] = j >= 1 && j < n - 1;
    own[v] = cint[v] && l >= T && l < T + OWN;
  }
  float r[T][3][V];  // r[t][slot]: level t's row of iteration k in slot k % 3
#pragma unroll
  for (int t = 0; t < T; t++)
#pragma unroll
    for (int k = 0; k < 3; k++)
#pragma unroll
      for (int v = 0; v < V; v++)
        r[t][k][v] = 0.f;
  float pf[V];
  const int s0 = y0 - T, s1 = y1 - 1 + 2 * T;
  auto load = [&](int s) {
#pragma unroll
    for (int v = 0; v < V; v++)
      pf[v] = s >= 0 && s < n && cin[v] ? in[(long)s * n + j0 + v] : 0.f;
  };
  load(s0);
  auto iter1 = [&](int s, auto ph, auto fast) {
    constexpr int PH = decltype(ph)::value;         // s % 3
    constexpr bool F = decltype(fast)::value;
    constexpr int C = (PH + 1) % 3, D = (PH + 2) % 3; // rows of s-2 and s-1; PH holds s-3
#pragma unroll
    for (int t = T; t >= 1; t--) {
      const int q = s - 2 * t;
      const bool rint = q >= 1 && q < n - 1;
      const float *h = sm + ((t - 1) * 3 + C) * W + 1 + tx * V;
      const float left = h[-1], right = h[V];
      float o[V];
#pragma unroll
      for (int v = 0; v < V; v++) {
        float w = v == 0 ? left : r[t - 1][C][v - 1];
        float e = v == V - 1 ? right : r[t - 1][C][v + 1];
        float c = r[t - 1][C][v];
        float x = 0.2f * (c + r[t - 1][PH][v] + r[t - 1][D][v] + w + e);
        o[v] = F || (rint && cint[v]) ? x : c;
      }
      if (t == T) {
        if (q >= y0 && q < y1 && rint)
#pragma unroll
          for (int v = 0; v < V; v++)
            if (own[v])
              out[(long)q * n + j0 + v] = o[v];
      } else {
        float *w = sm + (t * 3 + PH) * W + 1 + tx * V;
#pragma unroll
        for (int v = 0; v < V; v++) {
          r[t][PH][v] = o[v];
          w[v] = o[v];
        }
      }
    }
    float *w = sm + PH * W + 1 + tx * V;
#pragma unroll
    for (int v = 0; v < V; v++) {
      r[0][PH][v] = pf[v];
      w[v] = pf[v];
    }
    load(s + 1);
    __syncthreads();
  };
  // All columns inside the interior: the middle rows need no selects.
  bool cfast = true;
#pragma unroll
  for (int v = 0; v < V; v++)
    cfast = cfast && cint[v];
  cfast = __syncthreads_and(cfast);
  auto iter = [&](int s, auto ph) {
    if (FAST && cfast && s - 2 * T >= 1 && s - 2 < n - 1)
      iter1(s, ph, std::true_type{});
    else
      iter1(s, ph, std::false_type{});
  };
  using P0 = std::integral_constant<int, 0>;
  using P1 = std::integral_constant<int, 1>;
  using P2 = std::integral_constant<int, 2>;
  // s0 % 3 decides the phase of the first iteration; rotate to it.
  int s = s0;
  int m = ((s % 3) + 3) % 3;
  if (m == 1) { iter(s, P1{}); s++; m = 2; }
  if (m == 2 && s <= s1) { iter(s, P2{}); s++; }
  for (; s + 2 <= s1; s += 3) {
    iter(s, P0{});
    iter(s + 1, P1{});
    iter(s + 2, P2{});
  }
  if (s <= s1) { iter(s, P0{}); s++; }
  if (s <= s1) { iter(s, P1{}); s++; }
}

static int n = 16384;

template <int T, int V, int NT, bool FAST = true> static void run(const float *u0, float *a, float *b, const float *ref, int M, double copy)
{
  constexpr int OWN = NT * V - 2 * T;
  size_t smem = (size_t)T * 3 * (NT * V + 2) * sizeof(float);
  CK(cudaFuncSetAttribute(tb_smem<T, V, NT, FAST>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, tb_smem<T, V, NT, FAST>));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tb_smem<T, V, NT, FAST>, NT, smem));
  dim3 grid((n - 2 + OWN - 1) / OWN + 1, (n + M - 1) / M);
  size_t bytes = (size_t)n * n * sizeof(float);
  // check: one pass against T plain steps from the same start
  CK(cudaMemcpy(a, u0, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(b, u0, bytes, cudaMemcpyDeviceToDevice));
  tb_smem<T, V, NT, FAST><<<grid, NT, smem>>>(a, b, n, M);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const double md = max_abs_diff(b, ref, (size_t)n * n);
  float ms = time_it([&] { tb_smem<T, V, NT, FAST><<<grid, NT, smem>>>(a, b, n, M); }, 3);
  double gc = (double)(n - 2) * (n - 2) * T / (ms * 1e-3) / 1e9;
  printf("%s T=%2d V=%d NT=%3d M=%4d  regs %3d  smem %6zu  blocks/SM %d  %7.3f ms  %7.1f GCells/s  %.2fx bound  max|diff| %.1e\n",
         FAST ? "fast middle" : "selects    ", T, V, NT, M, fa.numRegs, smem, per_sm, ms, gc, gc / (copy / 8), md);
}

// Reference: T plain steps from u0, for each T asked; kept in refs[T].
int main(int argc, char **argv)
{
  if (argc > 1)
    n = atoi(argv[1]);
  double copy = copy_bandwidth();
  printf("copy bandwidth %.1f GB/s; single-step bound %.1f GCells/s (8 bytes per cell)\n", copy, copy / 8);
  size_t bytes = (size_t)n * n * sizeof(float);
  float *u0, *a, *b, *ref[13];
  CK(cudaMalloc(&u0, bytes));
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  float *x, *y;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  init<<<dim3((n + 255) / 256, n), 256>>>(u0, x, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(x, u0, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(y, u0, bytes, cudaMemcpyDeviceToDevice));
  for (int t = 1; t <= 12; t++) {
    step1<<<dim3((n + 255) / 256, n), 256>>>(x, y, n);
    CK(cudaGetLastError());
    CK(cudaMalloc(&ref[t], bytes));
    CK(cudaMemcpy(ref[t], y, bytes, cudaMemcpyDeviceToDevice));
    float *z = x; x = y; y = z;
  }
  {
    float ms = time_it([&] { step1<<<dim3((n + 255) / 256, n), 256>>>(x, y, n); }, 3);
    printf("plain single step: %.1f GCells/s\n", (double)(n - 2) * (n - 2) / (ms * 1e-3) / 1e9);
  }
#define RUN(T, V, NT, M) run<T, V, NT>(u0, a, b, ref[T], M, copy)
#define RUNS(T, V, NT, M) run<T, V, NT, false>(u0, a, b, ref[T], M, copy)
  if (getenv("TB2D_ONE")) { // one variant, for profilers
    RUN(8, 1, 128, 512);
    return 0;
  }
  RUNS(8, 1, 256, 512);
  RUN(8, 1, 256, 512);
  RUNS(4, 1, 256, 256);
  RUN(4, 1, 256, 256);
  RUN(4, 2, 256, 256);
  RUN(6, 1, 256, 256);
  RUN(6, 1, 256, 512);
  RUN(8, 1, 128, 512);
  RUN(8, 1, 256, 256);
  RUN(8, 1, 256, 384);
  RUN(8, 1, 256, 768);
  RUN(8, 1, 512, 512);
  RUN(8, 1, 1024, 512);
  RUN(8, 2, 128, 256);
  RUN(8, 2, 128, 512);
  RUN(10, 1, 256, 512);
  RUN(10, 1, 512, 512);
  RUN(12, 1, 256, 512);
  RUN(12, 1, 512, 512);
  return 0;
}
