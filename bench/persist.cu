// persist.cu: does a persistent grid (one cooperative launch for all
// steps, a device-wide barrier between them) beat relaunching a
// single-step kernel, and where?  Issue 19 asks for "device-wide
// synchronisation or a persistent grid where it beats relaunching". On
// large grids a step is long and a launch costs little; on small ones (the
// prior work's 320 x 128 lattice) the launches are the run. j2d5pt's step
// (AN5D's 5-point Jacobi, bench/an5d/j2d5pt.stn) on N x N floats inside a
// fixed border, one thread a point, blocks of 32 x 8:
//   plain    a <<< >>> launch a step
//   pdl      a programmatic dependent launch a step (what stencilc
//            prints for single steps on sm_90), waiting before its loads
//   graph    the steps captured into a CUDA graph, 100 launches a graph
//   persist  one cooperative launch: as many blocks as fit the GPU at
//            once, each striding over the grid's tiles, grid.sync()
//            between steps
// Every variant's field after the same steps must equal plain's bit for
// bit. Prints microseconds a step and the speed-up over plain.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o persist bench/persist.cu && ./persist
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness.cuh"

namespace cg = cooperative_groups;

static const int BX = 32, BY = 8;

// Point (i, j) of the N x N interior; rows are N + 2 floats with the border.
__device__ __forceinline__ void point(const float *__restrict__ u, float *__restrict__ un, int n, int i, int j)
{
  const long w = n + 2, c = (long)(i + 1) * w + (j + 1);
  un[c] = (5.1f * u[c - w] + 12.1f * u[c - 1] + 15.0f * u[c] + 12.2f * u[c + 1] + 5.2f * u[c + w]) / 118;
}

__global__ void __launch_bounds__(BX * BY) step_kernel(const float *__restrict__ u, float *__restrict__ un, int n)
{
  const int j = blockIdx.x * BX + threadIdx.x, i = blockIdx.y * BY + threadIdx.y;
  if (i < n && j < n)
    point(u, un, n, i, j);
}

__global__ void __launch_bounds__(BX * BY) step_pdl_kernel(const float *u, float *un, int n)
{
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int j = blockIdx.x * BX + threadIdx.x, i = blockIdx.y * BY + threadIdx.y;
  if (i < n && j < n)
    point(u, un, n, i, j);
}

// All steps in one launch; each block takes tiles blockIdx.x, + gridDim.x, ...
__global__ void __launch_bounds__(BX * BY) persist_kernel(float *u, float *un, int n, int steps)
{
  cg::grid_group grid = cg::this_grid();
  const int tx = (n + BX - 1) / BX, tiles = tx * ((n + BY - 1) / BY);
  for (int s = 0; s < steps; s++) {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      const int j = (t % tx) * BX + threadIdx.x, i = (t / tx) * BY + threadIdx.y;
      if (i < n && j < n)
        point(u, un, n, i, j);
    }
    grid.sync();
    float *x = u;
    u = un;
    un = x;
  }
}

static cudaStream_t S;

enum { PLAIN, PDL, GRAPH, PERSIST, NV };
static const char *names[NV] = { "plain", "pdl", "graph", "persist" };

// Runs `steps` steps (even) of variant v from the initial field; the result in a.
static void run(int v, int n, int steps, float *a, float *b, int pblocks)
{
  const dim3 blk(BX, BY), grd((n + BX - 1) / BX, (n + BY - 1) / BY);
  if (v == PLAIN || v == PDL) {
    for (int s = 0; s < steps; s += 2) {
      if (v == PLAIN) {
        step_kernel<<<grd, blk, 0, S>>>(a, b, n);
        step_kernel<<<grd, blk, 0, S>>>(b, a, n);
      } else {
        harness_launch(S, true, grd, blk, step_pdl_kernel, (const float *)a, b, n);
        harness_launch(S, true, grd, blk, step_pdl_kernel, (const float *)b, a, n);
      }
    }
  } else if (v == GRAPH) {
    static cudaGraphExec_t exec;
    static int exec_n = -1;
    static float *exec_a, *exec_b;
    const int per = 100; // steps a graph (even)
    if (exec_n != n || exec_a != a || exec_b != b) {
      if (exec_n >= 0)
        CK(cudaGraphExecDestroy(exec));
      cudaGraph_t graph;
      CK(cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
      for (int s = 0; s < per; s += 2) {
        step_kernel<<<grd, blk, 0, S>>>(a, b, n);
        step_kernel<<<grd, blk, 0, S>>>(b, a, n);
      }
      CK(cudaStreamEndCapture(S, &graph));
      CK(cudaGraphInstantiate(&exec, graph, 0));
      CK(cudaGraphDestroy(graph));
      exec_n = n;
      exec_a = a;
      exec_b = b;
    }
    int s = 0;
    for (; s + per <= steps; s += per)
      CK(cudaGraphLaunch(exec, S));
    for (; s < steps; s += 2) {
      step_kernel<<<grd, blk, 0, S>>>(a, b, n);
      step_kernel<<<grd, blk, 0, S>>>(b, a, n);
    }
  } else {
    void *args[] = { &a, &b, &n, &steps };
    CK(cudaLaunchCooperativeKernel((void *)persist_kernel, dim3(pblocks), blk, args, 0, S));
  }
  CK(cudaGetLastError());
}

int main()
{
  CK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persist_kernel, BX * BY, 0));
  const int pmax = per_sm * prop.multiProcessorCount;
  printf("persist: %s, %d SMs, %d blocks of %d threads an SM for the persistent kernel\n", prop.name,
         prop.multiProcessorCount, per_sm, BX * BY);
  printf("copy bandwidth (read + write): %.1f GB/s\n", copy_bandwidth());
  printf("| N | steps | plain us/step | pdl | graph | persist | persist blocks | pdl vs plain | graph vs plain | persist vs plain | persist vs pdl |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  int fail = 0;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int sizes[] = { 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
  for (int n : sizes) {
    const size_t pts = (size_t)(n + 2) * (n + 2), bytes = pts * sizeof(float);
    long st = 4000000000L / ((long)n * n);
    int steps = (int)(st < 400 ? 400 : st > 20000 ? 20000 : st) & ~1;
    std::vector<float> h0(pts), ref(pts), got(pts);
    for (int i = 0; i < n + 2; i++)
      for (int j = 0; j < n + 2; j++)
        h0[(size_t)i * (n + 2) + j] = 1000.0f * fabsf(sinf(0.7f * i + 1.3f * j));
    float *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    // fewer persistent blocks than fit where the grid has fewer tiles
    const int tiles = ((n + BX - 1) / BX) * ((n + BY - 1) / BY);
    const int pblocks = tiles < pmax ? tiles : pmax;
    double us[NV];
    for (int v = 0; v < NV; v++) {
      float best = 1e30f;
      for (int r = 0; r < 4; r++) { // the first run warms up (and builds the graph)
        CK(cudaMemcpy(a, h0.data(), bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, h0.data(), bytes, cudaMemcpyHostToDevice));
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e0, S));
        run(v, n, steps, a, b, pblocks);
        CK(cudaEventRecord(e1, S));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0 && ms < best)
          best = ms;
      }
      us[v] = best * 1000.0 / steps;
      CK(cudaMemcpy(v == PLAIN ? ref.data() : got.data(), a, bytes, cudaMemcpyDeviceToHost));
      if (v != PLAIN && memcmp(ref.data(), got.data(), bytes)) {
        printf("persist: N = %d: %s's field differs from plain's after %d steps\n", n, names[v], steps);
        fail = 1;
      }
    }
    printf("| %d | %d | %.2f | %.2f | %.2f | %.2f | %d | %.2fx | %.2fx | %.2fx | %.2fx |\n", n, steps, us[PLAIN], us[PDL],
           us[GRAPH], us[PERSIST], pblocks, us[PLAIN] / us[PDL], us[PLAIN] / us[GRAPH], us[PLAIN] / us[PERSIST],
           us[PDL] / us[PERSIST]);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  printf(fail ? "persist: FAILED\n" : "persist: all variants equal to plain, bit for bit\n");
  return fail;
}
