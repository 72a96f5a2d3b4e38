// tma.cu: is the Hopper bulk tensor copy engine (TMA) the way past the
// ~81% ceiling of single-sweep 3-D 7-point stencils (docs/benchmarks.md)?
// Hand-written variants of diffusion3d's step on 512^3 floats, laid out
// like stencilc's fields, each timed against the copy bandwidth measured
// here, all checked against the first:
//   queue      what stencilc's stream strategy prints (128x2, march 4)
//   queue_cs   the same with streaming (evict-first) stores
//   tma        2.5-D: the block's plane tile plus halo staged in shared
//              memory by one TMA copy per plane, S planes in flight on
//              mbarriers, marching M planes along i; every read from
//              shared memory
//   tma_q      tma, with the i-1/i+1 values kept in registers
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o tma bench/tma.cu && ./tma
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>

#include "harness.cuh"

static const int N = 512;                  // points per side
static const long AK = 544, AJ = N + 2, AI = N + 2;  // allocated (k padded like stencilc: 16 before, to 16)
static const long S1 = AK, S0 = AK * AJ;
static const long ORIGIN = S0 + S1 + 16;   // element (0, 0, 0)

__global__ void __launch_bounds__(512) queue_kernel(const float *__restrict__ f, float *__restrict__ fn, int march, float cc, float ce, int cs)
{
  const int k = 1 + (blockIdx.x * blockDim.x + threadIdx.x) - 1;  // k_lo & ~31 = 0
  const int j = 1 + blockIdx.y * blockDim.y + threadIdx.y;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, N - 1);
  if (k < 1 || k >= N - 1 || j >= N - 1)
    return;
  float m1 = f[(i0 - 1) * S0 + j * S1 + k], p0 = f[i0 * S0 + j * S1 + k], p1;
  for (int i = i0; i < i1; i++) {
    const long c = i * S0 + j * S1 + k;
    p1 = f[c + S0];
    float v = cc * p0 + ce * (m1 + p1 + f[c - S1] + f[c + S1] + f[c - 1] + f[c + 1]);
    if (cs)
      __stcs(&fn[c], v);
    else
      fn[c] = v;
    m1 = p0;
    p0 = p1;
  }
}

// ---- TMA helpers (PTX) ---------------------------------------------------
__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(unsigned long long *bar, unsigned bytes)
{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity)
{
  asm volatile("{\n"
               ".reg .pred p;\n"
               "WAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               "@!p bra WAIT_%=;\n"
               "}\n" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}

__device__ __forceinline__ void tma_load_3d(void *dst, const CUtensorMap *map, int x, int y, int z, unsigned long long *bar)
{
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(smem_addr(dst)), "l"(map), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar)) : "memory");
}

// The tile of one plane: rows j0-1 .. j0+TY, columns k0-4 .. k0+TX+3
// (TMA boxes start on 16-byte boundaries, so blocks start at k0 = a
// multiple of TX, k = 0 idle, and the tile has 4 columns either side:
// an unaligned start is an illegal instruction). Plane p lives in slot
// p % S; slot s's barrier completes once per use, so the parity of plane p
// is its use count of that slot, mod 2.
template <int TX, int TY, int S, int Q>
__global__ void __launch_bounds__(TX * TY) tma_kernel(const __grid_constant__ CUtensorMap map, float *__restrict__ fn, int march, float cc, float ce)
{
  constexpr int W = TX + 8, H = TY + 2, TILE = (W * H + 31) / 32 * 32;  // slots 128-byte aligned
  extern __shared__ float dyn[];
  float *sm = (float *)(((size_t)dyn + 127) & ~(size_t)127);
  __shared__ unsigned long long bar[S];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
  const int k0 = blockIdx.x * TX;  // the block's first k; tile column 0 is k0 - 4
  const int j0 = 1 + blockIdx.y * TY;
  const int i0 = 1 + blockIdx.z * march;
  const int i1 = min(i0 + march, N - 1);
  // The tensor's coordinates are allocated indices: k + 16, j + 1, i + 1.
  if (tid == 0) {
    for (int s = 0; s < S; s++)
      mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int first = i0 - 1, last = i1;   // planes needed: i0-1 .. i1 (inclusive)
  if (tid == 0)
    for (int p = first; p < first + S && p <= last; p++) {
      int s = (p - first) % S;
      mbar_expect_tx(&bar[s], W * H * 4);
      tma_load_3d(sm + s * TILE, &map, k0 - 4 + 16, j0 - 1 + 1, p + 1, &bar[s]);
    }
  const int k = k0 + tx, j = j0 + ty;
  const bool in = k >= 1 && k < N - 1 && j < N - 1;
  float m1 = 0, p0 = 0;
  mbar_wait(&bar[0], 0);
  mbar_wait(&bar[1 % S], 0);
  if (Q) {
    m1 = sm[0 * TILE + (ty + 1) * W + tx + 4];
    p0 = sm[(1 % S) * TILE + (ty + 1) * W + tx + 4];
  }
  for (int i = i0; i < i1; i++) {
    const int n = i + 1 - first;   // plane i+1's index in the sequence
    mbar_wait(&bar[n % S], (n / S) & 1);
    const float *c = sm + ((i - first) % S) * TILE + (ty + 1) * W + tx + 4;
    const float *up = sm + (n % S) * TILE + (ty + 1) * W + tx + 4;
    float p1 = *up, vm1, v0;
    if (Q) {
      vm1 = m1, v0 = p0;
    } else {
      vm1 = sm[((i - 1 - first) % S) * TILE + (ty + 1) * W + tx + 4];
      v0 = *c;
    }
    if (in)
      fn[i * S0 + j * S1 + k] = cc * v0 + ce * (vm1 + p1 + c[-W] + c[W] + c[-1] + c[1]);
    m1 = v0;
    p0 = p1;
    __syncthreads();  // everyone is done with plane i-1's slot
    int next = i - 1 + S;  // reuse plane i-1's slot
    if (tid == 0 && next <= last) {
      int s = (next - first) % S;
      mbar_expect_tx(&bar[s], W * H * 4);
      tma_load_3d(sm + s * TILE, &map, k0 - 4 + 16, j0 - 1 + 1, next + 1, &bar[s]);
    }
  }
}

__constant__ CUtensorMap cmap;

// Probe: one TMA load per block of plane 3's tile at (0, 0), from a map in
// param (mode 0), constant (1) or global (2) memory; writes tile[5] out.
__global__ void probe(const __grid_constant__ CUtensorMap pmap, const CUtensorMap *gmap, int mode, float *out, int x, int dyn_smem)
{
  __shared__ __align__(128) float stile[1024];
  extern __shared__ float dyn[];
  float *tile = dyn_smem ? (float *)(((size_t)dyn + 127) & ~(size_t)127) : stile;
  __shared__ unsigned long long b;
  if (threadIdx.x == 0) {
    mbar_init(&b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const CUtensorMap *m = mode == 0 ? &pmap : mode == 1 ? &cmap : gmap;
  if (threadIdx.x == 0) {
    mbar_expect_tx(&b, 72 * 6 * 4);
    tma_load_3d(tile, m, x, 0, 3, &b);
  }
  mbar_wait(&b, 0);
  if (threadIdx.x == 0)
    out[blockIdx.x] = tile[5];
}

struct Ctx { float *f, *fn; int bx, by, march, cs; CUtensorMap map; void (*tma)(Ctx *); };
static const float CC = 0.4f, CE = 0.1f;

static void launch_queue(void *p)
{
  Ctx *c = (Ctx *)p;
  dim3 block(c->bx, c->by), grid((N + c->bx - 1) / c->bx, (N - 2 + c->by - 1) / c->by, (N - 2 + c->march - 1) / c->march);
  queue_kernel<<<grid, block>>>(c->f + ORIGIN, c->fn + ORIGIN, c->march, CC, CE, c->cs);
}

template <int TX, int TY, int S, int Q> static void launch_tma_t(Ctx *c)
{
  constexpr int bytes = ((TX + 8) * (TY + 2) + 31) / 32 * 32 * 4 * S + 128;
  static bool once;
  if (!once) {
    CK(cudaFuncSetAttribute(tma_kernel<TX, TY, S, Q>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    once = true;
  }
  dim3 block(TX, TY), grid((N - 1 + TX - 1) / TX, (N - 2 + TY - 1) / TY, (N - 2 + c->march - 1) / c->march);
  tma_kernel<TX, TY, S, Q><<<grid, block, bytes>>>(c->map, c->fn + ORIGIN, c->march, CC, CE);
}
static void launch_tma(void *p) { Ctx *c = (Ctx *)p; c->tma(c); }

static PFN_cuTensorMapEncodeTiled_v12000 encode;

static void make_map(Ctx *c, int tx, int ty)
{
  cuuint64_t dims[3] = { (cuuint64_t)AK, (cuuint64_t)AJ, (cuuint64_t)AI };
  cuuint64_t strides[2] = { (cuuint64_t)S1 * 4, (cuuint64_t)S0 * 4 };
  cuuint32_t box[3] = { (cuuint32_t)(tx + 8), (cuuint32_t)(ty + 2), 1 }, estr[3] = { 1, 1, 1 };
  CUresult r = encode(&c->map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, c->f, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    printf("cuTensorMapEncodeTiled failed: %d\n", (int)r);
    exit(1);
  }
}

int main()
{
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !encode) {
    printf("no cuTensorMapEncodeTiled\n");
    return 1;
  }
  size_t tot = (size_t)AI * AJ * AK;
  float *f, *fn, *ref;
  CK(cudaMalloc(&f, tot * 4));
  CK(cudaMalloc(&fn, tot * 4));
  CK(cudaMalloc(&ref, tot * 4));
  float *h = (float *)malloc(tot * 4);
  for (size_t x = 0; x < tot; x++)
    h[x] = (float)((x * 2654435761u) % 1000) / 1000.f;
  CK(cudaMemcpy(f, h, tot * 4, cudaMemcpyHostToDevice));
  {
    const double bw = copy_bandwidth();
    printf("copy bandwidth %.0f GB/s\n", bw);
    const double pts = 510.0 * 510 * 510;
    Ctx c = { f, fn, 128, 2, 4, 0, {}, nullptr };
    auto report = [&](const char *name, float t, float *out) {
      double gbs = 8 * pts / (t * 1e-3) / 1e9;
      float diff = -1;
      if (out) {
        float *a2 = (float *)malloc(tot * 4), *b2 = (float *)malloc(tot * 4);
        CK(cudaMemcpy(a2, out, tot * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b2, ref, tot * 4, cudaMemcpyDeviceToHost));
        diff = 0;
        for (long i = 1; i < N - 1; i++)
          for (long j = 1; j < N - 1; j++)
            for (long k = 1; k < N - 1; k++) {
              long x = ORIGIN + i * S0 + j * S1 + k;
              float d = fabsf(a2[x] - b2[x]);
              if (!(d <= diff))
                diff = d;
            }
        free(a2);
        free(b2);
      }
      printf("%-34s %8.4f ms %7.0f GB/s %6.1f%%  max|diff| %g\n", name, t, gbs, 100 * gbs / bw, diff);
    };
    // reference
    c.fn = ref;
    report("queue 128x2 m4 (reference)", time_it([&] { launch_queue(&c); }, 5), nullptr);
    c.fn = fn;
    if (getenv("SUSTAINED")) {
      // Short bursts (best of 5 x 10 launches) against long runs (300
      // launches timed as one), for the copy and for the stencil: does a
      // sustained load run slower than a burst, and by as much for both?
      size_t cb = (size_t)1 << 30;
      void *a, *b;
      CK(cudaMalloc(&a, cb));
      CK(cudaMalloc(&b, cb));
      CK(cudaMemset(a, 1, cb));
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      for (int round = 0; round < 2; round++) {
        for (int n : { 10, 300 }) {
          float ms;
          CK(cudaEventRecord(e0));
          for (int r = 0; r < n; r++)
            copy4<<<132 * 8, 256>>>((const float4 *)a, (float4 *)b, cb / 16);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          CK(cudaEventElapsedTime(&ms, e0, e1));
          double cgbs = 2.0 * cb * n / (ms * 1e-3) / 1e9;
          c.bx = 128, c.by = 2, c.march = 8, c.cs = 0;
          CK(cudaEventRecord(e0));
          for (int r = 0; r < n; r++)
            launch_queue(&c);
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          CK(cudaEventElapsedTime(&ms, e0, e1));
          double sgbs = 8 * pts * n / (ms * 1e-3) / 1e9;
          printf("round %d, %3d launches as one: copy %.0f GB/s, stencil queue 128x2 m8 %.0f GB/s = %.1f%% of that copy, %.1f%% of the burst copy\n",
                 round, n, cgbs, sgbs, 100 * sgbs / cgbs, 100 * sgbs / bw);
        }
      }
      return 0;
    }
    if (getenv("PROBE")) {
      make_map(&c, 64, 4);
      CK(cudaMemcpyToSymbol(cmap, &c.map, sizeof c.map));
      CUtensorMap *g;
      CK(cudaMalloc(&g, sizeof c.map));
      CK(cudaMemcpy(g, &c.map, sizeof c.map, cudaMemcpyHostToDevice));
      float *o;
      CK(cudaMalloc(&o, 4));
      for (int mode = atoi(getenv("PROBE")); mode == atoi(getenv("PROBE")); mode++) {
        int x = getenv("X") ? atoi(getenv("X")) : 0, dy = getenv("DYN") != NULL;
        probe<<<1, 32, dy ? 5000 : 0>>>(c.map, g, mode, o, x, dy);
        cudaError_t e = cudaDeviceSynchronize();
        float v = -1;
        if (e == cudaSuccess)
          CK(cudaMemcpy(&v, o, 4, cudaMemcpyDeviceToHost));
        printf("probe mode %d x %d dyn %d: %s, value %g (expected %g)\n", mode, x, dy, cudaGetErrorString(e), v, h[3 * S0 + 5 + x]);
        if (e != cudaSuccess)
          return 1;
      }
      return 0;
    }
    if (getenv("ONLYTMA")) {
      make_map(&c, 64, 4);
      c.march = 16;
      c.tma = launch_tma_t<64, 4, 4, 0>;
      launch_tma(&c);
      CK(cudaDeviceSynchronize());
      return 0;
    }
    const int shapes[][3] = { { 128, 2, 4 }, { 128, 2, 8 }, { 64, 4, 8 }, { 128, 4, 8 } };
    for (auto &s : shapes)
      for (int cs = 0; cs < 2; cs++) {
        c.bx = s[0], c.by = s[1], c.march = s[2], c.cs = cs;
        CK(cudaMemset(fn, 0, tot * 4));
        char name[64];
        snprintf(name, sizeof name, "%s %dx%d m%d", cs ? "queue_cs" : "queue", s[0], s[1], s[2]);
        report(name, time_it([&] { launch_queue(&c); }, 5), fn);
      }
#define TMA(TX, TY, S, Q, M)                                                        \
    {                                                                               \
      make_map(&c, TX, TY);                                                         \
      c.march = M;                                                                  \
      c.tma = launch_tma_t<TX, TY, S, Q>;                                           \
      CK(cudaMemset(fn, 0, tot * 4));                                               \
      char name[64];                                                                \
      snprintf(name, sizeof name, "tma%s %dx%d S%d m%d", Q ? "_q" : "", TX, TY, S, M); \
      report(name, time_it([&] { launch_tma(&c); }, 5), fn);                                 \
    }
    TMA(64, 4, 4, 0, 16) TMA(64, 8, 4, 0, 16) TMA(64, 8, 5, 0, 32) TMA(64, 8, 6, 0, 32)
    TMA(128, 4, 4, 0, 16) TMA(128, 4, 5, 0, 32) TMA(128, 8, 4, 0, 32) TMA(128, 8, 5, 0, 64)
    TMA(32, 8, 5, 0, 32) TMA(32, 16, 5, 0, 32) TMA(64, 16, 4, 0, 32) TMA(32, 32, 4, 0, 32)
    TMA(64, 8, 5, 1, 32) TMA(128, 4, 5, 1, 32) TMA(128, 8, 5, 1, 64) TMA(64, 8, 8, 1, 64)
    TMA(128, 2, 6, 1, 32) TMA(64, 16, 5, 1, 32)
  }
  return 0;
}
