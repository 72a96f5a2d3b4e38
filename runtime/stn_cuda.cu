/* stn_cuda.cu: host side of the CUDA runtime (see stn_cuda.h). */
#include "stn_cuda.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifndef STN_VERSION
#define STN_VERSION "0.1.0"
#endif

static double *stage1;     /* first stage of the deterministic finish */

void stn_cuda_check(cudaError_t err, const char *what, const char *file, int line)
{
  if (err == cudaSuccess)
    return;
  stn_fatal("CUDA call failed: %s\n  at %s:%d: %s (%s)\n  check that a GPU is present "
            "(nvidia-smi) and that the grid fits in its memory", what, file, line,
            cudaGetErrorString(err), cudaGetErrorName(err));
}

bool stn_cuda_tb_fast_pays(const void *fast, const void *general, int threads, size_t smem)
{
  const char *env = getenv("STN_TB_FAST");
  if (env && *env)
    return strcmp(env, "0") != 0;
  int bf = 0, bg = 0;
  STN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bf, fast, threads, smem));
  STN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bg, general, threads, smem));
  return bf >= bg;
}

int stn_cuda_tb_march(const void *kernel, int threads, size_t smem, int kind, long columns, long rows, long width,
                      int warm, int most)
{
  int per_sm = 0, sms = 0, dev = 0;
  STN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  STN_CUDA_CHECK(cudaGetDevice(&dev));
  STN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return stn_tb_march_choose(kind, per_sm, sms, columns, rows, width, warm, most);
}

bool stn_cuda_tb_pays(const char *kernel, dim3 grid, double bytes, int *said)
{
  static int sms = 0, l2 = 0;
  if (!sms) {
    int dev = 0;
    STN_CUDA_CHECK(cudaGetDevice(&dev));
    STN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    STN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  }
  const unsigned long blocks = (unsigned long)grid.x * grid.y * grid.z;
  const char *env = getenv("STN_TB");
  const bool forced = env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0);
  const bool pays = forced ? strcmp(env, "1") == 0 : stn_tb_pays_for(bytes, l2, blocks, sms);
  if (stn_profiling && !*said) {
    fprintf(stderr, "%s: temporal blocking: %.1f MB of fields a step against %.1f MB of L2, %lu blocks a pass for %d "
            "multiprocessors: %s%s\n", kernel, bytes / 1e6, l2 / 1e6, blocks, sms, pays ? "fused passes" : "single steps",
            forced ? " (STN_TB)" : "");
    *said = 1;
  }
  return pays;
}

static stn_tb_trial *trial_timing; /* the trial whose pass trial_pass is being timed, if any */
static long trial_pass;

int stn_cuda_tb_trial_how(stn_tb_trial *t, long n, long passes)
{
  if (n == 0 && t->state == STN_TB_UNDECIDED) {
    t->state = stn_tb_trial_start(passes, getenv("STN_TB_TRIAL"), getenv("STN_TB"));
    if (t->state == STN_TB_TIMING) {
      stn_tb_trial_begin(t);
      if (!t->ev[0])
        for (int e = 0; e < 2 * STN_TB_TRIAL_MAX; e++)
          STN_CUDA_CHECK(cudaEventCreate(&t->ev[e]));
    }
  }
  if (t->state == STN_TB_TIMING && n < t->timed) {
    STN_CUDA_CHECK(cudaEventRecord(t->ev[2 * n]));
    trial_timing = t;
    trial_pass = n;
    return t->order[n];
  }
  return t->state == STN_TB_TIMING || t->state == STN_TB_UNDECIDED ? STN_TB_FUSED : t->state;
}

void stn_cuda_tb_trial_restart(void)
{
  if (trial_timing)
    STN_CUDA_CHECK(cudaEventRecord(trial_timing->ev[2 * trial_pass]));
}

static const char *tb_how_name(int how)
{
  return how == STN_TB_SINGLE ? "single steps" : how == STN_TB_HALF ? "half passes" : "fused passes";
}

static const char *tb_candidate_name(int how)
{
  return how == STN_TB_SINGLE ? "single" : how == STN_TB_HALF ? "half" : "fused";
}

void stn_cuda_tb_trial_mark(stn_tb_trial *t, long n)
{
  if (t->state != STN_TB_TIMING || n >= t->timed)
    return;
  STN_CUDA_CHECK(cudaEventRecord(t->ev[2 * n + 1]));
  trial_timing = NULL;
  if (n + 1 < t->timed)
    return;
  float ms[STN_TB_TRIAL_MAX];
  STN_CUDA_CHECK(cudaEventSynchronize(t->ev[2 * n + 1]));
  for (int e = 0; e <= n; e++)
    STN_CUDA_CHECK(cudaEventElapsedTime(&ms[e], t->ev[2 * e], t->ev[2 * e + 1]));
  if (n + 1 == t->round1) { /* the first round's end: which candidates time again */
    stn_tb_trial_round2(t, ms);
    return;
  }
  t->state = stn_tb_trial_pick(t, ms);
  if (stn_profiling) {
    fprintf(stderr, "%s: temporal blocking timed, ms a pass of %d steps:", t->kernel, t->steps);
    for (int e = 0; e < t->timed; e++)
      fprintf(stderr, "%s %s %.4f", e ? "," : "", tb_candidate_name(t->order[e]), ms[e]);
    fprintf(stderr, ": %s%s\n", tb_how_name(t->state), t->state == STN_TB_FUSED ? "" : " (3% faster or more)");
  }
}

/* The variant a kernel runs (stn_variant): the first if its registers, as
 * ptxas gave them for this GPU, leave a multiprocessor 24 warps, else the
 * one that leaves the most (the earlier on a tie). Single steps of 3-D
 * stars and boxes on the H100 lose a quarter of their rate from 24 to 16
 * warps an SM: star3d2r 301.7 GCells/s at 24, 239.8 at 16; star3d3r 209.8
 * at 16 in bursts of 4 points a thread, 257.7 at 32 with 2 points
 * (docs/benchmarks.md, 2026-11-27). STN_VARIANT=n runs variant n (from 0)
 * instead, for tests and measurements; --profile tells the choice. */
int stn_cuda_pick_variant(stn_tune *t, const stn_variant *v, const void *const *fns, int n)
{
  int warps[8], regs[8], pick = -1;
  for (int i = 0; i < n && i < 8; i++) {
    int blocks = 0, threads = v[i].bx * v[i].by;
    cudaFuncAttributes a;
    STN_CUDA_CHECK(cudaFuncGetAttributes(&a, fns[i]));
    STN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fns[i], threads, 0));
    regs[i] = a.numRegs;
    warps[i] = blocks * ((threads + 31) / 32);
  }
  const char *env = getenv("STN_VARIANT");
  if (env && *env) {
    char *end;
    long want = strtol(env, &end, 10);
    if (*end || want < 0 || want >= n)
      stn_fatal("STN_VARIANT=%s: kernel %s has variants 0 to %d; unset STN_VARIANT to let the program choose", env,
                t->kernel, n - 1);
    pick = (int)want;
  } else if (warps[0] >= 24) {
    pick = 0;
  } else {
    pick = 0;
    for (int i = 1; i < n && i < 8; i++)
      if (warps[i] > warps[pick])
        pick = i;
  }
  if (stn_profiling) {
    fprintf(stderr, "%s: variant %d of %d (%s)%s:", t->kernel, pick, n, v[pick].strategy, env && *env ? ", STN_VARIANT" : "");
    for (int i = 0; i < n && i < 8; i++)
      fprintf(stderr, "%s %d: %d registers, %d warps an SM", i ? ";" : "", i, regs[i], warps[i]);
    fputc('\n', stderr);
  }
  t->strategy = v[pick].strategy;
  t->bx = v[pick].bx, t->by = v[pick].by, t->march = v[pick].march, t->marches = v[pick].marches;
  return pick;
}

/* While a graph records (stn_cuda_graph_record_begin): the first launch
 * error, which makes the recording fail instead of the program. */
static int recording;
static cudaError_t recording_err;

void stn_cuda_check_launch(const char *kernel, dim3 grid, dim3 block)
{
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess)
    return;
  if (recording) {
    if (recording_err == cudaSuccess)
      recording_err = err;
    return;
  }
  stn_fatal("kernel %s failed to launch with grid %ux%ux%u and block %ux%ux%u: %s\n"
            "  try another block shape (--block=... when compiling)", kernel, grid.x, grid.y, grid.z,
            block.x, block.y, block.z, cudaGetErrorString(err));
}

/* ---- profile: kernel times from event pairs, read back in batches ---- */
enum { PROF_RING = 512 };
typedef struct prof_ev { stn_kprof *k; double points; cudaEvent_t start, stop; } prof_ev;
static prof_ev ring[PROF_RING];
static int nring, ring_ready;

static void prof_harvest(void)
{
  if (!nring)
    return;
  STN_CUDA_CHECK(cudaEventSynchronize(ring[nring - 1].stop));
  for (int i = 0; i < nring; i++) {
    float ms = 0;
    STN_CUDA_CHECK(cudaEventElapsedTime(&ms, ring[i].start, ring[i].stop));
    stn_prof_add(ring[i].k, 1e-3 * ms, ring[i].points);
  }
  nring = 0;
}

void stn_cuda_prof_start(stn_kprof *k)
{
  if (!ring_ready) {
    for (int i = 0; i < PROF_RING; i++) {
      STN_CUDA_CHECK(cudaEventCreate(&ring[i].start));
      STN_CUDA_CHECK(cudaEventCreate(&ring[i].stop));
    }
    ring_ready = 1;
  }
  if (nring == PROF_RING)
    prof_harvest();
  ring[nring].k = k;
  STN_CUDA_CHECK(cudaEventRecord(ring[nring].start));
}

void stn_cuda_prof_stop(stn_kprof *k, double points)
{
  ring[nring].points = points;
  STN_CUDA_CHECK(cudaEventRecord(ring[nring].stop));
  nring++;
}

/* The copy bandwidth: best of cudaMemcpy device to device and a float4
 * copy kernel over 1 GiB each way (bench/copybw.cu measures the same). */
__global__ static void copy4_kernel(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    b[i] = a[i];
}

static double cuda_copy_bandwidth(void)
{
  size_t bytes = (size_t)1 << 30;
  void *a = NULL, *b = NULL;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(a);
    return 0; /* not enough free memory: the profile omits the column */
  }
  STN_CUDA_CHECK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  STN_CUDA_CHECK(cudaEventCreate(&e0));
  STN_CUDA_CHECK(cudaEventCreate(&e1));
  int sms = 0;
  STN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float best = 1e30f, ms;
  for (int rep = 0; rep < 12; rep++) {
    STN_CUDA_CHECK(cudaEventRecord(e0));
    if (rep % 2)
      copy4_kernel<<<sms * 8, 256>>>((const float4 *)a, (float4 *)b, bytes / 16);
    else
      STN_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    STN_CUDA_CHECK(cudaEventRecord(e1));
    STN_CUDA_CHECK(cudaEventSynchronize(e1));
    STN_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep >= 2 && ms < best)
      best = ms;
  }
  STN_CUDA_CHECK(cudaEventDestroy(e0));
  STN_CUDA_CHECK(cudaEventDestroy(e1));
  STN_CUDA_CHECK(cudaFree(a));
  STN_CUDA_CHECK(cudaFree(b));
  return 2.0 * (double)bytes / (1e-3 * best) / 1e9;
}

int stn_cuda_autotune;
static const char *tune_cache;

static int cuda_option(const char *arg)
{
  if (strcmp(arg, "--autotune") == 0) {
    stn_cuda_autotune = 1;
    return 1;
  }
  if (strncmp(arg, "--tune-cache=", 13) == 0) {
    tune_cache = arg + 13;
    return 1;
  }
  return 0;
}

void stn_cuda_options(stn_program *p)
{
  p->option = cuda_option;
  p->copy_bandwidth = cuda_copy_bandwidth;
  p->target = "cuda";
  p->option_help = "  --autotune         time the launch shapes of each kernel on its first call, keep the best\n"
                   "                     (cached: the next run with --autotune starts tuned)\n"
                   "  --tune-cache=PATH  the cache file (default $STENCILC_TUNE_CACHE or ~/.cache/stencilc/tune.txt)\n";
}

static const char *cache_path(void)
{
  static char path[4096];
  if (tune_cache)
    return tune_cache;
  const char *env = getenv("STENCILC_TUNE_CACHE");
  if (env && *env)
    return env;
  const char *home = getenv("HOME");
  snprintf(path, sizeof path, "%s/.cache/stencilc/tune.txt", home && *home ? home : ".");
  return path;
}

static void tune_key(const stn_tune *t, const stn_grid *g, char *key, size_t n)
{
  cudaDeviceProp prop;
  int dev = 0;
  STN_CUDA_CHECK(cudaGetDevice(&dev));
  STN_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  int len = snprintf(key, n, "%s/%s/%s/", t->program, t->kernel, t->strategy);
  for (int d = 0; d < g->rank; d++)
    len += snprintf(key + len, n - (size_t)len, "%s%ld", d ? "x" : "", g->n[d]);
  snprintf(key + len, n - (size_t)len, "/%s/%s", prop.name, STN_VERSION);
  for (char *c = key; *c; c++)
    if (*c == ' ' || *c == '\t')
      *c = '_';
}

int stn_cuda_tune_lookup(stn_tune *t, const stn_grid *g)
{
  char key[512], line[1024];
  tune_key(t, g, key, sizeof key);
  FILE *f = fopen(cache_path(), "r");
  if (!f)
    return 0;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    char k[512];
    int bx, by, m;
    if (sscanf(line, "%511s %d %d %d", k, &bx, &by, &m) == 4 && strcmp(k, key) == 0) {
      t->bx = bx, t->by = by, t->march = m;
      found = 1; /* the last entry wins */
    }
  }
  fclose(f);
  if (found) {
    char m[32] = "";
    if (t->marches)
      snprintf(m, sizeof m, t->march >= (1 << 30) ? " march whole" : " march %d", t->march);
    fprintf(stderr, "autotune: %s: %dx%d%s from the cache %s\n", t->kernel, t->bx, t->by, m, cache_path());
  }
  return found;
}

void stn_cuda_tune_store(stn_tune *t, const stn_grid *g, double ms, double default_ms, int tried, double seconds)
{
  char key[512];
  tune_key(t, g, key, sizeof key);
  const char *path = cache_path();
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) { /* make the directory (and its parent) if missing */
    *slash = 0;
    char *mid = strrchr(dir, '/');
    if (mid) {
      *mid = 0;
      mkdir(dir, 0755);
      *mid = '/';
    }
    mkdir(dir, 0755);
  }
  FILE *f = fopen(path, "a");
  if (f) {
    fprintf(f, "%s %d %d %d %.4f\n", key, t->bx, t->by, t->march, ms);
    fclose(f);
  }
  char m[32] = "";
  if (t->marches)
    snprintf(m, sizeof m, t->march >= (1 << 30) ? " march whole" : " march %d", t->march);
  fprintf(stderr, "autotune: %s: %d shapes in %.2f s; best %dx%d%s at %.4f ms (default %.4f ms); %s %s\n", t->kernel,
          tried, seconds, t->bx, t->by, m, ms, default_ms, f ? "saved to" : "could not write", path);
}

unsigned long stn_cuda_seq, stn_cuda_barrier;
int stn_cuda_pdl = 1;
cudaStream_t stn_cuda_stream;
int stn_cuda_after_graph;
static stn_program *program; /* its fields, for the graphs' checks */

static void cuda_snapshot(const stn_field *f, int slot);
static void cuda_snapshot_get(const stn_field *f, int slot, void *dense);
static void *cuda_host_alloc(size_t bytes);
static void cuda_host_free(void *p);

void stn_cuda_init(stn_program *p)
{
  program = p;
  stn_field_io.get = stn_cuda_field_get;
  stn_field_io.set = stn_cuda_field_set;
  stn_field_io.sync = stn_cuda_sync;
  stn_field_io.snapshot = cuda_snapshot;
  stn_field_io.host_alloc = cuda_host_alloc;
  stn_field_io.host_free = cuda_host_free;
  stn_field_io.snapshot_get = cuda_snapshot_get;
  const char *pdl = getenv("STN_PDL");
  if (pdl && strcmp(pdl, "0") == 0)
    stn_cuda_pdl = 0;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0)
    stn_fatal("%s needs a CUDA GPU, but none was found (%s); build it with --target=openmp to run "
              "on the CPU", p->name, err != cudaSuccess ? cudaGetErrorString(err) : "no devices");
}

/* Tests set STN_POISON=1: fields then start as NaN (ints as -1) instead of
 * 0, so a point a kernel should have written but did not shows up. */
static int poison(void)
{
  const char *s = getenv("STN_POISON");
  return s && *s && *s != '0';
}

void stn_cuda_field_alloc(stn_field *f, const char *name, stn_type type, stn_grid *g)
{
  /* 256 bytes past the end: a thread's lanes outside the region (--vec)
   * may read a few elements past the last row; they are never used. */
  size_t bytes = g->size * stn_type_size(type) + 256;
  f->name = name;
  f->type = type;
  f->grid = g;
  cudaError_t err = cudaMalloc(&f->mem, bytes);
  if (err != cudaSuccess)
    stn_fatal("cannot allocate %.2f GiB of GPU memory for field '%s' on grid %s (%s); reduce the "
              "grid size", (double)bytes / (1 << 30), name, g->name, cudaGetErrorString(err));
  long off = 0;
  for (int d = 0; d < g->rank; d++)
    off += g->pad_lo[d] * g->stride[d];
  f->origin = (char *)f->mem + (size_t)off * stn_type_size(type);
}

void stn_cuda_field_zero(stn_field *f)
{
  STN_CUDA_CHECK(cudaMemset(f->mem, poison() ? 0xff : 0, f->grid->size * stn_type_size(f->type)));
  stn_cuda_wrote(f);
}

void stn_cuda_field_fill_halo(stn_field *f, double (*value)(long i, long j, long k))
{
  size_t bytes = f->grid->size * stn_type_size(f->type);
  void *host = malloc(bytes);
  if (!host)
    stn_fatal("cannot allocate %.2f GiB of host memory to set the boundary of field '%s'", (double)bytes / (1 << 30),
              f->name);
  STN_CUDA_CHECK(cudaMemcpy(host, f->mem, bytes, cudaMemcpyDeviceToHost));
  stn_field h = *f;
  h.mem = host;
  h.origin = (char *)host + ((char *)f->origin - (char *)f->mem);
  stn_field_fill_halo(&h, value);
  STN_CUDA_CHECK(cudaMemcpy(f->mem, host, bytes, cudaMemcpyHostToDevice));
  stn_cuda_wrote(f);
  stn_prof_transfer(0, (double)bytes);
  stn_prof_transfer(1, (double)bytes);
  free(host);
}

/* A host copy of device field f (free h->mem after use). */
static void host_copy(const stn_field *f, stn_field *h)
{
  size_t bytes = f->grid->size * stn_type_size(f->type);
  void *host = malloc(bytes);
  if (!host)
    stn_fatal("cannot allocate %.2f GiB of host memory to write field '%s'", (double)bytes / (1 << 30), f->name);
  STN_CUDA_CHECK(cudaMemcpy(host, f->mem, bytes, cudaMemcpyDeviceToHost));
  stn_prof_transfer(0, (double)bytes);
  *h = *f;
  h->mem = host;
  h->origin = (char *)host + ((char *)f->origin - (char *)f->mem);
}

void stn_cuda_field_write(const stn_field *f, const char *path)
{
  stn_field h;
  host_copy(f, &h);
  stn_field_write(&h, path);
  free(h.mem);
}

void stn_cuda_field_write_image(const stn_field *f, const char *path, double lo, double hi, const char *colormap)
{
  stn_field h;
  host_copy(f, &h);
  stn_field_write_image(&h, path, lo, hi, colormap);
  free(h.mem);
}

void stn_cuda_lib_init(stn_program *p)
{
  p->copy_bandwidth = cuda_copy_bandwidth;
  p->target = "cuda";
  /* a library has no command line: --autotune is STN_AUTOTUNE=1 */
  const char *tune = getenv("STN_AUTOTUNE");
  if (tune && *tune && strcmp(tune, "0") != 0)
    stn_cuda_autotune = 1;
  stn_lib_init(p);
  stn_cuda_init(p);
}

void stn_cuda_lib_finish(stn_program *p)
{
  stn_cuda_sync();
  prof_harvest();
  stn_lib_finish(p);
}

void stn_cuda_field_free(stn_field *f)
{
  STN_CUDA_CHECK(cudaFree(f->mem));
  f->mem = f->origin = NULL;
}

/* The points straight from device memory, a plane at a time (no host
 * copy of the halo). */
void stn_cuda_field_get(const stn_field *f, void *dst)
{
  stn_cuda_sync();
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long n0 = g->rank == 3 ? g->n[0] : 1, n1 = g->rank >= 2 ? g->n[g->rank - 2] : 1, row = g->n[g->rank - 1];
  long s0 = g->rank == 3 ? g->stride[0] : 0, s1 = g->rank >= 2 ? g->stride[g->rank - 2] : 0;
  for (long i = 0; i < n0; i++)
    STN_CUDA_CHECK(cudaMemcpy2D((char *)dst + (size_t)(i * n1 * row) * es, (size_t)row * es,
                                (const char *)f->origin + (size_t)(i * s0) * es, (size_t)(s1 ? s1 : row) * es,
                                (size_t)row * es, (size_t)n1, cudaMemcpyDeviceToHost));
  stn_prof_transfer(0, (double)(n0 * n1 * row) * (double)es);
}

/* Checkpoints: a copy of each saved field in device memory, taken in
 * order with the kernels (the legacy default stream), then copied to the
 * host on a stream of its own by the checkpoint's writer thread while the
 * kernels go on. */
static void *snap_buf[64];
static size_t snap_size[64];
static cudaStream_t snap_stream;
static cudaEvent_t snap_done;
static int snap_device;

static void cuda_snapshot(const stn_field *f, int slot)
{
  if (slot >= 64) {
    stn_fatal("a checkpoint of more than 64 fields on CUDA is not supported yet");
  }
  size_t bytes = f->grid->size * stn_type_size(f->type);
  if (!snap_stream) {
    STN_CUDA_CHECK(cudaGetDevice(&snap_device));
    STN_CUDA_CHECK(cudaStreamCreateWithFlags(&snap_stream, cudaStreamNonBlocking));
    STN_CUDA_CHECK(cudaEventCreateWithFlags(&snap_done, cudaEventDisableTiming));
  }
  if (snap_size[slot] < bytes) {
    if (snap_buf[slot])
      STN_CUDA_CHECK(cudaFree(snap_buf[slot]));
    if (cudaMalloc(&snap_buf[slot], bytes) != cudaSuccess)
      stn_fatal("cannot allocate %.2f GiB of GPU memory for a checkpoint's copy of field '%s'; checkpoint less "
                "often or on a smaller grid", (double)bytes / (1 << 30), f->name);
    snap_size[slot] = bytes;
  }
  STN_CUDA_CHECK(cudaMemcpyAsync(snap_buf[slot], f->mem, bytes, cudaMemcpyDeviceToDevice, 0));
  STN_CUDA_CHECK(cudaEventRecord(snap_done, 0));
}

/* The writer's host buffers: pinned, for the copies at full speed. */
static void *cuda_host_alloc(size_t bytes)
{
  void *p = NULL;
  if (snap_stream) /* on the writer's thread: the device the snapshots are on */
    cudaSetDevice(snap_device);
  if (cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError();
    return malloc(bytes);
  }
  return p;
}
static void cuda_host_free(void *p)
{
  if (cudaFreeHost(p) != cudaSuccess) {
    cudaGetLastError();
    free(p);
  }
}

static void cuda_snapshot_get(const stn_field *f, int slot, void *dense)
{
  STN_CUDA_CHECK(cudaSetDevice(snap_device)); /* the writer's thread */
  STN_CUDA_CHECK(cudaStreamWaitEvent(snap_stream, snap_done, 0));
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long off = 0;
  for (int d = 0; d < g->rank; d++)
    off += g->pad_lo[d] * g->stride[d];
  const char *origin = (const char *)snap_buf[slot] + (size_t)off * es;
  long n0 = g->rank == 3 ? g->n[0] : 1, n1 = g->rank >= 2 ? g->n[g->rank - 2] : 1, row = g->n[g->rank - 1];
  long s0 = g->rank == 3 ? g->stride[0] : 0, s1 = g->rank >= 2 ? g->stride[g->rank - 2] : 0;
  for (long i = 0; i < n0; i++)
    STN_CUDA_CHECK(cudaMemcpy2DAsync((char *)dense + (size_t)(i * n1 * row) * es, (size_t)row * es,
                                     origin + (size_t)(i * s0) * es, (size_t)(s1 ? s1 : row) * es, (size_t)row * es,
                                     (size_t)n1, cudaMemcpyDeviceToHost, snap_stream));
  STN_CUDA_CHECK(cudaStreamSynchronize(snap_stream));
}


void stn_cuda_field_set(stn_field *f, const void *src)
{
  stn_cuda_sync();
  stn_field h;
  host_copy(f, &h); /* keeps the halo as it is */
  stn_field_set(&h, src);
  size_t bytes = f->grid->size * stn_type_size(f->type);
  STN_CUDA_CHECK(cudaMemcpy(f->mem, h.mem, bytes, cudaMemcpyHostToDevice));
  stn_cuda_wrote(f);
  f->halo_ok = 0; /* --mpi: the neighbours' ghost copies of these points are stale */
  f->rim = NULL;
  stn_prof_transfer(1, (double)bytes);
  free(h.mem);
}

void stn_cuda_drain(void)
{
  stn_cuda_sync();
  prof_harvest();
}

void stn_cuda_release(stn_program *p)
{
  for (int i = 0; i < p->nfields; i++) {
    STN_CUDA_CHECK(cudaFree(p->fields[i]->mem));
    p->fields[i]->mem = p->fields[i]->origin = NULL;
  }
  STN_CUDA_CHECK(cudaFree(stage1));
  stage1 = NULL;
  /* stn_finish's host-side work (the --save list) without freeing fields twice. */
  p->nfields = 0;
}

void stn_cuda_finish(stn_program *p)
{
  stn_cuda_drain();
  const char *field, *path;
  for (int s = 0; stn_save_request(s, &field, &path); s++)
    for (int i = 0; i < p->nfields; i++)
      if (strcmp(p->fields[i]->name, field) == 0)
        stn_cuda_field_write(p->fields[i], path);
  stn_cuda_release(p);
  stn_finish(p);
}

template <int OP> __device__ static double combine_all(const double *part, int n)
{
  double v = OP == STN_RED_SUM ? 0.0 : OP == STN_RED_MAX ? -INFINITY : INFINITY;
#pragma unroll 8
  for (int b = threadIdx.x; b < n; b += blockDim.x)
    v = stn_combine<OP>(v, part[b]);
  return stn_block_reduce<OP>(v);
}

typedef struct red_ops { int op[STN_MAXRED]; } red_ops;  /* passed by value: no copy */

/* Block b combines the partials [b * chunk, (b + 1) * chunk) of each
 * reduction (n partials per reduction, `stride` apart), threads striding
 * over its chunk, into out[r * gridDim.x + b]. Which partial goes where
 * depends only on the counts, never on timing, so the result is the same
 * bit for bit from run to run. */
__global__ static void finish_kernel(const double *partials, int n, size_t stride, int chunk, int nred, red_ops ops,
                                     double *out)
{
  int lo = blockIdx.x * chunk, len = n - lo < chunk ? n - lo : chunk;
  for (int r = 0; r < nred; r++) {
    const double *part = partials + (size_t)r * stride + lo;
    double v;
    switch (ops.op[r]) {
    case STN_RED_MAX: v = combine_all<STN_RED_MAX>(part, len); break;
    case STN_RED_MIN: v = combine_all<STN_RED_MIN>(part, len); break;
    default: v = combine_all<STN_RED_SUM>(part, len); break;
    }
    if (threadIdx.x == 0)
      out[(size_t)r * gridDim.x + blockIdx.x] = v;
  }
}

__global__ static void identity_kernel(double *slots, int nred, red_ops ops)
{
  int r = threadIdx.x;
  if (r < nred)
    slots[r] = ops.op[r] == STN_RED_MAX ? -INFINITY : ops.op[r] == STN_RED_MIN ? INFINITY : 0.0;
}

/* Exact sums: block x sums word threadIdx.x of its reduction's n blocks
 * (integers: in any order the same). */
__global__ static void xfinish_kernel(const long long *xpart, size_t n, long long *out)
{
  const long long *part = xpart + (size_t)blockIdx.x * n * STN_XACC_W;
  for (int w = threadIdx.x; w < STN_XACC_W; w += blockDim.x) {
    long long v = 0;
    for (size_t b = 0; b < n; b++)
      v += part[b * STN_XACC_W + w];
    out[(size_t)blockIdx.x * STN_XACC_W + w] = v;
  }
}

/* Two stages when there are many partials (a 257x257x513 Himeno sweep
 * with 128x1 blocks leaves 261,120): one block alone took a fifth of the
 * sweep's time. */
enum { CHUNK = 2048, MAXSTAGE1 = 4096 };

/* Reductions launched but not yet finished, in launch order. */
static stn_reduction **pend;
static int npend, cappend;

static void start(stn_reduction *r, int nred, const int *ops, int atomic)
{
  if (nred > STN_MAXRED)
    stn_fatal("a kernel has %d reductions; at most %d are supported on the GPU", nred, STN_MAXRED);
  r->nred = nred;
  r->atomic = atomic;
  for (int i = 0; i < nred; i++) {
    r->ops[i] = ops[i];
    r->nx += ops[i] == STN_RED_XSUM;
  }
  STN_CUDA_CHECK(cudaHostAlloc(&r->out, STN_MAXRED * sizeof(double), cudaHostAllocMapped));
  STN_CUDA_CHECK(cudaHostGetDevicePointer(&r->out_dev, r->out, 0));
  if (r->nx) {
    STN_CUDA_CHECK(cudaHostAlloc(&r->xout, (size_t)r->nx * STN_XACC_W * sizeof(long long), cudaHostAllocMapped));
    STN_CUDA_CHECK(cudaHostGetDevicePointer(&r->xout_dev, r->xout, 0));
  }
  r->started = 1;
}

void stn_cuda_reduction_begin(stn_reduction *r, int nred, const int *ops, int atomic, void *const *dst,
                              const stn_type *dst_type)
{
  if (!r->started)
    start(r, nred, ops, atomic);
  /* This launch overwrites the partials of the last one: if that result
   * is still to reach a different variable, finish and deliver it first. */
  if (r->pending)
    for (int i = 0; i < nred; i++)
      if (r->dst[i] && r->dst[i] != dst[i]) {
        stn_cuda_sync();
        break;
      }
  for (int i = 0; i < nred; i++) {
    r->dst[i] = dst[i];
    r->dst_type[i] = dst_type[i];
  }
}

static red_ops ops_of(const stn_reduction *r)
{
  red_ops o;
  for (int i = 0; i < STN_MAXRED; i++)
    o.op[i] = i < r->nred ? r->ops[i] : STN_RED_SUM;
  return o;
}

double *stn_cuda_reduction_partials(stn_reduction *r, size_t nblocks)
{
  size_t need = r->atomic ? 1 : nblocks;
  if (!r->atomic && (nblocks + CHUNK - 1) / CHUNK > MAXSTAGE1)
    stn_fatal("a reduction over %zu blocks is larger than the runtime supports (%d); use a larger --block", nblocks,
              CHUNK * MAXSTAGE1);
  if (need > r->cap) {
    STN_CUDA_CHECK(cudaFree(r->part));
    STN_CUDA_CHECK(cudaMalloc(&r->part, need * (size_t)r->nred * sizeof(double)));
    r->cap = need;
  }
  r->nblocks = nblocks;
  if (r->atomic) {
    identity_kernel<<<1, STN_MAXRED, 0, stn_cuda_stream>>>(r->part, r->nred, ops_of(r));
    stn_cuda_check_launch("reduction (identities)", dim3(1), dim3(STN_MAXRED));
  }
  return r->part;
}

long long *stn_cuda_reduction_xpartials(stn_reduction *r, size_t nblocks)
{
  if (nblocks > r->xcap) {
    STN_CUDA_CHECK(cudaFree(r->xpart));
    STN_CUDA_CHECK(cudaMalloc(&r->xpart, nblocks * (size_t)r->nx * STN_XACC_W * sizeof(long long)));
    r->xcap = nblocks;
  }
  return r->xpart;
}

void stn_cuda_reduction_end(stn_reduction *r)
{
  if (r->pending) { /* latest launch last: where two kernels' results go to one variable, the later one's stays */
    int i = 0;
    while (pend[i] != r)
      i++;
    stn_move_last(pend, npend, sizeof *pend, i);
    return;
  }
  r->pending = 1;
  if (npend == cappend) {
    cappend = cappend ? 2 * cappend : 16;
    pend = (stn_reduction **)realloc(pend, sizeof *pend * (size_t)cappend);
    if (!pend)
      stn_fatal("out of memory");
  }
  pend[npend++] = r;
}

/* Enqueues the combination of r's latest partials into its mapped host
 * slots. */
static void finish_async(stn_reduction *r)
{
  red_ops o = ops_of(r);
  if (r->nx) {
    xfinish_kernel<<<r->nx, 128>>>(r->xpart, r->nblocks, r->xout_dev);
    stn_cuda_check_launch("reduction (exact finish)", dim3(r->nx), dim3(128));
  }
  if (r->atomic) {
    finish_kernel<<<1, 32>>>(r->part, 1, 1, 1, r->nred, o, r->out_dev);
    stn_cuda_check_launch("reduction (finish)", dim3(1), dim3(32));
    return;
  }
  int n = (int)r->nblocks, nb1 = (n + CHUNK - 1) / CHUNK;
  if (nb1 <= 1) {
    finish_kernel<<<1, 256>>>(r->part, n, (size_t)n, n, r->nred, o, r->out_dev);
    stn_cuda_check_launch("reduction (finish)", dim3(1), dim3(256));
    return;
  }
  if (!stage1)
    STN_CUDA_CHECK(cudaMalloc(&stage1, (size_t)STN_MAXRED * MAXSTAGE1 * sizeof(double)));
  finish_kernel<<<nb1, 256>>>(r->part, n, (size_t)n, CHUNK, r->nred, o, stage1);
  stn_cuda_check_launch("reduction (finish, stage 1)", dim3(nb1), dim3(256));
  finish_kernel<<<1, 256>>>(stage1, nb1, nb1, nb1, r->nred, o, r->out_dev);
  stn_cuda_check_launch("reduction (finish, stage 2)", dim3(1), dim3(256));
}

static void deliver(double v, void *dst, stn_type type)
{
  if (type == STN_INT)
    *(int *)dst = (int)v;
  else if (type == STN_FLOAT)
    *(float *)dst = (float)v;
  else
    *(double *)dst = v;
}

static stn_kprof finish_prof = { "(reductions: finish)", 0, 0, 0, 0, 0, NULL };

void (*stn_cuda_sync_hook)(void);

void stn_cuda_sync(void)
{
  if (stn_profiling && npend)
    stn_cuda_prof_start(&finish_prof);
  for (int i = 0; i < npend; i++)
    finish_async(pend[i]);
  if (stn_profiling && npend)
    stn_cuda_prof_stop(&finish_prof, 0);
  STN_CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < npend; i++) {
    stn_reduction *r = pend[i];
    for (int j = 0, xi = 0; j < r->nred; j++) {
      if (r->ops[j] == STN_RED_XSUM) { /* the exact sum of the blocks' digits */
        stn_xsum x;
        stn_xsum_zero(&x);
        const long long *w = r->xout + (size_t)xi++ * STN_XACC_W;
        for (int d = 0; d < STN_XSUM_DIGITS; d++)
          x.d[d] = w[d];
        x.special = (w[STN_XSUM_DIGITS] ? 1 : 0) | (w[STN_XSUM_DIGITS + 1] ? 2 : 0) | (w[STN_XSUM_DIGITS + 2] ? 4 : 0);
        if (r->dst[j] && r->dst_type[j] == STN_XSUM_DST)
          *(stn_xsum *)r->dst[j] = x;
        else if (r->dst[j])
          deliver(stn_xsum_value(&x), r->dst[j], r->dst_type[j]);
        continue;
      }
      if (r->dst[j])
        deliver(r->out[j], r->dst[j], r->dst_type[j]);
    }
    stn_prof_transfer(0, (double)r->nred * sizeof(double));
    r->pending = 0;
  }
  npend = 0;
  if (stn_cuda_sync_hook)
    stn_cuda_sync_hook();
}

void stn_cuda_deliver_now(const double *values, int nred, void *const *dst, const stn_type *dst_type)
{
  for (int r = 0; r < nred; r++)
    if (dst[r])
      deliver(values[r], dst[r], dst_type[r]);
}

double stn_cuda_time(void)
{
  stn_cuda_sync();
  return stn_time();
}

/* ---- time loops replayed as CUDA graphs (stn_cuda.h) ---- */
static cudaStream_t graph_stream;        /* records the graphs: non-blocking, so the legacy stream's work is not part of them */
static stn_field *graph_saved;           /* the fields' descriptors when recording began */

/* STN_GRAPH: 0 off, 1 on wherever recording works, else (-1) by the
 * timing; STN_GRAPH_VERBOSE=1: each loop's times and choice on stderr. */
static int graph_env(void)
{
  static int env = -2;
  if (env == -2) {
    const char *e = getenv("STN_GRAPH");
    env = e && strcmp(e, "0") == 0 ? 0 : e && strcmp(e, "1") == 0 ? 1 : -1;
  }
  return env;
}

static bool graph_verbose(void)
{
  const char *e = getenv("STN_GRAPH_VERBOSE");
  return e && *e && strcmp(e, "0") != 0;
}

/* Whether every field's storage is where g recorded it. */
static bool graph_fields_match(const stn_cuda_graph *g)
{
  for (int f = 0; f < program->nfields; f++)
    if (program->fields[f]->mem != g->mem[f])
      return false;
  return true;
}

static void graph_off(stn_cuda_graph *g, const char *why, cudaError_t err)
{
  g->state = STN_GRAPH_OFF;
  if (graph_env() == 1 || graph_verbose())
    fprintf(stderr, "%s: the loop runs plainly: its iterations could not be recorded as a CUDA graph: %s%s%s\n",
            g->loop, why, err != cudaSuccess ? ": " : "", err != cudaSuccess ? cudaGetErrorString(err) : "");
}

int stn_cuda_graph_due(stn_cuda_graph *g, long left, bool quiet)
{
  if (g->state == STN_GRAPH_OFF)
    return 0;
  if (!program || stn_profiling || stn_ckpt_on || graph_env() == 0 || g->iters < 1) {
    g->state = STN_GRAPH_OFF;
    if (stn_profiling && graph_env() != 0)
      fprintf(stderr, "%s: every kernel launched (--profile times them one by one); without --profile the loop may replay "
              "%d iterations at a time as a CUDA graph\n", g->loop, g->iters);
    return 0;
  }
  switch (g->state) {
  case STN_GRAPH_NEW:
    if (g->warm < STN_GRAPH_WARM) {
      g->warm++;
      return 0;
    }
    if (left < 5L * g->iters || !quiet) /* the timing pays only over several replays; it times quiet iterations */
      return 0;
    for (int e = 0; e < 4; e++)
      STN_CUDA_CHECK(cudaEventCreate(&g->ev[e]));
    STN_CUDA_CHECK(cudaEventRecord(g->ev[0], 0));
    g->state = STN_GRAPH_TIMING;
    g->warm = 1;
    return 0;
  case STN_GRAPH_TIMING:
    if (g->warm++ < g->iters)
      return 0;
    STN_CUDA_CHECK(cudaEventRecord(g->ev[1], 0));
    g->state = STN_GRAPH_RECORD;
    return left >= g->iters && quiet ? 2 : 0;
  case STN_GRAPH_RECORD: return left >= g->iters && quiet ? 2 : 0;
  default: /* TRIAL, ON */
    if (left < g->iters || !quiet)
      return 0;
    return graph_fields_match(g) ? 1 : 2;
  }
}

bool stn_cuda_graph_record_begin(stn_cuda_graph *g)
{
  if (!graph_stream)
    STN_CUDA_CHECK(cudaStreamCreateWithFlags(&graph_stream, cudaStreamNonBlocking));
  graph_saved = (stn_field *)realloc(graph_saved, sizeof *graph_saved * (size_t)(program->nfields + 1));
  if (!graph_saved)
    stn_fatal("out of memory");
  for (int f = 0; f < program->nfields; f++)
    graph_saved[f] = *program->fields[f];
  if (g->exec) { /* the fields moved since: record again */
    STN_CUDA_CHECK(cudaGraphExecDestroy(g->exec));
    g->exec = NULL;
  }
  recording = 1;
  recording_err = cudaSuccess;
  cudaError_t err = cudaStreamBeginCapture(graph_stream, cudaStreamCaptureModeRelaxed);
  if (err != cudaSuccess) { /* the iterations must not run: nothing would record them */
    recording = 0;
    (void)cudaGetLastError();
    graph_off(g, "recording did not start", err);
    return false;
  }
  stn_cuda_stream = graph_stream;
  return true;
}

bool stn_cuda_graph_record_end(stn_cuda_graph *g)
{
  cudaGraph_t graph = NULL;
  cudaError_t err = recording_err;
  if (stn_cuda_stream == graph_stream) {
    stn_cuda_stream = 0;
    cudaError_t end = cudaStreamEndCapture(graph_stream, &graph);
    if (err == cudaSuccess)
      err = end;
  }
  recording = 0;
  (void)cudaGetLastError();
  bool moved = false; /* the iterations' swaps must leave every field where it was */
  for (int f = 0; f < program->nfields; f++)
    moved |= program->fields[f]->mem != graph_saved[f].mem;
  size_t nodes = 0; /* a launch an iteration at least, else one went to another stream (a run time's bug) */
  if (err == cudaSuccess)
    err = cudaGraphGetNodes(graph, NULL, &nodes);
  const bool few = err == cudaSuccess && nodes < (size_t)g->iters;
  if (err == cudaSuccess && !moved && !few)
    err = cudaGraphInstantiate(&g->exec, graph, 0);
  if (graph)
    (void)cudaGraphDestroy(graph);
  if (err != cudaSuccess || moved || few) {
    for (int f = 0; f < program->nfields; f++)
      *program->fields[f] = graph_saved[f];
    (void)cudaGetLastError();
    char bug[160]; /* the compiler's period, wrong */
    snprintf(bug, sizeof bug, "the fields are elsewhere after the %d recorded iterations (a compiler bug: the loop's swaps "
             "do not repeat every %d iterations)", g->iters, g->period);
    graph_off(g, moved ? bug
                 : few ? "fewer launches recorded than iterations (a launch went to another stream: a bug of the run time)"
                       : "recording failed", moved || few ? cudaSuccess : err);
    return false;
  }
  if (!g->mem) {
    g->mem = (void **)malloc(sizeof *g->mem * (size_t)(program->nfields + 1));
    if (!g->mem)
      stn_fatal("out of memory");
  }
  for (int f = 0; f < program->nfields; f++)
    g->mem[f] = program->fields[f]->mem;
  if (g->state == STN_GRAPH_RECORD) {
    g->state = STN_GRAPH_TRIAL;
    STN_CUDA_CHECK(cudaGraphUpload(g->exec, 0)); /* the first replay, timed, without the upload */
  } else if (graph_verbose()) {
    fprintf(stderr, "%s: recorded again: the fields were not where the graph had them\n", g->loop);
  }
  return true;
}

void stn_cuda_graph_replay(stn_cuda_graph *g)
{
  const int trial = g->state == STN_GRAPH_TRIAL;
  if (trial)
    STN_CUDA_CHECK(cudaEventRecord(g->ev[2], 0));
  cudaError_t err = cudaGraphLaunch(g->exec, 0);
  if (err != cudaSuccess)
    stn_fatal("%s: replaying %d iterations as a CUDA graph failed: %s\n"
              "  run with STN_GRAPH=0 in the environment to launch them one by one", g->loop, g->iters,
              cudaGetErrorString(err));
  stn_cuda_barrier = ++stn_cuda_seq;
  stn_cuda_after_graph = 1;
  if (!trial)
    return;
  float plain, graph;
  STN_CUDA_CHECK(cudaEventRecord(g->ev[3], 0));
  STN_CUDA_CHECK(cudaEventSynchronize(g->ev[3]));
  STN_CUDA_CHECK(cudaEventElapsedTime(&plain, g->ev[0], g->ev[1]));
  STN_CUDA_CHECK(cudaEventElapsedTime(&graph, g->ev[2], g->ev[3]));
  const bool faster = stn_clearly_faster(graph, plain);
  g->state = faster || graph_env() == 1 ? STN_GRAPH_ON : STN_GRAPH_OFF;
  if (graph_verbose())
    fprintf(stderr, "%s: %d iterations %.4f ms plainly, %.4f ms as a CUDA graph: %s\n", g->loop, g->iters, plain, graph,
            faster ? "replayed" : graph_env() == 1 ? "replayed all the same (STN_GRAPH=1)" : "plainly (5% faster or more it must be)");
}
