// tb3d.cu: can 3-D temporal blocking of a 7-point star reach AN5D's 463
// GCells/s (diffusion3d, 512^3 float, 1000 steps) on an H100? stencilc's
// 3-D kernel (--tb=2: 297 GCells/s, below single steps' 325) keeps every
// step's planes in shared-memory rings and reads all seven values there.
// Here the design that took the 2-D kernel to 1553 GCells/s (bench/tb2d.cu),
// one dimension up: a block of BX x BY threads covers a tile (T points of
// halo each side) and streams along dimension 0; each time level keeps its
// last three planes of the thread's column in registers, and hands its
// newest plane to the next level's in-plane neighbours through shared
// memory (three slots per level, one barrier per plane, skewed schedule:
// level t computes plane s - 2t at iteration s).
//
// Each variant runs T steps per launch and is checked against T plain
// steps (max |diff| printed); GCells/s counts interior points.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o tb3d bench/tb3d.cu && ./tb3d
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <type_traits>

#include "harness.cuh"

static const float cc = 0.4f, ce = 0.1f;

__global__ void step1(const float *__restrict__ u, float *__restrict__ un, int n)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1 && k >= 1 && k < n - 1) {
    long c = ((long)i * n + j) * n + k, p = (long)n * n;
    un[c] = cc * u[c] + ce * (u[c - p] + u[c + p] + u[c - n] + u[c + n] + u[c - 1] + u[c + 1]);
  }
}

__global__ void init(float *u, int n)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (k < n)
    u[((long)i * n + j) * n + k] = sinf(0.05f * i) * cosf(0.03f * j) + 0.01f * k;
}

// T steps in one pass; a tile of BX x BY*RY points, T points of halo at
// each side, M planes of output per block; RY rows per thread along j:
// fewer threads per tile, so a large tile (a small halo share) still fits
// several blocks per SM, and the in-thread rows' j neighbours come from
// registers; only the first and last row read theirs from shared memory
// (RY = 1: a thread per point, the first version).
template <int T, int BX, int BY, int RY>
__global__ void __launch_bounds__(BX * BY) tb3y(const float *__restrict__ in, float *__restrict__ out, int n, int M)
{
  constexpr int TY = BY * RY, OX = BX - 2 * T, OY = TY - 2 * T, W = BX + 2, PL = (TY + 2) * W;
  extern __shared__ float sm[];  // [T][3][TY + 2][BX + 2]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int k = blockIdx.x * OX - T + tx, jb = blockIdx.y * OY - T + ty * RY;
  const int z0 = blockIdx.z * M, z1 = min(z0 + M, n);
  const long p = (long)n * n;
  bool cin[RY], cint[RY], own[RY];
  bool allint = true;
#pragma unroll
  for (int y = 0; y < RY; y++) {
    const int j = jb + y;
    cin[y] = k >= 0 && k < n && j >= 0 && j < n;
    cint[y] = k >= 1 && k < n - 1 && j >= 1 && j < n - 1;
    own[y] = cint[y] && tx >= T && tx < BX - T && ty * RY + y >= T && ty * RY + y < TY - T;
    allint = allint && cint[y];
  }
  const float *col = in + (long)jb * n + k;
  float r[T][3][RY];
#pragma unroll
  for (int t = 0; t < T; t++)
#pragma unroll
    for (int y = 0; y < RY; y++)
      r[t][0][y] = r[t][1][y] = r[t][2][y] = 0.f;
  float pf[3][RY];
  const int s0 = z0 - T, s1 = z1 - 1 + 2 * T;
  auto load = [&](int s, float *dst) {
#pragma unroll
    for (int y = 0; y < RY; y++)
      dst[y] = s >= 0 && s < n && cin[y] ? col[s * p + y * n] : 0.f;
  };
  const int me = (ty * RY + 1) * W + tx + 1;
  auto iter = [&](int s, auto ph, auto fast) {
    constexpr int PH = decltype(ph)::value, C = (PH + 1) % 3, D = (PH + 2) % 3;
    constexpr bool F = decltype(fast)::value;
    load(s + 2, pf[(PH + 2) % 3]);
#pragma unroll
    for (int t = T; t >= 1; t--) {
      const int q = s - 2 * t;
      const bool rint = q >= 1 && q < n - 1;
      const float *h = sm + ((t - 1) * 3 + C) * PL + me;
#pragma unroll
      for (int y = 0; y < RY; y++) {
        const float c = r[t - 1][C][y];
        const float jm = y > 0 ? r[t - 1][C][y - 1] : h[-W];
        const float jp = y < RY - 1 ? r[t - 1][C][y + 1] : h[(RY - 1 + 1) * W];
        const float x = cc * c + ce * (r[t - 1][PH][y] + r[t - 1][D][y] + jm + jp + h[y * W - 1] + h[y * W + 1]);
        const float o = F || (rint && cint[y]) ? x : c;
        if (t == T) {
          if (own[y] && q >= z0 && q < z1 && rint)
            out[q * p + (long)(jb + y) * n + k] = o;
        } else {
          r[t][PH][y] = o;
          sm[(t * 3 + PH) * PL + me + y * W] = o;
        }
      }
    }
#pragma unroll
    for (int y = 0; y < RY; y++) {
      r[0][PH][y] = pf[PH][y];
      sm[PH * PL + me + y * W] = pf[PH][y];
    }
    __syncthreads();
  };
  bool cfast = __syncthreads_and(allint);
  auto step = [&](int s, auto ph) {
    if (cfast && s - 2 * T >= 1 && s - 2 < n - 1)
      iter(s, ph, std::true_type{});
    else
      iter(s, ph, std::false_type{});
  };
  using P0 = std::integral_constant<int, 0>;
  using P1 = std::integral_constant<int, 1>;
  using P2 = std::integral_constant<int, 2>;
  int s = s0 - ((s0 % 3) + 3) % 3;
  load(s, pf[0]);
  load(s + 1, pf[1]);
  for (; s <= s1; s += 3) {
    step(s, P0{});
    step(s + 1, P1{});
    step(s + 2, P2{});
  }
}

static int n = 512;

template <int T, int BX, int BY, int RY> static void runy(const float *u0, float *a, float *b, const float *ref, int M, double copy)
{
  constexpr int OX = BX - 2 * T, OY = BY * RY - 2 * T;
  size_t smem = (size_t)T * 3 * (BY * RY + 2) * (BX + 2) * sizeof(float);
  auto kern = tb3y<T, BX, BY, RY>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kern));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, BX * BY, smem));
  dim3 grid((n + OX - 1) / OX + 1, (n + OY - 1) / OY + 1, (n + M - 1) / M);
  size_t bytes = (size_t)n * n * n * sizeof(float);
  CK(cudaMemcpy(a, u0, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(b, u0, bytes, cudaMemcpyDeviceToDevice));
  kern<<<grid, dim3(BX, BY), smem>>>(a, b, n, M);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const double md = max_abs_diff(b, ref, (size_t)n * n * n);
  float ms = time_it([&] { kern<<<grid, dim3(BX, BY), smem>>>(a, b, n, M); }, 3);
  double gc = pow(n - 2.0, 3) * T / (ms * 1e-3) / 1e9;
  printf("T=%d tile %3dx%-3d (%dx%d threads x %d rows) M=%4d  regs %3d  smem %6zu  blocks/SM %2d  %7.3f ms  %6.1f GCells/s  %.2fx bound  max|diff| %.1e\n", T,
         BX, BY * RY, BX, BY, RY, M, fa.numRegs, smem, per_sm, ms, gc, gc / (copy / 8), md);
}

int main(int argc, char **argv)
{
  if (argc > 1)
    n = atoi(argv[1]);
  double copy = copy_bandwidth();
  printf("copy bandwidth %.1f GB/s; single-step bound %.1f GCells/s (8 bytes per point)\n", copy, copy / 8);
  size_t bytes = (size_t)n * n * n * sizeof(float);
  float *u0, *a, *b, *x, *y, *ref[5];
  CK(cudaMalloc(&u0, bytes));
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  dim3 g((n + 127) / 128, n, n);
  init<<<g, 128>>>(u0, n);
  CK(cudaGetLastError());
  CK(cudaMemcpy(x, u0, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(y, u0, bytes, cudaMemcpyDeviceToDevice));
  for (int t = 1; t <= 4; t++) {
    step1<<<g, 128>>>(x, y, n);
    CK(cudaGetLastError());
    CK(cudaMalloc(&ref[t], bytes));
    CK(cudaMemcpy(ref[t], y, bytes, cudaMemcpyDeviceToDevice));
    float *z = x; x = y; y = z;
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  {
    float *p, *q;
    CK(cudaMalloc(&p, bytes));
    CK(cudaMalloc(&q, bytes));
    CK(cudaMemcpy(p, u0, bytes, cudaMemcpyDeviceToDevice));
    float ms = time_it([&] { step1<<<g, 128>>>(p, q, n); }, 3);
    printf("plain single step: %.1f GCells/s\n", pow(n - 2.0, 3) / (ms * 1e-3) / 1e9);
    CK(cudaFree(p));
    CK(cudaFree(q));
  }
#define RUNY(T, BX, BY, RY, M) runy<T, BX, BY, RY>(u0, a, b, ref[T], M, copy)
  RUNY(2, 32, 16, 1, 64);
  RUNY(3, 32, 16, 1, 64);
  RUNY(4, 32, 32, 1, 64);
  RUNY(2, 32, 8, 2, 64);
  RUNY(2, 32, 8, 4, 64);
  RUNY(2, 32, 16, 2, 64);
  RUNY(3, 32, 8, 4, 64);
  RUNY(3, 32, 16, 2, 64);
  RUNY(3, 32, 16, 4, 64);
  RUNY(3, 64, 8, 4, 64);
  RUNY(4, 32, 8, 4, 64);
  RUNY(4, 32, 16, 2, 64);
  RUNY(4, 32, 16, 4, 64);
  RUNY(4, 64, 8, 4, 64);
  RUNY(4, 64, 8, 8, 64);
  RUNY(4, 32, 8, 8, 64);
  RUNY(4, 32, 16, 4, 128);
  return 0;
}
