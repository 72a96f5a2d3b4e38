/* cg_common.h: what the C, OpenMP and CUDA printers share: C names for
 * user names, numbers, expressions, the host program (main) and the
 * program's scaffolding. A target supplies its kernels and the few runtime
 * calls that differ; nothing here decides anything. */
#ifndef STN_CG_COMMON_H
#define STN_CG_COMMON_H
#include "ir/ir.h"

typedef struct Printer Printer;
struct Printer {
  Buf *b;
  const IrProgram *p;
  const IrKernel *k;       /* NULL for host expressions */
  const IrNodes *pool;
  char **names;            /* kernel: name of each emitted node, or NULL (inline) */
  int last_line;
  int device;              /* printing device code: tables are the device copies */
  const struct CgTarget *target;
  const char *lazy;        /* main: variables that receive results later */
  int loops;               /* main: loops around the statement being printed */
  int progress;            /* main: inside a loop that reports progress */
  int ckpt_loops;          /* main: loops that take checkpoints so far (their ids) */
  int graphs;              /* main: loops the graph pass marked replay their iterations as CUDA graphs (not in
                            * library mode) */
  int graph_loops;         /* main: such loops so far (their ids) */
  int timers[16], ntimers; /* main: the variables of the timers around the statement (the innermost 16) */
  /* CUDA smem strategy: loads of this field read the staged tile. */
  int staged;              /* 1 when the fields below apply */
  int staged_field, staged_tw, staged_rj, staged_rk;
  /* CUDA stream strategy: per field, 1 when its column (loads at (d, 0, 0))
   * is kept in registers q_FIELD_[mp]D_ while the block marches. */
  const char *queued;
  /* Temporal blocking: prints a load its own way (from a level buffer)
   * and returns 1, or returns 0 for the usual global load. */
  int (*print_load)(struct Printer *pr, const IrNode *n);
  const void *hook;        /* the hook's own data */
  const char *wrap_skip;   /* per field: 1 if its loads never use wrapped distances (print_wrap_decls) */
  int lane;                /* CUDA vector lanes: the point being printed is lane `lane` (index + lane
                            * along the contiguous dimension); 0 otherwise */
  const char *known;       /* per node: 1 if it is known to hold where this code runs (prints as 1); or NULL */
};

enum { P_TOP = 0, P_COND = 3, P_OR = 4, P_AND = 5, P_EQ = 9, P_REL = 10, P_ADD = 12, P_MUL = 13,
       P_UNARY = 14, P_POST = 16 };

const char *cname(const IrProgram *p, const char *name);
const char *ctype(Type t);
void print_number(Buf *b, Type ty, double v);
int line_of(const IrProgram *p, Span at);
void print_expr(Printer *pr, int id, int ctx_prec, int right);
void indent(Buf *b, int depth);
void line_comment(Printer *pr, Span at, int depth);
const char *index_name(int d);

/* Kernel helpers: which values get their own line, and their names. */
/* Is const array `table` still read (after folding) by main, kernels, or either? */
typedef enum TableUse { TABLE_HOST, TABLE_KERNELS, TABLE_ANY } TableUse;
int table_used(const IrProgram *p, int table, TableUse where);
int kernel_called(const IrProgram *p, const IrKernel *k);
/* Which host-pool nodes main, the grid sizes and the boundaries use (malloc'd). */
char *host_live(const IrProgram *p);
int *use_levels(const IrKernel *k);   /* malloc'd; see cg_common.c */
char **value_names(const IrProgram *p, const IrKernel *k, const int *use_level);
void emit_level(Printer *pr, int level, int depth);
void print_kernel_title(Buf *b, const IrProgram *p, const IrKernel *k);
void print_red_locals(Buf *b, const IrProgram *p, const IrKernel *k, int device);
void print_prof_decl(Buf *b, const IrKernel *k, int depth);
void print_region_points(Buf *b, const IrKernel *k);
void print_region_bounds(Printer *pr, const char *gname);
void print_effects(Printer *pr, int depth);
void print_effect_head(Printer *pr, const IrEffect *e, int depth);
/* A reduction's contribution of value val, without the terminator: "r += v",
 * or for min/max a block (returns 1) written so that compilers vectorise it. */
/* The end of a C or OpenMP kernel function: the profile's points (times
 * factor, "T_ * " for a blocked pass), then its results. */
void print_c_wrapper_end(Buf *b, const IrProgram *p, const IrKernel *k, const char *factor);
int print_red_update(Printer *pr, const IrRed *rd, int val);
/* --mpi --deterministic-reductions: r is an exact sum (stn_xsum NAME_x_). */
int red_exact(const IrProgram *p, const IrRed *r);
/* --mpi: a kernel's reductions over the ranks and its written fields' halos marked stale. */
void print_mpi_kernel_end(Buf *b, const IrProgram *p, const IrKernel *k);
/* --mpi: a kernel's halo exchange descriptor (NAME_x_), before its function. */
void print_mpi_exchange_decl(Buf *b, const IrProgram *p, const IrKernel *k);

/* What a target prints differently in the program around its kernels. */
typedef struct CgTarget {
  const char *name;           /* "c", "openmp", "cuda" */
  const char *includes;       /* #include lines */
  const char *const_decl;     /* "static const" (C) or "static constexpr" (CUDA) */
  const char *field_alloc;    /* runtime calls for fields */
  const char *field_zero;
  const char *field_boundary; /* fills a field's ghost points from its boundary(value) */
  const char *field_write;
  const char *field_write_image;  /* with an image's scale and colormap */
  const char *finish;
  const char *before_init;    /* extra statement before stn_init, or NULL */
  const char *after_init;     /* extra statement after stn_init, or NULL */
  const char *time_fn;        /* the clock timers read ("stn_time") */
  const char *sync;           /* lazy_results: the call that delivers them */
  int lazy_results;           /* kernels deliver reductions through pointers, later */
  int tb_pays;                /* a blocked loop asks NAME_tb_pays_() whether to run fused passes (CUDA) */
  void (*print_tables)(Buf *b, const IrProgram *p);   /* device copies, or NULL */
  void (*print_kernel)(Buf *b, const IrProgram *p, const IrKernel *k, const void *opts);
  /* A temporally blocked kernel: name_tb_(args, results, prev) */
  void (*print_tb)(Buf *b, const IrProgram *p, const IrTb *tb, const void *opts);
  /* library mode: the runtime calls for setting up, finishing, freeing a
   * field, and copying its points out and in */
  const char *lib_init, *lib_finish, *field_free, *field_get, *field_set;
  const void *opts;
  /* --mpi: the target's own gathered output and finish (NULL: stn_mpi's) */
  const char *mpi_field_write, *mpi_field_write_image, *mpi_finish;
} CgTarget;

void cg_print_program(Buf *b, const IrProgram *p, const CgTarget *t);
/* --mpi: t's distributed variant in *dist (returned), or t itself. */
const CgTarget *cg_mpi_target(const IrProgram *p, const CgTarget *t, CgTarget *dist);
/* The pieces of a program (cg_print_program) that library mode reuses
 * (cg_lib.c): everything before main; the grids and fields; main's body. */
void print_definitions(Printer *pr);
void print_setup(Printer *pr);
void print_main_body(Printer *pr);
/* the fused kernels' launch set-up before main's statements (CUDA: loads them outside the timers) */
void print_tb_preloads(Buf *b, const IrProgram *p, const CgTarget *t);
void print_about(Buf *b, const Source *src);
/* Library mode: src gets the definitions and the API, hdr the API's
 * declarations; header_name is what src includes. */
void cg_print_library(Buf *src, Buf *hdr, const IrProgram *p, const CgTarget *t, const char *header_name);
/* Declarations of the wrapped neighbour distances along periodic
 * dimension d that the kernel's loads use (ity: the index type). */
void print_wrap_decls(Printer *pr, int d, int depth, const char *ity);
#endif
