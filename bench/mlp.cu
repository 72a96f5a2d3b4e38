// mlp.cu: are single-sweep 3-D 7-point stencils (diffusion3d ~81-84% of
// copy, CG's apply ~78%) short of memory-level parallelism rather than of
// bandwidth? stencilc's stream strategy issues one miss per thread per
// plane (the i+1 value of its column); Himeno, with 13 misses per plane,
// reaches 93-98%. Hand-written variants of the register queue, each timed
// against the copy bandwidth measured here and checked against the first:
//   V  points per thread along k (vector loads of the rows, 1, 2 or 4)
//   D  planes fetched ahead (1: load i+1 at plane i, as stencilc does)
// for diffusion3d's step (512^3 float) and CG's apply (256^3 double, two
// stencil fields and the p.q reduction), laid out like stencilc's fields;
// and diffusion3d with its in-plane neighbours passed by warp shuffles
// (diff_shfl; SHFL_ONLY=1 runs the reference and those alone).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o mlp bench/mlp.cu && ./mlp
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <initializer_list>

#include "harness.cuh"
#include "fields3d.cuh"

// diffusion3d: fn = cc f + ce (sum of the six neighbours), interior only.
template <int V, int D>
__global__ void __launch_bounds__(512) diff_kernel(const float *__restrict__ f, float *__restrict__ fn, int n, long s0, long s1, int march, float cc, float ce)
{
  const int k = V * (blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, n - 1);
  if (k >= n || j >= n - 1)
    return;
  Vec<float, V> q[D + 2];  // planes i-1 .. i+D of the thread's columns
#pragma unroll
  for (int d = 0; d < D + 1; d++)
    q[d] = ld<float, V>(&f[(long)(i0 - 1 + d) * s0 + j * s1 + k]);
  for (int i = i0; i < i1; i++) {
    const long c = (long)i * s0 + j * s1 + k;
    q[D + 1] = ld<float, V>(&f[c + (long)(D + 1) * s0 - s0]);  // plane i + D
    const Vec<float, V> n1 = ld<float, V>(&f[c - s1]), p1 = ld<float, V>(&f[c + s1]);
    const float km = f[c - 1], kp = f[c + V];
    Vec<float, V> out;
#pragma unroll
    for (int v = 0; v < V; v++) {
      const float w = v == 0 ? km : q[1].v[v - 1], e = v == V - 1 ? kp : q[1].v[v + 1];
      out.v[v] = cc * q[1].v[v] + ce * (q[0].v[v] + q[2].v[v] + n1.v[v] + p1.v[v] + w + e);
    }
    if (k >= 1 && k + V <= n - 1)
      *(Vec<float, V> *)&fn[c] = out;
    else
#pragma unroll
      for (int v = 0; v < V; v++)
        if (k + v >= 1 && k + v < n - 1)
          fn[c + v] = out.v[v];
#pragma unroll
    for (int d = 0; d < D + 1; d++)
      q[d] = q[d + 1];
  }
}

// The same step with the in-plane neighbours from other lanes of the warp
// (warp shuffles) instead of loads: a warp is TX = 32 / WJ threads along k
// (4 points each) by WJ rows along j, so the rows j - 1 and j + 1 come from
// the lanes TX away and the columns k - 1 and k + 4 from the next lanes;
// only the warp's edge rows and columns load theirs. Threads past the last
// row compute the boundary row (every lane must take part in the shuffles,
// and the last row's j + 1 is that row)
// but do not store.
template <int WJ>
__global__ void __launch_bounds__(512) diff_shfl(const float *__restrict__ f, float *__restrict__ fn, int n, long s0, long s1, int march, float cc, float ce)
{
  constexpr int TX = 32 / WJ;
  const int k = 4 * (blockIdx.x * TX + threadIdx.x);
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int jj = min(j, n - 1);
  const int row = threadIdx.y % WJ;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, n - 1);
  Vec<float, 4> q0 = ld<float, 4>(&f[(long)(i0 - 1) * s0 + jj * s1 + k]);
  Vec<float, 4> q1 = ld<float, 4>(&f[(long)i0 * s0 + jj * s1 + k]);
  for (int i = i0; i < i1; i++) {
    const long c = (long)i * s0 + jj * s1 + k;
    const Vec<float, 4> q2 = ld<float, 4>(&f[c + s0]);
    Vec<float, 4> n1, p1;
#pragma unroll
    for (int v = 0; v < 4; v++) {
      n1.v[v] = __shfl_up_sync(0xffffffffu, q1.v[v], TX);
      p1.v[v] = __shfl_down_sync(0xffffffffu, q1.v[v], TX);
    }
    if (row == 0)
      n1 = ld<float, 4>(&f[c - s1]);
    if (row == WJ - 1)
      p1 = ld<float, 4>(&f[c + s1]);
    float km = __shfl_up_sync(0xffffffffu, q1.v[3], 1), kp = __shfl_down_sync(0xffffffffu, q1.v[0], 1);
    if (threadIdx.x == 0)
      km = f[c - 1];
    if (threadIdx.x == TX - 1)
      kp = f[c + 4];
    Vec<float, 4> out;
#pragma unroll
    for (int v = 0; v < 4; v++) {
      const float w = v == 0 ? km : q1.v[v - 1], e = v == 3 ? kp : q1.v[v + 1];
      out.v[v] = cc * q1.v[v] + ce * (q0.v[v] + q2.v[v] + n1.v[v] + p1.v[v] + w + e);
    }
    if (j < n - 1) {
      if (k >= 1 && k + 4 <= n - 1)
        *(Vec<float, 4> *)&fn[c] = out;
      else
#pragma unroll
        for (int v = 0; v < 4; v++)
          if (k + v >= 1 && k + v < n - 1)
            fn[c + v] = out.v[v];
    }
    q0 = q1;
    q1 = q2;
  }
}

// CG's apply: q = A p (variable coefficient kappa), and the block's share of p.q.
template <int V, int D>
__global__ void __launch_bounds__(512) apply_kernel(const double *__restrict__ kappa, const double *__restrict__ p, double *__restrict__ q, double *__restrict__ part, int n, long s0, long s1, int march)
{
  const int k = V * (blockIdx.x * blockDim.x + threadIdx.x);
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, n - 1);
  double pq = 0.0;
  if (k < n && j < n - 1) {
    Vec<double, V> qk[D + 2], qp[D + 2];
#pragma unroll
    for (int d = 0; d < D + 1; d++) {
      qk[d] = ld<double, V>(&kappa[(long)(i0 - 1 + d) * s0 + j * s1 + k]);
      qp[d] = ld<double, V>(&p[(long)(i0 - 1 + d) * s0 + j * s1 + k]);
    }
    for (int i = i0; i < i1; i++) {
      const long c = (long)i * s0 + j * s1 + k;
      qk[D + 1] = ld<double, V>(&kappa[c + (long)D * s0]);
      qp[D + 1] = ld<double, V>(&p[c + (long)D * s0]);
      const Vec<double, V> kn = ld<double, V>(&kappa[c - s1]), ks = ld<double, V>(&kappa[c + s1]);
      const Vec<double, V> pn = ld<double, V>(&p[c - s1]), ps = ld<double, V>(&p[c + s1]);
      const double kw0 = kappa[c - 1], ke0 = kappa[c + V], pw0 = p[c - 1], pe0 = p[c + V];
      Vec<double, V> out;
#pragma unroll
      for (int v = 0; v < V; v++) {
        const double kc = qk[1].v[v], pc = qp[1].v[v];
        const double kw = v == 0 ? kw0 : qk[1].v[v - 1], ke = v == V - 1 ? ke0 : qk[1].v[v + 1];
        const double pw = v == 0 ? pw0 : qp[1].v[v - 1], pe = v == V - 1 ? pe0 : qp[1].v[v + 1];
        out.v[v] = 0.5 * ((kc + qk[0].v[v]) * (pc - qp[0].v[v]) + (kc + qk[2].v[v]) * (pc - qp[2].v[v]) + (kc + kn.v[v]) * (pc - pn.v[v]) +
                          (kc + ks.v[v]) * (pc - ps.v[v]) + (kc + kw) * (pc - pw) + (kc + ke) * (pc - pe));
      }
      if (k >= 1 && k + V <= n - 1) {
        *(Vec<double, V> *)&q[c] = out;
#pragma unroll
        for (int v = 0; v < V; v++)
          pq += qp[1].v[v] * out.v[v];
      } else {
#pragma unroll
        for (int v = 0; v < V; v++)
          if (k + v >= 1 && k + v < n - 1) {
            q[c + v] = out.v[v];
            pq += qp[1].v[v] * out.v[v];
          }
      }
#pragma unroll
      for (int d = 0; d < D + 1; d++) {
        qk[d] = qk[d + 1];
        qp[d] = qp[d + 1];
      }
    }
  }
  const double s = block_sum(pq);
  if (threadIdx.x == 0 && threadIdx.y == 0)
    part[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = s;
}

static double bw;

static void report(const char *what, int V, int D, int bx, int by, int m, double bytes_per_point, double pts, float ms, double diff, double extra = NAN)
{
  const double gbs = bytes_per_point * pts / (ms * 1e-3) / 1e9;
  printf("%-10s V=%d D=%d %4dx%-2d m%-3d %8.4f ms %7.0f GB/s %6.1f%% of copy  max|diff| %.3g", what, V, D, bx, by, m, ms, gbs, 100 * gbs / bw, diff);
  if (!std::isnan(extra))
    printf("  p.q rel diff %.3g", extra);
  printf("\n");
}

struct Shape { int bx, by, m; };

template <int V, int D> static void run_diff(const Layout &L, const float *f, float *fn, const float *ref, Shape s, bool is_ref)
{
  const int n = (int)L.n;
  dim3 block(s.bx, s.by), grid((n + V * s.bx - 1) / (V * s.bx), (n - 2 + s.by - 1) / s.by, (n - 2 + s.m - 1) / s.m);
  float ms = time_it([&] { diff_kernel<V, D><<<grid, block>>>(f + L.origin, fn + L.origin, n, L.s0, L.s1, s.m, 0.4f, 0.1f); }, 5);
  report("diffusion", V, D, s.bx, s.by, s.m, 8, (n - 2.0) * (n - 2.0) * (n - 2.0), ms, is_ref ? 0 : max_diff(fn, ref, L));
}

// warps of WJ rows, blocks of `warps` warps stacked along j
template <int WJ> static void run_shfl(const Layout &L, const float *f, float *fn, const float *ref, int warps, int m)
{
  const int n = (int)L.n, tx = 32 / WJ, by = WJ * warps;
  dim3 block(tx, by), grid((n + 4 * tx - 1) / (4 * tx), (n - 2 + by - 1) / by, (n - 2 + m - 1) / m);
  float ms = time_it([&] { diff_shfl<WJ><<<grid, block>>>(f + L.origin, fn + L.origin, n, L.s0, L.s1, m, 0.4f, 0.1f); }, 5);
  report("diff-shfl", 4, 1, tx, by, m, 8, (n - 2.0) * (n - 2.0) * (n - 2.0), ms, max_diff(fn, ref, L));
}

static double pq_ref;

template <int V, int D> static void run_apply(const Layout &L, const double *kappa, const double *p, double *q, const double *ref, double *part, Shape s, bool is_ref)
{
  const int n = (int)L.n;
  dim3 block(s.bx, s.by), grid((n + V * s.bx - 1) / (V * s.bx), (n - 2 + s.by - 1) / s.by, (n - 2 + s.m - 1) / s.m);
  float ms = time_it([&] { apply_kernel<V, D><<<grid, block>>>(kappa + L.origin, p + L.origin, q + L.origin, part, n, L.s0, L.s1, s.m); }, 5);
  const double sum = partials_sum(part, (size_t)grid.x * grid.y * grid.z);
  if (is_ref)
    pq_ref = sum;
  report("apply", V, D, s.bx, s.by, s.m, 24, (n - 2.0) * (n - 2.0) * (n - 2.0), ms, is_ref ? 0 : max_diff(q, ref, L), fabs(sum - pq_ref) / fabs(pq_ref));
}

int main()
{
  bw = copy_bandwidth();
  printf("copy bandwidth %.0f GB/s (best of cudaMemcpy and a float4 copy kernel, 1 GiB)\n", bw);
  {
    Layout L(512);
    float *f = field<float>(L, 1), *fn = field<float>(L, 2), *ref = field<float>(L, 2);
    run_diff<1, 1>(L, f, ref, nullptr, {128, 2, 4}, true);  // stencilc's stream strategy
    if (!getenv("SHFL_ONLY")) {
    const Shape sh[] = {{128, 2, 8}, {128, 2, 16}, {64, 4, 8}, {32, 8, 16}};
    for (Shape s : sh) run_diff<1, 1>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{128, 2, 4}, Shape{128, 2, 8}, Shape{128, 2, 16}, Shape{64, 4, 16}}) run_diff<1, 2>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{128, 2, 8}, Shape{128, 2, 16}}) run_diff<1, 3>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{64, 2, 4}, Shape{64, 2, 8}, Shape{64, 4, 8}, Shape{128, 2, 8}, Shape{32, 8, 16}}) run_diff<2, 1>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{64, 2, 8}, Shape{64, 4, 8}, Shape{64, 4, 16}, Shape{128, 2, 16}, Shape{32, 8, 16}}) run_diff<2, 2>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{32, 4, 8}, Shape{32, 8, 8}, Shape{64, 4, 16}, Shape{32, 8, 16}}) run_diff<4, 1>(L, f, fn, ref, s, false);
    for (Shape s : {Shape{32, 4, 8}, Shape{32, 8, 16}, Shape{64, 4, 16}}) run_diff<4, 2>(L, f, fn, ref, s, false);
    }
    // Warp shuffles for the in-plane neighbours (the generated default is
    // V=4, 32x2, march 4: run_diff<4, 1> with {32, 2, 4}).
    run_diff<4, 1>(L, f, fn, ref, {32, 2, 4}, false);
    run_diff<4, 1>(L, f, fn, ref, {32, 4, 4}, false);
    for (int m : {4, 8, 16}) {
      run_shfl<1>(L, f, fn, ref, 2, m);
      run_shfl<1>(L, f, fn, ref, 4, m);
      run_shfl<2>(L, f, fn, ref, 2, m);
      run_shfl<2>(L, f, fn, ref, 4, m);
      run_shfl<4>(L, f, fn, ref, 2, m);
      run_shfl<4>(L, f, fn, ref, 4, m);
      run_shfl<8>(L, f, fn, ref, 2, m);
    }
    if (getenv("SHFL_ONLY"))
      return 0;
    CK(cudaFree(f));
    CK(cudaFree(fn));
    CK(cudaFree(ref));
  }
  {
    Layout L(256);
    double *kappa = field<double>(L, 3), *p = field<double>(L, 4), *q = field<double>(L, 5), *ref = field<double>(L, 5), *part;
    CK(cudaMalloc(&part, sizeof(double) << 20));
    run_apply<1, 1>(L, kappa, p, ref, ref, part, {128, 2, 4}, true);  // stencilc's stream strategy (default)
    for (Shape s : {Shape{128, 2, 8}, Shape{128, 2, 16}, Shape{64, 4, 8}, Shape{32, 8, 16}}) run_apply<1, 1>(L, kappa, p, q, ref, part, s, false);
    for (Shape s : {Shape{128, 2, 4}, Shape{128, 2, 8}, Shape{128, 2, 16}, Shape{64, 4, 16}}) run_apply<1, 2>(L, kappa, p, q, ref, part, s, false);
    for (Shape s : {Shape{64, 2, 4}, Shape{64, 2, 8}, Shape{64, 4, 8}, Shape{128, 2, 8}, Shape{32, 8, 16}, Shape{64, 4, 16}}) run_apply<2, 1>(L, kappa, p, q, ref, part, s, false);
    for (Shape s : {Shape{64, 2, 8}, Shape{64, 4, 8}, Shape{64, 4, 16}, Shape{32, 8, 16}}) run_apply<2, 2>(L, kappa, p, q, ref, part, s, false);
    CK(cudaFree(kappa));
    CK(cudaFree(p));
    CK(cudaFree(q));
    CK(cudaFree(ref));
    CK(cudaFree(part));
  }
  return 0;
}
