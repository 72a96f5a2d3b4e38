/* main.c: the stencilc driver. Reads options (one table, which also
 * generates --help), then runs the phases in order:
 *   parse -> sema -> lower -> passes (pipeline.c) -> code generator
 * and, with --build, the system C compiler on the result. */
#define _DEFAULT_SOURCE /* mkstemps */
#define _POSIX_C_SOURCE 200809L
#include "backend/cg.h"
#include "backend/report.h"
#include "front/parse.h"
#include "passes/passes.h"
#include "sema/sema.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef STN_RUNTIME_DIR
#define STN_RUNTIME_DIR "runtime"
#endif
#ifndef STN_LIB_DIR
#define STN_LIB_DIR "build"
#endif
#ifndef STN_MPI_LINK_LIBS
#define STN_MPI_LINK_LIBS STN_LINK_LIBS  /* --mpi: the same, with the parallel HDF5 library where there is one */
#endif
#ifndef STN_LINK_LIBS
#define STN_LINK_LIBS ""  /* what the runtime needs besides libm: -lpng -lz when built with libpng */
#endif
#ifndef STN_CUDA_LIB_DIR
#define STN_CUDA_LIB_DIR "/usr/local/cuda/lib64"  /* libcudart, for --print-libs --target=cuda */
#endif
#define DEFAULT_CFLAGS "-O3 -march=native"
/* --mpi --target=cuda: launches without a stream go to the host thread's
 * own default stream, not the legacy one, which every blocking stream
 * waits for. A CUDA-aware MPI copies the halos on blocking streams of its
 * own (Open MPI's smcuda: CUDA IPC); on the legacy stream they waited for
 * the interior's kernel, and overlap hid nothing (docs/mpi.md). The
 * runtime (libstn_cuda_mpi.a) is built the same way (Makefile). */
#define STN_MPI_NVCC_FLAGS "--default-stream per-thread"
/* --mpi --target=cuda --deterministic-reductions: no contraction of a * b
 * + c into one FMA, so that a point's arithmetic is the same on whichever
 * rank and in whichever place of a kernel it runs. nvcc may contract the
 * copies of a stencil's expression a kernel holds (its vector lanes, a
 * burst's planes) differently, and a rank's part of the grid puts a point
 * in another lane or plane: star3d3r's fields differed in the last bits
 * between 1 rank and 2 split along i or k, and were equal without FMAs
 * (H100, docs/benchmarks.md 2026-11-27 10:45). Last, after --cflags. */
#define STN_EXACT_NVCC_FLAGS "-fmad=false"

/* Where the runtime's headers and libraries are: $STENCILC_RUNTIME_DIR
 * and $STENCILC_LIB_DIR when set; else, for an installed stencilc
 * (PREFIX/bin), PREFIX/include/stencilc and PREFIX/lib, found from the
 * executable's own path so that the installed tree can be moved; else the
 * source tree it was built in. */
static const char *installed_dir(const char *sub, const char *probe)
{
  static char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash)
    return NULL;
  *slash = 0; /* PREFIX/bin */
  slash = strrchr(exe, '/');
  if (!slash || strcmp(slash, "/bin") != 0)
    return NULL;
  *slash = 0;
  char *dir = malloc(strlen(exe) + strlen(sub) + 2), *file = malloc(strlen(exe) + strlen(sub) + strlen(probe) + 3);
  if (!dir || !file)
    return NULL;
  sprintf(dir, "%s/%s", exe, sub);
  sprintf(file, "%s/%s", dir, probe);
  int there = access(file, R_OK) == 0;
  free(file);
  if (!there) {
    free(dir);
    return NULL;
  }
  return dir;
}

static const char *runtime_dir(const char *env, const char *sub, const char *probe, const char *built)
{
  const char *dir = getenv(env);
  if (!dir)
    dir = installed_dir(sub, probe);
  return dir ? dir : built;
}

static const char *runtime_include(void)
{
  static const char *dir;
  if (!dir)
    dir = runtime_dir("STENCILC_RUNTIME_DIR", "include/stencilc", "stn.h", STN_RUNTIME_DIR);
  return dir;
}

static const char *runtime_lib(void)
{
  static const char *dir;
  if (!dir)
    dir = runtime_dir("STENCILC_LIB_DIR", "lib", "libstn.a", STN_LIB_DIR);
  return dir;
}

/* Where libcudart is, for --print-libs --target=cuda: $CUDA_HOME's, the
 * toolkit's stencilc was built with, or the usual place, whichever has it
 * (a stencilc carried to another machine finds that machine's). */
static const char *cuda_lib_dir(void)
{
  static char buf[4096];
  const char *home = getenv("CUDA_HOME");
  const char *cand[] = { home ? buf : NULL, STN_CUDA_LIB_DIR, "/usr/local/cuda/lib64" };
  if (home)
    snprintf(buf, sizeof buf, "%s/lib64", home);
  for (int i = 0; i < 3; i++) {
    char probe[4200];
    if (!cand[i])
      continue;
    snprintf(probe, sizeof probe, "%s/libcudart.so", cand[i]);
    if (access(probe, R_OK) == 0)
      return cand[i];
    snprintf(probe, sizeof probe, "%s/libcudart_static.a", cand[i]);
    if (access(probe, R_OK) == 0)
      return cand[i];
  }
  return STN_CUDA_LIB_DIR;
}

typedef struct Options {
  const char *input, *output;
  const char *target, *emit, *dump_after, *cc, *cflags, *arch;
  int build, list_passes, verify, print_cflags, print_libs;
  int fast_math;           /* -ffast-math: --build compiles with nvcc's --use_fast_math or cc's -ffast-math */
  const char *report;      /* "text" or "json", or NULL */
  double bandwidth;        /* --bandwidth, GB/s */
  int no_ptxas;
  PassOptions pass;
  const char *inc[64];     /* -I DIR: where imports are looked for */
  int ninc;
} Options;

typedef enum Kind { FLAG, VALUE } Kind;
typedef struct OptDef {
  const char *name;        /* "--target" or "-o" */
  Kind kind;
  const char *metavar;
  const char *help;
} OptDef;

static const OptDef optdefs[] = {
  { "-o", VALUE, "FILE", "write the output to FILE (default: stdout; with --build: the program name; with --emit=lib: the source, its header FILE.h beside it)" },
  { "--target", VALUE, "c|openmp|cuda", "code generator (default: openmp)" },
  { "--emit", VALUE, "c|ir|ast|lib", "what to print: generated code (default), the IR after all passes, the AST, or a library (docs/library.md)" },
  { "--build", FLAG, NULL, "compile the generated code with the system C compiler into an executable" },
  { "-I", VALUE, "DIR", "look for imported files (import \"file.stn\";) in DIR too, after the importing file's folder; "
    "may be repeated" },
  { "--cc", VALUE, "CC", "C compiler for --build (default: $CC or cc)" },
  { "--cflags", VALUE, "FLAGS", "flags for --build (default: \"" DEFAULT_CFLAGS "\", plus -fopenmp for openmp)" },
  { "--cuda-strategy", VALUE, "S|K=S,...", "CUDA: force strategy S (naive, smem or stream) for every kernel, or K=S for "
                                           "kernel K only (default: chosen per kernel, see --report)" },
  { "--block", VALUE, "XxY", "CUDA: threads per block along the contiguous dimension and the next (default: chosen per "
                            "kernel, see --report)" },
  { "--march", VALUE, "N", "CUDA stream strategy and temporal blocking: rows or planes along dimension 0 per block "
                          "(default: chosen per kernel, see --report; temporally blocked kernels pick theirs at run time)" },
  { "--max-regs", VALUE, "R|K=R,...", "CUDA: at most R registers per thread (16 to 255) in each kernel, or K=R for kernel "
                                     "K only: ptxas spills beyond R, and more threads fit an SM (single-step kernels and "
                                     "3-D temporally blocked ones, default 64 for floats and 128 for doubles there; "
                                     "see --report's resources)" },
  { "--vec", VALUE, "V|K=V,...", "CUDA naive and stream strategies: points each thread computes along the contiguous "
                                "dimension, read with vector loads (1, 2 or 4; K=V for kernel K only; default: chosen "
                                "per kernel, see --report)" },
  { "--burst", VALUE, "M|K=M,...", "CUDA stream strategy: each thread issues the loads of M planes before computing "
                                  "any of them (1 to 8; 1: plane by plane; K=M for kernel K only; default: chosen per "
                                  "kernel, see --report)" },
  { "--deterministic-reductions", FLAG, NULL, "CUDA: combine block partials in a fixed order, bit-identical between runs (the default); "
                                              "with --mpi: exact sums, bit-identical for any rank count and decomposition (CUDA: also built with "
                                              "nvcc -fmad=false)" },
  { "--no-deterministic-reductions", FLAG, NULL, "CUDA: combine block partials with atomics (one pass; last bits may vary)" },
  { "--arch", VALUE, "SM", "CUDA: GPU architecture for --build (default: sm_90)" },
  { "--tb-vec", VALUE, "V", "CUDA temporal blocking of 2-D kernels: columns each thread computes (1, 2, 4 or 8; default: "
                           "chosen, see --report; with --tb-exchange=shfl as many as fit the registers)" },
  { "--tb-rows", VALUE, "R", "CUDA temporal blocking of 3-D kernels without read-only fields (the strip kernel): rows "
                            "each thread computes along the second dimension (1, 2 or 4; default: chosen, see --report)" },
  { "--tb-exchange", VALUE, "smem|shfl", "CUDA temporal blocking of 2-D kernels: the threads of a block share their "
                                         "neighbours' columns through shared memory (smem, the default), or each warp "
                                         "by shuffles (shfl)" },
  { "--tb", VALUE, "N|auto|K=N,...", "temporal blocking: fuse N steps of each time loop per pass (auto: chosen per kernel; "
                                     "K=N for kernel K only; default: auto with --target=cuda, none on the CPU; --tb=1 or -fno-tb: single steps)" },
  { "--report", FLAG, NULL, "explain every kernel: cost per point, halos, fields, reductions, the CPU and CUDA strategies "
                            "chosen and rejected and why, resources, temporal blocking, predicted time per call" },
  { "--report=json", FLAG, NULL, "the same as JSON (schema: docs/report.schema.json)" },
  { "--gpu", VALUE, "NAME", "--report: the GPU whose measured time model predicts (h100, the default, or h200; "
                           "native: this machine's first GPU by nvidia-smi, h100 where it is neither; docs/tblock.md); "
                           "the generated code is the same" },
  { "--bandwidth", VALUE, "GB/s", "--report: the memory bandwidth its predicted times assume (default the --gpu's "
                                  "measured copy bandwidth: 3000 for an H100, 4250 for an H200)" },
  { "--no-ptxas", FLAG, NULL, "--report: do not run nvcc for the real register and spill counts (estimates only)" },
  { "--dump-after", VALUE, "PASS", "print the IR after PASS (or 'all', or 'lower') to stderr" },
  { "--dump-all", FLAG, NULL, "print the IR after lowering and after every pass to stderr (--dump-after=all)" },
  { "--list-passes", FLAG, NULL, "list the passes in the order they run" },
  { "--print-cflags", FLAG, NULL, "print the compiler flags generated C needs (the runtime's headers) and exit" },
  { "--print-libs", FLAG, NULL, "print what generated C links (the runtime and its libraries) and exit; with "
                                "--target=cuda, the CUDA runtime too" },
  { "--verify-ir", FLAG, NULL, "check the IR's invariants after every pass (on in debug builds)" },
  { "-fno-fold", FLAG, NULL, "disable constant folding" },
  { "-fno-fold-zeros", FLAG, NULL, "keep floating x*0, x+0 and 0-x as written (folded, they differ when x is infinite or NaN)" },
  { "-fno-cse", FLAG, NULL, "disable common-subexpression elimination" },
  { "-fno-hoist", FLAG, NULL, "compute every value at every point (no loop-invariant motion)" },
  { "-fno-recip", FLAG, NULL, "keep divisions by loop invariants, and by a value that divides more than once (no reciprocal); with CUDA also -fno-rsqrt" },
  { "-fno-rsqrt", FLAG, NULL, "CUDA: keep x / sqrt(y) as a square root and a division (by default a reciprocal square root refined by a Newton step, within 1 ulp: docs/ir.md)" },
  { "-fno-distribute", FLAG, NULL, "keep (a x + b y) * s as written instead of (a s) x + (b s) y where s and the coefficients are loop invariants (one product a point fewer; the last bits may differ: docs/ir.md)" },
  { "-fno-tb", FLAG, NULL, "no temporal blocking, whatever --tb says" },
  { "-fno-simd", FLAG, NULL, "OpenMP: no 'omp simd' on the innermost loops" },
  { "-fno-queue", FLAG, NULL, "CUDA stream strategy: load every read again instead of keeping a field's column in registers" },
  { "-fno-pdl", FLAG, NULL, "CUDA: plain launches (no programmatic dependent launch on sm_90 and later)" },
  { "-fno-graph", FLAG, NULL, "CUDA: time loops launch every kernel instead of replaying their iterations as a CUDA graph" },
  { "-fstream-pipeline", FLAG, NULL, "CUDA stream strategy: load the next plane's in-plane neighbours while computing this plane (software pipelining; by default only in kernels shaped like CG's apply, see --report)" },
  { "-ffast-math", FLAG, NULL, "--build: compile with approximate maths (nvcc --use_fast_math -DSTN_FAST_MATH: division, sqrt, exp, the reciprocal square root and friends a few ulp off; C: -ffast-math); results then differ from the default build's in the last bits" },
  { "-fno-tb-reuse", FLAG, NULL, "CUDA 3-D temporal blocking: load read-only fields at every fused step instead of once per pass" },
  { "-fno-tb-own-smem", FLAG, NULL, "CUDA 2-D temporal blocking of more than two pairs: keep each thread's own columns in registers "
                                    "instead of reading them from the rows in shared memory" },
  { "-fno-tb-half", FLAG, NULL, "CUDA --tb=auto: time no fused passes of half the steps against the chosen depth in the loop's first passes (one fused kernel fewer to compile)" },
  { "-fno-tb-partial-sums", FLAG, NULL, "CUDA temporal blocking of box stencils: read every neighbour plane's points at each point instead of adding each arriving plane's part to the sums it serves (3-D boxes of reach 2 and more: single steps by the stream kernel, not one-step passes)" },
  { "--mpi", FLAG, NULL, "a distributed program: run it with mpirun -np P; each grid is split over the ranks and halos "
                         "are exchanged before the kernels that read them (docs/mpi.md); --build uses mpicc" },
  { "--ranks", VALUE, "PxQxR", "--mpi --report: the decomposition to show (default: MPI_Dims_create of 4 ranks); the "
                               "program takes --ranks=PxQxR at run time" },
  { "--link-bandwidth", VALUE, "GB/s", "--mpi --report: the network bandwidth its predicted exchange times assume "
                                       "(default 25, one 200 Gb/s InfiniBand HDR link)" },
  { "-fno-overlap", FLAG, NULL, "--mpi: wait for the halos before computing (by default a kernel computes its interior "
                                "while they travel)" },
  { "--help", FLAG, NULL, "show this help" },
  { "--version", FLAG, NULL, "show the version" },
};

static void usage(FILE *out)
{
  fprintf(out, "usage: stencilc [options] file.stn\n\n"
               "Compiles a stencil program to C, OpenMP C or CUDA linked with the stencilc runtime:\n"
               "a program, or with --emit=lib a library for your own program.\n\n"
               "options:\n");
  for (size_t i = 0; i < sizeof optdefs / sizeof optdefs[0]; i++) {
    const OptDef *d = &optdefs[i];
    char left[64];
    if (d->kind == VALUE)
      snprintf(left, sizeof left, "%s%s%s", d->name, d->name[1] == '-' ? "=" : " ", d->metavar);
    else
      snprintf(left, sizeof left, "%s", d->name);
    fprintf(out, "  %-22s %s\n", left, d->help);
  }
  fprintf(out, "\nexamples:\n"
               "  stencilc --build -o himeno examples/himeno.stn && ./himeno --NI=129 --NJ=129 --NK=257\n"
               "  stencilc --emit=ir examples/himeno.stn\n");
}

static _Noreturn void bad_usage(const char *fmt, const char *arg)
{
  fprintf(stderr, "stencilc: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nstencilc: run 'stencilc --help' for the options\n");
  exit(2);
}

/* --gpu=native: the model of this machine's first GPU, by the name
 * nvidia-smi gives it; the H100's, with a note, where there is no GPU or
 * the model has not measured it. */
static int native_gpu(void)
{
  const int h100 = tb_model_gpu("h100");
  FILE *p = popen("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null", "r");
  char name[256] = "";
  if (p && !fgets(name, sizeof name, p))
    name[0] = 0;
  int rc = p ? pclose(p) : -1;
  name[strcspn(name, "\r\n")] = 0;
  if (rc != 0 || !name[0]) {
    fprintf(stderr, "stencilc: note: --gpu=native: no GPU found (nvidia-smi --query-gpu=name failed); "
                    "predicting for an H100 (--gpu=h100)\n");
    return h100;
  }
  int g = tb_model_gpu_of_device(name);
  if (g < 0) {
    fprintf(stderr, "stencilc: note: --gpu=native: the time model has not measured the %s; predicting for an H100 "
                    "(--gpu=h100; --bandwidth gives its copy bandwidth)\n", name);
    return h100;
  }
  return g;
}

static void parse_int(const char *text, const char *opt, int *out)
{
  char *end;
  long v = strtol(text, &end, 10);
  if (!*text || *end || v < 1 || v > 1024)
    bad_usage("%s needs a whole number from 1 to 1024", opt);
  *out = (int)v;
}

static void parse_block(Options *o, const char *text)
{
  char buf[64];
  snprintf(buf, sizeof buf, "%s", text);
  int d = 0;
  for (char *tok = strtok(buf, "x"); tok; tok = strtok(NULL, "x")) {
    if (d == MAX_RANK)
      bad_usage("--block takes at most 3 sizes, as in 64x4 (got '%s')", text);
    parse_int(tok, "--block", &o->pass.block[d++]);
  }
  if (d == 0)
    bad_usage("--block needs sizes, as in 64x4 (got '%s')", text);
  int threads = o->pass.block[0] * (o->pass.block[1] ? o->pass.block[1] : 1);
  if (threads > 1024)
    bad_usage("--block=%s asks for more than 1024 threads per block", text);
  if (threads % 32) /* the reductions combine whole warps with shuffles */
    bad_usage("--block=%s: the threads per block must be a multiple of 32 (whole warps)", text);
}

/* Per-kernel options (--tb, --cuda-strategy, --vec, --burst, --max-regs): V, or K=V,... with
 * at most one V for the other kernels (passes: pass_option_for_kernel). */
static int tb_ok(const char *v)
{
  char *end;
  long n = strtol(v, &end, 10);
  return streq(v, "auto") || (*v && !*end && n >= 1 && n <= 8);
}

static int strategy_ok(const char *v) { return streq(v, "naive") || streq(v, "smem") || streq(v, "stream"); }

static int vec_ok(const char *v) { return streq(v, "1") || streq(v, "2") || streq(v, "4"); }

static int burst_ok(const char *v)
{
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 1 && n <= 8;
}

static int regs_ok(const char *v)
{
  char *end;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 16 && n <= 255;
}

static _Noreturn void bad_list(const char *opt, const char *spec, const char *why)
{
  fprintf(stderr, "stencilc: error: %s=%s: %s\n", opt, spec, why);
  exit(2);
}

static void check_per_kernel(const char *opt, const char *spec, int (*ok)(const char *), const char *bad)
{
  int defaults = 0;
  PassOptionItem it, prev;
  for (const char *s = spec; pass_option_next(&s, &it);) {
    char value[256];
    if (it.len == 0)
      bad_list(opt, spec, "an empty item (values are separated by single commas)");
    if (it.name && it.name_len == 0)
      bad_list(opt, spec, "a kernel name is missing before '='");
    if (!it.name && defaults++)
      bad_list(opt, spec, "give one value for all kernels at most (the rest as KERNEL=VALUE)");
    if (it.value_len >= sizeof value)
      bad_usage(bad, spec);
    memcpy(value, it.value, it.value_len);
    value[it.value_len] = 0;
    if (!ok(value))
      bad_usage(bad, spec);
    for (const char *t = spec; it.name && pass_option_next(&t, &prev) && prev.text < it.text;)
      if (prev.name && prev.name_len == it.name_len && strncmp(prev.name, it.name, it.name_len) == 0)
        bad_list(opt, spec, "a kernel is named twice");
  }
}

/* --max-regs=R leaves room for 64K / R threads of a block on an SM: each
 * capped kernel's block must fit (after the gpu pass chose it). */
static int check_max_regs(const IrProgram *ir)
{
  int ok = 1;
  for (int i = 0; i < ir->kernels.len; i++) {
    const IrKernel *k = ir->kernels.data[i];
    if (k->max_regs && k->block[0] * k->block[1] > k->max_threads) {
      fprintf(stderr, "stencilc: error: --max-regs=%d leaves room for %d threads per block, but kernel '%s' uses %dx%d; "
                      "give a smaller --block\n", k->max_regs, k->max_threads, k->name, k->block[0], k->block[1]);
      ok = 0;
    }
  }
  return ok;
}

/* Each KERNEL= of a per-kernel option must name a kernel of the program. */
static int check_kernel_names(const Options *o, const IrProgram *ir)
{
  const char *opts[] = { "--tb", "--cuda-strategy", "--vec", "--max-regs", "--burst" };
  const char *specs[] = { o->pass.tb, o->pass.cuda_strategy, o->pass.vec, o->pass.max_regs, o->pass.burst };
  int bad = 0;
  for (int i = 0; i < 5; i++) {
    PassOptionItem it;
    for (const char *s = specs[i]; pass_option_next(&s, &it);) {
      int found = !it.name;
      for (int k = 0; k < ir->kernels.len && !found; k++)
        found = strlen(ir->kernels.data[k]->name) == it.name_len &&
                strncmp(ir->kernels.data[k]->name, it.name, it.name_len) == 0;
      if (!found) {
        fprintf(stderr, "stencilc: error: %s=%s: %s has no kernel '%.*s' (its kernels:", opts[i], specs[i],
                ir->src->name, (int)it.name_len, it.name);
        for (int k = 0; k < ir->kernels.len; k++)
          fprintf(stderr, "%s %s", k ? "," : "", ir->kernels.data[k]->name);
        fprintf(stderr, ")\n");
        bad = 1;
      }
    }
  }
  return !bad;
}

static void parse_options(Options *o, int argc, char **argv)
{
#ifdef STN_DEBUG
  o->verify = 1;
#endif
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (arg[0] != '-' || streq(arg, "-")) {
      if (o->input)
        bad_usage("more than one input file ('%s')", arg);
      o->input = arg;
      continue;
    }
    if (strncmp(arg, "-I", 2) == 0) { /* -I DIR or -IDIR */
      const char *dir = arg[2] ? arg + 2 : a + 1 < argc ? argv[++a] : NULL;
      if (!dir)
        bad_usage("%s", "option '-I' needs a directory");
      if (o->ninc == 64)
        bad_usage("%s", "more than 64 -I directories");
      o->inc[o->ninc++] = dir;
      continue;
    }
    const OptDef *def = NULL;
    const char *value = NULL;
    for (size_t i = 0; i < sizeof optdefs / sizeof optdefs[0] && !def; i++) {
      size_t n = strlen(optdefs[i].name);
      if (strncmp(arg, optdefs[i].name, n) != 0)
        continue;
      if (arg[n] == 0)
        def = &optdefs[i];
      else if (arg[n] == '=' && optdefs[i].kind == VALUE)
        def = &optdefs[i], value = arg + n + 1;
    }
    if (!def)
      bad_usage("unknown option '%s'", arg);
    if (def->kind == VALUE && !value) {
      if (a + 1 >= argc)
        bad_usage("option '%s' needs a value", arg);
      value = argv[++a];
    }
    const char *n = def->name;
    if (streq(n, "-o")) o->output = value;
    else if (streq(n, "--target")) o->target = value;
    else if (streq(n, "--emit")) o->emit = value;
    else if (streq(n, "--build")) o->build = 1;
    else if (streq(n, "--cc")) o->cc = value;
    else if (streq(n, "--cflags")) o->cflags = value;
    else if (streq(n, "--dump-after")) o->dump_after = value;
    else if (streq(n, "--cuda-strategy")) o->pass.cuda_strategy = value;
    else if (streq(n, "--block")) parse_block(o, value);
    else if (streq(n, "--march")) parse_int(value, "--march", &o->pass.march);
    else if (streq(n, "--vec")) o->pass.vec = value;
    else if (streq(n, "--burst")) o->pass.burst = value;
    else if (streq(n, "--max-regs")) o->pass.max_regs = value;
    else if (streq(n, "--deterministic-reductions")) o->pass.atomic_reductions = 0, o->pass.mpi_exact = 1;
    else if (streq(n, "--mpi")) o->pass.mpi = 1;
    else if (streq(n, "-fno-overlap")) o->pass.no_overlap = 1;
    else if (streq(n, "--ranks")) {
      const char *r = value;
      for (int d = 0; d < MAX_RANK + 1; d++) {
        char *end;
        long v = strtol(r, &end, 10);
        if (d == MAX_RANK || end == r || v < 1 || v > 1000000 || (*end && *end != 'x'))
          bad_usage("--ranks=%s: give ranks per dimension, P, PxQ or PxQxR", value);
        o->pass.mpi_ranks[d] = (int)v;
        if (!*end)
          break;
        r = end + 1;
      }
    } else if (streq(n, "--link-bandwidth")) {
      char *end;
      o->pass.link_bw = strtod(value, &end);
      if (!*value || *end || !(o->pass.link_bw > 0) || o->pass.link_bw > 1e6)
        bad_usage("--link-bandwidth=%s: give GB/s, a positive number", value);
    }
    else if (streq(n, "--no-deterministic-reductions")) o->pass.atomic_reductions = 1;
    else if (streq(n, "--arch")) o->arch = value;
    else if (streq(n, "--tb")) o->pass.tb = value;
    else if (streq(n, "--tb-exchange")) {
      if (!streq(value, "smem") && !streq(value, "shfl"))
        bad_usage("--tb-exchange=%s: give smem or shfl", value);
      o->pass.tb_shfl = streq(value, "shfl");
    } else if (streq(n, "--tb-rows")) {
      parse_int(value, "--tb-rows", &o->pass.tb_rows);
      if (o->pass.tb_rows != 1 && o->pass.tb_rows != 2 && o->pass.tb_rows != 4)
        bad_usage("--tb-rows=%s: rows per thread are 1, 2 or 4", value);
    } else if (streq(n, "--tb-vec")) {
      parse_int(value, "--tb-vec", &o->pass.tb_vec);
      if (o->pass.tb_vec != 1 && o->pass.tb_vec != 2 && o->pass.tb_vec != 4 && o->pass.tb_vec != 8)
        bad_usage("--tb-vec=%s: columns per thread are 1, 2, 4 or 8", value);
    }
    else if (streq(n, "--list-passes")) o->list_passes = 1;
    else if (streq(n, "--report")) o->report = "text";
    else if (streq(n, "--report=json")) o->report = "json";
    else if (streq(n, "--no-ptxas")) o->no_ptxas = 1;
    else if (streq(n, "--dump-all")) o->dump_after = "all";
    else if (streq(n, "--gpu") && streq(value, "native"))
      o->pass.gpu = native_gpu();
    else if (streq(n, "--gpu")) {
      o->pass.gpu = tb_model_gpu(value);
      if (o->pass.gpu < 0)
        bad_usage("--gpu=%s: the time model has measured constants for h100 and h200 only (native: this machine's "
                  "GPU); for another GPU give the nearest, and its copy bandwidth with --bandwidth", value);
    }
    else if (streq(n, "--bandwidth")) {
      char *end;
      o->bandwidth = strtod(value, &end);
      if (!*value || *end || !(o->bandwidth > 0) || o->bandwidth > 1e6)
        bad_usage("--bandwidth=%s: give GB/s, a positive number", value);
    }
    else if (streq(n, "--print-cflags")) o->print_cflags = 1;
    else if (streq(n, "--print-libs")) o->print_libs = 1;
    else if (streq(n, "--verify-ir")) o->verify = 1;
    else if (streq(n, "-fno-fold")) o->pass.no_fold = 1;
    else if (streq(n, "-fno-fold-zeros")) o->pass.no_fold_zeros = 1;
    else if (streq(n, "-fno-cse")) o->pass.no_cse = 1;
    else if (streq(n, "-fno-hoist")) o->pass.no_hoist = 1;
    else if (streq(n, "-fno-recip")) o->pass.no_recip = 1;
    else if (streq(n, "-fno-rsqrt")) o->pass.no_rsqrt = 1;
    else if (streq(n, "-fno-distribute")) o->pass.no_distribute = 1;
    else if (streq(n, "-fno-tb")) o->pass.no_tb = 1;
    else if (streq(n, "-fno-simd")) o->pass.no_simd = 1;
    else if (streq(n, "-fno-queue")) o->pass.no_queue = 1;
    else if (streq(n, "-fstream-pipeline")) o->pass.stream_pipeline = 1;
    else if (streq(n, "-fno-tb-reuse")) o->pass.no_tb_reuse = 1;
    else if (streq(n, "-fno-tb-own-smem")) o->pass.no_tb_own_smem = 1;
    else if (streq(n, "-fno-tb-half")) o->pass.no_tb_half = 1;
    else if (streq(n, "-fno-tb-partial-sums")) o->pass.no_tb_psum = 1;
    else if (streq(n, "-ffast-math")) o->fast_math = 1;
    else if (streq(n, "-fno-pdl")) o->pass.no_pdl = 1;
    else if (streq(n, "-fno-graph")) o->pass.no_graph = 1;
    else if (streq(n, "--help")) { usage(stdout); exit(0); }
    else if (streq(n, "--version")) { printf("stencilc %s\n", STENCILC_VERSION); exit(0); }
    else ice("option '%s' declared but not handled", n);
  }
  if (!o->target || streq(o->target, "openmp"))
    o->pass.target = TARGET_OPENMP;
  else if (streq(o->target, "c"))
    o->pass.target = TARGET_C;
  else if (streq(o->target, "cuda"))
    o->pass.target = TARGET_CUDA;
  else
    bad_usage("unknown target '%s' (choose c, openmp or cuda)", o->target);
  /* sm_90, sm_90a, compute_90: 90; anything else (native, all): unknown,
   * so nothing that needs a known architecture (programmatic launches). */
  const char *arch = o->arch ? o->arch : "sm_90";
  if (!strncmp(arch, "sm_", 3) || !strncmp(arch, "compute_", 8))
    o->pass.arch = atoi(strchr(arch, '_') + 1);
  if (o->pass.cuda_strategy)
    check_per_kernel("--cuda-strategy", o->pass.cuda_strategy, strategy_ok,
                     "unknown CUDA strategy in '%s' (choose naive, smem or stream, or KERNEL=one of them)");
  if (o->pass.vec)
    check_per_kernel("--vec", o->pass.vec, vec_ok, "--vec=%s: points per thread are 1, 2 or 4 (or KERNEL=V)");
  if (o->pass.burst)
    check_per_kernel("--burst", o->pass.burst, burst_ok, "--burst=%s: give planes per burst from 1 to 8 (or KERNEL=M)");
  if (o->pass.max_regs)
    check_per_kernel("--max-regs", o->pass.max_regs, regs_ok, "--max-regs=%s: give registers per thread from 16 to 255 "
                                                              "(or KERNEL=R)");
  if (o->pass.tb)
    check_per_kernel("--tb", o->pass.tb, tb_ok, "--tb=%s: give steps per pass from 1 to 8, 'auto', or KERNEL=N");
  if (o->emit && !streq(o->emit, "c") && !streq(o->emit, "ir") && !streq(o->emit, "ast") && !streq(o->emit, "lib"))
    bad_usage("unknown --emit kind '%s' (choose c, ir, ast or lib)", o->emit);
  if (o->emit && streq(o->emit, "lib") && o->build)
    bad_usage("%s", "--emit=lib writes a header and a source file for your build; it does not --build");
  if (o->dump_after && !streq(o->dump_after, "all") && !streq(o->dump_after, "lower")) {
    int found = 0;
    for (int i = 0; i < pass_count; i++)
      found |= streq(pass_list[i].name, o->dump_after);
    if (!found)
      bad_usage("unknown pass '%s' (see --list-passes)", o->dump_after);
  }
  o->pass.lib = o->emit && streq(o->emit, "lib");
  o->pass.dump_after = o->dump_after;
  o->pass.dump = stderr;
  o->pass.verify = o->verify;
}

static char *read_file(const char *path, int *len)
{
  FILE *f = streq(path, "-") ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "stencilc: error: cannot open '%s': %s\n", path, strerror(errno));
    exit(1);
  }
  Buf b = { 0 };
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    buf_append(&b, chunk, n);
  if (ferror(f)) {
    fprintf(stderr, "stencilc: error: cannot read '%s': %s\n", path, strerror(errno));
    exit(1);
  }
  if (f != stdin)
    fclose(f);
  if (!b.s)
    buf_puts(&b, "");
  if (strlen(b.s) != b.len) {
    fprintf(stderr, "%s: error: the file contains a NUL byte; is it a .stn text file?\n", path);
    exit(1);
  }
  *len = (int)b.len;
  return b.s;
}

/* --mpi --build: MPI's compiler wrapper (MPICC, MPICXX for nvcc's host
 * compiler) and the MPI runtime must be there; says what to install. */
static int mpi_ready(const char *wrapper, const char *lib)
{
  Buf probe = { 0 };
  buf_printf(&probe, "command -v '%s' >/dev/null 2>&1", wrapper);
  int found = system(probe.s) == 0;
  buf_free(&probe);
  if (!found) {
    fprintf(stderr, "stencilc: error: --mpi needs MPI to build, but '%s' was not found; install Open MPI "
                    "(Debian: apt-get install libopenmpi-dev openmpi-bin) or name the wrapper in %s\n",
            wrapper, strstr(wrapper, "cxx") ? "MPICXX" : "MPICC");
    return 0;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/libstn_mpi.a", lib);
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "stencilc: error: --mpi needs the MPI runtime %s, which was not built (Open MPI was missing "
                    "when stencilc was built); install libopenmpi-dev and run make again\n", path);
    return 0;
  }
  return 1;
}

static int run_nvcc(const Options *o, const char *src, const char *exe)
{
  const char *rt = runtime_include(), *lib = runtime_lib();
  const char *nvcc = getenv("NVCC") ? getenv("NVCC") : "nvcc";
  const char *mpicxx = getenv("MPICXX") ? getenv("MPICXX") : "mpicxx";
  if (o->pass.mpi && !mpi_ready(mpicxx, lib))
    return 1;
  char cuda_mpi[4200];
  snprintf(cuda_mpi, sizeof cuda_mpi, "%s/libstn_cuda_mpi.a", lib);
  if (o->pass.mpi && access(cuda_mpi, R_OK) != 0) {
    fprintf(stderr, "stencilc: error: --mpi --target=cuda needs the CUDA MPI runtime %s, which was not built (nvcc "
                    "or Open MPI was missing when stencilc was built); install both and run make again\n", cuda_mpi);
    return 1;
  }
  Buf cmd = { 0 };
  const char *flags = o->cflags ? o->cflags : "-O3";
  static char fast[4200];
  if (o->fast_math) {
    /* STN_FAST_MATH: runtime/stn.h's reciprocal square root skips its
     * Newton step too */
    snprintf(fast, sizeof fast, "%s --use_fast_math -DSTN_FAST_MATH", flags);
    flags = fast;
  }
  buf_printf(&cmd, "%s %s -arch=%s -I'%s' -o '%s' '%s' '%s/libstn_cuda.a' '%s/libstn.a' %s", nvcc,
             flags, o->arch ? o->arch : "sm_90", rt, exe, src, lib, lib, STN_LINK_LIBS);
  if (o->pass.mpi) { /* MPI's host compiler; the MPI runtime before libstn.a; STN_MPI_NVCC_FLAGS */
    buf_free(&cmd);
    buf_printf(&cmd, "%s -ccbin '%s' %s " STN_MPI_NVCC_FLAGS "%s -arch=%s -I'%s' -o '%s' '%s' '%s' '%s/libstn_mpi.a' "
                     "'%s/libstn_cuda.a' '%s/libstn.a' %s -ldl",
               nvcc, mpicxx, flags, o->pass.mpi_exact ? " " STN_EXACT_NVCC_FLAGS : "", o->arch ? o->arch : "sm_90", rt,
               exe, src, cuda_mpi, lib, lib, lib, STN_MPI_LINK_LIBS);
  }
  int rc = system(cmd.s);
  if (rc != 0)
    fprintf(stderr, "stencilc: error: nvcc failed (%s)\nstencilc: command: %s\n",
            WIFEXITED(rc) ? "see its messages above" : "it did not run", cmd.s);
  buf_free(&cmd);
  return rc != 0;
}

static int run_cc(const Options *o, const char *csrc, const char *exe)
{
  const char *cc = o->cc ? o->cc : getenv("CC") ? getenv("CC") : "cc";
  if (o->pass.mpi) {
    cc = getenv("MPICC") ? getenv("MPICC") : "mpicc";
    if (!mpi_ready(cc, runtime_lib()))
      return 1;
  }
  const char *cflags = o->cflags ? o->cflags : DEFAULT_CFLAGS;
  static char fast[4200];
  if (o->fast_math) {
    snprintf(fast, sizeof fast, "%s -ffast-math", cflags);
    cflags = fast;
  }
  const char *rt = runtime_include(), *lib = runtime_lib();
  Buf cmd = { 0 };
  buf_printf(&cmd, "%s %s%s -I'%s' -o '%s' '%s' %s%s%s'%s/libstn.a' %s -lm", cc, cflags,
             o->pass.target == TARGET_OPENMP ? " -fopenmp" : "", rt, exe, csrc, o->pass.mpi ? "'" : "",
             o->pass.mpi ? lib : "", o->pass.mpi ? "/libstn_mpi.a' " : "", lib, o->pass.mpi ? STN_MPI_LINK_LIBS : STN_LINK_LIBS);
  int rc = system(cmd.s);
  if (rc != 0) {
    fprintf(stderr, "stencilc: error: the C compiler failed (%s)\nstencilc: command: %s\n",
            WIFEXITED(rc) ? "see its messages above" : "it did not run", cmd.s);
    buf_free(&cmd);
    return 1;
  }
  buf_free(&cmd);
  return 0;
}

/* --tb asked for temporal blocking: say which loops could not have it, and why. */
static void tb_notes(Diag *diag, const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->tb_why && !s->tb)
      diag_note(diag, s->span, "this loop is not temporally blocked: %s", s->tb_why);
    tb_notes(diag, &s->body);
    tb_notes(diag, &s->els);
  }
}

/* nvcc's -Xptxas -v report on the program's CUDA code (malloc'd), or NULL
 * when there is no nvcc or it fails. */
static char *ptxas_report(const Options *o, const IrProgram *gpu)
{
  const char *nvcc = getenv("NVCC") ? getenv("NVCC") : "nvcc";
  Buf probe = { 0 };
  buf_printf(&probe, "command -v '%s' >/dev/null 2>&1", nvcc);
  int have = system(probe.s) == 0;
  buf_free(&probe);
  if (!have)
    return NULL;
  char path[] = "/tmp/stencilc-report-XXXXXX.cu";
  int fd = mkstemps(path, 3);
  if (fd < 0)
    return NULL;
  Buf code = { 0 };
  cg_cuda_program(&code, gpu);
  FILE *f = fdopen(fd, "w");
  if (!f || fwrite(code.s, 1, code.len, f) != code.len) {
    buf_free(&code);
    return NULL;
  }
  fclose(f);
  buf_free(&code);
  const char *rt = runtime_include();
  Buf cmd = { 0 };
  buf_printf(&cmd, "'%s' -arch=%s -O3 -Xptxas -v -I'%s' -c -o /dev/null '%s' 2>&1", nvcc, o->arch ? o->arch : "sm_90", rt,
             path);
  FILE *p = popen(cmd.s, "r");
  buf_free(&cmd);
  Buf out = { 0 };
  char chunk[4096];
  size_t n;
  while (p && (n = fread(chunk, 1, sizeof chunk, p)) > 0)
    buf_append(&out, chunk, n);
  int rc = p ? pclose(p) : -1;
  remove(path);
  if (rc != 0) {
    buf_free(&out);
    return NULL;
  }
  return out.s;
}

/* --report: the program through the OpenMP pipeline and through CUDA's. */
static int run_report(const Options *o, Sema *sema, Arena *arena, const Source *src)
{
  PassOptions po = o->pass;
  po.dump_after = NULL;
  po.target = TARGET_OPENMP;
  IrProgram *cpu = ir_lower(sema, arena, src);
  if (!check_kernel_names(o, cpu))
    return 2;
  pass_run_pipeline(cpu, &po);
  po.target = TARGET_CUDA;
  IrProgram *gpu = ir_lower(sema, arena, src);
  pass_run_pipeline(gpu, &po);
  if (!check_max_regs(gpu))
    return 2;
  ReportOptions ro = { .json = streq(o->report, "json"), .gpu = tb_model_gpu_what(o->pass.gpu),
                       .bandwidth = o->bandwidth ? o->bandwidth : tb_model_gpu_bandwidth(o->pass.gpu) };
  char *ptxas = o->no_ptxas ? NULL : ptxas_report(o, gpu);
  ro.ptxas = ptxas;
  FILE *out = o->output ? fopen(o->output, "w") : stdout;
  if (!out) {
    fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", o->output, strerror(errno));
    free(ptxas);
    return 1;
  }
  report_print(out, cpu, gpu, &ro);
  if (out != stdout)
    fclose(out);
  free(ptxas);
  return 0;
}

static const char *default_exe(Arena *a, const char *input)
{
  const char *base = strrchr(input, '/');
  base = base ? base + 1 : input;
  size_t n = strlen(base);
  if (n > 4 && streq(base + n - 4, ".stn"))
    n -= 4;
  return arena_strndup(a, base, n);
}

static int write_file(const char *path, const Buf *b)
{
  FILE *f = fopen(path, "w");
  if (!f || fwrite(b->s, 1, b->len, f) != b->len || fclose(f) != 0) {
    fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", path, strerror(errno));
    return 0;
  }
  return 1;
}

/* --emit=lib: -o FILE.c (FILE.cu for CUDA) names the source; the header
 * is FILE.h beside it. Without -o: NAME.c and NAME.h from the input's name. */
static int write_library(const Options *o, const IrProgram *ir, Arena *arena)
{
  int cuda = o->pass.target == TARGET_CUDA;
  const char *src = o->output ? o->output : arena_printf(arena, "%s.%s", default_exe(arena, o->input), cuda ? "cu" : "c");
  const char *dot = strrchr(src, '.'), *slash = strrchr(src, '/');
  size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - src) : strlen(src);
  const char *hdr = arena_printf(arena, "%.*s.h", (int)stem, src);
  if (streq(hdr, src))
    bad_usage("-o %s: the library's source file cannot be named .h (its header is)", src);
  const char *hbase = strrchr(hdr, '/') ? strrchr(hdr, '/') + 1 : hdr;
  Buf code = { 0 }, header = { 0 };
  if (cuda)
    cg_cuda_library(&code, &header, ir, hbase);
  else
    cg_c_library(&code, &header, ir, o->pass.target == TARGET_OPENMP, hbase);
  int ok = write_file(hdr, &header) && write_file(src, &code);
  buf_free(&code);
  buf_free(&header);
  return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
  Options o = { 0 };
  parse_options(&o, argc, argv);
  if (o.print_cflags || o.print_libs) {
    const char *rt = runtime_include(), *lib = runtime_lib();
    if (o.print_cflags)
      printf("-I%s%s%s\n", rt, o.pass.mpi && o.pass.target == TARGET_CUDA ? " " STN_MPI_NVCC_FLAGS : "",
             o.pass.mpi && o.pass.target == TARGET_CUDA && o.pass.mpi_exact ? " " STN_EXACT_NVCC_FLAGS : "");
    if (o.print_libs)
    {
      if (o.pass.mpi && o.pass.target == TARGET_CUDA)
        printf("%s/libstn_cuda_mpi.a %s/libstn_mpi.a ", lib, lib);
      else if (o.pass.mpi)
        printf("%s/libstn_mpi.a ", lib);
      if (o.pass.target == TARGET_CUDA)
        printf("%s/libstn_cuda.a ", lib);
      printf("%s/libstn.a %s", lib, o.pass.mpi ? STN_MPI_LINK_LIBS : STN_LINK_LIBS);
      if (o.pass.target == TARGET_CUDA) /* nvcc links these itself; a C linker needs them */
        printf(" -L%s -lcudart -lstdc++", cuda_lib_dir());
      if (o.pass.mpi && o.pass.target == TARGET_CUDA) /* NCCL, opened at run time */
        printf(" -ldl");
      printf(" -lm\n");
    }
    return 0;
  }
  if (o.list_passes) {
    for (int i = 0; i < pass_count; i++)
      printf("%-10s %s\n", pass_list[i].name, pass_list[i].what);
    return 0;
  }
  if (!o.input)
    bad_usage("%s", "no input file");

  Arena *arena = arena_new();
  Source src = { .name = o.input };
  int len;
  char *text = read_file(o.input, &len);
  src.text = text;
  src.len = len;
  Diag diag = { .src = &src };
  Program prog = { .src = src };

  int status = 1;
  parse_program(arena, &diag, &src, &prog);
  if (diag.nerrors == 0)
    import_files(arena, &diag, &prog, &src, o.inc, o.ninc);
  if (o.emit && streq(o.emit, "ast")) {
    ast_dump(stdout, &prog, &src);
    status = diag.nerrors ? 1 : 0;
    goto out;
  }
  Sema sema;
  if (diag.nerrors == 0)
    sema_check(&sema, arena, &diag, &prog, !(o.emit && streq(o.emit, "lib")));
  if (diag.nerrors) {
    fprintf(stderr, "%d error%s generated.\n", diag.nerrors, diag.nerrors == 1 ? "" : "s");
    goto out;
  }

  if (o.report) {
    status = run_report(&o, &sema, arena, &src);
    goto out;
  }
  IrProgram *ir = ir_lower(&sema, arena, &src);
  if (!check_kernel_names(&o, ir)) {
    status = 2; /* a usage error, like the other option errors */
    goto out;
  }
  pass_run_pipeline(ir, &o.pass);
  if (o.pass.target == TARGET_CUDA && !check_max_regs(ir)) {
    status = 2;
    goto out;
  }
  if (o.pass.tb)
    tb_notes(&diag, &ir->main);

  if (o.emit && streq(o.emit, "ir")) {
    FILE *out = o.output ? fopen(o.output, "w") : stdout;
    if (!out) {
      fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", o.output, strerror(errno));
      goto out;
    }
    ir_print_program(out, ir);
    if (out != stdout)
      fclose(out);
    status = 0;
    goto out;
  }

  if (o.emit && streq(o.emit, "lib")) {
    status = write_library(&o, ir, arena);
    goto out;
  }

  Buf code = { 0 };
  int cuda = o.pass.target == TARGET_CUDA;
  if (cuda)
    cg_cuda_program(&code, ir);
  else
    cg_c_program(&code, ir, o.pass.target == TARGET_OPENMP);
  if (o.build) {
    const char *exe = o.output ? o.output : default_exe(arena, o.input);
    char *csrc = arena_printf(arena, "%s.%s", exe, cuda ? "cu" : "c");
    if (!write_file(csrc, &code)) {
      buf_free(&code);
      goto out;
    }
    status = cuda ? run_nvcc(&o, csrc, exe) : run_cc(&o, csrc, exe);
  } else {
    FILE *out = o.output ? fopen(o.output, "w") : stdout;
    if (!out || fwrite(code.s, 1, code.len, out) != code.len || (out != stdout && fclose(out) != 0)) {
      fprintf(stderr, "stencilc: error: cannot write '%s': %s\n", o.output ? o.output : "stdout", strerror(errno));
      buf_free(&code);
      goto out;
    }
    status = 0;
  }
  buf_free(&code);
out:
  free(text);
  arena_free(arena);
  return status;
}
