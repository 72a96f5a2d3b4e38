/* stn_cuda.h: the CUDA part of the runtime, included by generated .cu
 * programs (libstn_cuda.a holds the host functions). Fields live on the
 * device for the whole run: stn_cuda_field_alloc puts a field's storage
 * (same layout as on the CPU, see stn.h) in device memory; host copies
 * happen only for file output. Reductions: each block combines its
 * threads' values (warp shuffle, then shared memory) and writes one
 * partial; finishing kernels combine the partials in a fixed order, so
 * results are bit-identical from run to run (see stn_reduction). */
#ifndef STN_CUDA_H
#define STN_CUDA_H
#include "stn.h"
#include "stn_tb_march.h"
#include <cuda_runtime.h>

/* Every CUDA call is checked; a failure says what failed and stops. */
#define STN_CUDA_CHECK(call) stn_cuda_check((call), #call, __FILE__, __LINE__)
void stn_cuda_check(cudaError_t err, const char *what, const char *file, int line);
/* After a launch: reports the kernel's name and launch shape on failure. */
void stn_cuda_check_launch(const char *kernel, dim3 grid, dim3 block);

/* When the last of a grid's blocks ends, in units of one row's work, if
 * `slots` blocks run at once and each slot takes the next block as soon
 * as its own ends: bands of `columns` blocks in order, the band starting
 * at row r taking min(march, rows - r) + warm. The slots are kept as
 * groups of equal end times, earliest first. -1 if there are more
 * distinct end times than the array holds. */
static inline double stn_tb_makespan(long slots, long columns, long rows, int warm, int march)
{
  enum { NG = 256 };
  double t[NG];
  long c[NG];
  int ng = 1;
  t[0] = 0;
  c[0] = slots;
  for (long r = 0; r < rows; r += march) {
    const double d = (double)(rows - r < march ? rows - r : march) + warm;
    for (long need = columns; need > 0;) {
      const long k = c[0] < need ? c[0] : need; /* the earliest slots take k blocks */
      const double end = t[0] + d;
      need -= k;
      if (!(c[0] -= k)) {
        for (int x = 1; x < ng; x++) {
          t[x - 1] = t[x];
          c[x - 1] = c[x];
        }
        ng--;
      }
      int x = ng; /* and end at `end`: in order */
      while (x > 0 && t[x - 1] > end)
        x--;
      if (x > 0 && t[x - 1] == end)
        c[x - 1] += k;
      else {
        if (ng == NG)
          return -1;
        for (int y = ng; y > x; y--) {
          t[y] = t[y - 1];
          c[y] = c[y - 1];
        }
        t[x] = end;
        c[x] = k;
        ng++;
      }
    }
  }
  return t[ng - 1];
}

/* Rows (planes) per block of a temporally blocked kernel, at most `most`
 * and at least a quarter of it: its blocks are long, and a last wave that
 * fills few of the GPU's `slots` (blocks resident at once) leaves the
 * rest idle, so the march is the one whose grid ends first
 * (stn_tb_makespan; warm: the rows a block computes beyond its own,
 * `columns` blocks side by side per band of rows); of those that end
 * within 2% of it the longest, as the model knows nothing of what a block
 * costs besides its rows. */
static inline int stn_tb_march_for(long slots, long columns, long rows, int warm, int most)
{
  if (slots <= 0 || rows <= 0 || columns <= 0)
    return most;
  const int fewest = most / 4 > 1 ? most / 4 : 1;
  double least = 0;
  for (int pass = 0; pass < 2; pass++) /* the earliest end; then the longest march within 2% of it */
    for (int m = pass ? most : fewest; pass ? m >= fewest : m <= most; m += pass ? -1 : 1) {
      double cost = stn_tb_makespan(slots, columns, rows, warm, m);
      if (cost < 0) /* too many distinct end times to follow: whole waves */
        cost = (double)((columns * ((rows + m - 1) / m) + slots - 1) / slots) * (m + warm);
      if (!pass && (m == fewest || cost < least))
        least = cost;
      if (pass && cost <= 1.02 * least)
        return m;
    }
  return most;
}
/* How a temporally blocked kernel's grid picks its march (IrTb.march_area,
 * passes/tblock.c): by the GPU's waves of blocks (stn_tb_march_for), or,
 * for a 2-D strip pass, from the grid's area for light or heavier steps
 * (stn_tb_march_area) where the kernel holds two blocks or more a
 * multiprocessor; one block a multiprocessor (lbm_d2q9) keeps the waves'
 * choice, which measured best for it at 2048^2 to 8192^2. */
enum { STN_TB_MARCH_WAVES, STN_TB_MARCH_AREA_HEAVY, STN_TB_MARCH_AREA_LIGHT };
/* The march of `kind` for a kernel of which `per_sm` blocks fit a
 * multiprocessor, on `sms` of them: `columns` blocks side by side, `rows`
 * along dimension 0, `width` points a row (the area's kinds), `warm` rows
 * a block computes beyond its own, at most `most` rows by the waves. */
static inline int stn_tb_march_choose(int kind, int per_sm, int sms, long columns, long rows, long width, int warm,
                                      int most)
{
  if (kind != STN_TB_MARCH_WAVES && per_sm >= 2) {
    const int m = stn_tb_march_area(rows, width, warm, kind == STN_TB_MARCH_AREA_LIGHT);
    if (m > 0)
      return m;
  }
  return stn_tb_march_for((long)per_sm * sms, columns, rows, warm, most);
}
/* 2-D fused passes: whether the fast instance (F_ true: the steady code
 * also for the warps at the grid's edges) leaves a multiprocessor at
 * least as many blocks as the general one, as ptxas gave them registers
 * for this GPU; where it leaves fewer, the general one runs. The steady
 * code of the edge warps gains 1-15% where the registers stay (j2d9pt and
 * star2d2r 1.15x, aniso2di 1.12x, j2d5pt 1.01x) and costs ptxas 8 more
 * registers on box2d1r, 72 -> 80, one block an SM fewer (0.91x; H200,
 * docs/benchmarks.md 2026-11-29 19:31-19:45). STN_TB_FAST=0 or 1
 * decides instead. */
bool stn_cuda_tb_fast_pays(const void *fast, const void *general, int threads, size_t smem);
/* The same for `kernel` on the current GPU, from its occupancy at
 * `threads` and `smem` bytes of dynamic shared memory per block. */
int stn_cuda_tb_march(const void *kernel, int threads, size_t smem, int kind, long columns, long rows, long width,
                      int warm, int most);
/* Whether a temporally blocked loop should run fused passes: when the
 * fields of a step (`bytes`, allocated) exceed the L2 cache, which
 * otherwise keeps them between single steps already, and the fused
 * kernel's grid has a block for every multiprocessor. Measured on the
 * H100 (docs/benchmarks.md 2026-11-24, fused against single steps):
 * diffusion3d 128^3 (22 MB) 0.72x, 192^3 (67 MB) 1.43x; Himeno 65x65x129
 * (40 MB) 0.87x, 97x97x193 (123 MB) 1.42x; lbm 512^2 (20 MB) 0.24x,
 * 1024^2 (78 MB) 1.22x; jacobi5 2048^2 (34 MB) 0.98x, 4096^2 (135 MB)
 * 1.59x; lbm 320 x 128 (10 blocks) 0.17x. Where it says no, main runs the
 * loop in single steps. STN_TB=0 in the environment says no, STN_TB=1
 * yes. With --profile the first answer for each kernel is on stderr
 * (*said marks it given). */
bool stn_cuda_tb_pays(const char *kernel, dim3 grid, double bytes, int *said);
static inline bool stn_tb_pays_for(double bytes, double l2, unsigned long blocks, long sms)
{
  return bytes > l2 && blocks >= (unsigned long)sms;
}

/* --tb=auto's check at run time. The depth the compiler chose was
 * measured on an H100; on a GPU whose memory is faster for the same chip,
 * single steps gain and fused passes do not (H200, docs/benchmarks.md
 * 2026-11-28 17:53: grad3d, aniso3d, box3d19 and diff3dc ran 0.88-0.90x
 * their single steps in fused passes), and on a few stencils half the
 * depth beats it (H200, 2026-11-30 00:32: sqrt2d.double two passes of 4
 * steps 1.07x one of 8, grad3d of 2 steps 1.05x one of 4). So a loop
 * times its candidates in its first passes: the fused pass of T steps,
 * and where the compiler built them (passes/tblock.c add_trial) T single
 * steps (3-D: `single`) and two fused passes of T / 2 steps (`half`).
 * A loop of STN_TB_TRIAL_MIN passes or more runs its first passes in two
 * rounds, each timed: one pass of each candidate in the order fused,
 * single, half, then the fused pass again with those of the others that
 * were not far slower (stn_tb_trial_round2). Every pass computes its
 * T steps, so the check costs only what the slower candidates lose in
 * their passes (2-D, where half passes rarely win: 0.5-1.5% of 1000
 * steps with two of them, docs/benchmarks.md 2026-11-30 02:45). The rest run
 * the fastest candidate whose faster pass took under 97% of the faster
 * fused one, else fused passes (STN_TB_TRIAL_MARGIN: the margin keeps the
 * compiler's choice where they are close, whose two timed passes can
 * differ by a few percent; results can differ in the last bits between
 * them, as nvcc contracts them to FMAs in different places. It was 95%
 * with single steps the only other candidate; a half that runs 1.05x the
 * fused pass, grad3d's, 2026-11-30 00:35, must be taken for the
 * defaults to stay within 5% of the best).
 * STN_TB_TRIAL=0 in the environment keeps the fused passes without
 * timing; STN_TB=0 or 1 forces single steps or fused passes
 * (stn_cuda_tb_pays). With --profile the times and the choice are on
 * stderr. The generated loop asks stn_cuda_tb_trial_how(t, n, passes)
 * before its pass n (0: this run's first of `passes`) which candidate to
 * run (STN_TB_SINGLE, STN_TB_FUSED or STN_TB_HALF), and calls
 * stn_cuda_tb_trial_mark(t, n) after it. A fused pass's wrapper that
 * first checks on the device whether cur and next agree outside the
 * region (after another candidate wrote them, so every timed fused pass
 * does) calls stn_cuda_tb_trial_restart() after the check: the pass's
 * time starts there, since the passes that follow a fused one skip the
 * check (Himeno M on the H200 timed its fused passes with the check and
 * the host's wait for its answer, 20-30 us on a 106 us pass, and took
 * single steps 10% slower, docs/benchmarks.md 2026-11-29 11:12). */
enum { STN_TB_TRIAL_MAX = 6, STN_TB_TRIAL_MIN = 8 };
enum { STN_TB_UNDECIDED, STN_TB_TIMING, STN_TB_FUSED, STN_TB_SINGLE, STN_TB_HALF };
typedef struct stn_tb_trial {
  const char *kernel;
  int steps;   /* T */
  int single;  /* T single steps are a candidate */
  int half;    /* two fused passes of T / 2 steps are one */
  int state;   /* STN_TB_UNDECIDED ... */
  int order[STN_TB_TRIAL_MAX];  /* the candidate timed pass n runs */
  int round1, timed;            /* the first round's passes; all timed passes, once the second round is known */
  cudaEvent_t ev[2 * STN_TB_TRIAL_MAX];  /* timed pass n's start (2n) and end (2n + 1) */
} stn_tb_trial;
int stn_cuda_tb_trial_how(stn_tb_trial *t, long n, long passes);
void stn_cuda_tb_trial_mark(stn_tb_trial *t, long n);
void stn_cuda_tb_trial_restart(void);
/* --restart: the choice a checkpoint saved (the loop's stn_tb_choice,
 * the trial's state when it was written) is kept, untimed, so that the
 * resumed run follows the schedule of the run it resumes: the candidates
 * can differ in the last bits, and --restart promises the same bits. A
 * checkpoint from before the choice times again, and so does one whose
 * choice this build does not have (another build's). */
static inline void stn_tb_trial_resume(stn_tb_trial *t, int choice)
{
  if (choice == STN_TB_FUSED || (choice == STN_TB_SINGLE && t->single) || (choice == STN_TB_HALF && t->half))
    t->state = choice;
}
/* The state a loop of `passes` passes starts in: fused where
 * STN_TB_TRIAL=0 (trial_env) or STN_TB=1 (tb_env) ask for it (STN_TB=1
 * with STN_TB_TRIAL=1 times them all the same: the tests' way to check
 * the timed passes on grids too small for fused passes to pay), timing at
 * STN_TB_TRIAL_MIN passes or more, else undecided (a short loop runs its
 * fused passes and leaves the choice to a longer run of it). */
static inline int stn_tb_trial_start(long passes, const char *trial_env, const char *tb_env)
{
  const bool off = trial_env && strcmp(trial_env, "0") == 0, on = trial_env && strcmp(trial_env, "1") == 0;
  if (off || (!on && tb_env && strcmp(tb_env, "1") == 0))
    return STN_TB_FUSED;
  return passes >= STN_TB_TRIAL_MIN ? STN_TB_TIMING : STN_TB_UNDECIDED;
}
/* The first round: one pass of each candidate, the fused pass, single
 * steps, half passes (those the loop has). The fused pass first: the
 * loop's first pass runs cold (the L2, and each kernel's first launch
 * loads it), which makes the others look faster, never slower, against
 * it. */
static inline void stn_tb_trial_begin(stn_tb_trial *t)
{
  int n = 0;
  t->order[n++] = STN_TB_FUSED;
  if (t->single)
    t->order[n++] = STN_TB_SINGLE;
  if (t->half)
    t->order[n++] = STN_TB_HALF;
  t->round1 = t->timed = n;
}
/* The second round, from the first's milliseconds (ms[n], pass n): the
 * fused pass again, and each other candidate that took under 125% of it
 * (one far slower is not timed again: its pass costs the loop what it
 * loses, j2d5pt's half passes 1.4x the fused one's. A candidate's own
 * first launch is in its first pass too: box3d19's first pass of single
 * steps took 1.10x the first fused one, its second 0.95x, 2026-11-29
 * 11:33). */
static inline void stn_tb_trial_round2(stn_tb_trial *t, const float *ms)
{
  float fused = 0;
  for (int n = 0; n < t->round1; n++)
    if (t->order[n] == STN_TB_FUSED)
      fused = ms[n];
  int m = t->round1;
  for (int n = 0; n < t->round1; n++)
    if (t->order[n] == STN_TB_FUSED || ms[n] < 1.25f * fused)
      t->order[m++] = t->order[n];
  t->timed = m;
}
/* CUDA graphs' timed choice takes the other way only where it took under
 * 95% of the compiler's: near a tie the compiler's choice stays. */
static inline bool stn_clearly_faster(float ms, float than)
{
  return ms < 0.95f * than;
}
/* The choice from the timed passes' milliseconds (ms[n], pass n): of the
 * candidates whose fastest pass took under 97% of the fastest fused one,
 * the fastest; fused where none. */
#define STN_TB_TRIAL_MARGIN 0.97f
static inline int stn_tb_trial_pick(const stn_tb_trial *t, const float *ms)
{
  float best[STN_TB_HALF + 1] = { 0 };
  for (int n = 0; n < t->timed; n++)
    if (best[t->order[n]] == 0 || ms[n] < best[t->order[n]])
      best[t->order[n]] = ms[n];
  const float fused = best[STN_TB_FUSED];
  int pick = STN_TB_FUSED;
  for (int c = STN_TB_SINGLE; c <= STN_TB_HALF; c++)
    if (best[c] > 0 && best[c] < STN_TB_TRIAL_MARGIN * fused && best[c] < best[pick])
      pick = c;
  return pick;
}

/* Programmatic dependent launch (Hopper, sm_90 and later). A kernel the
 * gpu pass marks (IrKernel.pdl) lets the next launch start as soon as all
 * of its blocks have started (stn_pdl_trigger at its top) and, before any
 * load or store, waits for the launch before it to finish and its writes
 * to be visible (stn_pdl_wait): the next launch's first blocks take the
 * SMs the last partial wave leaves idle instead of starting after it.
 * Its reads of what a launch in flight may write must be coherent loads;
 * fields that no loop writes (Himeno's coefficients) keep the read-only
 * path (const __restrict__: ld.global.nc, about 2% faster at Himeno M),
 * whose loads ptxas may move above the wait. So such a kernel is launched
 * programmatically only when no launch still in flight can have written
 * those fields: stn_cuda_seq numbers the device operations that write
 * fields (a field keeps the latest in wseq), and every operation before
 * stn_cuda_barrier, the latest plain launch, has finished when any later
 * launch starts. STN_PDL=0 in the environment makes every launch plain. */
extern unsigned long stn_cuda_seq, stn_cuda_barrier;
extern int stn_cuda_pdl;
/* Where launches go: the legacy default stream, or while a time loop's
 * iterations are recorded into a CUDA graph, the stream that records them
 * (stn_cuda_graph below). */
extern cudaStream_t stn_cuda_stream;
/* Set by a graph's replay: the next launch is plain (a programmatic launch
 * waits on the kernel before it, not on a graph). */
extern int stn_cuda_after_graph;
/* A device operation wrote f (after its launch or copy). */
static inline void stn_cuda_wrote(stn_field *f) { f->wseq = ++stn_cuda_seq; }
/* No operation in flight writes f (for a read that may precede stn_pdl_wait). */
static inline bool stn_cuda_settled(const stn_field *f) { return f->wseq < stn_cuda_barrier; }
#ifdef __CUDACC__
/* x modulo n in 0 .. n - 1: a periodic coordinate that may lie several
 * periods away (temporally blocked kernels' halos can be wider than the
 * grid). */
__device__ __forceinline__ long stn_wrap(long x, long n)
{
  const long r = x % n;
  return r < 0 ? r + n : r;
}

__device__ __forceinline__ void stn_pdl_trigger(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void stn_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* Launches kernel, programmatically when pdl (cudaLaunchKernelEx with
 * programmatic stream serialization), plainly otherwise. */
template <typename... P, typename... A>
static inline void stn_cuda_launch(bool pdl, dim3 grid, dim3 block, size_t smem, void (*kernel)(P...), A... args)
{
  ++stn_cuda_seq;
  if (!pdl || stn_cuda_after_graph) {
    stn_cuda_after_graph = 0;
    stn_cuda_barrier = stn_cuda_seq;
    kernel<<<grid, block, smem, stn_cuda_stream>>>(args...);
    return;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.stream = stn_cuda_stream;
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  (void)cudaLaunchKernelEx(&cfg, kernel, args...); /* an error stays for cudaGetLastError */
}
#endif

/* ---- time loops replayed as CUDA graphs (passes/graph.c) ----
 * Every launch costs about 3-4 us on an H100 or H200 however small its grid
 * (docs/benchmarks.md 2026-11-29 03:12), so a loop of small steps runs at
 * the launch rate. A loop whose iterations only launch kernels and swap
 * fields runs its first STN_GRAPH_WARM iterations plainly (first calls
 * tune, pick variants and time), times the next `iters` (CUDA events),
 * records `iters` of them once into a CUDA graph (stream capture: the
 * iteration's host code runs `iters` times and its launches are recorded,
 * not run), and times the graph's first replay: where it took under 95% of
 * the plain iterations' time it replays the graph while `iters` or more
 * iterations are left, else the loop stays plain (Himeno 65x65x129,
 * sweeps of about 9 us launched programmatically, measured 0.98x and 1.00x
 * replayed: docs/benchmarks.md 2026-11-29 08:45). The rest
 * run plainly. `iters` is a multiple of `period`, the iterations after
 * which the swaps leave every field where it was, so that the fields are
 * where the host's descriptors say after each replay; a replay checks that
 * they are where the graph has them, and records again where they are not.
 * The timing starts only with 5 x iters iterations or more ahead. Off
 * with --profile (kernels timed one by one), --checkpoint and --restart
 * (a checkpoint an iteration), STN_GRAPH=0 in the environment, and where
 * recording fails (the loop then runs plainly). STN_GRAPH=1 replays
 * wherever recording works, faster or not (the tests' way to run the
 * graphs); STN_GRAPH_VERBOSE=1 reports each loop's times and choice, and
 * recording failures, on stderr. With --profile each such loop says on
 * stderr that it launches every kernel. */
enum { STN_GRAPH_WARM = 5 };
enum { STN_GRAPH_OFF = -1, STN_GRAPH_NEW, STN_GRAPH_TIMING, STN_GRAPH_RECORD, STN_GRAPH_TRIAL, STN_GRAPH_ON };
typedef struct stn_cuda_graph {
  const char *loop;      /* "file.stn:line", for messages */
  int period, iters;     /* from the compiler */
  int warm;              /* iterations run plainly so far (then: timed so far) */
  int state;             /* STN_GRAPH_OFF ... */
  cudaGraphExec_t exec;
  void **mem;            /* every field's storage when recorded */
  cudaEvent_t ev[4];     /* the plain iterations' start and end; the first replay's */
} stn_cuda_graph;
/* Before an iteration, `left` of them to go, `quiet` when the next
 * g->iters of them run none of the loop's guarded host work: 0 run it
 * plainly; 1 replay the graph; 2 record it first
 * (stn_cuda_graph_record_begin, the iterations,
 * stn_cuda_graph_record_end). */
int stn_cuda_graph_due(stn_cuda_graph *g, long left, bool quiet);
/* Whether recording began (if not, the graph is off: run the iterations
 * plainly). */
bool stn_cuda_graph_record_begin(stn_cuda_graph *g);
/* Whether the graph was recorded; if not, the fields are back where they
 * were and the loop goes on plainly. */
bool stn_cuda_graph_record_end(stn_cuda_graph *g);
void stn_cuda_graph_replay(stn_cuda_graph *g);
/* The generated loop's call: g->iters iterations replayed (true), or none
 * (false: the caller runs one plainly). A loop with guards (an `if` on
 * its variable: passes/graph.c) passes quiet(v), whether iteration v
 * runs none of them, and `at`, the iteration about to run: only runs of
 * quiet iterations are timed, recorded and replayed. */
static inline bool stn_graph_always_quiet(long) { return true; }
template <typename F, typename Q = bool (*)(long)>
static inline bool stn_cuda_graph_run(stn_cuda_graph *g, long left, F iteration, Q quiet = stn_graph_always_quiet,
                                      long at = 0)
{
  bool q = g->state != STN_GRAPH_OFF;
  for (long k = 0; q && k < g->iters; k++)
    q = quiet(at + k);
  const int due = stn_cuda_graph_due(g, left, q);
  if (!due)
    return false;
  if (due == 2) {
    if (!stn_cuda_graph_record_begin(g))
      return false;
    for (int i = 0; i < g->iters; i++)
      iteration();
    if (!stn_cuda_graph_record_end(g))
      return false;
  }
  stn_cuda_graph_replay(g);
  return true;
}

void stn_cuda_options(stn_program *p);   /* --autotune, --tune-cache=PATH */
void stn_cuda_init(stn_program *p);
void stn_cuda_field_alloc(stn_field *f, const char *name, stn_type type, stn_grid *g);
void stn_cuda_field_zero(stn_field *f);
/* stn_field_fill_halo for a device field (through a host copy, once). */
void stn_cuda_field_fill_halo(stn_field *f, double (*value)(long i, long j, long k));
void stn_cuda_field_write(const stn_field *f, const char *path);
void stn_cuda_field_write_image(const stn_field *f, const char *path, double lo, double hi, const char *colormap);
void stn_cuda_finish(stn_program *p);
/* stn_cuda_finish in two steps, for stn_cuda_mpi_finish: wait for the
 * device (pending results delivered, the profile's events read); then free
 * every field's device memory and the runtime's buffers (p->nfields
 * becomes 0, so that stn_finish frees nothing twice). */
void stn_cuda_drain(void);
void stn_cuda_release(stn_program *p);

/* ---- distributed runs (stencilc --mpi: stn_cuda_mpi.cu, libstn_cuda_mpi.a,
 * with stn_mpi.h) -------------------------------------------------------
 * stn_cuda_mpi_init, after stn_init: this rank's GPU, the node-local rank
 * (MPI_COMM_TYPE_SHARED) modulo the GPUs it sees, set before the device is
 * first used (several ranks may share one), then stn_cuda_init; write and
 * --save gather through stn_mpi_field_write, which copies device fields
 * through stn_mpi_host_copy.
 *
 * The halo exchange of stn_mpi_begin/stn_mpi_end on device fields, with
 * the same messages (tags, neighbours, boxes, one message per neighbour):
 * stn_cuda_mpi_begin posts the receives and enqueues the packing of the
 * stale fields on the runtime's own exchange stream (a kernel copying
 * boxes of fields into one dense device buffer, after the launches that
 * wrote them), and splits [lo, hi) into parts like stn_mpi_begin;
 * stn_cuda_mpi_end, before part `wait`, waits for the packing, sends,
 * waits for the messages, unpacks (a kernel) and makes the default stream
 * wait for that, so that the launches after it read the new ghost points.
 * Messages go GPU to GPU through NCCL (on the exchange stream, between
 * the packing and the unpacking, nothing waiting on the host) where every
 * rank has a GPU of its own and libnccl.so.2 loads, unless STN_MPI_NCCL=0;
 * else device to device when the MPI library says at run time that it is
 * CUDA-aware (MPIX_Query_cuda_support); else through pinned host buffers
 * with asynchronous copies on the exchange stream. STN_MPI_STAGED=1
 * forces staging. A single rank's messages to itself are device copies.
 *
 * Reductions under --mpi are as lazy as a single GPU's: stn_cuda_mpi_red_init
 * fills vals (nparts x nred, static in the wrapper; xvals the same for the
 * exact sums of --deterministic-reductions, or NULL) with the identities and
 * drops the parts' undelivered results of the last call, each part's launch
 * delivers its results into its row when finished, and stn_cuda_mpi_red_done
 * only records that vals are to be combined into dst. The next
 * stn_cuda_sync (main reading a variable, which every rank does at the same
 * point) delivers the parts' results, then combines each recorded kernel's
 * rows in order and over the ranks (MPI_Allreduce), in the order the
 * kernels were first recorded, and delivers to dst. A time loop that never
 * reads its residual (Himeno) neither waits for the device nor calls MPI. stn_cuda_mpi_finish: the profile
 * (rank 0) and the gathered --save while the fields are on the device,
 * then their memory freed and MPI finalized (stn_mpi_finish). */
struct stn_mpi_xch;
struct stn_mpi_parts;
void stn_cuda_mpi_init(stn_program *p);
void stn_cuda_mpi_begin(struct stn_mpi_xch *x, const long *lo, const long *hi, struct stn_mpi_parts *parts);
void stn_cuda_mpi_end(struct stn_mpi_xch *x);
void stn_cuda_mpi_red_init(double *vals, stn_xsum *xvals, struct stn_reduction *red, int nparts, int nred,
                           const int *ops);
void stn_cuda_mpi_red_done(const double *vals, const stn_xsum *xvals, int nparts, int nred, const int *ops,
                           void *const *dst, const stn_type *dst_type);
void stn_cuda_mpi_finish(stn_program *p);

/* Library mode (stn.h): the device check, and device fields' points copied
 * through the host; stn_cuda_lib_finish delivers pending results, prints
 * the profile when asked, and releases the reductions' buffers. */
void stn_cuda_lib_init(stn_program *p);
void stn_cuda_lib_finish(stn_program *p);
void stn_cuda_field_free(stn_field *f);
void stn_cuda_field_get(const stn_field *f, void *dst);
void stn_cuda_field_set(stn_field *f, const void *src);

/* A kernel's reductions (one stn_reduction, static in its wrapper).
 * Deterministic (the default): each block writes one partial per
 * reduction; finishing combines them in a fixed order in two kernels.
 * Atomic (--no-deterministic-reductions): blocks combine into one slot
 * with atomics. Results reach main lazily: a launch only records that its
 * result is pending, and stn_cuda_sync() (printed before main reads such a
 * variable) finishes every pending reduction into mapped host memory,
 * waits and delivers. A launch whose result main never reads (the time
 * loop of Himeno overwrites gosa every sweep) is never finished: the
 * sweep costs one kernel launch, not four operations. Delivery follows
 * each kernel's latest launch, so where two kernels' results go to one
 * variable the later launch's stays (Himeno under --tb=auto: fused passes
 * timed, then single steps). */
enum { STN_MAXRED = 16 };
/* Moves element i of the n elements of `size` bytes at a to the end, the
 * others keeping their order: the run times' lists of pending results are
 * in the order of each kernel's latest launch. */
static inline void stn_move_last(void *a, int n, size_t size, int i)
{
  char *e = (char *)a;
  for (int k = i; k + 1 < n; k++)
    for (size_t c = 0; c < size; c++) {
      const char t = e[k * size + c];
      e[k * size + c] = e[(k + 1) * size + c];
      e[(k + 1) * size + c] = t;
    }
}
typedef struct stn_reduction {
  int started, nred, atomic, ops[STN_MAXRED];
  double *part;             /* device: nred x cap partials (atomic: nred slots) */
  size_t cap, nblocks;      /* partials per reduction: allocated, latest launch */
  double *out, *out_dev;    /* mapped host memory: the finished values */
  int pending;              /* launched, not yet finished and delivered */
  void *dst[STN_MAXRED];    /* main's variables (NULL: not delivered) */
  stn_type dst_type[STN_MAXRED];
  /* exact sums (STN_RED_XSUM): per block the digits of stn_xsum (below) */
  int nx;                   /* how many of the reductions */
  long long *xpart;         /* device: nx x xcap x STN_XACC_W digits */
  size_t xcap;
  long long *xout, *xout_dev; /* mapped host memory: nx x STN_XACC_W, summed over the blocks */
} stn_reduction;

/* Before a launch: set up r and record where its results go. */
void stn_cuda_reduction_begin(stn_reduction *r, int nred, const int *ops, int atomic, void *const *dst,
                              const stn_type *dst_type);
/* In the launch: the partials' storage for nblocks blocks (and the exact
 * sums' digits, when the kernel has some). */
double *stn_cuda_reduction_partials(stn_reduction *r, size_t nblocks);
long long *stn_cuda_reduction_xpartials(stn_reduction *r, size_t nblocks);
/* A result type for stn_cuda_reduction_begin: an exact sum delivered as
 * its stn_xsum (--mpi: combined over the parts and ranks before rounding). */
#define STN_XSUM_DST ((stn_type)16)
/* After the launch: the result is pending. */
void stn_cuda_reduction_end(stn_reduction *r);
/* Waits for the device, finishing and delivering every pending result,
 * then calls stn_cuda_sync_hook when set (--mpi: combines over the ranks). */
void stn_cuda_sync(void);
extern void (*stn_cuda_sync_hook)(void);
/* For values already on the host (an empty region's identities). */
void stn_cuda_deliver_now(const double *values, int nred, void *const *dst, const stn_type *dst_type);
/* Seconds, after the device has finished the work enqueued so far. */
double stn_cuda_time(void);

/* Profile (stn.h): a wrapper brackets its launch with these while
 * stn_profiling is set; the time between them is measured on the device
 * with CUDA events, read back in batches, so profiling adds no waits. */
void stn_cuda_prof_start(stn_kprof *k);
void stn_cuda_prof_stop(stn_kprof *k, double points);

enum { STN_RED_SUM = 0, STN_RED_MAX = 1, STN_RED_MIN = 2, STN_RED_XSUM = 3 /* exact (--mpi --deterministic-reductions) */ };

/* Exact sums on the device (--mpi --deterministic-reductions): the
 * digits of stn_xsum (base 2^32 from 2^-1074), then counts of +inf, -inf
 * and NaN; a block adds each point's value into one of STN_XACC_COPIES
 * copies in shared memory (by warp, against contention) with integer
 * atomics, so the order of the additions does not matter; the block's
 * copies are summed and carried into STN_XACC_W words of the partials,
 * and the finish sums the blocks' words, again as integers. The host
 * rounds the exact sum once (stn_xsum_value), after the ranks'. */
#define STN_XACC_W (STN_XSUM_DIGITS + 3)
#define STN_XACC_COPIES 4
__device__ __forceinline__ void stn_xacc_init(long long *acc)
{
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  for (int i = t; i < STN_XACC_COPIES * STN_XACC_W; i += blockDim.x * blockDim.y * blockDim.z)
    acc[i] = 0;
  __syncthreads();
}
__device__ __forceinline__ void stn_xacc_add(long long *acc, double v)
{
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned long long *a = (unsigned long long *)acc + ((t >> 5) % STN_XACC_COPIES) * STN_XACC_W;
  const unsigned long long bits = (unsigned long long)__double_as_longlong(v);
  const int ex = (int)((bits >> 52) & 0x7ff);
  if (ex == 0x7ff) {
    atomicAdd(&a[STN_XSUM_DIGITS + ((bits & 0xfffffffffffffull) ? 2 : (bits >> 63) ? 1 : 0)], 1ull);
    return;
  }
  const unsigned long long m = (bits & 0xfffffffffffffull) | (ex ? 1ull << 52 : 0);
  if (!m)
    return;
  const int pos = ex ? ex - 1 : 0, q = pos >> 5, s = pos & 31; /* v = m 2^(pos - 1074) */
  const unsigned long long lo = m << s, hi = s ? m >> (64 - s) : 0;
  long long d0 = (long long)(lo & 0xffffffffull), d1 = (long long)(lo >> 32), d2 = (long long)hi;
  if (bits >> 63) {
    d0 = -d0;
    d1 = -d1;
    d2 = -d2;
  }
  if (d0)
    atomicAdd(&a[q], (unsigned long long)d0);
  if (d1)
    atomicAdd(&a[q + 1], (unsigned long long)d1);
  if (d2)
    atomicAdd(&a[q + 2], (unsigned long long)d2);
}
/* Every thread calls it: the block's copies summed, carried, into out[STN_XACC_W]. */
__device__ __forceinline__ void stn_xacc_store(long long *acc, long long *out)
{
  __syncthreads();
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  for (int i = t; i < STN_XACC_W; i += blockDim.x * blockDim.y * blockDim.z) {
    long long v = 0;
    for (int c = 0; c < STN_XACC_COPIES; c++)
      v += acc[c * STN_XACC_W + i];
    acc[i] = v;
  }
  __syncthreads();
  if (t == 0) { /* digits into [0, 2^32), the last signed: the blocks' sum cannot overflow */
    for (int i = 0; i < STN_XSUM_DIGITS - 1; i++) {
      const long long c = acc[i] >> 32;
      acc[i] -= c * (1ll << 32);
      acc[i + 1] += c;
    }
    for (int i = 0; i < STN_XACC_W; i++)
      out[i] = acc[i];
  }
}

template <int OP> __device__ __forceinline__ double stn_combine(double a, double b)
{
  return OP == STN_RED_SUM ? a + b : OP == STN_RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* The block's combined value, in thread 0. Every thread must call it. */
template <int OP> __device__ double stn_block_reduce(double v)
{
  __shared__ double warp_part[32];
  const int lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31;
  const int warp = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >> 5;
  const int nwarps = (blockDim.x * blockDim.y * blockDim.z + 31) >> 5;
  for (int d = 16; d > 0; d >>= 1)
    v = stn_combine<OP>(v, __shfl_down_sync(0xffffffffu, v, d));
  if (lane == 0)
    warp_part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? warp_part[lane] : (OP == STN_RED_SUM ? 0.0 : OP == STN_RED_MAX ? -INFINITY : INFINITY);
    for (int d = 16; d > 0; d >>= 1)
      v = stn_combine<OP>(v, __shfl_down_sync(0xffffffffu, v, d));
  }
  __syncthreads();
  return v;
}

template <int OP> __device__ void stn_atomic_combine(double *slot, double v)
{
  if (OP == STN_RED_SUM) {
    atomicAdd(slot, v);
    return;
  }
  unsigned long long *p = (unsigned long long *)slot, old = *p, seen;
  do {
    seen = old;
    double cur = __longlong_as_double((long long)seen);
    double want = stn_combine<OP>(cur, v);
    if (want == cur)
      return;
    old = atomicCAS(p, seen, (unsigned long long)__double_as_longlong(want));
  } while (old != seen);
}

/* ---- run-time autotuning (--autotune) ----------------------------------
 * A kernel's wrapper keeps its launch shape in a stn_tune. With --autotune,
 * its first call looks the kernel up in the cache file (key: program,
 * kernel, strategy, grid size, GPU, stencilc version); when absent it times
 * every candidate shape on the real kernel, keeps the fastest and appends
 * it to the cache, so the next run starts tuned. Only kernels that do not
 * read a field they write are tuned: re-running them changes nothing. */
typedef struct stn_tune {
  const char *program, *kernel, *strategy;
  int bx, by, march;        /* in use: the default until tuned */
  const char *untunable;     /* why it cannot be tuned, or NULL */
  int max_threads;          /* the kernel's __launch_bounds__ */
  int marches;              /* 1: march is a parameter too */
  int done;
} stn_tune;

/* A kernel compiled in variants (passes/gpu.c, decide_variants: 3-D
 * stream kernels whose planes may not leave an SM enough warps): points a
 * thread, block, march (planes a block; a burst's planes), and whether
 * --autotune may change the march. Its first call picks one
 * (stn_cuda_pick_variant) and sets the stn_tune's shape from it. */
typedef struct stn_variant {
  const char *strategy;
  int vec, bx, by, march, marches;
} stn_variant;
int stn_cuda_pick_variant(stn_tune *t, const stn_variant *v, const void *const *fns, int n);

extern int stn_cuda_autotune;
int stn_cuda_tune_lookup(stn_tune *t, const stn_grid *g);
void stn_cuda_tune_store(stn_tune *t, const stn_grid *g, double ms, double default_ms, int tried, double seconds);

/* launch(bx, by, march) enqueues one call and returns its launch error. */
template <typename F> void stn_cuda_tune(stn_tune *t, const stn_grid *g, F launch)
{
  t->done = 1;
  if (t->untunable) {
    fprintf(stderr, "autotune: %s: not tuned (%s)\n", t->kernel, t->untunable);
    return;
  }
  if (stn_cuda_tune_lookup(t, g))
    return;
  static const int xs[] = { 32, 64, 128, 256 }, ys[] = { 1, 2, 4, 8, 16 }, ms[] = { 1, 2, 4, 8, 16, 1 << 30 };
  const int nm = t->marches ? 6 : 1;
  cudaEvent_t e0, e1;
  STN_CUDA_CHECK(cudaEventCreate(&e0));
  STN_CUDA_CHECK(cudaEventCreate(&e1));
  /* The best of `reps` launches of a shape, each between two events. */
  auto best_of = [&](int x, int y, int m, int reps) {
    float f, fbest = 1e30f;
    for (int rep = 0; rep < reps; rep++) {
      STN_CUDA_CHECK(cudaEventRecord(e0));
      launch(x, y, m);
      STN_CUDA_CHECK(cudaEventRecord(e1));
      STN_CUDA_CHECK(cudaEventSynchronize(e1));
      STN_CUDA_CHECK(cudaEventElapsedTime(&f, e0, e1));
      if (f < fbest)
        fbest = f;
    }
    return fbest;
  };
  double t0 = stn_time(), best = 1e30, def = 1e30;
  int bx = t->bx, by = t->by, bm = t->march, tried = 0;
  /* The default first, so that the result is never slower than it. */
  for (int c = -1; c < 4 * 5 * nm; c++) {
    int xi = c < 0 ? 0 : c / (5 * nm), yi = c < 0 ? 0 : c / nm % 5, mi = c < 0 ? 0 : c % nm;
    int x = c < 0 ? t->bx : xs[xi], y = c < 0 ? t->by : g->rank == 1 ? 1 : ys[yi];
    int m = c < 0 ? t->march : t->marches ? ms[mi] : 1;
    if (c >= 0 && ((g->rank == 1 && yi > 0) || (x == t->bx && y == t->by && m == t->march)))
      continue;
    if (x * y > t->max_threads)
      continue;
    STN_CUDA_CHECK(cudaDeviceSynchronize());
    if (launch(x, y, m) != cudaSuccess) { /* shape not launchable: skip */
      cudaGetLastError();
      continue;
    }
    const float fbest = best_of(x, y, m, 3);
    tried++;
    if (c < 0)
      def = fbest;
    if (fbest < best)
      best = fbest, bx = x, by = y, bm = m;
  }
  /* A shape timed once can win by luck (a launch of the sweep that
   * happened to run fast). The winner and the default again, in turns:
   * the winner stays only if it is faster by 0.5% in the best of five
   * rounds each. */
  if (bx != t->bx || by != t->by || bm != t->march) {
    float fd = 1e30f, fw = 1e30f;
    for (int rep = 0; rep < 5; rep++) {
      fd = fminf(fd, best_of(t->bx, t->by, t->march, 1));
      fw = fminf(fw, best_of(bx, by, bm, 1));
    }
    def = fd;
    best = fw;
    if (!(fw < 0.995f * fd))
      bx = t->bx, by = t->by, bm = t->march, best = fd;
  }
  STN_CUDA_CHECK(cudaEventDestroy(e0));
  STN_CUDA_CHECK(cudaEventDestroy(e1));
  t->bx = bx;
  t->by = by;
  t->march = bm;
  stn_cuda_tune_store(t, g, best, def, tried, stn_time() - t0);
}

__device__ __forceinline__ unsigned stn_block_linear(void)
{
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
#endif
