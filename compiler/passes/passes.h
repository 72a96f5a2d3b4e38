/* passes.h: the optimisation and analysis passes over the IR, and the
 * pipeline that runs them in order (pipeline.c). */
#ifndef STN_PASSES_H
#define STN_PASSES_H
#include "ir/ir.h"

typedef enum Target { TARGET_C, TARGET_OPENMP, TARGET_CUDA } Target;

typedef struct PassOptions {
  Target target;
  int no_fold, no_cse, no_hoist, no_recip;
  int no_rsqrt;                  /* -fno-rsqrt: CUDA keeps x / sqrt(y) (passes/hoist.c) */
  int no_distribute;             /* -fno-distribute: keep (a x + b y) * s as written (passes/hoist.c) */
  int no_fold_zeros;             /* -fno-fold-zeros: keep float x*0, x+0, 0-x as written */
  int no_tb, no_simd, no_queue;  /* -fno-tb, -fno-simd (OpenMP), -fno-queue (CUDA stream) */
  int no_tb_reuse;               /* -fno-tb-reuse: CUDA 3-D temporal blocking loads read-only fields at every step */
  int no_tb_half;                /* -fno-tb-half: --tb=auto on CUDA times no fused passes of half the steps */
  int no_tb_own_smem;            /* -fno-tb-own-smem: CUDA 2-D temporal blocking keeps every own column in registers */
  int no_tb_psum;                /* -fno-tb-partial-sums: CUDA strip temporal blocking sums every point at once */
  int no_pdl;                    /* -fno-pdl: CUDA launches wait for the previous one to finish */
  int no_graph;                  /* -fno-graph: CUDA time loops launch every kernel (passes/graph.c) */
  int lib;                       /* --emit=lib: main is the library's run function (docs/library.md) */
  int stream_pipeline;           /* -fstream-pipeline: CUDA stream kernels load plane i + 1's in-plane rows at plane i */
  int arch;                      /* --arch: CUDA compute capability x 10 (90 for sm_90) */
  int gpu;                       /* --gpu: the time model's GPU (passes/tbmodel.c tb_model_gpu; 0: the H100) */
  const char *dump_after;  /* pass name, "all", or NULL */
  int verify;              /* run the IR verifier between passes */
  const char *cuda_strategy;  /* --cuda-strategy: "naive", "K=stream,naive", ... (pass_option_for_kernel); NULL: the heuristic */
  int block[MAX_RANK];     /* --block=XxY[xZ]; 0: the default */
  int march;               /* --march=N; 0: the default */
  const char *max_regs;    /* --max-regs: "40" or "K=40,..." (pass_option_for_kernel); NULL: no cap */
  const char *vec;         /* --vec: "4" or "K=2,..." (pass_option_for_kernel): CUDA points per thread along the
                            * contiguous dimension; NULL: chosen */
  int atomic_reductions;   /* --no-deterministic-reductions */
  const char *burst;       /* --burst: "2" or "K=2,..." (pass_option_for_kernel): CUDA stream kernels load this
                            * many planes before computing them; NULL: chosen */
  const char *tb;          /* --tb: "4", "auto", "name=4,...", or NULL (no temporal blocking) */
  int tb_vec;              /* --tb-vec: CUDA 2-D temporal blocking, columns per thread (0: chosen) */
  int tb_rows;             /* --tb-rows: CUDA 3-D strip passes, rows per thread along j (0: chosen) */
  int tb_shfl;             /* --tb-exchange=shfl: CUDA 2-D temporal blocking, neighbours by warp shuffles */
  /* --mpi: a distributed program (passes/mpi.c) */
  int mpi;
  int mpi_exact;           /* --deterministic-reductions given: sums bit-identical for any rank count */
  int mpi_ranks[MAX_RANK]; /* --ranks=PxQxR: the decomposition the report shows (0: MPI_Dims_create of 4) */
  double link_bw;          /* --link-bandwidth, GB/s (0: the default) */
  int no_overlap;          /* -fno-overlap */
  FILE *dump;
} PassOptions;

typedef struct Pass {
  const char *name;
  const char *what;
  void (*run)(IrProgram *p, const PassOptions *o);
} Pass;

/* passes/tbmodel.c: the GPU time model of a legal time loop's candidates
 * (T = 1..8), and a candidate's picoseconds per point and step at a
 * bandwidth */
/* tblock.c: the node of K's store whose sum a TB_STRIP kernel gathers in
 * partial sums as its rows arrive (IrTb.psum), or -1: on CUDA, not with
 * -fno-tb-partial-sums or 2-D --tb-exchange=shfl. */
int tb_psum_for(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o);
/* tblock.c: 3-D TB_STRIP's registers a thread (IrTb.regs) at `rows`
 * rows a thread. */
int tb_strip_regs(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int rows);
/* tblock.c: 3-D TB_STRIP's rows a thread along j at `steps` steps a pass,
 * before the tile's rows narrow it (--tb-rows, else 4 for the fused
 * passes of a float box of reach 1 with partial sums, else 2, or
 * tb_strip_single_rows at one step). */
int tb_strip_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int steps);
/* tblock.c: 3-D TB_STRIP's rows a thread in the one-step passes of
 * tb_strip_single (4, 2 or 1). */
int tb_strip_single_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o);
/* tblock.c: whether --tb=auto's single steps of K are one-step passes of
 * the 3-D strip kernel with partial sums (boxes of a reach of 2 and more). */
int tb_strip_single(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o);
/* tblock.c: 3-D TB_STRIP's tile rows along j at `steps` steps a pass,
 * before shared memory narrows it (--block's second number, else 32, or
 * 16 for the one-step passes of doubles at two rows a thread). */
int tb_strip_tile_rows(const IrProgram *p, const IrKernel *k, const IrTb *t, const PassOptions *o, int steps);
/* tblock.c: 3-D TB_STRIP's planes a block marches at most at `steps`
 * steps a pass (IrTb.march; --march gives it). */
int tb_strip_march(const IrKernel *k, const IrTb *t, const PassOptions *o, int steps);
/* tblock.c: whether 2-D TB_STRIP at `vec` columns a thread keeps only
 * each thread's first and last reach columns in shared memory (IrTb.xedge). */
int tb_edge_columns(const IrKernel *k, const IrTb *t, int vec);
/* tblock.c: divisions and functions K computes at every point. */
int tb_point_specials(const IrKernel *k);
/* gpu.c: the points a thread of k's single-step kernel takes (vector loads) */
int gpu_single_step_vec(const IrProgram *p, const IrKernel *k, const PassOptions *o);
/* tbmodel.c: the single-step candidate's warps a multiprocessor from its
 * kernel's registers (ptxas) and threads a block; --report calls it */
void tb_model_occupancy(IrTbModel *m, int regs, int threads);
int tb_model_warps(int regs, int threads);
void tb_model_single_variant(IrTbModel *m, const IrKernel *k, int vec, int regs, int threads);
/* tblock.c: 2-D threads a block of the strip kernels (cuda: TB_STRIP or TB_SHFL). */
int tb_strip_threads(const IrProgram *p, const IrTb *t, const IrKernel *k, int cuda, const PassOptions *o);
/* tblock.c: 2-D TB_STRIP's columns per thread at `steps` fused steps. */
int tb_strip_vec(const IrProgram *p, const IrTb *t, int steps, int psum, const PassOptions *o);
IrTbModel *tb_model(const IrProgram *p, const IrKernel *k, const IrTb *tb, const PassOptions *o, Arena *a);
double tb_model_ps(const IrTbCand *e, double bandwidth_gbs);
/* The GPUs whose measured constants the model has (--gpu): NAME's index,
 * or -1; one's name, copy bandwidth (GB/s, --report's default) and how
 * far its model is from the rates it was fitted to (--report's note). */
int tb_model_gpu(const char *name);
/* The machine whose short name ("H200") a device's name contains, or -1. */
int tb_model_gpu_of_device(const char *device);
const char *tb_model_gpu_what(int gpu);
double tb_model_gpu_bandwidth(int gpu);
const char *tb_model_gpu_fit(int gpu);
int tb_model_area_light(const IrTbCand *e); /* 2-D passes: the march rule's light steps, by the constants of its measurement */
double tb_model_mem_ps(const IrTbCand *e, double bandwidth_gbs);

extern const Pass pass_list[];
extern const int pass_count;
void pass_run_pipeline(IrProgram *p, const PassOptions *o);

/* Per-kernel options (--tb, --cuda-strategy, --vec, --max-regs) are "V"
 * for every kernel, or a list "K=V,L=W,V0" where K and L get their own
 * values and the others V0 (or nothing). pass_option_next steps through
 * the items of such a list (*s starts at the option, NULL after the last
 * item; an empty option is one empty item); the pointers point into it. */
typedef struct PassOptionItem {
  const char *text;        /* the whole item, len characters */
  size_t len;
  const char *name;        /* K of "K=V" (name_len characters), or NULL */
  size_t name_len;
  const char *value;       /* V, value_len characters */
  size_t value_len;
} PassOptionItem;
int pass_option_next(const char **s, PassOptionItem *it);

/* What a per-kernel option says for kernel `name`: a pointer into spec and
 * the value's length in *len, or NULL. */
const char *pass_option_for_kernel(const char *spec, const char *name, size_t *len);

void pass_fold(IrProgram *p, const PassOptions *o);
/* The value node id folds to (its tree of constants, evaluated and
 * rounded as pass_fold does: as the generated code would), if it does. */
int pass_const_value(const IrNodes *nd, int id, double *v);
void pass_cse(IrProgram *p, const PassOptions *o);
void pass_hoist(IrProgram *p, const PassOptions *o);
void pass_schedule(IrProgram *p, const PassOptions *o);
void pass_cost(IrProgram *p, const PassOptions *o);
void pass_gpu(IrProgram *p, const PassOptions *o);
void pass_tblock(IrProgram *p, const PassOptions *o);
void pass_graph(IrProgram *p, const PassOptions *o);
void pass_mpi(IrProgram *p, const PassOptions *o);
/* After tblock: the grids with ca_steps get deep halos and their kernels
 * exchanges that cover every field they read or write. */
void pass_mpi_deep(IrProgram *p);

/* Rebuilding helper: copies the nodes reachable from the kernel's roots
 * (effects and region bounds) in order, applying `map` to operands, and
 * drops the rest (dead code). Used by every transforming pass. */
void pass_compact(IrKernel *k);
/* Renames the kernel's roots (effect values, predicates, region bounds)
 * through map[old id] = new id. */
void pass_remap_roots(IrKernel *k, const int *map);
#endif
