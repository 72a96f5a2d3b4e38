/* ir.h: the target-independent IR (textual form documented in docs/ir.md).
 *
 * A kernel is a DAG of value nodes in topological order (operands always
 * have smaller ids) followed by its effects: stores to fields at the
 * current point and contributions to reductions. Control flow inside a
 * kernel is if-converted: both arms are computed and SELECT picks, and
 * conditional stores carry a predicate. Every load reads the value the
 * field had before the kernel started. Region bounds are nodes too (of
 * params, arguments and grid extents), so passes see everything.
 *
 * The host program (main) is a tree of statements whose expressions are
 * value nodes in the program's host pool. */
#ifndef STN_IR_H
#define STN_IR_H
#include "diag.h"
#include "front/ast.h"
#include "sema/sema.h"
#include "util.h"

typedef enum Op {
#define OP(name, nargs, form, text, flags) OP_##name,
#include "ir/ops.h"
#undef OP
  OP__COUNT
} Op;

enum { LEAF, PREFIX, INFIX, FUNC, SPECIAL };
enum { F_FLOP = 1, F_COMM = 2, F_CMP = 4 };

typedef struct OpInfo { const char *name; int nargs, form; const char *c_text; int flags; } OpInfo;
extern const OpInfo op_info[OP__COUNT];

typedef struct IrNode {
  Op op;
  Type ty;                 /* TY_BOOL, TY_INT, TY_FLOAT or TY_DOUBLE */
  int arg[3];
  double f;                /* CONST value */
  int ref;                 /* PARAM/ARG/LOAD/VAR/TABLE: table index; INDEX: dimension; EXTENT: grid */
  int imm;                 /* EXTENT: dimension; RSQRT: 1 if its argument is a normal float, NaN or +inf (passes/gpu.c) */
  int off[MAX_RANK];       /* LOAD offsets */
  const char *name;        /* a user's name for this value (local, const), for readable output */
  Span span;
  int level;               /* hoist: loop depth that computes it (0: once per call) */
  int uses;                /* computed by ir_count_uses */
} IrNode;

typedef Vec(IrNode) IrNodes;

typedef enum EffectKind { EFF_STORE, EFF_REDUCE } EffectKind;
typedef struct IrEffect {
  EffectKind kind;
  int ref;                 /* field (STORE) or reduction (REDUCE) */
  int val;
  int pred;                /* -1: unconditional */
  Span span;
} IrEffect;

typedef struct IrRed { const char *name; RedOp op; Type ty; } IrRed;

/* How a kernel runs on a GPU (decided by passes/gpu.c):
 *   NAIVE  one thread per point;
 *   STREAM a 2-D block over the two fastest dimensions marching along
 *          dimension 0, so the planes it reads again stay on chip;
 *   SMEM   STREAM, with the planes of the most-read field staged in shared
 *          memory (tile plus halo, a rolling buffer of 2r+1 planes), so
 *          each of its values is loaded once per block, not once per use. */
/* Distributed runs (passes/mpi.c): a field a kernel reads at offsets,
 * exchanged with the neighbouring ranks before it runs. lo/hi: how far
 * the reads reach below index 0 and above n - 1 per dimension; dirs: bit
 * e is set when the ghost region on side e is read, e = sum over d of
 * (side_d + 1) 3^(rank - 1 - d) with side_d in -1, 0, +1 (faces; edges and
 * corners only when some read is diagonal). */
/* A field in a kernel's exchange: its reach below and above per
 * dimension, the ghost regions it reads (dirs) and, under --tb across
 * ranks, how the kernel uses it (XF_*, 0: read only). */
typedef struct IrXField { int field; int lo[MAX_RANK], hi[MAX_RANK]; unsigned dirs; int role; } IrXField;
enum { XF_WFULL = 1, XF_WPART = 2, XF_NOREAD = 4 };

typedef enum GpuStrategy { GPU_NONE, GPU_NAIVE, GPU_STREAM, GPU_SMEM } GpuStrategy;
typedef struct IrArg { const char *name; Type ty; } IrArg;

typedef struct IrKernel {
  const char *name;
  Span span;
  int grid, rank;
  RegionKind region;
  int width;               /* REG_INTERIOR */
  int lo[MAX_RANK], hi[MAX_RANK];   /* region bounds: node ids (level 0) */
  IrNodes nodes;
  Vec(IrEffect) effects;
  Vec(IrArg) args;
  Vec(IrRed) reds;
  /* analyses (cost pass) */
  int flops, bytes_read, bytes_written, fields_read, fields_written;
  int distributed;         /* hoist: sums whose invariant scale went into their coefficients */
  /* decisions (schedule pass) */
  int omp_collapse;        /* loops fused under `omp parallel for` (0: serial) */
  int simd;                /* mark the innermost loop `omp simd` */
  /* decisions (gpu pass, --target=cuda) */
  GpuStrategy gpu;
  int block[MAX_RANK];     /* threads along the contiguous dimension first */
  int march;               /* GPU_STREAM: planes of dimension 0 per block */
  int max_regs;            /* --max-regs: registers per thread ptxas may use (0: launch bounds decide) */
  int gpu_tight;           /* GPU_STREAM: pipelined and max_regs capped by the gpu pass (decide_tight), not by options */
  int max_threads;         /* the largest block the kernel is compiled for (launch bounds; --autotune's limit) */
  int vec;                 /* GPU_NAIVE/STREAM: points per thread along the contiguous dimension, read
                            * with vector loads (1: one point) */
  int gpu_atomic;          /* reductions finish with atomics (not deterministic) */
  int pdl;                 /* programmatic dependent launch (sm_90+, see runtime/stn_cuda.h) */
  int gpu_guard_sides;     /* vector lanes: a column beyond the vector loads only for lanes inside the region */
  char *pdl_ro;            /* pdl: per field, read through the read-only path (no loop writes it), or NULL */
  const char *pdl_why;     /* one line: the launch and why */
  const char *gpu_why;     /* one line: why this strategy */
  const char *gpu_rejected[4];  /* per GpuStrategy: why not it (NULL: the one chosen) */
  const char *untunable;   /* why --autotune may not re-run it, or NULL */
  char *gpu_queue;         /* GPU_STREAM: per field, 1 if its column is kept in registers */
  int *gpu_queue_lo, *gpu_queue_hi;  /* that column's planes, relative to i */
  int gpu_pipeline;        /* GPU_STREAM (-fstream-pipeline): plane i + 1's rows other than the queue's are loaded
                            * at plane i, into registers, so that their loads overlap plane i's arithmetic */
  int gpu_burst;           /* GPU_STREAM: planes a thread loads all at once before computing them (0: one plane
                            * at a time), so that their loads are in flight together */
  int nvariants;           /* GPU_STREAM 3-D: versions of the kernel compiled side by side (0: one), of which
                            * the program's first call picks one by the registers ptxas gave each
                            * (passes/gpu.c, decide_variants; runtime/stn_cuda.h, stn_cuda_pick_variant) */
  struct { int vec, burst, bx, by, march, guard_sides; } variant[3];  /* [0]: vec, gpu_burst, block, march,
                            * gpu_guard_sides above */
  int smem_field;          /* GPU_SMEM: the staged field */
  int smem_r[MAX_RANK];    /* GPU_SMEM: its reach (largest |offset|) per dimension */
  /* decisions (mpi pass, --mpi) */
  Vec(IrXField) xch;       /* fields exchanged before the kernel runs */
  int overlap;             /* computes its interior while the halos travel */
  double xbytes[27];       /* bytes a rank sends in direction e per exchange (the report's decomposition) */
  int deep;                /* --tb across ranks: its grid's halo depth (0: exchanges per step) */
  const char *overlap_why; /* one line: why it overlaps or not */
} IrKernel;

typedef struct IrParam {
  const char *name; Type ty; double def; Span span;
  int has_lo, has_hi; double lo, hi; /* `in lo..hi`, bounds included */
} IrParam;
typedef struct IrTable { const char *name; Type ty; int len; double *vals; Span span; } IrTable;
typedef struct IrGrid {
  const char *name; int rank; Span span;
  int dims[MAX_RANK];      /* host node ids */
  int halo_lo[MAX_RANK], halo_hi[MAX_RANK];
  int periodic[MAX_RANK];  /* reads past the edge along d wrap around */
  /* --mpi (passes/mpi.c): the decomposition the report shows, for the
   * params' defaults on mpi_ranks ranks (the program decides its own at run
   * time, the same way); wrap[d]: d is periodic, wrapped by the exchange
   * between ranks (periodic[] is then cleared: kernels read the halo) */
  int ranks[MAX_RANK], wrap[MAX_RANK];
  long part[MAX_RANK];     /* the largest part's points per dimension then (0: sizes unknown) */
  /* --mpi --tb=T (passes/mpi.c, after tblock): communication-avoiding
   * steps across ranks: halos deep = T x reach, exchanged once per T steps */
  int ca_steps, deep;
} IrGrid;
/* name: the C identifier (f_3_ for component 3 of f[9]); label: what
 * the user calls it (f[3]), for messages, --save and comments. */
typedef struct IrField {
  const char *name; Type ty; int grid; Span span; const char *label;
  int boundary;            /* host node: the value of its ghost points (INDEX nodes are the point's), or -1 */
  int scratch_of;          /* a temporal-blocking scratch buffer of this field, or -1 (see IrTb) */
} IrField;
typedef struct IrVar { const char *name; Type ty; Span span; } IrVar;

/* Temporal blocking (passes/tblock.c): a time loop
 *     for n in a..b { K(args); swap cur_1, next_1; ... }
 * whose kernel K reads each cur_p and writes each next_p runs as passes
 * of `steps` fused steps (and the remaining (b - a) % steps single steps
 * first). A pass reads cur (step s), and writes step s + steps into next
 * and step s + steps - 1 into scratch; the three buffers then rotate
 * (cur <- next <- scratch <- cur), so that both fields of every pair hold
 * what the single steps would have left in them. Points outside K's
 * region keep, at step s + t, cur's value (t even) or next's (t odd): the
 * values the swaps alternate between. */
enum { MAX_TB_PAIRS = 32 };
enum { MAX_TB_KEEP = 32 };
enum { MAX_TB_BAND = 8 };
typedef struct IrTb {
  int kernel;              /* K */
  int steps;               /* T: steps fused per pass (>= 2) */
  int npairs;
  int cur[MAX_TB_PAIRS], next[MAX_TB_PAIRS], scratch[MAX_TB_PAIRS];  /* field ids */
  int reach[MAX_RANK];     /* largest |offset| of K's reads of the cur fields, per dimension */
  int prev_live;           /* main reads a next field after the loop: always write step s + steps - 1 */
  /* --tb=auto on CUDA: the loop's first passes time the fused pass of T
   * steps against T single steps (trial_single, 3-D) and two fused passes
   * of T / 2 (half, an IrTb of its own, NULL where none), and the faster
   * takes over where it runs 3% faster (runtime/stn_cuda.h
   * stn_cuda_tb_trial; passes/tblock.c add_trial; either: ir_tb_timed). */
  int trial_single;
  struct IrTb *half;
  int share_agree;         /* the half's wrapper shares the fused one's record of cur and next agreeing
                            * outside the region (both have the fast instance: cg_cuda_tb.c) */
  const char *tag;         /* CUDA: the generated names, K_tag_kernel_ and the like: "tb" where NULL, the half's
                            * "tb_half" */
  /* K stores under a condition: where the store does not fire, step t
   * keeps step t - 2, so step 1 reads next (step -1) in the region. Step
   * T - 1 then goes to a twin of next (scratch_next), swapped with next
   * after the pass, so that no tile writes next while others read it;
   * scratch_next is -1 otherwise. */
  int predicated;
  int scratch_next[MAX_TB_PAIRS];
  /* CUDA (decided in the pass): how the steps are realised, threads per
   * block along the contiguous dimension and the next, planes of
   * dimension 0 per block; 2-D (TB_STRIP, TB_SHFL): points per thread,
   * and warps per block. TB_STRIP: the threads of a block share one strip
   * of columns, neighbours through shared memory (3-D: a tile of
   * block[0] x block[1] threads, `rows` points each along dimension 1,
   * in-plane neighbours through shared memory); TB_SHFL: each warp its
   * own strip, neighbours by warp shuffles */
  enum { TB_SMEM, TB_SHFL, TB_STRIP } cuda;
  int block[MAX_RANK], march;
  int march_fixed;          /* --march: exactly `march` rows; else at most, chosen at run time */
  enum { TB_AREA_NONE, TB_AREA_HEAVY, TB_AREA_LIGHT } march_area;
                           /* 2-D strip passes: the run time takes the march from the grid's area for light
                            * or heavier steps (stn_tb_march_area; passes/tblock.c, area_march); NONE: the
                            * GPU's waves decide (the runtime's STN_TB_MARCH_*, stn_cuda_tb_march) */
  int halo;                /* points of halo at each side along the contiguous dimension: T x reach, in 2-D
                            * rounded up to whole threads */
  int own[2];              /* a block's own points along the contiguous dimension and (3-D) the next one */
  int vec, warps;
  int rows;                /* 3-D TB_STRIP: points each thread computes along dimension 1 (block[1] threads) */
  int regs;                /* 3-D TB_STRIP: registers a thread may use (the launch bounds let 65536 / (threads x
                            * regs) blocks share an SM; ptxas spills beyond) */
  int sums_owned;          /* 3-D TB_STRIP with partial sums, one row a thread: the last step adds its parts
                            * only to the sums of points the block keeps (own<v>_: inside the grid, with
                            * whole tiles; threads past the grid's edge skip them) */
  int whole;               /* 3-D TB_STRIP one-step passes with partial sums whose pairs all go through shared
                            * memory: a block computes every point of its tile, none of halo, and all its
                            * threads load the tile's planes padded by the reach, LD_ points each; so a
                            * thread reads its own points' values back from the planes in shared memory, not
                            * from a register queue (its loads are not its points; tblock.c choose_shape) */
  /* CUDA shared memory (decided with the shape; the printer follows it).
   * ring: rows (3-D: planes) each step keeps: TB_SMEM 2r + 2 in shared
   * memory (the plane a step writes in an iteration is none the next step
   * reads in it: one barrier per iteration), TB_STRIP and TB_SHFL 2r + 1
   * in registers; one more when a predicated store reads step t - 2.
   * TB_STRIP: xneed[q], the pairs whose rows go through shared memory
   * (some read of theirs leaves the thread's columns, in 3-D its plane's
   * point); xrows[d + r], the row offsets d those reads use; nx, slots per
   * step in shared memory: a row written in iteration s is read up to
   * LAG - dmin iterations later (dmin the lowest offset used), one slot
   * more keeps the row an iteration writes apart from those it reads (one
   * barrier per iteration), and at least ring (then every slot is a
   * constant of the unrolled phases); xoff[q], where pair q's rows start
   * in shared memory. smem: bytes per block. */
  int ring;
  /* TB_STRIP 2-D with vec >= 2 reach[1]: shared memory holds each
   * thread's first and last reach[1] columns only (the others no
   * neighbour reads), [T][NX][2 reach[1]][threads + 2], lane tid at
   * tid + 1: every store and load a word per lane, no bank conflicts;
   * else [T][NX][threads x vec + 2 reach[1]] */
  int xedge;
  /* TB_STRIP 2-D: a step reads its own column of step t - 1 from the rows
   * in shared memory for the pairs that keep them there (xneed), not from
   * registers: each such value then lives in no register (lbm_d2q9: 252
   * registers at 6 steps, 128 at 4, two blocks an SM) */
  int own_smem;
  char xneed[MAX_TB_PAIRS];
  size_t xoff[MAX_TB_PAIRS];
  char *xrows;
  int nx;
  size_t smem;
  /* CUDA 3-D, and 2-D strips (tblock.c fast_2d): the kernel comes in two
   * instances, the fast one (F_) for passes where next and cur agree
   * outside the region and nothing reads step T - 1 from next (then
   * points outside the region keep their values: no loads and stores for
   * them, and the warps at the grid's edges run the steady code,
   * cg_cuda_tb.c edge_steady) */
  int fast_instance;
  /* CUDA 2-D strips, where main does not always read next after the
   * loop: the pass's body is a device function in two instances, P_ true
   * for the passes that write step T - 1 into next (the last, under
   * --save), P_ false for the others, which then compute no address for
   * that store; the kernel branches on prev_ (H200: 42 2-D programs
   * 1.027x, box2d1r 1.10x, j2d5pt 1.04x; docs/benchmarks.md 2026-11-29) */
  int prev_instance;
  /* TB_SMEM: read-only fields (no pair's) that K reads at its own point:
   * step 1 loads them, later steps of the same point take step 1's value
   * from registers, (t - 1)(r + 1) iterations later, instead of loading
   * it again (-fno-tb-reuse: none) */
  int nkeep, keep[MAX_TB_KEEP];
  /* CUDA 2-D, without partial sums, not periodic along dimension 0: the
   * band of rows where the comparisons band_known marks (of the row index
   * with the grid's first or last rows, within 8 of them: walls,
   * bounce-back) hold; the steady iterations keep to it and print those
   * as 1 (passes/tblock.c, row_band). band_lo: its first row
   * (band_has_lo); it ends before the least of node band_hi[x] +
   * band_hioff[x], each node the grid's extent along i (its param, or
   * the extent) plus or minus a constant, computed once a call, one a
   * kind; band_count comparisons; band_text for --report, band_last its
   * last row as the report writes it (NULL: the grid's last). */
  char *band_known;
  int band_count, band_has_lo, band_nhi;
  long band_lo, band_hioff[MAX_TB_BAND];
  int band_hi[MAX_TB_BAND];
  const char *band_text, *band_last;
  /* TB_STRIP, partial sums: the node of the store's value that is a chain
   * t1 +- t2 +- ... of terms each reading cur at one offset along
   * dimension 0, in the order of those offsets (the rest of the value
   * reads no field); when row p of step t - 1 arrives, each term adds to
   * the sum of the row it serves, p - offset, so a step reads the
   * neighbours of one row, not of 2r + 1, from shared memory, in the
   * order the source adds them (the same rounding); -1: none
   * (-fno-tb-partial-sums, or not such a chain) */
  int psum;
  /* CUDA 3-D strip: in the steady iterations a row of threads skips the
   * steps none of whose rows the later steps need (tblock.c) */
  int skip_rows;
  /* C/OpenMP: the points of a tile per dimension (without its halo);
   * cpu_march (3-D): the tile marches along i, each step's last
   * march_ring = 2r + 1 planes in a ring, instead of computing each step
   * on the whole tile */
  int tile[MAX_RANK];
  int cpu_march, march_ring;
  const char *why;         /* one line: what was decided and why */
} IrTb;

/* The GPU time model of a time loop's candidates (passes/tbmodel.c): for
 * T = 1..8 fused steps, what a point costs a step. */
typedef struct IrTbCand {
  int steps;               /* T */
  int strip;               /* the strip kernel: every fused candidate, and at T = 1 --tb=auto's one-step passes
                            * (tb_strip_single); else at T = 1 the single-step kernel */
  int own;                 /* a block keeps points of its own after T steps (else no candidate) */
  double recompute;        /* points computed per point owned, over the T steps */
  double bytes;            /* global memory bytes per point and step */
  double mem_eff;          /* the fraction of the copy bandwidth such a kernel reaches */
  double chip_ps;          /* on chip (shared memory, flops, registers): picoseconds per point and step */
  double regs;             /* registers holding every step's planes or rows, per thread (3-D: per 64 of the
                            * kernel's register budget) */
  /* what the terms are computed from (--report=json "features"; bench/an5d/fitmodel.py fits the constants) */
  double smem;             /* fused: shared-memory loads and stores per computed point (a double's one) */
  double flops;            /* per point (a double's counted twice) */
  double special;          /* divisions and functions but fabs, fmin, fmax, floor, ceil per point (doubles twice;
                            * not those computed once a call) */
  double neighbours;       /* single steps: the loads a point issues off the marching axis (a row of
                            * neighbours, with vec points a thread: one vector and its columns beyond,
                            * over vec), in 4-byte words */
  int vec;                 /* single steps: points a thread (vector loads; passes/gpu.c) */
  double warps;            /* single steps: warps a multiprocessor from ptxas's registers (0: not known;
                            * tb_model_occupancy) */
  double w0;               /* the warps past which single steps reach their bandwidth (tbmodel.c) */
  int esz;                 /* bytes of the pairs' widest element (a double's shared-memory load: two wavefronts) */
  double warm;             /* 2-D fused: the rows a block computes before its first own one, T (2 r0 + 1), over
                            * the rows it marches at the params' defaults (the run time's choice from the grid's
                            * area); 0 where not known */
  double area_ps;          /* 2-D fused: the time the march rule reads (tb_model_area_light) */
  double roloads;          /* fused: loads of read-only fields a computed point issues at every step (each from
                            * the cache after the pass's first step) */
  int rows;                /* 3-D fused: the points a thread computes a plane, rows along j (IrTb.rows), whose
                            * reads it loads from shared memory once (smem); 0 elsewhere */
} IrTbCand;
typedef struct IrTbModel { int n; int gpu; /* --gpu: whose constants (passes/tbmodel.c) */ IrTbCand c[8]; } IrTbModel;

typedef enum HostKind { H_ASSIGN, H_CALL, H_FOR, H_WHILE, H_IF, H_BREAK, H_SWAP, H_PRINT,
                        H_TIMER, H_WRITE, H_READ } HostKind;

typedef struct IrStmt IrStmt;
typedef Vec(IrStmt *) IrBlock;
typedef struct IrPrintItem { const char *str; int expr; } IrPrintItem;

struct IrStmt {
  HostKind kind;
  Span span;
  int var;                 /* ASSIGN, FOR, TIMER target */
  int expr, expr2;         /* ASSIGN value; FOR bounds; WHILE/IF condition */
  int kernel;              /* CALL */
  Vec(int) args;           /* CALL argument exprs */
  Vec(int) results;        /* CALL: host vars receiving the reductions (-1: dropped) */
  int field, field2;       /* SWAP, WRITE, READ */
  const char *path;        /* WRITE, READ; expr, expr2: scale(lo, hi) or -1 */
  int expr3;               /* WRITE: time(t) of a numbered file; READ: threshold(t); or -1 */
  int allow_nonfinite;     /* READ: nonfinite(allow) */
  Vec(int) comps;          /* READ of every component of a field: their field ids (field is the first) */
  const char *colormap;    /* WRITE: an image's colours, or NULL */
  Vec(IrPrintItem) items;  /* PRINT */
  IrBlock body, els;
  IrTb *tb;                /* FOR: runs temporally blocked (passes/tblock.c), or NULL */
  const char *tb_why;      /* FOR: why it is not temporally blocked, when it looks like a time loop */
  IrTbModel *tb_model;     /* FOR, CUDA: the time model of its candidates (passes/tbmodel.c), or NULL */
  int graph;               /* FOR, CUDA: iterations a replay of its CUDA graph runs (passes/graph.c), or 0 */
  int graph_period;        /* FOR with graph: iterations after which its swaps leave every field where it was */
  int graph_guards;        /* FOR with graph: its ifs that test the loop's variable, whose iterations run plainly */
  const char *graph_why;   /* FOR/WHILE calling kernels, CUDA: why its iterations are not replayed as a graph */
};

typedef struct IrProgram {
  const char *name;        /* file name without directory or .stn */
  const Source *src;
  Arena *arena;
  Vec(IrParam) params;
  Vec(IrTable) tables;
  Vec(IrGrid) grids;
  Vec(IrField) fields;
  Vec(IrKernel *) kernels;
  Vec(IrVar) vars;
  IrNodes host;            /* expression pool for main and the grid sizes */
  IrBlock main;
  int has_main;            /* 0: a library's .stn file without main (--emit=lib) */
  /* --mpi (passes/mpi.c) */
  int mpi;                 /* a distributed program */
  int mpi_exact;           /* --deterministic-reductions: sums exact, independent of the rank count */
  int mpi_ranks;           /* the ranks the report's decomposition assumes */
  double link_bw;          /* --link-bandwidth, GB/s: the predicted exchange times assume it */
} IrProgram;

/* The value of host or kernel node id at the params' defaults (0: not
 * known before run time, e.g. a kernel argument). */
int ir_eval_default(const IrProgram *p, const IrNodes *pool, int id, double *v);
/* The source line of span `at` (for notes and comments that point back to
 * the .stn file). */
int ir_line(const IrProgram *p, Span at);
/* Faces, edges and corners among the neighbours a field is exchanged with. */
void ir_xfield_sides(const IrXField *x, int rank, int sides[3]);
/* lower.c */
IrProgram *ir_lower(Sema *s, Arena *arena, const Source *src);
/* ir.c */
int ir_add(IrNodes *pool, IrNode n);
int ir_const(IrNodes *pool, Type ty, double v);
void ir_count_uses(IrKernel *k);
int ir_is_const(const IrNodes *pool, int id, double *v);
/* Whether node id of pool is at least the smallest normal float, or NaN
 * or +inf: a positive constant at least that plus squares, absolute
 * values, square roots and exps (gradient2d's 0.0001f + d0 * d0 + ...);
 * pass_gpu marks RSQRT of it (IrNode.imm) for the unscaled reciprocal
 * square root. */
int ir_at_least_normal(const IrNodes *pool, int id);
/* Whether kernel k loads (stores) field f anywhere. */
int ir_reads_field(const IrKernel *k, int f);
int ir_stores_field(const IrKernel *k, int f);
/* The pair whose cur (next) field is f, or -1. */
int ir_tb_pair_of_cur(const IrTb *tb, int f);
int ir_tb_pair_of_next(const IrTb *tb, int f);
/* The stem of the names CUDA gives tb's fused passes (K_tb_kernel_, K_tb_,
 * K_tb_grid_, ...): K_tb, or K_tb_half for a loop's half passes
 * (IrTb.tag). */
const char *ir_tb_stem(const IrProgram *p, const IrTb *tb);
/* Whether tb's loop times candidates in its first passes (IrTb.trial_single, IrTb.half). */
static inline int ir_tb_timed(const IrTb *tb) { return tb->trial_single || tb->half; }
/* The first row of tb's band (IrTb.band_*): band_lo, or 0 where it has
 * none or a negative one. */
long ir_tb_band_first(const IrTb *tb);
/* Partial sums (IrTb.psum): is node x of K a step of the chain's left
 * spine down from its root (an add or subtract computed per point, with no
 * name of its own unless it is the root)? Chains of more than
 * IR_PSUM_TERMS terms are not taken (box3d4r has 729; a 2-D box of reach
 * 16, 1089). */
int ir_psum_spine(const IrKernel *k, int root, int x);
enum { IR_PSUM_TERMS = 1024 };
const char *ir_type_suffix(Type t);
void ir_print_program(FILE *out, const IrProgram *p);
void ir_print_kernel(FILE *out, const IrProgram *p, const IrKernel *k);
/* verify.c: checks the IR's invariants; reports compiler bugs via ice(). */
void ir_verify(const IrProgram *p, const char *after);
#endif
