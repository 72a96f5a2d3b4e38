/* stn.c: the runtime library of generated programs (see stn.h). */
#define _POSIX_C_SOURCE 200809L
#include "stn.h"
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef STN_HAVE_PNG
#include <png.h>
#endif

static void range_text(char *buf, size_t n, const stn_param *p);
typedef struct save_req { const char *field, *path; } save_req;
static save_req *saves;
static int nsaves;

/* A write that fails in the middle of a run does not end it: the error is
 * said, the run goes on, --save still writes what it can at the end, and
 * the program then exits with status 1 (stn_finish). The writers call
 * write_fail, which returns to the guard stn_field_write or
 * stn_field_write_image set up. */
static jmp_buf *write_guard;
static int write_errors;

static _Noreturn __attribute__((format(printf, 1, 2))) void write_fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!write_guard)
    stn_fatal("%s", msg);
  fprintf(stderr, "error: %s; the run goes on (--save files are still written at the end) and will exit with status 1\n",
          msg);
  write_errors++;
  longjmp(*write_guard, 1);
}

/* Whether path can be written: its folder exists and may be written in,
 * and the file, if there, is a file that may be written. */
static int writable(const char *path, const char **why)
{
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      *why = "it is a folder";
      return 0;
    }
    if (access(path, W_OK) != 0) {
      *why = strerror(errno);
      return 0;
    }
    return 1;
  }
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash)
    strcpy(dir, ".");
  else if (slash == path)
    strcpy(dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    *why = stat(dir, &st) != 0 ? strerror(errno) : "its folder is not a folder";
    return 0;
  }
  if (access(dir, W_OK) != 0) {
    *why = strerror(errno);
    return 0;
  }
  return 1;
}

static void stn_field_write_image_now(const stn_field *f, const char *path, double lo, double hi,
                                      const char *colormap);

void stn_check_output(const char *what, const char *path)
{
  const char *why = NULL;
  if (!writable(path, &why))
    stn_fatal("%s: cannot write '%s': %s (checked before the run starts, so that no work is lost)", what, path, why);
}

static struct {
  int on, tty, shown;
  const char *what;
  long total, done, base;  /* base: the iterations a restart resumed after */
  double t0, every, next;
} progress;

stn_dist_hooks stn_dist;
int stn_fatal_collective;

void stn_fatal(const char *fmt, ...)
{
  int quiet = stn_dist.size > 1 && stn_fatal_collective && stn_dist.rank != 0;
  if (progress.shown && progress.tty)
    fputs("\r\033[K", stderr);
  if (!quiet) {
    va_list ap;
    va_start(ap, fmt);
    if (stn_dist.size > 1 && !stn_fatal_collective)
      fprintf(stderr, "error: rank %d of %d: ", stn_dist.rank, stn_dist.size);
    else
      fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
  }
  if (stn_dist.abort)
    stn_dist.abort(stn_fatal_collective);
  exit(1);
}

/* ---- exact sums ---------------------------------------------------------- */

/* Digits into [0, 2^32), the sign in the top one. */
void stn_xsum_carry(stn_xsum *x)
{
  for (int i = 0; i < STN_XSUM_DIGITS - 1; i++) {
    int64_t c = x->d[i] >> 32; /* floor */
    x->d[i] -= c * ((int64_t)1 << 32);
    x->d[i + 1] += c;
  }
  x->adds = 0;
}

/* The exact value of canonical digits, rounded to nearest even. */
double stn_xsum_value(stn_xsum *x)
{
  stn_xsum_carry(x);
  if (x->special & 4 || (x->special & 3) == 3)
    return NAN;
  if (x->special)
    return x->special & 1 ? INFINITY : -INFINITY;
  int neg = x->d[STN_XSUM_DIGITS - 1] < 0;
  if (neg) { /* the magnitude: negate, then carry again */
    for (int i = 0; i < STN_XSUM_DIGITS; i++)
      x->d[i] = -x->d[i];
    stn_xsum_carry(x);
  }
  int h = STN_XSUM_DIGITS - 1;
  while (h >= 0 && x->d[h] == 0)
    h--;
  if (h < 0)
    return 0.0;
  unsigned __int128 v = 0;
  int low = h - 2 < 0 ? 0 : h - 2;
  for (int i = h; i >= low; i--)
    v = (v << 32) | (uint64_t)x->d[i];
  int sticky = 0;
  for (int i = 0; i < low; i++)
    sticky |= x->d[i] != 0;
  int len = 0;
  for (unsigned __int128 t = v; t; t >>= 1)
    len++;
  int exp2 = 32 * low - 1074;
  uint64_t keep;
  if (len > 53) {
    int sh = len - 53;
    keep = (uint64_t)(v >> sh);
    unsigned __int128 rem = v & (((unsigned __int128)1 << sh) - 1), half = (unsigned __int128)1 << (sh - 1);
    if (rem > half || (rem == half && (sticky || (keep & 1))))
      keep++;
    exp2 += sh;
  } else {
    keep = (uint64_t)v;
  }
  double r = ldexp((double)keep, exp2);
  return neg ? -r : r;
}

double stn_time(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


void stn_progress_begin(const char *what, long total)
{
  const char *env = getenv("STN_PROGRESS"), *every = getenv("STN_PROGRESS_EVERY");
  progress.tty = isatty(2);
  progress.on = env && *env ? strcmp(env, "0") != 0 : progress.tty;
  if (stn_dist.rank != 0) /* distributed: rank 0 speaks for all */
    progress.on = 0;
  progress.every = every && *every ? atof(every) : 0.5;
  progress.what = what;
  progress.total = total;
  progress.done = progress.base = 0;
  progress.shown = 0;
  progress.t0 = stn_time();
  progress.next = progress.t0 + progress.every;
}

/* Called as each iteration (or pass of n) starts: the ones before are done. */
void stn_progress_add(long n)
{
  long done = progress.done;
  progress.done += n;
  stn_io_step(done);
  if (!progress.on || done == progress.base)
    return;
  double now = stn_time();
  if (now < progress.next)
    return;
  progress.next = now + progress.every;
  double rate = (done - progress.base) / (now - progress.t0);
  char line[160];
  int len = snprintf(line, sizeof line, "%s %ld", progress.what, done);
  if (progress.total > 0)
    len += snprintf(line + len, sizeof line - (size_t)len, "/%ld (%.0f%%)", progress.total,
                    100.0 * (double)done / (double)progress.total);
  len += snprintf(line + len, sizeof line - (size_t)len, rate >= 100 ? ", %.0f it/s" : ", %.3g it/s", rate);
  if (progress.total > 0 && rate > 0)
    snprintf(line + len, sizeof line - (size_t)len, ", %.0f s left", (double)(progress.total - done) / rate);
  fprintf(stderr, progress.tty ? "\r\033[K%s" : "%s\n", line);
  fflush(stderr);
  progress.shown = 1;
}

/* --restart: the loop resumes after `done` iterations (stn_io.c), which
 * its files' steps and the progress count from. */
void stn_progress_resume(long done)
{
  progress.done = progress.base = done;
  progress.t0 = stn_time();
}

void stn_progress_clear(void)
{
  if (progress.shown && progress.tty) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  progress.shown = 0;
}

void stn_progress_end(void)
{
  stn_io_step(progress.done);
  stn_progress_clear();
  progress.on = 0;
}

static const char *type_word(stn_type t) { return t == STN_INT ? "int" : t == STN_FLOAT ? "float" : "double"; }

static void print_value(FILE *out, const stn_param *p)
{
  if (p->type == STN_INT)
    fprintf(out, "%d", *(int *)p->addr);
  else if (p->type == STN_FLOAT)
    fprintf(out, "%g", (double)*(float *)p->addr);
  else
    fprintf(out, "%g", *(double *)p->addr);
}

/* ---- profile ------------------------------------------------------------ */

int stn_profiling;
static stn_kprof *prof_list, **prof_tail = &prof_list;
static double run_t0;
static double xfer_bytes[2];
static long xfer_count[2];

void stn_prof_add(stn_kprof *k, double seconds, double points)
{
  if (!k->calls) {
    k->next = NULL;
    *prof_tail = k;
    prof_tail = &k->next;
  }
  k->calls++;
  k->seconds += seconds;
  k->points += points;
}

void stn_prof_transfer(int to_device, double bytes)
{
  xfer_bytes[to_device != 0] += bytes;
  xfer_count[to_device != 0]++;
}

static void print_bytes(FILE *out, double b)
{
  if (b >= 1e9)
    fprintf(out, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    fprintf(out, "%.2f MB", b / 1e6);
  else if (b >= 1e3)
    fprintf(out, "%.2f kB", b / 1e3);
  else
    fprintf(out, "%.0f B", b);
}

void stn_prof_report(const stn_program *p)
{
  if (!stn_profiling || stn_dist.rank != 0) /* distributed: rank 0's table */
    return;
  double run = stn_time() - run_t0;
  double bw = p->copy_bandwidth ? p->copy_bandwidth() : 0;
  FILE *out = stderr;
  fprintf(out, "\nprofile of %s (%s target)", p->name, p->target ? p->target : "?");
  if (bw > 0)
    fprintf(out, "; copy bandwidth measured now: %.0f GB/s", bw);
  fprintf(out, "\n%-22s %8s %11s %10s %7s %9s %9s %7s\n", "kernel", "calls", "total ms", "mean ms", "% run",
          "GFLOPS", "GB/s", "% copy");
  double total = 0;
  for (stn_kprof *k = prof_list; k; k = k->next) {
    total += k->seconds;
    fprintf(out, "%-22s %8ld %11.3f %10.4f %6.1f%%", k->kernel, k->calls, 1e3 * k->seconds, 1e3 * k->seconds / (double)k->calls,
            run > 0 ? 100 * k->seconds / run : 0.0);
    if (k->bytes > 0 && k->seconds > 0) {
      double gbs = k->bytes * k->points / k->seconds / 1e9;
      fprintf(out, " %9.1f %9.1f", k->flops * k->points / k->seconds / 1e9, gbs);
      if (bw > 0)
        fprintf(out, " %6.1f%%", 100 * gbs / bw);
    }
    fputc('\n', out);
  }
  fprintf(out, "%-22s %8s %11.3f %10s %6.1f%%\n", "all kernels", "", 1e3 * total, "", run > 0 ? 100 * total / run : 0.0);
  fprintf(out, "%-22s %8s %11.3f\n", "run (start to exit)", "", 1e3 * run);
  if (xfer_count[0] || xfer_count[1]) {
    fprintf(out, "transfers: host to device ");
    print_bytes(out, xfer_bytes[1]);
    fprintf(out, " in %ld copies, device to host ", xfer_count[1]);
    print_bytes(out, xfer_bytes[0]);
    fprintf(out, " in %ld copies\n", xfer_count[0]);
  }
}

static void usage(const stn_program *p, FILE *out)
{
  fprintf(out, "usage: %s [--NAME=VALUE ...] [--save=FIELD=PATH ...]\n", p->name);
  if (p->about && *p->about)
    fprintf(out, "%s", p->about);
  fprintf(out, "\nparams:\n");
  for (int i = 0; i < p->nparams; i++) {
    fprintf(out, "  --%s=%s (default ", p->params[i].name, type_word(p->params[i].type));
    print_value(out, &p->params[i]);
    if (p->params[i].has_lo || p->params[i].has_hi) {
      char r[160];
      range_text(r, sizeof r, &p->params[i]);
      fprintf(out, ", in %s", r);
    }
    fprintf(out, ")%s%s\n", p->params[i].help && *p->params[i].help ? "  " : "",
            p->params[i].help ? p->params[i].help : "");
  }
  fprintf(out, "\noptions:\n"
               "  --save=FIELD=PATH  write FIELD when the program ends (.npy, .vtk, .png, .h5; anything else raw binary)\n"
               "  --load=FIELD=PATH  read FIELD from PATH before main starts, or instead of main's own `read` of it\n"
               "                     (.npy, .h5, .png, anything else raw binary)\n"
               "  --checkpoint=PATH  write the run's state to PATH (atomically) every --checkpoint-every steps of the\n"
               "                     outermost time loop (=N), or seconds (=Ns; default 600s), and on SIGTERM/SIGINT\n"
               "  --restart=PATH     resume from a checkpoint of this program\n"
               "  --profile          print each kernel's calls, time, GB/s and %% of the copy bandwidth at exit\n"
               "                     (also STN_PROFILE=1)\n"
               "  --help             show this help\n");
  if (p->option_help)
    fputs(p->option_help, out);
  fprintf(out, "\nfields:");
  for (int i = 0; i < p->nfields; i++)
    if (strncmp(p->fields[i]->name, "stn_", 4) != 0) /* not the compiler's scratch fields */
      fprintf(out, " %s", p->fields[i]->name);
  fprintf(out, "\n");
}

static void range_text(char *buf, size_t n, const stn_param *p)
{
  char lo[64] = "", hi[64] = "";
  if (p->has_lo)
    snprintf(lo, sizeof lo, "%.12g", p->lo);
  if (p->has_hi)
    snprintf(hi, sizeof hi, "%.12g", p->hi);
  snprintf(buf, n, "%s..%s", lo, hi);
}

static _Noreturn void range_error(const char *arg, const stn_param *p)
{
  char r[160];
  range_text(r, sizeof r, p);
  stn_fatal("%s: param %s must be in %s (bounds included)", arg, p->name, r);
}

static void parse_value(const stn_param *p, const char *arg, const char *text)
{
  char *end;
  errno = 0;
  if (*text == ' ' || *text == '\t' || strpbrk(text, "xXpP"))
    stn_fatal("%s: '%s' is not a decimal %s", arg, text, p->type == STN_INT ? "integer" : "number");
  if (p->type == STN_INT) {
    long v = strtol(text, &end, 10);
    if (*text == 0 || *end != 0)
      stn_fatal("%s: '%s' is not an integer (param %s is an int)", arg, text, p->name);
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
      stn_fatal("%s: %s is out of range for an int", arg, text);
    if ((p->has_lo && v < p->lo) || (p->has_hi && v > p->hi))
      range_error(arg, p);
    *(int *)p->addr = (int)v;
    return;
  }
  double v = strtod(text, &end);
  if (*text == 0 || *end != 0)
    stn_fatal("%s: '%s' is not a number (param %s is a %s)", arg, text, p->name, type_word(p->type));
  if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1))
    stn_fatal("%s: %s is not a finite %s", arg, text, type_word(p->type));
  if (p->type == STN_FLOAT && !isfinite((float)v))
    stn_fatal("%s: %s is too large for a float", arg, text);
  if ((p->has_lo && v < p->lo) || (p->has_hi && v > p->hi))
    range_error(arg, p);
  if (p->type == STN_FLOAT)
    *(float *)p->addr = (float)v;
  else
    *(double *)p->addr = v;
}

static int lib_contexts; /* library mode: contexts alive */

void stn_lib_init(stn_program *p)
{
  (void)p;
  lib_contexts++;
  if (!run_t0)
    run_t0 = stn_time();
  const char *env = getenv("STN_PROFILE");
  stn_profiling = env && *env && strcmp(env, "0") != 0;
}

/* The profile covers the whole process: printed when the last context goes. */
void stn_lib_finish(stn_program *p)
{
  if (--lib_contexts == 0)
    stn_prof_report(p);
}

/* Copies the points between a field's storage and a dense C-order array
 * (to_dense: storage -> array). */
static void copy_points(const stn_field *f, void *dense, int to_dense)
{
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long n0 = g->rank == 3 ? g->n[0] : 1, n1 = g->rank >= 2 ? g->n[g->rank - 2] : 1, row = g->n[g->rank - 1];
  long s0 = g->rank == 3 ? g->stride[0] : 0, s1 = g->rank >= 2 ? g->stride[g->rank - 2] : 0;
  char *d = dense;
  for (long i = 0; i < n0; i++)
    for (long j = 0; j < n1; j++) {
      char *field_row = (char *)f->origin + (size_t)(i * s0 + j * s1) * es;
      char *dense_row = d + (size_t)((i * n1 + j) * row) * es;
      if (to_dense)
        memcpy(dense_row, field_row, (size_t)row * es);
      else
        memcpy(field_row, dense_row, (size_t)row * es);
    }
}

void stn_field_get(const stn_field *f, void *dst) { copy_points(f, dst, 1); }
void stn_field_set(stn_field *f, const void *src)
{
  copy_points(f, (void *)src, 0);
  f->halo_ok = 0;
  f->rim = NULL;
}

void stn_field_free(stn_field *f)
{
  free(f->mem);
  f->mem = f->origin = NULL;
}

/* A program built without --mpi, started by mpirun as one of several
 * ranks: each rank would compute the whole problem. */
static void warn_if_launched_as_ranks(void)
{
  const char *size = getenv("OMPI_COMM_WORLD_SIZE"), *rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!size) {
    size = getenv("PMI_SIZE");
    rank = getenv("PMI_RANK");
  }
  if (stn_dist.size || !size || atoi(size) <= 1 || (rank && atoi(rank) != 0))
    return;
  fprintf(stderr, "warning: started as one of %d MPI ranks, but this program was built without --mpi: every rank "
                  "computes the whole problem on its own; rebuild with stencilc --mpi to split the grid\n", atoi(size));
}

void stn_init(stn_program *p, int argc, char **argv)
{
  run_t0 = stn_time();
  warn_if_launched_as_ranks();
  const char *env = getenv("STN_PROFILE");
  stn_profiling = env && *env && strcmp(env, "0") != 0;
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (strcmp(arg, "--profile") == 0) {
      stn_profiling = 1;
      continue;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      if (stn_dist.rank == 0)
        usage(p, stdout);
      if (stn_dist.exit)
        stn_dist.exit(0);
      exit(0);
    }
    if (strncmp(arg, "--save=", 7) == 0) {
      const char *spec = arg + 7, *eq = strchr(spec, '=');
      if (!eq || eq == spec || !eq[1])
        stn_fatal("%s: expected --save=FIELD=PATH", arg);
      size_t len = (size_t)(eq - spec);
      int found = 0;
      for (int i = 0; i < p->nfields; i++)
        if (strlen(p->fields[i]->name) == len && strncmp(p->fields[i]->name, spec, len) == 0 &&
            strncmp(spec, "stn_", 4) != 0)
          found = 1;
      if (!found)
        stn_fatal("%s: '%.*s' is not a field of this program (run with --help to list them)", arg,
                  (int)len, spec);
      saves = realloc(saves, sizeof *saves * (size_t)(nsaves + 1));
      if (!saves)
        stn_fatal("out of memory");
      char *name = malloc(len + 1);
      if (!name)
        stn_fatal("out of memory");
      memcpy(name, spec, len);
      name[len] = 0;
      saves[nsaves].field = name;
      saves[nsaves].path = eq + 1;
      nsaves++;
      stn_check_output(arg, eq + 1);
      continue;
    }
    if (stn_load_option(p, arg) || stn_ckpt_option(arg))
      continue;
    if (p->option && p->option(arg))
      continue;
    if (strncmp(arg, "--", 2) != 0)
      stn_fatal("unexpected argument '%s' (run with --help)", arg);
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const stn_param *hit = NULL;
    for (int i = 0; i < p->nparams; i++)
      if (strlen(p->params[i].name) == len && strncmp(p->params[i].name, name, len) == 0)
        hit = &p->params[i];
    if (!hit)
      stn_fatal("unknown option '%s' (run with --help to list the params)", arg);
    if (!eq)
      stn_fatal("%s: expected --%s=VALUE", arg, hit->name);
    parse_value(hit, arg, eq + 1);
  }
  stn_ckpt_start(p);
}

void stn_grid_init(stn_grid *g, const char *name, int rank, const long *n, const int *halo_lo,
                   const int *halo_hi, const char *const *size_names)
{
  memset(g, 0, sizeof *g);
  g->name = name;
  g->rank = rank;
  if (stn_dist.size == 0)
    stn_ckpt_check_grid(name, rank, n);
  for (int d = 0; d < rank; d++) {
    if (n[d] < 1)
      stn_fatal("grid %s: dimension %d has size %ld (from %s); sizes must be at least 1", name, d, n[d],
                size_names[d]);
    g->n[d] = n[d];
    g->global_n[d] = n[d];
    g->halo_lo[d] = halo_lo[d];
    g->halo_hi[d] = halo_hi[d];
    g->pad_lo[d] = halo_lo[d];
    g->alloc[d] = halo_lo[d] + n[d] + halo_hi[d];
  }
  /* Keep index 0 of every row aligned: pad the contiguous dimension (the
   * padding assumes 4-byte elements; 8-byte ones stay aligned too). */
  int last = rank - 1;
  long per = STN_ALIGN / 4;
  g->pad_lo[last] = (halo_lo[last] + per - 1) / per * per;
  g->alloc[last] = (g->pad_lo[last] + n[last] + halo_hi[last] + per - 1) / per * per;
  double total = 1;
  g->stride[last] = 1;
  for (int d = last - 1; d >= 0; d--)
    g->stride[d] = g->stride[d + 1] * g->alloc[d + 1];
  for (int d = 0; d < rank; d++)
    total *= (double)g->alloc[d];
  if (total > (double)(SIZE_MAX / 16))
    stn_fatal("grid %s is too large to allocate", name);
  g->size = (size_t)total;
}

void stn_grid_periodic(const stn_grid *g, int d, const char *size_name)
{
  int reach = g->halo_lo[d] > g->halo_hi[d] ? g->halo_lo[d] : g->halo_hi[d];
  if (g->n[d] < reach) /* x + o, for x in [0, n) and |o| <= reach, wraps once when reach <= n */
    stn_fatal("grid %s: dimension %d is periodic and its kernels read %d points past an edge, so it needs at least "
              "%d points, but has %ld (from %s)", g->name, d, reach, reach, g->n[d], size_name);
}

void stn_field_alloc(stn_field *f, const char *name, stn_type type, stn_grid *g)
{
  size_t es = stn_type_size(type);
  size_t bytes = (g->size * es + STN_ALIGN - 1) / STN_ALIGN * STN_ALIGN;
  f->name = name;
  f->type = type;
  f->grid = g;
  f->mem = aligned_alloc(STN_ALIGN, bytes);
  if (!f->mem)
    stn_fatal("cannot allocate %.2f GiB for field '%s' on grid %s; reduce the grid size",
              (double)bytes / (1 << 30), name, g->name);
  long off = 0;
  for (int d = 0; d < g->rank; d++)
    off += g->pad_lo[d] * g->stride[d];
  f->origin = (char *)f->mem + (size_t)off * es;
}

void stn_field_fill_halo(stn_field *f, double (*value)(long i, long j, long k))
{
  const stn_grid *g = f->grid;
  long lo[STN_MAX_RANK] = { 0, 0, 0 }, hi[STN_MAX_RANK] = { 1, 1, 1 }, n[STN_MAX_RANK] = { 1, 1, 1 };
  long st[STN_MAX_RANK] = { 0, 0, 0 };
  for (int d = 0; d < g->rank; d++) { /* the halo only: padding is never read */
    lo[d] = -g->halo_lo[d];
    hi[d] = g->n[d] + g->halo_hi[d];
    n[d] = g->n[d];
    st[d] = g->stride[d];
  }
  for (long i = lo[0]; i < hi[0]; i++)
    for (long j = lo[1]; j < hi[1]; j++)
      for (long k = lo[2]; k < hi[2]; k++) {
        if (i >= 0 && i < n[0] && j >= 0 && j < n[1] && k >= 0 && k < n[2])
          continue;
        /* the ghost point's global indices (a distributed run's ghost points
         * between ranks are overwritten by the exchange; along a periodic
         * dimension a read wraps, so the value there is the wrapped point's) */
        long x[STN_MAX_RANK] = { i, j, k };
        for (int d = 0; d < g->rank; d++) {
          x[d] += g->global_lo[d];
          if (g->wrap[d])
            x[d] = (x[d] % g->global_n[d] + g->global_n[d]) % g->global_n[d];
        }
        double v = value(x[0], x[1], x[2]);
        long c = i * st[0] + j * st[1] + k * st[2];
        if (f->type == STN_INT)
          ((int *)f->origin)[c] = (int)v;
        else if (f->type == STN_FLOAT)
          ((float *)f->origin)[c] = (float)v;
        else
          ((double *)f->origin)[c] = v;
      }
}

void stn_field_swap(stn_field *a, stn_field *b)
{
  void *m = a->mem, *o = a->origin;
  unsigned long w = a->wseq;
  int h = a->halo_ok;
  const void *rim = a->rim;
  a->mem = b->mem;
  a->origin = b->origin;
  a->wseq = b->wseq;
  a->halo_ok = b->halo_ok;
  a->rim = b->rim;
  b->mem = m;
  b->origin = o;
  b->wseq = w;
  b->halo_ok = h;
  b->rim = rim;
}

void stn_check_box(const char *kernel, const stn_grid *g, const long *lo, const long *hi)
{
  for (int d = 0; d < g->rank; d++)
    if (lo[d] < 0 || hi[d] > g->global_n[d] || lo[d] > hi[d])
      stn_fatal("kernel %s: its box [%ld, %ld) along dimension %d does not fit grid %s of size %ld; "
                "check the box bounds and the params that set them", kernel, lo[d], hi[d], d, g->name, g->global_n[d]);
}

static int ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Element c (relative to the origin) of f as a double. */
static double value_at(const stn_field *f, long c)
{
  if (f->type == STN_INT)
    return ((const int *)f->origin)[c];
  if (f->type == STN_FLOAT)
    return ((const float *)f->origin)[c];
  return ((const double *)f->origin)[c];
}

/* ---- images --------------------------------------------------------------
 * Colormaps as anchor colours at equal steps, interpolated linearly:
 * viridis (perceptually uniform; matplotlib's default), gray, and
 * coolwarm (diverging, Moreland's). */
static const unsigned char viridis[11][3] = {
  { 68, 1, 84 }, { 72, 36, 117 }, { 65, 68, 135 }, { 53, 95, 141 }, { 42, 120, 142 }, { 33, 145, 140 },
  { 34, 168, 132 }, { 68, 191, 112 }, { 122, 209, 81 }, { 189, 223, 38 }, { 253, 231, 37 },
};
static const unsigned char coolwarm[5][3] = {
  { 59, 76, 192 }, { 124, 159, 249 }, { 221, 221, 221 }, { 245, 156, 125 }, { 180, 4, 38 },
};

static void colour(const char *map, double t, unsigned char rgb[3])
{
  const unsigned char (*tab)[3] = viridis;
  int n = 11;
  if (strcmp(map, "coolwarm") == 0)
    tab = coolwarm, n = 5;
  if (t < 0)
    t = 0;
  if (t > 1)
    t = 1;
  if (strcmp(map, "gray") == 0) {
    rgb[0] = rgb[1] = rgb[2] = (unsigned char)lround(255 * t);
    return;
  }
  double x = t * (n - 1);
  int a = (int)x;
  if (a >= n - 1)
    a = n - 2;
  double w = x - a;
  for (int c = 0; c < 3; c++)
    rgb[c] = (unsigned char)lround((1 - w) * tab[a][c] + w * tab[a + 1][c]);
}

#ifdef STN_HAVE_PNG
/* The plane an image shows: rows (bottom to top) `row_stride` apart, columns contiguous. */
typedef struct plane {
  const stn_field *f;
  long width, height, row_stride, base;
  double lo, hi;
  const char *map, *path;
  char comment[512];
} plane;

/* libpng reports errors by longjmp: this function keeps no state of its
 * own across it, and an error stops the program. */
static void emit_png(FILE *fp, const plane *pl, unsigned char *row)
{
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info)
    write_fail("cannot write field '%s' to '%s': out of memory", pl->f->name, pl->path);
  if (setjmp(png_jmpbuf(png)))
    write_fail("cannot write field '%s' to '%s': libpng failed (is the disk full?)", pl->f->name, pl->path);
  png_init_io(png, fp);
  png_set_IHDR(png, info, (png_uint_32)pl->width, (png_uint_32)pl->height, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_text text[2];
  memset(text, 0, sizeof text);
  text[0].compression = text[1].compression = PNG_TEXT_COMPRESSION_NONE;
  text[0].key = (char *)"Software";
  text[0].text = (char *)"stencilc";
  text[1].key = (char *)"Comment";
  text[1].text = (char *)pl->comment;
  png_set_text(png, info, text, 2);
  png_write_info(png, info);
  double span = pl->hi != pl->lo ? pl->hi - pl->lo : 1;
  for (long r = pl->height - 1; r >= 0; r--) { /* the top row first: index 0 at the bottom */
    for (long x = 0; x < pl->width; x++) {
      double v = value_at(pl->f, pl->base + r * pl->row_stride + x);
      unsigned char *px = row + 3 * x;
      if (isnan(v))
        px[0] = 255, px[1] = 0, px[2] = 255;
      else
        colour(pl->map, (v - pl->lo) / span, px);
    }
    png_write_row(png, row);
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
}

static void write_png(const stn_field *f, const char *path, double lo, double hi, const char *map)
{
  const stn_grid *g = f->grid;
  plane pl = { .f = f, .map = map, .path = path };
  char slice[64] = "";
  if (g->rank == 1) {
    pl.width = g->n[0], pl.height = 1;
  } else if (g->rank == 2) {
    pl.width = g->n[1], pl.height = g->n[0], pl.row_stride = g->stride[0];
  } else {
    long mid = g->n[0] / 2;
    pl.base = mid * g->stride[0];
    pl.width = g->n[2], pl.height = g->n[1], pl.row_stride = g->stride[1];
    snprintf(slice, sizeof slice, "; the plane i = %ld of %ld", mid, g->n[0]);
  }
  if (isnan(lo) || isnan(hi)) {
    lo = INFINITY, hi = -INFINITY;
    for (long r = 0; r < pl.height; r++)
      for (long x = 0; x < pl.width; x++) {
        double v = value_at(f, pl.base + r * pl.row_stride + x);
        if (v < lo)
          lo = v;
        if (v > hi)
          hi = v;
      }
    if (lo > hi)
      lo = hi = 0; /* all NaN */
  }
  pl.lo = lo, pl.hi = hi;
  snprintf(pl.comment, sizeof pl.comment, "field %s: values %.9g (first colour) to %.9g (last colour), colormap %s%s",
           f->name, lo, hi, map, slice);
  FILE *fp = fopen(path, "wb");
  if (!fp)
    write_fail("cannot write field '%s' to '%s': %s", f->name, path, strerror(errno));
  unsigned char *row = malloc((size_t)pl.width * 3);
  if (!row) {
    fclose(fp);
    write_fail("cannot write field '%s' to '%s': out of memory", f->name, path);
  }
  emit_png(fp, &pl, row);
  free(row);
  if (fclose(fp) != 0)
    write_fail("cannot write field '%s' to '%s': %s", f->name, path, strerror(errno));
}
#endif

void stn_field_write_image(const stn_field *f, const char *path, double lo, double hi, const char *colormap)
{
  jmp_buf jb, *prev = write_guard;
  if (setjmp(jb)) {
    write_guard = prev;
    return;
  }
  write_guard = &jb;
  stn_field_write_image_now(f, path, lo, hi, colormap);
  write_guard = prev;
}

static void stn_field_write_image_now(const stn_field *f, const char *path, double lo, double hi, const char *colormap)
{
  if (!ends_with(path, ".png"))
    write_fail("cannot write field '%s' to '%s' as an image: the name must end in .png", f->name, path);
#ifdef STN_HAVE_PNG
  write_png(f, path, lo, hi, colormap);
#else
  (void)lo, (void)hi, (void)colormap;
  write_fail("cannot write field '%s' to '%s': this stencilc runtime was built without libpng; install it "
            "(apt-get install libpng-dev) and rebuild stencilc with make, or write a .npy or .vtk file", f->name, path);
#endif
}

/* Legacy VTK: an ASCII header, then the points big-endian, x fastest. */
static void write_vtk_header(FILE *fp, const stn_field *f)
{
  const stn_grid *g = f->grid;
  long dims[3] = { 1, 1, 1 };
  for (int d = 0; d < g->rank; d++)
    dims[d] = g->n[g->rank - 1 - d];
  fprintf(fp, "# vtk DataFile Version 3.0\nstencilc field %s\nBINARY\nDATASET STRUCTURED_POINTS\n", f->name);
  fprintf(fp, "DIMENSIONS %ld %ld %ld\nORIGIN 0 0 0\nSPACING 1 1 1\nPOINT_DATA %ld\n", dims[0], dims[1], dims[2],
          dims[0] * dims[1] * dims[2]);
  fprintf(fp, "SCALARS %s %s 1\nLOOKUP_TABLE default\n", f->name,
          f->type == STN_INT ? "int" : f->type == STN_FLOAT ? "float" : "double");
}

static void write_points(FILE *fp, const stn_field *f)
{
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long n0 = g->n[0], n1 = g->rank > 1 ? g->n[1] : 1, n2 = g->rank > 2 ? g->n[2] : 1;
  long s0 = g->stride[0], s1 = g->rank > 1 ? g->stride[1] : 0;
  long row = g->n[g->rank - 1];
  if (g->rank == 1) {
    n0 = 1;
    s0 = 0;
  } else if (g->rank == 2) {
    n1 = g->n[0];
    s1 = g->stride[0];
    n0 = 1;
    s0 = 0;
  }
  (void)n2;
  for (long i = 0; i < n0; i++)
    for (long j = 0; j < n1; j++) {
      const char *src = (const char *)f->origin + (size_t)(i * s0 + j * s1) * es;
      if (fwrite(src, es, (size_t)row, fp) != (size_t)row)
        write_fail("cannot write field '%s': %s", f->name, strerror(errno));
    }
}

static void write_points_big_endian(FILE *fp, const stn_field *f)
{
  const stn_grid *g = f->grid;
  size_t es = stn_type_size(f->type);
  long n0 = g->rank == 3 ? g->n[0] : 1, n1 = g->rank >= 2 ? g->n[g->rank - 2] : 1, row = g->n[g->rank - 1];
  long s0 = g->rank == 3 ? g->stride[0] : 0, s1 = g->rank >= 2 ? g->stride[g->rank - 2] : 0;
  unsigned char *buf = malloc((size_t)row * es);
  if (!buf)
    stn_fatal("out of memory writing field '%s'", f->name);
  for (long i = 0; i < n0; i++)
    for (long j = 0; j < n1; j++) {
      const unsigned char *src = (const unsigned char *)f->origin + (size_t)(i * s0 + j * s1) * es;
      const unsigned one = 1;
      int little = *(const unsigned char *)&one == 1;
      for (long x = 0; x < row; x++)
        for (size_t b = 0; b < es; b++)
          buf[(size_t)x * es + b] = src[(size_t)x * es + (little ? es - 1 - b : b)];
      if (fwrite(buf, es, (size_t)row, fp) != (size_t)row)
        write_fail("cannot write field '%s': %s", f->name, strerror(errno));
    }
  free(buf);
}

static void write_h5_now(const stn_field *f, const char *path)
{
  size_t bytes = stn_type_size(f->type);
  for (int d = 0; d < f->grid->rank; d++)
    bytes *= (size_t)f->grid->n[d];
  void *dense = malloc(bytes + 1);
  if (!dense)
    write_fail("cannot write field '%s' to '%s': out of memory", f->name, path);
  stn_field_get(f, dense);
  const char *why = "";
  int ok = stn_h5_write(f, path, dense, &why);
  free(dense);
  if (!ok)
    write_fail("cannot write field '%s' to '%s': %s", f->name, path, why);
}

void stn_field_write(const stn_field *f, const char *path)
{
  if (ends_with(path, ".png")) {
    stn_field_write_image(f, path, NAN, NAN, "viridis");
    return;
  }
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) {
    jmp_buf jb, *prev = write_guard;
    if (setjmp(jb)) {
      write_guard = prev;
      return;
    }
    write_guard = &jb;
    write_h5_now(f, path);
    write_guard = prev;
    return;
  }
  static FILE *fp; /* static: kept across the guard's longjmp */
  jmp_buf jb, *prev = write_guard;
  if (setjmp(jb)) {
    if (fp)
      fclose(fp);
    fp = NULL;
    write_guard = prev;
    return;
  }
  write_guard = &jb;
  fp = fopen(path, "wb");
  if (!fp)
    write_fail("cannot write field '%s' to '%s': %s", f->name, path, strerror(errno));
  size_t len = strlen(path);
  if (len >= 4 && strcmp(path + len - 4, ".npy") == 0) {
    const stn_grid *g = f->grid;
    char shape[128];
    int n = 0;
    for (int d = 0; d < g->rank; d++)
      n += snprintf(shape + n, sizeof shape - (size_t)n, "%ld,%s", g->n[d], g->rank == 1 || d < g->rank - 1 ? " " : "");
    char dict[256];
    const char *descr = f->type == STN_INT ? "<i4" : f->type == STN_FLOAT ? "<f4" : "<f8";
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    int total = 10 + dl + 1;
    int pad = (64 - total % 64) % 64;
    unsigned short hlen = (unsigned short)(dl + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    unsigned char h[2] = { (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8) };
    fwrite(h, 1, 2, fp);
    fwrite(dict, 1, (size_t)dl, fp);
    for (int i = 0; i < pad; i++)
      fputc(' ', fp);
    fputc('\n', fp);
  }
  if (ends_with(path, ".vtk")) {
    write_vtk_header(fp, f);
    write_points_big_endian(fp, f);
  } else {
    write_points(fp, f);
  }
  FILE *done = fp;
  fp = NULL;
  if (fclose(done) != 0)
    write_fail("cannot write field '%s' to '%s': %s", f->name, path, strerror(errno));
  write_guard = prev;
}

int stn_save_requested(const char *field)
{
  for (int i = 0; i < nsaves; i++)
    if (strcmp(saves[i].field, field) == 0)
      return 1;
  return 0;
}

int stn_save_request(int i, const char **field, const char **path)
{
  if (i < 0 || i >= nsaves)
    return 0;
  *field = saves[i].field;
  *path = saves[i].path;
  return 1;
}

void stn_save_clear(void)
{
  for (int s = 0; s < nsaves; s++)
    free((void *)saves[s].field);
  free(saves);
  saves = NULL;
  nsaves = 0;
}

void stn_finish(stn_program *p)
{
  stn_ckpt_finish();
  stn_prof_report(p);
  for (int s = 0; s < nsaves; s++) {
    for (int i = 0; i < p->nfields; i++)
      if (strcmp(p->fields[i]->name, saves[s].field) == 0)
        stn_field_write(p->fields[i], saves[s].path);
    free((void *)saves[s].field);
  }
  free(saves);
  saves = NULL;
  nsaves = 0;
  for (int i = 0; i < p->nfields; i++) {
    free(p->fields[i]->mem);
    p->fields[i]->mem = p->fields[i]->origin = NULL;
  }
  if (write_errors) {
    fprintf(stderr, "error: %d write%s failed (above); everything else was written\n", write_errors,
            write_errors == 1 ? "" : "s");
    exit(1);
  }
}

int stn_write_errors(void) { return write_errors; }

void stn_print_check(double v, const char *label, int line)
{
  static unsigned char warned[1024];
  if (isfinite(v) || stn_dist.rank != 0 || warned[line & 1023])
    return;
  warned[line & 1023] = 1;
  fprintf(stderr, "warning: the print at line %d shows %s for '%s': not a finite number (an overflow, a division by zero, "
                  "or a timer that measured 0 s); later prints of that line are not warned about\n",
          line, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf", label);
}

void stn_check_params(const stn_program *p, const char *who)
{
  for (int i = 0; i < p->nparams; i++) {
    const stn_param *q = &p->params[i];
    if (!q->has_lo && !q->has_hi)
      continue;
    double v = q->type == STN_INT ? *(const int *)q->addr : q->type == STN_FLOAT ? *(const float *)q->addr
                                                                                 : *(const double *)q->addr;
    if ((q->has_lo && v < q->lo) || (q->has_hi && v > q->hi)) {
      char r[160];
      range_text(r, sizeof r, q);
      stn_fatal("%s: param %s is %.12g, but must be in %s (bounds included)", who, q->name, v, r);
    }
  }
}
