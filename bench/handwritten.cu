// handwritten.cu: hand-written CUDA kernels for Himeno (with and without
// the residual) and for the 7-point diffusion step, in the shapes people
// write them (one point per thread, several rows or planes per thread,
// register queues, prefetching, float4 loads, the classic 2.5-D shared-
// memory scheme), each timed against the copy bandwidth measured by the
// same program. bench/gpu.sh runs it beside the generated programs, so the
// generated code is compared with what a careful person writes by hand,
// in the same run (docs/benchmarks.md). The "check" lines compare the
// variants' results with each other.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -Iruntime -o handwritten bench/handwritten.cu && ./handwritten
//   env: SKIPH=1 skips Himeno, SKIPD=1 skips diffusion, ONLYL=1 runs only
//   size L; PROF=1 launches each kernel twice (for ncu). Experiments (docs/benchmarks.md, 07:00 UTC
//   entry): GEN=1 also times stencilc's own Himeno kernel (pasted below);
//   GENLAYOUT=1 lays the arrays out like stencilc; X4=1 drops the idle
//   last block along k; SWAP=1 swaps p and wrk2 after each sweep; REALP=1
//   fills p like Himeno; NOCOPY=1 allocates the arrays first; STAGGER=B
//   offsets array x by x*B bytes; LONG=1 times 300 sweeps as one.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

struct Hm { const float *a0,*a1,*a2,*a3,*b0,*b1,*b2,*c0,*c1,*c2,*wrk1,*bnd,*p; float *wrk2; int s0, s1; int ni, nj, nk; };

__device__ __forceinline__ float himeno_pt(const Hm &h, int c, float &ss)
{
  const float *p = h.p; int s0 = h.s0, s1 = h.s1;
  float s = h.a0[c] * p[c + s0] + h.a1[c] * p[c + s1] + h.a2[c] * p[c + 1]
    + h.b0[c] * (p[c + s0 + s1] - p[c + s0 - s1] - p[c - s0 + s1] + p[c - s0 - s1])
    + h.b1[c] * (p[c + s1 + 1] - p[c - s1 + 1] - p[c + s1 - 1] + p[c - s1 - 1])
    + h.b2[c] * (p[c + s0 + 1] - p[c - s0 + 1] - p[c + s0 - 1] + p[c - s0 - 1])
    + h.c0[c] * p[c - s0] + h.c1[c] * p[c - s1] + h.c2[c] * p[c - 1] + h.wrk1[c];
  ss = (s * h.a3[c] - p[c]) * h.bnd[c];
  return p[c] + 0.8f * ss;
}

template <int OP> __device__ double bred(double v)
{
  __shared__ double wp[32];
  int t = threadIdx.x + blockDim.x * threadIdx.y, lane = t & 31, w = t >> 5, nw = (blockDim.x * blockDim.y + 31) >> 5;
  for (int d = 16; d; d >>= 1) v += __shfl_down_sync(~0u, v, d);
  if (lane == 0) wp[w] = v;
  __syncthreads();
  if (w == 0) { v = lane < nw ? wp[lane] : 0.0; for (int d = 16; d; d >>= 1) v += __shfl_down_sync(~0u, v, d); }
  return v;
}

// MODE 0: no residual. 1: double block reduce, partial per block. 2: float warp sums, double block.
// 3: warp shuffle then atomicAdd per warp. JPT rows per thread (j), IPT planes per thread (i).
#include "stn.h"
static constexpr float omega = 0.8f;
// The kernel stencilc generates for bench/himeno_nored.stn, verbatim (GEN=1 runs it here).
template <typename I>
__global__ void __launch_bounds__(512) jacobi_kernel_(const stn_grid G, const float *__restrict__ a0, const float *__restrict__ a1, const float *__restrict__ a2, const float *__restrict__ a3, const float *__restrict__ b0, const float *__restrict__ b1, const float *__restrict__ b2, const float *__restrict__ c0, const float *__restrict__ c1, const float *__restrict__ c2, const float *__restrict__ wrk1, const float *__restrict__ bnd, const float *__restrict__ p, float *__restrict__ wrk2, long i_lo_, long i_hi_, long j_lo_, long j_hi_, long k_lo_, long k_hi_)
{
  const I s0_ = (I)G.stride[0];
  const I s1_ = (I)G.stride[1];
  const I k = (I)(k_lo_ & ~31L) + (I)(blockIdx.x * blockDim.x + threadIdx.x);
  const I j = (I)j_lo_ + (I)(blockIdx.y * blockDim.y + threadIdx.y);
  const I i = (I)i_lo_ + (I)(blockIdx.z);
  if (k >= k_lo_ && k < k_hi_ && j < j_hi_ && i < i_hi_) {
    const I c_ = i * s0_ + j * s1_ + k;
    /* bench/himeno_nored.stn:21 */
    const float s0 = a0[c_] * p[c_ + s0_] + a1[c_] * p[c_ + s1_] + a2[c_] * p[c_ + 1] + b0[c_] * (p[c_ + s0_ + s1_] - p[c_ + s0_ - s1_] - p[c_ - s0_ + s1_] + p[c_ - s0_ - s1_]) + b1[c_] * (p[c_ + s1_ + 1] - p[c_ - s1_ + 1] - p[c_ + s1_ - 1] + p[c_ - s1_ - 1]) + b2[c_] * (p[c_ + s0_ + 1] - p[c_ - s0_ + 1] - p[c_ + s0_ - 1] + p[c_ - s0_ - 1]) + c0[c_] * p[c_ - s0_] + c1[c_] * p[c_ - s1_] + c2[c_] * p[c_ - 1] + wrk1[c_];
    /* bench/himeno_nored.stn:26 */
    const float ss = (s0 * a3[c_] - p[c_]) * bnd[c_];
    /* bench/himeno_nored.stn:27 */
    wrk2[c_] = p[c_] + omega * ss;
  }
}

__device__ unsigned counter_;
__device__ double acc2_;
template <int MODE, int JPT, int IPT>
__global__ void __launch_bounds__(512) himeno_k(Hm h, double *part, double *acc)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int j0 = 1 + (blockIdx.y * blockDim.y) * JPT + threadIdx.y;
  int i0 = 1 + blockIdx.z * IPT;
  double g = 0.0;
  float gf = 0.f;
  if (k >= 1 && k < h.nk - 1) {
#pragma unroll
    for (int ii = 0; ii < IPT; ii++) {
#pragma unroll
      for (int jj = 0; jj < JPT; jj++) {
        int i = i0 + ii, j = j0 + jj * blockDim.y;
        if (i < h.ni - 1 && j < h.nj - 1) {
          int c = i * h.s0 + j * h.s1 + k;
          float ss;
          h.wrk2[c] = himeno_pt(h, c, ss);
          if (MODE == 2) gf += ss * ss; else g += (double)(ss * ss);
        }
      }
    }
  }
  if (MODE == 1 || MODE == 2) {
    if (MODE == 2) g = gf;
    double v = bred<0>(g);
    if (threadIdx.x == 0 && threadIdx.y == 0) part[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = v;
  } else if (MODE == 4 || MODE == 5) {
    __shared__ bool last;
    double v = bred<0>(g);
    int nb = gridDim.x * gridDim.y * gridDim.z;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      if (MODE == 4) part[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = v;
      else atomicAdd(&acc2_, v);
      __threadfence();
      last = atomicAdd(&counter_, 1u) == (unsigned)nb - 1;
    }
    __syncthreads();
    if (last) {
      if (MODE == 4) {
        double w = 0;
        int t = threadIdx.x + blockDim.x * threadIdx.y, nt = blockDim.x * blockDim.y;
#pragma unroll 8
        for (int b = t; b < nb; b += nt) w += __ldcg(part + b);
        w = bred<0>(w);
        if (t == 0) { *acc = w; counter_ = 0; }
      } else if (threadIdx.x == 0 && threadIdx.y == 0) {
        *acc = __ldcg(&acc2_); acc2_ = 0; counter_ = 0;
      }
    }
  } else if (MODE == 3) {
    for (int d = 16; d; d >>= 1) g += __shfl_down_sync(~0u, g, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, g);
  }
}

__global__ void finish(const double *part, int n, double *out)
{
  double v = 0;
  for (int t = threadIdx.x; t < n; t += blockDim.x) v += part[t];
  v = bred<0>(v);
  if (threadIdx.x == 0) *out = v;
}

static double *stage;
__global__ void finish2(const double *part, int n, int chunk, double *out)
{
  int lo = blockIdx.x * chunk, len = n - lo < chunk ? n - lo : chunk;
  double v = 0;
#pragma unroll 8
  for (int t = threadIdx.x; t < len; t += blockDim.x) v += __ldcg(part + lo + t);
  v = bred<0>(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// diffusion: MODE 0 naive, 1 stream queue, 2 stream queue + prefetch one plane ahead, 3 naive 2 rows per thread
template <int MODE, int M>
__global__ void __launch_bounds__(512) diff_k(const float *__restrict__ f, float *__restrict__ fn, int s0, int s1, int n, float cc, float ce)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (MODE == 0 || MODE == 3) {
    int i = 1 + blockIdx.z;
    for (int jj = 0; jj < (MODE == 3 ? 2 : 1); jj++) {
      int j = 1 + blockIdx.y * blockDim.y * (MODE == 3 ? 2 : 1) + threadIdx.y + jj * blockDim.y;
      if (k >= 1 && k < n - 1 && j < n - 1) {
        int c = i * s0 + j * s1 + k;
        fn[c] = cc * f[c] + ce * (f[c - s0] + f[c + s0] + f[c - s1] + f[c + s1] + f[c - 1] + f[c + 1]);
      }
    }
    return;
  }
  int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  int i0 = 1 + blockIdx.z * M, i1 = min(i0 + M, n - 1);
  if (k < 1 || k >= n - 1 || j >= n - 1) return;
  int c = i0 * s0 + j * s1 + k;
  float m1 = f[c - s0], p0 = f[c], p1 = f[c + s0];
  float p2 = (MODE == 2 && i0 + 2 < n) ? f[c + 2 * s0] : 0.f;
#pragma unroll 4
  for (int i = i0; i < i1; i++, c += s0) {
    float nx = 0.f;
    if (MODE == 2 && i + 3 < n) nx = f[c + 3 * s0];
    fn[c] = cc * p0 + ce * (m1 + p1 + f[c - s1] + f[c + s1] + f[c - 1] + f[c + 1]);
    m1 = p0; p0 = p1;
    if (MODE == 2) { p1 = p2; p2 = nx; } else if (i + 2 < n) p1 = f[c + 2 * s0];
  }
}

__device__ __forceinline__ float4 ld4(const float *p) { return *reinterpret_cast<const float4 *>(p); }
__device__ __forceinline__ float4 pt4(float4 c, float4 a, float4 b, float4 u, float4 d, float l, float r, float cc, float ce)
{
  float4 o;
  o.x = cc * c.x + ce * (u.x + d.x + a.x + b.x + l + c.y);
  o.y = cc * c.y + ce * (u.y + d.y + a.y + b.y + c.x + c.z);
  o.z = cc * c.z + ce * (u.z + d.z + a.z + b.z + c.y + c.w);
  o.w = cc * c.w + ce * (u.w + d.w + a.w + b.w + c.z + r);
  return o;
}
// 4 consecutive k per thread; MODE 0 naive, 1 stream with queue + prefetch. Edge threads (k0 == 0 or k0 + 4 > n - 1) go scalar.
template <int MODE, int M>
__global__ void __launch_bounds__(512) diff4_k(const float *__restrict__ f, float *__restrict__ fn, int s0, int s1, int n, float cc, float ce)
{
  int k0 = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  if (k0 >= n || j >= n - 1) return;
  int i0 = 1 + blockIdx.z * M, i1 = min(i0 + M, n - 1);
  bool edge = k0 == 0 || k0 + 4 > n - 1;
  if (edge) {
    for (int i = i0; i < i1; i++)
      for (int k = max(k0, 1); k < min(k0 + 4, n - 1); k++) {
        int c = i * s0 + j * s1 + k;
        fn[c] = cc * f[c] + ce * (f[c - s0] + f[c + s0] + f[c - s1] + f[c + s1] + f[c - 1] + f[c + 1]);
      }
    return;
  }
  int c = i0 * s0 + j * s1 + k0;
  if (MODE == 0) {
    *reinterpret_cast<float4 *>(fn + c) = pt4(ld4(f + c), ld4(f + c - s1), ld4(f + c + s1), ld4(f + c - s0), ld4(f + c + s0), f[c - 1], f[c + 4], cc, ce);
    return;
  }
  float4 m1 = ld4(f + c - s0), p0 = ld4(f + c), p1 = ld4(f + c + s0), p2 = i0 + 2 < n ? ld4(f + c + 2 * s0) : p1;
#pragma unroll 4
  for (int i = i0; i < i1; i++, c += s0) {
    float4 nx = i + 3 < n ? ld4(f + c + 3 * s0) : p2;
    *reinterpret_cast<float4 *>(fn + c) = pt4(p0, ld4(f + c - s1), ld4(f + c + s1), m1, p1, f[c - 1], f[c + 4], cc, ce);
    m1 = p0; p0 = p1; p1 = p2; p2 = nx;
  }
}

// 2.5D: register queue along i (prefetched one plane ahead), current plane in shared memory
template <int BX, int BY, int M>
__global__ void __launch_bounds__(BX * BY) diff_s(const float *__restrict__ f, float *__restrict__ fn, int s0, int s1, int n, float cc, float ce)
{
  __shared__ float t[BY + 2][BX + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int k = blockIdx.x * BX + tx, j = 1 + blockIdx.y * BY + ty;
  bool valid = k >= 1 && k < n - 1 && j < n - 1;
  int kl = min(k, n - 1), jl = min(j, n - 1);
  int i0 = 1 + blockIdx.z * M, i1 = min(i0 + M, n - 1);
  int c = i0 * s0 + jl * s1 + kl;
  float m1 = f[c - s0], p0 = f[c], p1 = f[c + s0];
  for (int i = i0; i < i1; i++, c += s0) {
    float nx = i + 2 < n ? f[c + 2 * s0] : 0.f;
    __syncthreads();
    t[ty + 1][tx + 1] = p0;
    if (ty == 0) t[0][tx + 1] = f[c - s1];
    if (ty == BY - 1) t[BY + 1][tx + 1] = f[c + s1];
    if (tx == 0) t[ty + 1][0] = k > 0 ? f[c - 1] : 0.f;
    if (tx == BX - 1) t[ty + 1][BX + 1] = f[c + 1];
    __syncthreads();
    if (valid) fn[c] = cc * p0 + ce * (m1 + p1 + t[ty][tx + 1] + t[ty + 2][tx + 1] + t[ty + 1][tx] + t[ty + 1][tx + 2]);
    m1 = p0; p0 = p1; p1 = nx;
  }
}

__global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

static cudaEvent_t e0, e1;
static double *mapped_h, *mapped, *pinned_h;
template <class F> static float best_ms(F launch, int reps, int iters)
{
  if (getenv("PROF")) reps = 2, iters = 1;
  float best = 1e30f, ms;
  for (int r = 0; r < reps; r++) {
    CK(cudaEventRecord(e0));
    for (int it = 0; it < iters; it++) launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r > 0 && ms < best) best = ms;
  }
  return best / iters;
}

static double BW;
static void report(const char *name, float ms, double bytes)
{
  double gbs = bytes / (ms * 1e-3) / 1e9;
  printf("%-44s %8.4f ms  %7.0f GB/s  %5.1f%%\n", name, ms, gbs, 100 * gbs / BW);
}

static float *dalloc(size_t n, float v)
{
  float *d, *h = (float *)malloc(n * 4);
  for (size_t x = 0; x < n; x++) h[x] = v;
  CK(cudaMalloc(&d, n * 4));
  CK(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
  free(h);
  return d;
}

template <int MODE, int JPT, int IPT>
static void run_h(const char *name, Hm h, int bx, int by, double *part, double *acc, double *out, bool fin, bool copy = false, bool fin2 = false, bool map = false)
{
  // X4=1: no block past the last interior point along k; SWAP=1: swap p and wrk2 after each sweep, as a program does
  dim3 b(bx, by), g(((getenv("X4") ? h.nk - 1 : h.nk) + bx - 1) / bx, (h.nj - 2 + by * JPT - 1) / (by * JPT), (h.ni - 2 + IPT - 1) / IPT);
  int nb = g.x * g.y * g.z;
  bool swap = getenv("SWAP") != NULL;
  float ms = best_ms([&] { himeno_k<MODE, JPT, IPT><<<g, b>>>(h, part, acc); if (swap) { float *t = (float *)h.p; h.p = h.wrk2; h.wrk2 = t; } if (fin) finish<<<1, 1024>>>(part, nb, out); if (fin2) { int nb1 = (nb + 2047) / 2048; finish2<<<nb1, 256>>>(part, nb, 2048, stage); finish2<<<1, 256>>>(stage, nb1, nb1, map ? mapped : out); }
    if (copy) cudaMemcpyAsync(pinned_h, fin2 ? out : acc, 8, cudaMemcpyDeviceToHost); }, 4, 30);
  char buf[128];
  snprintf(buf, sizeof buf, "%s %dx%d", name, bx, by);
  report(buf, ms, 56.0 * (h.ni - 2) * (h.nj - 2) * (h.nk - 2));
}

int main()
{
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  if (getenv("NOCOPY")) BW = 3000;  // placement experiment: allocate the arrays first
  else {
    size_t bytes = (size_t)1 << 31; void *a, *b;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMemset(a, 1, bytes));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float ms = best_ms([&] { copy4<<<sms * 8, 256>>>((const float4 *)a, (float4 *)b, bytes / 16); }, 4, 5);
    float ms2 = best_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }, 4, 5);
    BW = 2.0 * bytes / (fminf(ms, ms2) * 1e-3) / 1e9;
    printf("copy bandwidth %.0f GB/s\n", BW);
    CK(cudaFree(a)); CK(cudaFree(b));
  }
  CK(cudaHostAlloc(&mapped_h, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&mapped, mapped_h, 0));
  CK(cudaMallocHost(&pinned_h, 64));
  double *part, *acc, *out;
  CK(cudaMalloc(&stage, 1 << 20));
  CK(cudaMalloc(&part, 8 << 20)); CK(cudaMalloc(&acc, 8)); CK(cudaMalloc(&out, 8));
  int sizes[2][3] = {{129, 129, 257}, {257, 257, 513}};
  for (auto &sz : sizes) {
    if (getenv("SKIPH")) break;
    if (getenv("ONLYL") && sz[0] != 257) continue;
    Hm h;
    h.ni = sz[0]; h.nj = sz[1]; h.nk = sz[2];
    // GENLAYOUT=1: stencilc's layout (a halo of 1 around the grid, rows
    // starting 32 elements in and padded to 32) instead of the plain one.
    bool gen = getenv("GENLAYOUT") != NULL;
    int row = gen ? (32 + h.nk + 1 + 31) / 32 * 32 : (h.nk + 31) / 32 * 32;
    h.s1 = row; h.s0 = row * (gen ? h.nj + 2 : h.nj);
    size_t n = (size_t)h.s0 * (gen ? h.ni + 2 : h.ni) + 64;
    size_t off = gen ? (size_t)h.s0 + row + 32 : 0;
    const float **in[] = {&h.a0, &h.a1, &h.a2, &h.a3, &h.b0, &h.b1, &h.b2, &h.c0, &h.c1, &h.c2, &h.wrk1, &h.bnd, &h.p};
    float vals[] = {1, 1, 1, 1.f / 6, 0, 0, 0, 1, 1, 1, 0, 1, 0.5f};
    // STAGGER=B: array x starts x*B bytes further into its allocation
    size_t stag = getenv("STAGGER") ? (size_t)atol(getenv("STAGGER")) / 4 : 0;
    n += 14 * stag;
    for (int x = 0; x < 13; x++) *in[x] = dalloc(n, vals[x]) + off + x * stag;
    if (getenv("REALP")) {  // p as Himeno initialises it: (i / (ni - 1))^2 by plane
      float *hp = (float *)malloc(n * 4);
      for (size_t x = 0; x < n; x++) { double i = (double)(x / h.s0); hp[x] = (float)(i * i / ((h.ni - 1.0) * (h.ni - 1.0))); }
      CK(cudaMemcpy((float *)h.p - off, hp, n * 4, cudaMemcpyHostToDevice));
      free(hp);
    }
    h.wrk2 = dalloc(n, 0) + off + 13 * stag;
    printf("\nhimeno %dx%dx%d\n", h.ni, h.nj, h.nk);
    int shapes[][2] = {{32, 4}, {32, 8}, {64, 2}, {64, 4}, {64, 8}, {128, 1}, {128, 2}, {128, 4}, {256, 1}, {256, 2}, {512, 1}};
    if (getenv("GEN")) {
      stn_grid G;
      memset(&G, 0, sizeof G);
      G.rank = 3; G.stride[0] = h.s0; G.stride[1] = h.s1; G.stride[2] = 1;
      dim3 b(128, 4), g(4, (h.nj - 2 + 3) / 4, h.ni - 2);
      float ms = best_ms([&] { jacobi_kernel_<int><<<g, b>>>(G, h.a0, h.a1, h.a2, h.a3, h.b0, h.b1, h.b2, h.c0, h.c1, h.c2, h.wrk1, h.bnd, h.p, h.wrk2, 1, h.ni - 1, 1, h.nj - 1, 1, h.nk - 1); }, 4, 30);
      report("generated nored kernel 128x4", ms, 56.0 * (h.ni - 2) * (h.nj - 2) * (h.nk - 2));
    }
    if (getenv("LONG")) {
      // One timed block of 300 sweeps, like a program's own timer, against best of 4 x 30.
      dim3 b(128, 4), g((h.nk + 127) / 128, (h.nj - 2 + 3) / 4, h.ni - 2);
      float ms = best_ms([&] { himeno_k<0, 1, 1><<<g, b>>>(h, part, acc); }, 2, 300);
      report("nored 128x4, 300 sweeps timed as one", ms, 56.0 * (h.ni - 2) * (h.nj - 2) * (h.nk - 2));
    }
    for (auto &sh : shapes) run_h<0, 1, 1>("nored", h, sh[0], sh[1], part, acc, out, false);
    for (auto &sh : shapes) run_h<1, 1, 1>("red kernel only", h, sh[0], sh[1], part, acc, out, false);
    run_h<1, 1, 1>("red + 1-block finish", h, 128, 4, part, acc, out, true);
    run_h<1, 1, 1>("red + 2-stage finish", h, 128, 4, part, acc, out, false, false, true);
    run_h<1, 1, 1>("red + 2-stage finish -> mapped", h, 128, 4, part, acc, out, false, false, true, true);
    run_h<1, 1, 1>("red + 2-stage finish + memcpy", h, 128, 4, part, acc, out, false, true, true);
    {
      double hv[3];
      dim3 b(128, 4), g((h.nk + 127) / 128, (h.nj - 2 + 3) / 4, h.ni - 2);
      himeno_k<1, 1, 1><<<g, b>>>(h, part, acc); finish<<<1, 1024>>>(part, g.x * g.y * g.z, out);
      himeno_k<4, 1, 1><<<g, b>>>(h, part, mapped);
      himeno_k<5, 1, 1><<<g, b>>>(h, part, mapped + 1);
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(hv, out, 8, cudaMemcpyDeviceToHost));
      printf("check: two-kernel %.17g last-block %.17g atomic %.17g\n", hv[0], mapped_h[0], mapped_h[1]);
    }
    for (int x = 0; x < 13; x++) CK(cudaFree((void *)(*in[x] - off - x * stag)));
    CK(cudaFree(h.wrk2 - off - 13 * stag));
  }
  if (!getenv("SKIPD")) {
    int n = 512, row = 512 + 32;
    int s1 = row, s0 = row * n;
    size_t tot = (size_t)s0 * n + 64;
    float *f = dalloc(tot, 1.f) + 32, *fn = dalloc(tot, 0.f) + 32;
    double bytes = 8.0 * (n - 2.0) * (n - 2) * (n - 2);
    printf("\ndiffusion 512^3\n");
#define D(name, MODE, M, bx, by, m, jpt) do { \
      dim3 b(bx, by), g((n + bx - 1) / bx, (n - 2 + by * jpt - 1) / (by * jpt), (n - 2 + m - 1) / m); \
      float ms = best_ms([&] { diff_k<MODE, M><<<g, b>>>(f, fn, s0, s1, n, 0.4f, 0.1f); }, 4, 30); \
      char buf[128]; snprintf(buf, sizeof buf, "%s %dx%d m%d", name, bx, by, m); \
      report(buf, ms, bytes); } while (0)
    D("naive", 0, 1, 128, 4, 1, 1);
    D("naive", 0, 1, 256, 1, 1, 1);
    D("naive j2", 3, 1, 128, 2, 1, 2);
    D("stream queue", 1, 4, 128, 2, 4, 1);
    D("stream queue", 1, 8, 128, 2, 8, 1);
    D("stream queue", 1, 16, 128, 2, 16, 1);
    D("stream queue", 1, 8, 256, 1, 8, 1);
    D("stream prefetch", 2, 4, 128, 2, 4, 1);
    D("stream prefetch", 2, 8, 128, 2, 8, 1);
    D("stream prefetch", 2, 16, 128, 2, 16, 1);
    D("stream prefetch", 2, 8, 128, 4, 8, 1);
    D("stream prefetch", 2, 8, 256, 1, 8, 1);
    D("stream prefetch", 2, 16, 64, 4, 16, 1);
#define D4(name, MODE, M, bx, by) do { \
      dim3 b(bx, by), g((n / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, (n - 2 + M - 1) / M); \
      float ms = best_ms([&] { diff4_k<MODE, M><<<g, b>>>(f, fn, s0, s1, n, 0.4f, 0.1f); }, 4, 30); \
      char buf[128]; snprintf(buf, sizeof buf, "%s %dx%d m%d", name, bx, by, M); \
      report(buf, ms, bytes); } while (0)
    D4("vec4 naive", 0, 1, 128, 1);
    D4("vec4 naive", 0, 1, 128, 2);
    D4("vec4 naive", 0, 1, 128, 4);
    D4("vec4 naive", 0, 1, 64, 4);
    D4("vec4 naive", 0, 1, 32, 8);
    D4("vec4 stream", 1, 4, 128, 2);
    D4("vec4 stream", 1, 8, 128, 2);
    D4("vec4 stream", 1, 16, 128, 2);
    D4("vec4 stream", 1, 8, 64, 4);
    D4("vec4 stream", 1, 8, 32, 8);
    D4("vec4 stream", 1, 16, 32, 8);
    D4("vec4 stream", 1, 4, 128, 4);
    D4("vec4 stream", 1, 2, 128, 4);
#define DS(BX, BY, M) do { \
      dim3 b(BX, BY), g((n + BX - 1) / BX, (n - 2 + BY - 1) / BY, (n - 2 + M - 1) / M); \
      float ms = best_ms([&] { diff_s<BX, BY, M><<<g, b>>>(f, fn, s0, s1, n, 0.4f, 0.1f); }, 4, 30); \
      char buf[128]; snprintf(buf, sizeof buf, "2.5D smem %dx%d m%d", BX, BY, M); \
      report(buf, ms, bytes); } while (0)
    DS(32, 8, 16); DS(32, 8, 32); DS(32, 16, 16); DS(32, 16, 32); DS(64, 4, 16); DS(64, 8, 16); DS(64, 8, 32);
    DS(128, 2, 16); DS(128, 4, 16); DS(128, 4, 32); DS(64, 16, 32); DS(256, 2, 16); DS(32, 32, 32);
    {
      // check the vec4 results against the scalar naive kernel
      float *ref; CK(cudaMalloc(&ref, tot * 4));
      float *h1 = (float *)malloc(tot * 4), *h2 = (float *)malloc(tot * 4);
      // non-uniform input
      float *hi = (float *)malloc(tot * 4); for (size_t x = 0; x < tot; x++) hi[x] = (float)((x * 2654435761u) % 1000) / 1000.f;
      CK(cudaMemcpy(f - 32, hi, tot * 4, cudaMemcpyHostToDevice));
      CK(cudaMemset(fn - 32, 0, tot * 4));
      diff_k<0, 1><<<dim3(4, 128, 510), dim3(128, 4)>>>(f, fn, s0, s1, n, 0.4f, 0.1f);
      CK(cudaMemcpy(h1, fn - 32, tot * 4, cudaMemcpyDeviceToHost));
      const char *nm[3] = {"vec4 naive", "vec4 stream m8", "2.5D smem 64x8 m16"};
      for (int v = 0; v < 3; v++) {
        CK(cudaMemset(fn - 32, 0, tot * 4));
        if (v == 0) diff4_k<0, 1><<<dim3(1, 510, 510), dim3(128, 1)>>>(f, fn, s0, s1, n, 0.4f, 0.1f);
        else if (v == 1) diff4_k<1, 8><<<dim3(1, 255, 64), dim3(128, 2)>>>(f, fn, s0, s1, n, 0.4f, 0.1f);
        else diff_s<64, 8, 16><<<dim3(8, 64, 32), dim3(64, 8)>>>(f, fn, s0, s1, n, 0.4f, 0.1f);
        CK(cudaMemcpy(h2, fn - 32, tot * 4, cudaMemcpyDeviceToHost));
        double md = 0; for (size_t x = 0; x < tot; x++) md = fmax(md, fabs(h1[x] - h2[x]));
        printf("check %s: max |diff| vs scalar %.3g\n", nm[v], md);
      }
    }
  }
  return 0;
}
