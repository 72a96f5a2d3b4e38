// prefetch.cu: do single-sweep 3-D 7-point kernels (diffusion3d 86-87% of
// copy, CG's apply 79%) wait on their loads every plane? stencilc's stream
// kernel loads, at plane i, the column's plane i+1 and plane i's in-plane
// neighbours (rows j-1, j+1, columns k-1, k+V), then computes plane i from
// them: each plane waits for a whole round trip to memory. Variants, each
// timed against the copy bandwidth measured here and checked against the
// first (the stream kernel):
//   base    the stream kernel as stencilc prints it (int indexing)
//   pipe    software pipelined: plane i+1's in-plane neighbours and plane
//           i+2's column are issued before plane i is computed
//   burst M a block's march is M planes, all their loads issued first
//   +shfl   columns k-1 and k+V from the neighbouring lanes (full warps)
// for diffusion3d's step (512^3 float, 4 points per thread) and CG's
// apply (256^3 double, two stencil fields and the p.q partials).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o prefetch bench/prefetch.cu && ./prefetch
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <initializer_list>

#include "harness.cuh"
#include "fields3d.cuh"

// What one plane gives a thread: its column's V points, the rows beside
// them, the columns beyond them; for each of NF fields.
template <typename T, int V, int NF> struct Pl {
  Vec<T, V> c[NF], n[NF], s[NF];
  T w[NF], e[NF];
};

template <typename T, int NF> struct Fields { const T *f[NF]; };

template <typename T, int V, int NF, bool SHFL>
__device__ __forceinline__ void ld_nb(Pl<T, V, NF> &P, const Fields<T, NF> &F, int c, int s1)
{
#pragma unroll
  for (int x = 0; x < NF; x++) {
    P.n[x] = ld<T, V>(&F.f[x][c - s1]);
    P.s[x] = ld<T, V>(&F.f[x][c + s1]);
    if (!SHFL) {
      P.w[x] = F.f[x][c - 1];
      P.e[x] = F.f[x][c + V];
    }
  }
}

template <typename T, int V, int NF>
__device__ __forceinline__ void ld_c(Vec<T, V> *c, const Fields<T, NF> &F, int at)
{
#pragma unroll
  for (int x = 0; x < NF; x++)
    c[x] = ld<T, V>(&F.f[x][at]);
}

// Columns k-1 and k+V from the lanes beside (a warp is 32 threads along k).
template <typename T, int V, int NF>
__device__ __forceinline__ void shfl_we(Pl<T, V, NF> &P, const Fields<T, NF> &F, int c)
{
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int x = 0; x < NF; x++) {
    P.w[x] = __shfl_up_sync(0xffffffffu, P.c[x].v[V - 1], 1);
    P.e[x] = __shfl_down_sync(0xffffffffu, P.c[x].v[0], 1);
    if (lane == 0)
      P.w[x] = F.f[x][c - 1];
    if (lane == 31)
      P.e[x] = F.f[x][c + V];
  }
}

struct Diff {
  typedef float T;
  static constexpr int NF = 1;
  static constexpr bool RED = false;
  float cc, ce;
  template <int V> __device__ float at(const Vec<T, V> *cm, const Pl<T, V, NF> &P, const Vec<T, V> *cn, int v) const
  {
    const float w = v == 0 ? P.w[0] : P.c[0].v[v - 1], e = v == V - 1 ? P.e[0] : P.c[0].v[v + 1];
    return cc * P.c[0].v[v] + ce * (cm[0].v[v] + cn[0].v[v] + P.n[0].v[v] + P.s[0].v[v] + w + e);
  }
};

struct Apply {  // fields: 0 kappa, 1 p
  typedef double T;
  static constexpr int NF = 2;
  static constexpr bool RED = true;
  template <int V> __device__ double at(const Vec<T, V> *cm, const Pl<T, V, NF> &P, const Vec<T, V> *cn, int v) const
  {
    const double kc = P.c[0].v[v], pc = P.c[1].v[v];
    const double kw = v == 0 ? P.w[0] : P.c[0].v[v - 1], ke = v == V - 1 ? P.e[0] : P.c[0].v[v + 1];
    const double pw = v == 0 ? P.w[1] : P.c[1].v[v - 1], pe = v == V - 1 ? P.e[1] : P.c[1].v[v + 1];
    return 0.5 * ((kc + cm[0].v[v]) * (pc - cm[1].v[v]) + (kc + cn[0].v[v]) * (pc - cn[1].v[v]) + (kc + P.n[0].v[v]) * (pc - P.n[1].v[v]) +
                  (kc + P.s[0].v[v]) * (pc - P.s[1].v[v]) + (kc + kw) * (pc - pw) + (kc + ke) * (pc - pe));
  }
};

// Plane i's V points from the column's planes i - 1 (cm), i (P.c) and
// i + 1 (cn) and P's in-plane neighbours (with SHFL, columns k - 1 and
// k + V from the lanes beside first): stored, and into the reduction.
template <typename S, int V, bool SHFL>
__device__ __forceinline__ void put(const S &op, const Fields<typename S::T, S::NF> &F, typename S::T *out, int c, int k,
                                    int n, const Vec<typename S::T, V> *cm, Pl<typename S::T, V, S::NF> &P,
                                    const Vec<typename S::T, V> *cn, double &red)
{
  typedef typename S::T T;
  if (SHFL)
    shfl_we<T, V, S::NF>(P, F, c);
  Vec<T, V> o;
#pragma unroll
  for (int v = 0; v < V; v++)
    o.v[v] = op.template at<V>(cm, P, cn, v);
  if (k >= 1 && k + V <= n - 1) {
    *(Vec<T, V> *)&out[c] = o;
    if (S::RED)
#pragma unroll
      for (int v = 0; v < V; v++)
        red += (double)P.c[S::NF - 1].v[v] * o.v[v];
  } else {
#pragma unroll
    for (int v = 0; v < V; v++)
      if (k + v >= 1 && k + v < n - 1) {
        out[c + v] = o.v[v];
        if (S::RED)
          red += (double)P.c[S::NF - 1].v[v] * o.v[v];
      }
  }
}

// MODE 0: base; 1: pipe; 2: burst of M planes (march must be M).
template <typename S, int V, int MODE, int M, bool SHFL>
__global__ void __launch_bounds__(512) sweep(S op, Fields<typename S::T, S::NF> F, typename S::T *__restrict__ out, double *__restrict__ part, int n, int s0, int s1, int march)
{
  typedef typename S::T T;
  constexpr int NF = S::NF;
  const int k = V * (blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, n - 1);
  double red = 0;
  // With SHFL every lane of a warp takes part: lanes past the rows' end
  // (k >= n) read the padding and store nothing.
  if ((SHFL || k < n) && j < n - 1) {
    if (MODE == 0) {
      Vec<T, V> cm[NF], cn[NF];
      Pl<T, V, NF> P;
      ld_c<T, V, NF>(cm, F, (i0 - 1) * s0 + j * s1 + k);
      ld_c<T, V, NF>(P.c, F, i0 * s0 + j * s1 + k);
      for (int i = i0; i < i1; i++) {
        const int c = i * s0 + j * s1 + k;
        ld_c<T, V, NF>(cn, F, c + s0);
        ld_nb<T, V, NF, SHFL>(P, F, c, s1);
        put<S, V, SHFL>(op, F, out, c, k, n, cm, P, cn, red);
#pragma unroll
        for (int x = 0; x < NF; x++) {
          cm[x] = P.c[x];
          P.c[x] = cn[x];
        }
      }
    } else if (MODE == 1) {
      Vec<T, V> cm[NF], cn[NF], cnn[NF];
      Pl<T, V, NF> P, Q;
      int c = i0 * s0 + j * s1 + k;
      ld_c<T, V, NF>(cm, F, c - s0);
      ld_c<T, V, NF>(P.c, F, c);
      ld_nb<T, V, NF, SHFL>(P, F, c, s1);
      ld_c<T, V, NF>(cn, F, c + s0);
      for (int i = i0; i < i1; i++, c += s0) {
        const bool more = i + 1 < i1;
        if (more) {
          ld_nb<T, V, NF, SHFL>(Q, F, c + s0, s1);
          ld_c<T, V, NF>(cnn, F, c + 2 * s0);
        }
        put<S, V, SHFL>(op, F, out, c, k, n, cm, P, cn, red);
#pragma unroll
        for (int x = 0; x < NF; x++) {
          cm[x] = P.c[x];
          P.c[x] = cn[x];
          P.n[x] = Q.n[x];
          P.s[x] = Q.s[x];
          P.w[x] = Q.w[x];
          P.e[x] = Q.e[x];
          cn[x] = cnn[x];
        }
      }
    } else {
      Vec<T, V> C[M + 2][NF];
      Pl<T, V, NF> P[M];
      const int c0 = i0 * s0 + j * s1 + k;
#pragma unroll
      for (int m = 0; m < M + 2; m++)
        if (i0 - 1 + m <= i1)
          ld_c<T, V, NF>(C[m], F, c0 + (m - 1) * s0);
#pragma unroll
      for (int m = 0; m < M; m++)
        if (i0 + m < i1)
          ld_nb<T, V, NF, SHFL>(P[m], F, c0 + m * s0, s1);
#pragma unroll
      for (int m = 0; m < M; m++)
        if (i0 + m < i1) {
#pragma unroll
          for (int x = 0; x < NF; x++)
            P[m].c[x] = C[m + 1][x];
          put<S, V, SHFL>(op, F, out, c0 + m * s0, k, n, C[m], P[m], C[m + 2], red);
        }
    }
  }
  if (S::RED) {
    const double s = block_sum(red);
    if (threadIdx.x == 0 && threadIdx.y == 0)
      part[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = s;
  }
}

static double bw, red_ref;
static const char *mode_name[] = {"base", "pipe", "burst"};

template <typename S, int V, int MODE, int M, bool SHFL>
static void run(const char *what, const S &op, const Layout &L, Fields<typename S::T, S::NF> F, typename S::T *out, const typename S::T *ref,
                double *part, int bx, int by, int march, double bytes, bool is_ref = false)
{
  typedef typename S::T T;
  const int n = (int)L.n;
  if (MODE == 2)
    march = M;
  Fields<T, S::NF> G = F;
  for (int x = 0; x < S::NF; x++)
    G.f[x] += L.origin;
  dim3 block(bx, by), grid((n + V * bx - 1) / (V * bx), (n - 2 + by - 1) / by, (n - 2 + march - 1) / march);
  float ms = time_it([&] { sweep<S, V, MODE, M, SHFL><<<grid, block>>>(op, G, out + L.origin, part, n, (int)L.s0, (int)L.s1, march); }, 5);
  double extra = 0;
  if (S::RED) {
    const double sum = partials_sum(part, (size_t)grid.x * grid.y * grid.z);
    if (is_ref)
      red_ref = sum;
    extra = fabs(sum - red_ref) / fabs(red_ref);
  }
  const double pts = (n - 2.0) * (n - 2.0) * (n - 2.0);
  const double gbs = bytes * pts / (ms * 1e-3) / 1e9;
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, sweep<S, V, MODE, M, SHFL>));
  printf("%-6s %-5s%s V=%d %3dx%-2d m%-3d regs %3d %8.4f ms %6.1f%% of copy  max|diff| %.3g  red rel diff %.3g\n", what, mode_name[MODE],
         SHFL ? "+shfl" : "     ", V, bx, by, march, fa.numRegs, ms, 100 * gbs / bw, is_ref ? 0.0 : max_diff(out, ref, L), extra);
}

int main()
{
  bw = copy_bandwidth();
  printf("copy bandwidth %.0f GB/s (best of cudaMemcpy and a float4 copy kernel, 1 GiB)\n", bw);
  double *part;
  CK(cudaMalloc(&part, sizeof(double) << 22));
  {
    Layout L(512);
    float *f = field<float>(L, 1), *fn = field<float>(L, 2), *ref = field<float>(L, 2);
    const Diff op{0.4f, 0.1f};
    const Fields<float, 1> F{{f}};
    run<Diff, 4, 0, 1, false>("diff", op, L, F, ref, nullptr, part, 32, 2, 4, 8, true);
    for (int by : {2, 4, 8}) {
      for (int m : {4, 8})
        run<Diff, 4, 0, 1, false>("diff", op, L, F, fn, ref, part, 32, by, m, 8);
      for (int m : {4, 8, 16})
        run<Diff, 4, 0, 1, true>("diff", op, L, F, fn, ref, part, 32, by, m, 8);
      for (int m : {4, 8, 16, 32})
        run<Diff, 4, 1, 1, false>("diff", op, L, F, fn, ref, part, 32, by, m, 8);
      for (int m : {4, 8, 16, 32})
        run<Diff, 4, 1, 1, true>("diff", op, L, F, fn, ref, part, 32, by, m, 8);
      run<Diff, 4, 2, 2, false>("diff", op, L, F, fn, ref, part, 32, by, 0, 8);
      run<Diff, 4, 2, 4, false>("diff", op, L, F, fn, ref, part, 32, by, 0, 8);
      run<Diff, 4, 2, 2, true>("diff", op, L, F, fn, ref, part, 32, by, 0, 8);
      run<Diff, 4, 2, 4, true>("diff", op, L, F, fn, ref, part, 32, by, 0, 8);
    }
    CK(cudaFree(f));
    CK(cudaFree(fn));
    CK(cudaFree(ref));
  }
  {
    Layout L(256);
    double *kappa = field<double>(L, 3), *p = field<double>(L, 4), *q = field<double>(L, 5), *ref = field<double>(L, 5);
    const Apply op{};
    const Fields<double, 2> F{{kappa, p}};
    run<Apply, 1, 0, 1, false>("apply", op, L, F, ref, nullptr, part, 128, 2, 4, 24, true);
    for (int by : {1, 2, 4}) {
      for (int m : {4, 8})
        run<Apply, 1, 0, 1, false>("apply", op, L, F, q, ref, part, 128, by, m, 24);
      for (int m : {4, 8, 16, 32})
        run<Apply, 1, 1, 1, false>("apply", op, L, F, q, ref, part, 128, by, m, 24);
      for (int m : {4, 8, 16})
        run<Apply, 1, 1, 1, true>("apply", op, L, F, q, ref, part, 128, by, m, 24);
      run<Apply, 1, 2, 2, false>("apply", op, L, F, q, ref, part, 128, by, 0, 24);
      run<Apply, 1, 2, 4, false>("apply", op, L, F, q, ref, part, 128, by, 0, 24);
      for (int m : {4, 8, 16})
        run<Apply, 2, 1, 1, false>("apply", op, L, F, q, ref, part, 64, by, m, 24);
      run<Apply, 2, 1, 8, true>("apply", op, L, F, q, ref, part, 64, by, 8, 24);
      run<Apply, 2, 2, 2, false>("apply", op, L, F, q, ref, part, 64, by, 0, 24);
    }
    CK(cudaFree(kappa));
    CK(cudaFree(p));
    CK(cudaFree(q));
    CK(cudaFree(ref));
  }
  CK(cudaFree(part));
  return 0;
}
