/* stn_io.c: data in and out of generated programs (see stn.h): fields
 * read from .npy, raw, .png and .h5 files (`read`, --load), HDF5 output
 * with an XDMF file beside it, ParaView series of numbered files, and
 * checkpoint/restart (--checkpoint, --restart). Every reader works on a
 * box of the global grid, so a distributed run's ranks each read their
 * own part of the same file. */
#define _GNU_SOURCE
#include "stn.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef STN_HAVE_PNG
#include <png.h>
#endif
#ifdef STN_HAVE_HDF5
#include <hdf5.h>
#endif

stn_field_ops stn_field_io = { stn_field_get, stn_field_set, malloc, free, NULL, NULL, NULL };

static int ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *type_name(stn_type t) { return t == STN_INT ? "int" : t == STN_FLOAT ? "float" : "double"; }

/* "64 x 64" */
static void shape_text(char *buf, size_t len, int rank, const long *n)
{
  int k = 0;
  buf[0] = 0;
  for (int d = 0; d < rank && k < (int)len; d++)
    k += snprintf(buf + k, len - (size_t)k, "%s%ld", d ? " x " : "", n[d]);
}

/* A note on stderr, once per process (rank 0 of a distributed run). */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
  if (stn_dist.rank != 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  fputs("note: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* ==== reading ===============================================================
 * What a file holds: the element type, its shape, where the data starts. */
typedef enum { E_F4, E_F8, E_I4, E_I8, E_U1, E_B1 } elem;
typedef struct source {
  const char *path;
  int big_endian;
  elem e;
  size_t es;
  int rank;
  long shape[STN_MAX_RANK + 1];
  off_t data;                  /* byte offset of element 0 */
  off_t size;                  /* the file's size */
  const char *dtype;           /* as the file names it */
} source;

static const char *elem_name(elem e)
{
  static const char *names[] = { "float32", "float64", "int32", "int64", "uint8", "bool" };
  return names[e];
}

/* The .npy header: magic, version, a Python dict with descr, fortran_order
 * and shape. */
static void npy_header(FILE *fp, source *s, const char *field)
{
  unsigned char m[10];
  if (fread(m, 1, 10, fp) != 10 || memcmp(m, "\x93NUMPY", 6) != 0)
    stn_fatal("%s: not a .npy file (no \\x93NUMPY magic at the start); reading field '%s'", s->path, field);
  size_t hlen;
  off_t start;
  if (m[6] == 1) {
    hlen = (size_t)m[8] | (size_t)m[9] << 8;
    start = 10;
  } else if (m[6] == 2 || m[6] == 3) {
    unsigned char x[2];
    if (fread(x, 1, 2, fp) != 2)
      stn_fatal("%s: truncated .npy header; reading field '%s'", s->path, field);
    hlen = (size_t)m[8] | (size_t)m[9] << 8 | (size_t)x[0] << 16 | (size_t)x[1] << 24;
    start = 12;
  } else {
    stn_fatal("%s: .npy format version %d.%d is not one stencilc reads (1.0, 2.0, 3.0)", s->path, m[6], m[7]);
  }
  char *h = malloc(hlen + 1);
  if (!h || fread(h, 1, hlen, fp) != hlen)
    stn_fatal("%s: truncated .npy header; reading field '%s'", s->path, field);
  h[hlen] = 0;
  s->data = start + (off_t)hlen;
  const char *d = strstr(h, "'descr'");
  char descr[16] = "";
  if (d && (d = strchr(d + 7, '\'')))
    sscanf(d + 1, "%15[^']", descr);
  static const struct { const char *d; elem e; int big; } known[] = {
    { "<f4", E_F4, 0 }, { "<f8", E_F8, 0 }, { "<i4", E_I4, 0 }, { "<i8", E_I8, 0 }, { "|u1", E_U1, 0 },
    { "|b1", E_B1, 0 }, { ">f4", E_F4, 1 }, { ">f8", E_F8, 1 }, { ">i4", E_I4, 1 }, { ">i8", E_I8, 1 },
    { "|i1", E_U1, 0 },
  };
  int found = 0;
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
    if (strcmp(descr, known[k].d) == 0) {
      s->e = known[k].e;
      s->big_endian = known[k].big;
      found = 1;
    }
  if (!found || strcmp(descr, "|i1") == 0)
    stn_fatal("%s: dtype '%s' cannot be read into field '%s'; stencilc reads float32 (<f4), float64 (<f8), int32 "
              "(<i4), int64 (<i8), uint8 and bool arrays (convert with numpy: a.astype('<f8'))", s->path, descr, field);
  if (strstr(h, "'fortran_order': True"))
    stn_fatal("%s: the array is in Fortran order; stencilc reads C order (numpy: np.save(path, "
              "np.ascontiguousarray(a)))", s->path);
  const char *sh = strstr(h, "'shape'");
  sh = sh ? strchr(sh, '(') : NULL;
  if (!sh)
    stn_fatal("%s: the .npy header has no shape", s->path);
  s->rank = 0;
  for (sh++; *sh && *sh != ')';) {
    char *end;
    long v = strtol(sh, &end, 10);
    if (end == sh) {
      sh++;
      continue;
    }
    if (s->rank == STN_MAX_RANK + 1)
      stn_fatal("%s: the array has more than %d dimensions", s->path, STN_MAX_RANK + 1);
    s->shape[s->rank++] = v;
    sh = end;
  }
  free(h);
  s->dtype = descr[0] ? strdup(descr) : "?";
}

static size_t elem_size(elem e) { return e == E_F8 || e == E_I8 ? 8 : e == E_U1 || e == E_B1 ? 1 : 4; }

/* Reads and converts count elements at offset to dst (type t); returns
 * the first non-finite element (or -1) and the first that does not fit. */
static void convert(const source *s, const unsigned char *raw, long count, stn_type t, void *dst, long *bad_nan,
                    long *bad_fit)
{
  for (long x = 0; x < count; x++) {
    unsigned char b[8];
    memcpy(b, raw + (size_t)x * s->es, s->es);
    if (s->big_endian)
      for (size_t k = 0; k < s->es / 2; k++) {
        unsigned char c = b[k];
        b[k] = b[s->es - 1 - k];
        b[s->es - 1 - k] = c;
      }
    double v;
    int64_t iv = 0;
    int isint = 1;
    switch (s->e) {
    case E_F4: { float f; memcpy(&f, b, 4); v = f; isint = 0; break; }
    case E_F8: memcpy(&v, b, 8); isint = 0; break;
    case E_I4: { int32_t i; memcpy(&i, b, 4); iv = i; v = (double)i; break; }
    case E_I8: memcpy(&iv, b, 8); v = (double)iv; break;
    default: iv = b[0]; v = b[0]; break;
    }
    if (!isfinite(v)) {
      if (*bad_nan < 0)
        *bad_nan = x;
    }
    if (t == STN_INT) {
      if (isint ? (iv < INT32_MIN || iv > INT32_MAX) : (v != floor(v) || v < INT32_MIN || v > INT32_MAX)) {
        if (*bad_fit < 0)
          *bad_fit = x;
        ((int *)dst)[x] = 0;
      } else {
        ((int *)dst)[x] = isint ? (int)iv : (int)v;
      }
    } else if (t == STN_FLOAT) {
      ((float *)dst)[x] = (float)v;
    } else {
      ((double *)dst)[x] = v;
    }
  }
}

/* "[2, 5]": the global index of element x of the box lo + (extent n). */
static void index_text(char *buf, size_t len, int rank, const long *lo, const long *n, long x)
{
  long idx[STN_MAX_RANK];
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = lo[d] + x % n[d];
    x /= n[d];
  }
  int k = snprintf(buf, len, "[");
  for (int d = 0; d < rank; d++)
    k += snprintf(buf + k, len - (size_t)k, "%s%ld", d ? ", " : "", idx[d]);
  snprintf(buf + k, len - (size_t)k, "]");
}

typedef struct box {
  int rank;
  long glob[STN_MAX_RANK];     /* the whole grid */
  long lo[STN_MAX_RANK], n[STN_MAX_RANK];  /* this process's part */
} box;

static box box_of(const stn_field *f)
{
  box b = { .rank = f->grid->rank };
  for (int d = 0; d < b.rank; d++) {
    b.glob[d] = f->grid->global_n[d];
    b.lo[d] = f->grid->global_lo[d];
    b.n[d] = f->grid->n[d];
  }
  return b;
}

static long box_points(const box *b)
{
  long p = 1;
  for (int d = 0; d < b->rank; d++)
    p *= b->n[d];
  return p;
}

/* The shape a read expects: [ncomp,] the grid's; the file's must equal it. */
static void check_shape(const source *s, const box *b, const stn_field *f, const stn_read_opts *o)
{
  long want[STN_MAX_RANK + 1];
  int wr = 0;
  if (o && o->ncomp)
    want[wr++] = o->ncomp;
  for (int d = 0; d < b->rank; d++)
    want[wr++] = b->glob[d];
  int same = wr == s->rank;
  for (int d = 0; same && d < wr; d++)
    same = want[d] == s->shape[d];
  if (!same) {
    char w[96], h[96];
    shape_text(w, sizeof w, wr, want);
    shape_text(h, sizeof h, s->rank, s->shape);
    stn_fatal("%s: field '%s' %sis %s, but the file holds %s%s", s->path, f->name,
              o && o->ncomp ? "(every component) " : "", w, s->rank ? h : "a single value",
              o && o->ncomp ? "; a field of components is read from an array [components, grid...]" : "");
  }
}

/* The first value of box b that does not fit an int field, or the first
 * of nans non-finite ones where the read does not allow them: an error. */
static void values_fail(const char *path, const stn_field *f, const box *b, const stn_read_opts *o, long first_fit,
                        long first_nan, long nans)
{
  char at[96];
  if (first_fit >= 0) {
    index_text(at, sizeof at, b->rank, b->lo, b->n, first_fit);
    stn_fatal("%s: the value at %s does not fit in int field '%s' (a fraction, or out of range)", path, at, f->name);
  }
  if (first_nan >= 0 && !(o && o->allow_nonfinite)) {
    index_text(at, sizeof at, b->rank, b->lo, b->n, first_nan);
    stn_fatal("%s: %ld value%s of field '%s' %s not finite (the first at %s); the program does not allow NaN or inf "
              "in it (`read ... nonfinite(allow)` would)", path, nans, nans == 1 ? "" : "s", f->name,
              nans == 1 ? "is" : "are", at);
  }
}

/* Reads box b of source s (element offset comp_base) into dense (f's
 * type, C order), checking values. */
static void read_box(FILE *fp, const source *s, const box *b, long comp, const stn_field *f,
                     const stn_read_opts *o, void *dense)
{
  long row = b->n[b->rank - 1];
  long rows = box_points(b) / (row ? row : 1);
  size_t fes = s->es, tes = stn_type_size(f->type);
  unsigned char *raw = malloc((size_t)row * fes + 1);
  if (!raw)
    stn_fatal("out of memory reading '%s'", s->path);
  long first_nan = -1, first_fit = -1, nans = 0;
  off_t pos = -1;
  for (long r = 0; r < rows; r++) {
    /* the row's first element in the file */
    long idx[STN_MAX_RANK] = { 0 }, rr = r;
    for (int d = b->rank - 2; d >= 0; d--) {
      idx[d] = b->lo[d] + rr % b->n[d];
      rr /= b->n[d];
    }
    idx[b->rank - 1] = b->lo[b->rank - 1];
    long e = comp;
    for (int d = 0; d < b->rank; d++)
      e = e * b->glob[d] + idx[d];
    off_t at = s->data + (off_t)e * (off_t)fes;
    if (at != pos && fseeko(fp, at, SEEK_SET) != 0)
      stn_fatal("%s: cannot seek: %s", s->path, strerror(errno));
    if (fread(raw, fes, (size_t)row, fp) != (size_t)row)
      stn_fatal("%s: cannot read: %s", s->path, ferror(fp) ? strerror(errno) : "the file ended early");
    pos = at + (off_t)row * (off_t)fes;
    long bn = -1, bf = -1;
    convert(s, raw, row, f->type, (char *)dense + (size_t)r * (size_t)row * tes, &bn, &bf);
    if (bn >= 0) {
      if (first_nan < 0)
        first_nan = r * row + bn;
      for (long x = bn; x < row; x++) {
        double v = f->type == STN_FLOAT ? ((float *)dense)[r * row + x] : f->type == STN_DOUBLE ? ((double *)dense)[r * row + x] : 0;
        nans += !isfinite(v);
      }
    }
    if (bf >= 0 && first_fit < 0)
      first_fit = r * row + bf;
  }
  free(raw);
  values_fail(s->path, f, b, o, first_fit, first_nan, nans);
}

static void check_size(const source *s, const box *b, const stn_field *f, const stn_read_opts *o)
{
  long total = o && o->ncomp ? o->ncomp : 1;
  for (int d = 0; d < b->rank; d++)
    total *= b->glob[d];
  off_t need = s->data + (off_t)total * (off_t)s->es;
  if (s->size < need)
    stn_fatal("%s: truncated: %ld values of %zu bytes need %lld bytes after the %lld-byte header, but the file has "
              "%lld; reading field '%s'", s->path, total, s->es, (long long)(need - s->data), (long long)s->data,
              (long long)(s->size - s->data), f->name);
}

#ifdef STN_HAVE_PNG
/* An image's gray values (0..1, luminance of sRGB: 0.2126 R + 0.7152 G +
 * 0.0722 B; alpha is ignored), row 0 at the top. */
static double *png_gray(const char *path, long *width, long *height)
{
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path))
    stn_fatal("%s: cannot read the image: %s", path, img.message);
  img.format = PNG_FORMAT_RGB;
  unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
  if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL))
    stn_fatal("%s: cannot read the image: %s", path, px ? img.message : "out of memory");
  *width = img.width;
  *height = img.height;
  double *g = malloc(sizeof(double) * img.width * img.height);
  if (!g)
    stn_fatal("%s: out of memory", path);
  for (size_t x = 0; x < (size_t)img.width * img.height; x++)
    g[x] = (0.2126 * px[3 * x] + 0.7152 * px[3 * x + 1] + 0.0722 * px[3 * x + 2]) / 255.0;
  free(px);
  png_image_free(&img);
  return g;
}
#endif

static void read_png(const stn_field *f, const char *path, const stn_read_opts *o, void *dense, int check_only)
{
#ifdef STN_HAVE_PNG
  box b = box_of(f);
  if (b.rank > 2)
    stn_fatal("%s: an image can only be read into a 1-D or 2-D field; '%s' is 3-D (use .npy or .h5)", path, f->name);
  if (o && o->ncomp)
    stn_fatal("%s: an image holds one value per point; read one component of '%s' from it", path, f->name);
  long w, h;
  double *g = png_gray(path, &w, &h);
  long want_w = b.glob[b.rank - 1], want_h = b.rank == 2 ? b.glob[0] : 1;
  if (w != want_w || h != want_h) {
    char grid[64];
    shape_text(grid, sizeof grid, b.rank, b.glob);
    stn_fatal("%s: the image is %ld x %ld pixels (width x height), but field '%s' (%s) needs %ld x %ld: one pixel "
              "per point, dimension %d across", path, w, h, f->name, grid, want_w, want_h, b.rank - 1);
  }
  if (!check_only) {
    double lo = o ? o->lo : 0, hi = o ? o->hi : 1;
    long rows = b.rank == 2 ? b.n[0] : 1, cols = b.n[b.rank - 1];
    for (long r = 0; r < rows; r++)
      for (long c = 0; c < cols; c++) {
        long gi = b.rank == 2 ? b.lo[0] + r : 0, gj = b.lo[b.rank - 1] + c;
        double gray = g[(h - 1 - gi) * w + gj]; /* i = 0 is the bottom row */
        double v = o && o->threshold_set ? (gray < o->threshold ? 1.0 : 0.0) : lo + gray * (hi - lo);
        long x = r * cols + c;
        if (f->type == STN_INT)
          ((int *)dense)[x] = (int)lround(v);
        else if (f->type == STN_FLOAT)
          ((float *)dense)[x] = (float)v;
        else
          ((double *)dense)[x] = v;
      }
  }
  free(g);
#else
  (void)o, (void)dense, (void)check_only;
  stn_fatal("%s: this stencilc runtime was built without libpng, so it cannot read images into field '%s'; install "
            "it (apt-get install libpng-dev) and rebuild stencilc with make", path, f->name);
#endif
}

#ifdef STN_HAVE_HDF5
static void read_h5(const stn_field *f, const char *path, const stn_read_opts *o, void *dense, int check_only);
#endif

/* Reads (or, check_only, checks) this process's part of f from path. */
static void read_field(const stn_field *f, const char *path, const stn_read_opts *o, void *dense, int check_only)
{
  int collective = stn_fatal_collective;
  stn_fatal_collective = 1; /* every rank meets the same file */
  if (ends_with(path, ".png")) {
    read_png(f, path, o, dense, check_only);
    stn_fatal_collective = collective;
    return;
  }
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5") || strstr(path, ".h5:")) {
#ifdef STN_HAVE_HDF5
    read_h5(f, path, o, dense, check_only);
    stn_fatal_collective = collective;
    return;
#else
    stn_fatal("%s: this stencilc runtime was built without HDF5, so it cannot read field '%s' from it; install "
              "libhdf5-dev and rebuild stencilc with make (or use .npy)", path, f->name);
#endif
  }
  if (ends_with(path, ".vtk"))
    stn_fatal("%s: stencilc writes .vtk files but does not read them; read field '%s' from .npy, .h5, a .png or raw "
              "binary", path, f->name);
  FILE *fp = fopen(path, "rb");
  if (!fp)
    stn_fatal("cannot read field '%s' from '%s': %s", f->name, path, strerror(errno));
  struct stat st;
  source s = { .path = path };
  s.size = fstat(fileno(fp), &st) == 0 ? st.st_size : 0;
  box b = box_of(f);
  if (ends_with(path, ".npy")) {
    npy_header(fp, &s, f->name);
    s.es = elem_size(s.e);
    check_shape(&s, &b, f, o);
    check_size(&s, &b, f, o);
    stn_type want = f->type;
    int same = (want == STN_FLOAT && s.e == E_F4) || (want == STN_DOUBLE && s.e == E_F8) ||
               (want == STN_INT && s.e == E_I4);
    static const char *said;
    if (!same && !check_only && (!said || strcmp(said, path) != 0)) {
      note("%s holds %s values (%s); converted to %s for field '%s'", path, elem_name(s.e), s.dtype,
           type_name(want), f->name);
      said = path;
    }
  } else {
    /* raw: the points in C order, the field's own type, no header */
    s.e = f->type == STN_INT ? E_I4 : f->type == STN_FLOAT ? E_F4 : E_F8;
    s.es = stn_type_size(f->type);
    long total = o && o->ncomp ? o->ncomp : 1;
    for (int d = 0; d < b.rank; d++)
      total *= b.glob[d];
    if (s.size != (off_t)total * (off_t)s.es) {
      char grid[64];
      shape_text(grid, sizeof grid, b.rank, b.glob);
      stn_fatal("%s: a raw file for field '%s' (%s%s, %s) must have %lld bytes, but it has %lld (raw files hold "
                "the points in C order with no header; .npy files say their shape and type)", path, f->name,
                o && o->ncomp ? "every component, " : "", grid, type_name(f->type),
                (long long)total * (long long)s.es, (long long)s.size);
    }
  }
  stn_fatal_collective = collective;
  if (!check_only)
    read_box(fp, &s, &b, o && o->ncomp ? o->comp : 0, f, o, dense);
  fclose(fp);
}

/* The whole read, values checked too (NaN, ints that do not fit), with
 * the data thrown away: the errors come before any computation. */
void stn_check_input(const char *what, const stn_field *f, const char *path, const stn_read_opts *o)
{
  (void)what;
  box b = box_of(f);
  void *dense = malloc((size_t)box_points(&b) * stn_type_size(f->type) + 1);
  if (!dense)
    stn_fatal("out of memory checking field '%s''s file '%s'", f->name, path);
  read_field(f, path, o, dense, 0);
  free(dense);
}

void stn_field_read(stn_field *f, const char *path, const stn_read_opts *o)
{
  box b = box_of(f);
  void *dense = malloc((size_t)box_points(&b) * stn_type_size(f->type) + 1);
  if (!dense)
    stn_fatal("out of memory reading field '%s' from '%s'", f->name, path);
  read_field(f, path, o, dense, 0);
  stn_field_io.set(f, dense);
  free(dense);
}

/* ---- --load=FIELD=PATH ------------------------------------------------------ */
typedef struct load_req { char *field; const char *path; } load_req;
static load_req *loads;
static int nloads;

/* "f[3]" -> "f" and 3; "u" -> "u" and -1 */
static int base_name(const char *name, char *base, size_t len)
{
  const char *br = strchr(name, '[');
  size_t n = br ? (size_t)(br - name) : strlen(name);
  snprintf(base, len, "%.*s", (int)n, name);
  return br ? atoi(br + 1) : -1;
}

int stn_load_option(const stn_program *p, const char *arg)
{
  if (strncmp(arg, "--load=", 7) != 0)
    return 0;
  const char *spec = arg + 7, *eq = strchr(spec, '=');
  if (!eq || eq == spec || !eq[1])
    stn_fatal("%s: expected --load=FIELD=PATH", arg);
  size_t len = (size_t)(eq - spec);
  int found = 0;
  for (int i = 0; i < p->nfields; i++) {
    char base[256];
    const char *name = p->fields[i]->name;
    base_name(name, base, sizeof base);
    if (strncmp(name, "stn_", 4) == 0)
      continue;
    if ((strlen(name) == len && strncmp(name, spec, len) == 0) || (strlen(base) == len && strncmp(base, spec, len) == 0))
      found = 1;
  }
  if (!found)
    stn_fatal("%s: '%.*s' is not a field of this program (run with --help to list them)", arg, (int)len, spec);
  loads = realloc(loads, sizeof *loads * (size_t)(nloads + 1));
  if (!loads)
    stn_fatal("out of memory");
  loads[nloads].field = strndup(spec, len);
  loads[nloads].path = eq + 1;
  nloads++;
  return 1;
}

const char *stn_load_path(const char *field, const char *path)
{
  for (int i = nloads - 1; i >= 0; i--)
    if (strcmp(loads[i].field, field) == 0)
      return loads[i].path;
  return path;
}

/* Before main's first statement: every --load whose field main does not
 * read itself (`deferred`: "u,f", their reads take the path instead). */
void stn_load_fields(stn_program *p, const char *deferred)
{
  for (int l = 0; l < nloads; l++) {
    char base[256];
    base_name(loads[l].field, base, sizeof base);
    size_t bl = strlen(base);
    int skip = 0;
    for (const char *d = deferred; d && *d;) {
      const char *c = strchr(d, ',');
      size_t n = c ? (size_t)(c - d) : strlen(d);
      if (n == bl && strncmp(d, base, n) == 0)
        skip = 1;
      d = c ? c + 1 : d + n;
    }
    if (skip)
      continue;
    /* a field of components, whole: every component from [ncomp, ...] */
    int ncomp = 0;
    for (int i = 0; i < p->nfields; i++) {
      char b2[256];
      if (base_name(p->fields[i]->name, b2, sizeof b2) >= 0 && strcmp(b2, loads[l].field) == 0)
        ncomp++;
    }
    for (int i = 0; i < p->nfields; i++) {
      char b2[256];
      int q = base_name(p->fields[i]->name, b2, sizeof b2);
      stn_read_opts o = { .hi = 1 };
      if (strcmp(p->fields[i]->name, loads[l].field) == 0) {
        stn_field_read(p->fields[i], loads[l].path, &o);
      } else if (ncomp && q >= 0 && strcmp(b2, loads[l].field) == 0) {
        o.ncomp = ncomp;
        o.comp = q;
        stn_field_read(p->fields[i], loads[l].path, &o);
      }
    }
  }
}

/* ==== HDF5 ==================================================================== */
static const stn_program *the_program;
static long the_step;
long long (*stn_h5_fapl)(void);

void stn_io_program(const stn_program *p) { the_program = p; }
void stn_io_step(long step) { the_step = step; }

#ifdef STN_HAVE_HDF5
/* HDF5 prints its own error stack unless told not to; we say what failed. */
static void h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static hid_t h5_type(stn_type t)
{
  return t == STN_INT ? H5T_NATIVE_INT : t == STN_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

/* The dataset of a field: its name ("f[3]" as "f_3"), or the file's only one. */
static void h5_name(const char *field, char *out, size_t len)
{
  snprintf(out, len, "%s", field);
  for (char *c = out; *c; c++)
    if (*c == '[' || *c == ']')
      *c = *c == '[' ? '_' : 0;
}

static herr_t only_dataset(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
  (void)info;
  H5O_info_t oi;
  if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) >= 0 && oi.type == H5O_TYPE_DATASET) {
    char *found = data;
    if (found[0])
      found[0] = 1; /* more than one: marked by a leading \1 */
    else
      snprintf(found, 256, "%s", name);
  }
  return 0;
}

static void read_h5(const stn_field *f, const char *path, const stn_read_opts *o, void *dense, int check_only)
{
  h5_quiet();
  /* "file.h5:/name" names the dataset */
  char fpath[4096], dsname[256] = "";
  const char *colon = strstr(path, ".h5:");
  if (colon) {
    snprintf(fpath, sizeof fpath, "%.*s", (int)(colon + 3 - path), path);
    snprintf(dsname, sizeof dsname, "%s", colon[4] == '/' ? colon + 5 : colon + 4);
    path = fpath;
  }
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    if (access(path, R_OK) != 0)
      stn_fatal("cannot read field '%s' from '%s': %s", f->name, path, strerror(errno));
    stn_fatal("%s: not an HDF5 file (H5Fopen failed); reading field '%s'", path, f->name);
  }
  char name[256], base[256];
  h5_name(f->name, name, sizeof name);
  base_name(f->name, base, sizeof base);
  const char *ds_name = dsname[0] ? dsname : o && o->ncomp ? base : name;
  hid_t ds = H5Lexists(file, ds_name, H5P_DEFAULT) > 0 ? H5Dopen2(file, ds_name, H5P_DEFAULT) : -1;
  if (ds < 0 && dsname[0])
    stn_fatal("%s: no dataset '%s' (named after the colon) to read field '%s' from", path, dsname, f->name);
  if (ds < 0) {
    char only[256] = "";
    H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, only_dataset, only);
    if (!only[0] || only[0] == 1)
      stn_fatal("%s: no dataset '%s' for field '%s'%s", path, ds_name, f->name,
                only[0] == 1 ? " (the file has several; name one after the field)" : " (the file has none)");
    ds = H5Dopen2(file, only, H5P_DEFAULT);
    if (ds < 0)
      stn_fatal("%s: cannot open dataset '%s'", path, only);
  }
  hid_t space = H5Dget_space(ds), dtype = H5Dget_type(ds);
  source s = { .path = path };
  hsize_t dims[STN_MAX_RANK + 2];
  int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0 || rank > STN_MAX_RANK + 1)
    stn_fatal("%s: the dataset has %d dimensions", path, rank);
  H5Sget_simple_extent_dims(space, dims, NULL);
  s.rank = rank;
  for (int d = 0; d < rank; d++)
    s.shape[d] = (long)dims[d];
  box b = box_of(f);
  check_shape(&s, &b, f, o);
  H5T_class_t cls = H5Tget_class(dtype);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    stn_fatal("%s: the dataset holds neither floats nor integers; field '%s' cannot be read from it", path, f->name);
  size_t fsize = H5Tget_size(dtype);
  int same = (f->type == STN_INT && cls == H5T_INTEGER && fsize == 4) ||
             (f->type == STN_FLOAT && cls == H5T_FLOAT && fsize == 4) ||
             (f->type == STN_DOUBLE && cls == H5T_FLOAT && fsize == 8);
  if (check_only) {
    H5Tclose(dtype), H5Sclose(space), H5Dclose(ds), H5Fclose(file);
    return;
  }
  if (!same)
    note("%s holds %s values of %zu bytes; converted to %s for field '%s'", path, cls == H5T_FLOAT ? "float" : "integer",
         fsize, type_name(f->type), f->name);
  hsize_t start[STN_MAX_RANK + 1], count[STN_MAX_RANK + 1];
  int k = 0;
  if (o && o->ncomp) {
    start[k] = (hsize_t)o->comp;
    count[k++] = 1;
  }
  for (int d = 0; d < b.rank; d++) {
    start[k] = (hsize_t)b.lo[d];
    count[k++] = (hsize_t)b.n[d];
  }
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t mem = H5Screate_simple(k, count, NULL);
  /* read as double, then convert and check like the other formats */
  long pts = box_points(&b);
  double *tmp = malloc(sizeof(double) * (size_t)pts + 1);
  if (!tmp || H5Dread(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, tmp) < 0)
    stn_fatal("%s: cannot read dataset for field '%s'", path, f->name);
  source t = { .path = path, .e = E_F8, .es = 8 };
  long bad_nan = -1, bad_fit = -1;
  convert(&t, (const unsigned char *)tmp, pts, f->type, dense, &bad_nan, &bad_fit);
  long nans = 0;
  for (long x = 0; bad_nan >= 0 && x < pts; x++)
    nans += !isfinite(tmp[x]);
  values_fail(path, f, &b, o, bad_fit, bad_nan, nans);
  free(tmp);
  H5Sclose(mem), H5Tclose(dtype), H5Sclose(space), H5Dclose(ds), H5Fclose(file);
}

/* Files this run has written datasets into (so a second field goes into
 * the same file) and the datasets, for the XDMF beside each. */
typedef struct h5_file {
  char *path;
  int nds;
  struct { char name[256]; int rank; long n[STN_MAX_RANK]; stn_type t; } ds[64];
} h5_file;
static h5_file *h5_files;
static int nh5_files;

static h5_file *h5_file_of(const char *path, int *fresh)
{
  for (int i = 0; i < nh5_files; i++)
    if (strcmp(h5_files[i].path, path) == 0) {
      *fresh = 0;
      return &h5_files[i];
    }
  h5_files = realloc(h5_files, sizeof *h5_files * (size_t)(nh5_files + 1));
  h5_file *h = &h5_files[nh5_files++];
  memset(h, 0, sizeof *h);
  h->path = strdup(path);
  *fresh = 1;
  return h;
}

/* Dataset name of h (rank, sizes, type): recorded, or updated. */
static void h5_note_ds(h5_file *h, const char *name, int rank, const long *n, stn_type t)
{
  int i;
  for (i = 0; i < h->nds && strcmp(h->ds[i].name, name) != 0; i++)
    ;
  if (i == h->nds && h->nds < 64)
    h->nds++;
  if (i < 64) {
    snprintf(h->ds[i].name, sizeof h->ds[i].name, "%s", name);
    h->ds[i].rank = rank;
    for (int d = 0; d < rank; d++)
      h->ds[i].n[d] = n[d];
    h->ds[i].t = t;
  }
}

/* "out/u.h5" -> "out/u.xdmf" */
static void xdmf_path(const char *h5, char *out, size_t len)
{
  const char *dot = strrchr(h5, '.');
  snprintf(out, len, "%.*s.xdmf", (int)(dot ? dot - h5 : (long)strlen(h5)), h5);
}

static const char *base_of_path(const char *p)
{
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* The XDMF grid of one .h5 file's datasets (a structured grid of points,
 * spacing 1, x fastest: XDMF lists dimensions slowest first, as HDF5 does). */
static void xdmf_grid(FILE *fp, const h5_file *h, const char *indent, double time, int with_time)
{
  if (!h->nds)
    return;
  int rank = h->ds[0].rank;
  char dims[96] = "";
  int k = 0;
  for (int d = 0; d < rank; d++)
    k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%ld", d ? " " : "", h->ds[0].n[d]);
  fprintf(fp, "%s<Grid Name=\"%s\" GridType=\"Uniform\">\n", indent, base_of_path(h->path));
  if (with_time)
    fprintf(fp, "%s  <Time Value=\"%.17g\"/>\n", indent, time);
  fprintf(fp, "%s  <Topology TopologyType=\"%s\" Dimensions=\"%s\"/>\n", indent, rank == 3 ? "3DCoRectMesh" : "2DCoRectMesh",
          dims);
  fprintf(fp, "%s  <Geometry GeometryType=\"%s\">\n", indent, rank == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
  fprintf(fp, "%s    <DataItem Format=\"XML\" Dimensions=\"%d\">%s</DataItem>\n", indent, rank == 3 ? 3 : 2,
          rank == 3 ? "0 0 0" : "0 0");
  fprintf(fp, "%s    <DataItem Format=\"XML\" Dimensions=\"%d\">%s</DataItem>\n", indent, rank == 3 ? 3 : 2,
          rank == 3 ? "1 1 1" : "1 1");
  fprintf(fp, "%s  </Geometry>\n", indent);
  for (int i = 0; i < h->nds; i++) {
    char dd[96] = "";
    k = 0;
    for (int d = 0; d < h->ds[i].rank; d++)
      k += snprintf(dd + k, sizeof dd - (size_t)k, "%s%ld", d ? " " : "", h->ds[i].n[d]);
    fprintf(fp, "%s  <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n", indent, h->ds[i].name);
    fprintf(fp, "%s    <DataItem Format=\"HDF\" NumberType=\"%s\" Precision=\"%d\" Dimensions=\"%s\">%s:/%s</DataItem>\n",
            indent, h->ds[i].t == STN_INT ? "Int" : "Float", (int)stn_type_size(h->ds[i].t), dd, base_of_path(h->path),
            h->ds[i].name);
    fprintf(fp, "%s  </Attribute>\n", indent);
  }
  fprintf(fp, "%s</Grid>\n", indent);
}

/* Writes path atomically: to a temporary name, then renamed. */
static FILE *open_atomic(const char *path, char *tmp, size_t len)
{
  snprintf(tmp, len, "%s.tmp%d", path, (int)getpid());
  return fopen(tmp, "w");
}
static int close_atomic(FILE *fp, const char *tmp, const char *path)
{
  int ok = fclose(fp) == 0;
  if (ok && rename(tmp, path) == 0)
    return 1;
  unlink(tmp);
  return 0;
}

static void write_xdmf(const h5_file *h)
{
  char xp[4200], tmp[4300];
  xdmf_path(h->path, xp, sizeof xp);
  FILE *fp = open_atomic(xp, tmp, sizeof tmp);
  if (!fp) {
    fprintf(stderr, "error: cannot write '%s': %s\n", xp, strerror(errno));
    return;
  }
  fprintf(fp, "<?xml version=\"1.0\" ?>\n<!-- written by stencilc's runtime beside %s, for ParaView and VisIt -->\n"
              "<Xdmf Version=\"3.0\">\n  <Domain>\n", base_of_path(h->path));
  xdmf_grid(fp, h, "    ", 0, 0);
  fprintf(fp, "  </Domain>\n</Xdmf>\n");
  if (!close_atomic(fp, tmp, xp))
    fprintf(stderr, "error: cannot write '%s': %s\n", xp, strerror(errno));
}

static void h5_attr_long(hid_t obj, const char *name, int n, const long *v)
{
  hsize_t dim = (hsize_t)n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_LONG, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_LONG, v);
  H5Aclose(a);
  H5Sclose(sp);
}
static void h5_attr_double(hid_t obj, const char *name, double v)
{
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
  H5Aclose(a);
  H5Sclose(sp);
}
static void h5_attr_text(hid_t obj, const char *name, const char *v)
{
  hid_t sp = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(v) + 1);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, v);
  H5Aclose(a);
  H5Tclose(t);
  H5Sclose(sp);
}

/* The attributes of a field's dataset: grid sizes, step, the program, its
 * .stn file and every param. */
static void h5_attributes(hid_t ds, const stn_field *f)
{
  h5_attr_long(ds, "grid_shape", f->grid->rank, f->grid->global_n);
  h5_attr_text(ds, "grid", f->grid->name);
  long step = the_step;
  h5_attr_long(ds, "step", 1, &step);
  h5_attr_text(ds, "field", f->name);
  if (!the_program)
    return;
  h5_attr_text(ds, "program", the_program->name);
  if (the_program->source)
    h5_attr_text(ds, "source", the_program->source);
  for (int i = 0; i < the_program->nparams; i++) {
    const stn_param *p = &the_program->params[i];
    char an[300];
    snprintf(an, sizeof an, "param %s", p->name);
    double v = p->type == STN_INT ? *(int *)p->addr : p->type == STN_FLOAT ? *(float *)p->addr : *(double *)p->addr;
    h5_attr_double(ds, an, v);
  }
}

/* Writes dense as a dataset of path: the whole field (part = 0), or this
 * rank's part of it into a file every rank opens through MPI-IO
 * (stn_h5_fapl, set by the MPI runtime when HDF5 is parallel). Returns 0
 * on failure, with why. */
static int h5_write(const stn_field *f, const char *path, const void *dense, int part, const char **why)
{
  h5_quiet();
  int fresh;
  h5_file *h = h5_file_of(path, &fresh);
  if (!fresh && access(path, F_OK) != 0)
    fresh = 1, h->nds = 0; /* known from a checkpoint (ck_restore), but gone */
  hid_t fapl = part ? (hid_t)stn_h5_fapl() : H5P_DEFAULT;
  hid_t file = fresh ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(path, H5F_ACC_RDWR, fapl);
  if (part)
    H5Pclose(fapl);
  if (file < 0) {
    *why = access(path, F_OK) == 0 && access(path, W_OK) != 0 ? strerror(EACCES) : "H5Fcreate failed";
    if (fresh)
      nh5_files--, free(h->path);
    return 0;
  }
  char name[256];
  h5_name(f->name, name, sizeof name);
  hsize_t dims[STN_MAX_RANK];
  for (int d = 0; d < f->grid->rank; d++)
    dims[d] = (hsize_t)f->grid->global_n[d];
  if (H5Lexists(file, name, H5P_DEFAULT) > 0)
    H5Ldelete(file, name, H5P_DEFAULT);
  hid_t sp = H5Screate_simple(f->grid->rank, dims, NULL);
  hid_t ds = H5Dcreate2(file, name, h5_type(f->type), sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t mem = H5S_ALL, sel = H5S_ALL;
  if (part) {
    hsize_t start[STN_MAX_RANK], count[STN_MAX_RANK];
    for (int d = 0; d < f->grid->rank; d++) {
      start[d] = (hsize_t)f->grid->global_lo[d];
      count[d] = (hsize_t)f->grid->n[d];
    }
    sel = H5Scopy(sp);
    H5Sselect_hyperslab(sel, H5S_SELECT_SET, start, NULL, count, NULL);
    mem = H5Screate_simple(f->grid->rank, count, NULL);
  }
  int ok = ds >= 0 && H5Dwrite(ds, h5_type(f->type), mem, sel, H5P_DEFAULT, dense) >= 0;
  if (part) {
    H5Sclose(sel);
    H5Sclose(mem);
  }
  if (ok)
    h5_attributes(ds, f);
  if (ds >= 0)
    H5Dclose(ds);
  H5Sclose(sp);
  ok = H5Fclose(file) >= 0 && ok;
  if (!ok) {
    *why = "H5Dwrite failed (is the disk full?)";
    return 0;
  }
  h5_note_ds(h, name, f->grid->rank, f->grid->global_n, f->type);
  if (stn_dist.rank == 0)
    write_xdmf(h);
  return 1;
}

int stn_h5_write(const stn_field *f, const char *path, const void *dense, const char **why)
{
  return h5_write(f, path, dense, 0, why);
}
int stn_h5_write_part(const stn_field *f, const char *path, const void *dense, const char **why)
{
  return h5_write(f, path, dense, 1, why);
}
#else
int stn_h5_write_part(const stn_field *f, const char *path, const void *dense, const char **why)
{
  return stn_h5_write(f, path, dense, why);
}
int stn_h5_write(const stn_field *f, const char *path, const void *dense, const char **why)
{
  (void)f, (void)path, (void)dense;
  *why = "this stencilc runtime was built without HDF5; install libhdf5-dev and rebuild stencilc with make, or "
         "write .npy or .vtk";
  return 0;
}
#endif

/* ==== series of numbered files (write u to "u_%04d.vtk" % n) ==================
 * Each pattern keeps the files written so far with their times; the
 * series file beside them is rewritten (atomically) after each one:
 * NAME.vtk.series (ParaView's JSON) for .vtk, NAME.xdmf (a temporal
 * collection) for .h5, NAME.series.json otherwise. */
typedef struct series {
  char *pattern, *file;
  int n, cap;
  char **names;
  double *times;
} series;
static series *all_series;
static int nseries;

/* "out/u_%06d.vtk" -> "out/u.vtk.series": the conversion and the
 * separators before it dropped. */
static void series_file(const char *pattern, char *out, size_t len)
{
  char stem[4096];
  size_t k = 0;
  const char *ext = strrchr(pattern, '.');
  const char *slash = strrchr(pattern, '/');
  if (ext && slash && ext < slash)
    ext = NULL;
  const char *end = ext ? ext : pattern + strlen(pattern);
  for (const char *c = pattern; c < end && k + 1 < sizeof stem; c++) {
    if (*c == '%') {
      if (c[1] == '%') {
        stem[k++] = '%';
        c++;
        continue;
      }
      while (c < end && !strchr("diufFeEgGxX", *c))
        c++;
      while (k > 0 && (stem[k - 1] == '_' || stem[k - 1] == '-' || stem[k - 1] == '.'))
        k--;
      continue;
    }
    stem[k++] = *c;
  }
  stem[k] = 0;
  if (k == 0 || stem[k - 1] == '/')
    snprintf(stem + k, sizeof stem - k, "series");
  if (ext && strcmp(ext, ".vtk") == 0)
    snprintf(out, len, "%s.vtk.series", stem);
  else if (ext && (strcmp(ext, ".h5") == 0 || strcmp(ext, ".hdf5") == 0))
    snprintf(out, len, "%s.xdmf", stem);
  else
    snprintf(out, len, "%s%s.series.json", stem, ext ? ext : "");
}

/* The entry of file path, at time, in the series of pattern (a file
 * written again keeps one entry, with the new time). */
static series *series_entry(const char *pattern, const char *path, double time)
{
  series *s = NULL;
  for (int i = 0; i < nseries; i++)
    if (strcmp(all_series[i].pattern, pattern) == 0)
      s = &all_series[i];
  if (!s) {
    all_series = realloc(all_series, sizeof *all_series * (size_t)(nseries + 1));
    s = &all_series[nseries++];
    memset(s, 0, sizeof *s);
    s->pattern = strdup(pattern);
    char f[4200];
    series_file(pattern, f, sizeof f);
    s->file = strdup(f);
  }
  /* a file written again (same name) keeps one entry, with the new time */
  int at = s->n;
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->names[i], path) == 0)
      at = i;
  if (at == s->n) {
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 64;
      s->names = realloc(s->names, sizeof *s->names * (size_t)s->cap);
      s->times = realloc(s->times, sizeof *s->times * (size_t)s->cap);
    }
    s->names[s->n++] = strdup(path);
  }
  s->times[at] = time;
  return s;
}

/* The series file of s, rewritten atomically. */
static void series_write(const series *s)
{
  const char *pattern = s->pattern;
  char tmp[4400];
  FILE *fp = open_atomic(s->file, tmp, sizeof tmp);
  if (!fp) {
    fprintf(stderr, "error: cannot write the series file '%s': %s\n", s->file, strerror(errno));
    return;
  }
  /* names relative to the series file's folder */
  const char *slash = strrchr(s->file, '/');
  size_t dir = slash ? (size_t)(slash - s->file) + 1 : 0;
  if (ends_with(s->file, ".xdmf")) {
#ifdef STN_HAVE_HDF5
    fprintf(fp, "<?xml version=\"1.0\" ?>\n<!-- written by stencilc's runtime: the series %s, for ParaView and VisIt -->\n"
                "<Xdmf Version=\"3.0\">\n  <Domain>\n    <Grid Name=\"series\" GridType=\"Collection\" "
                "CollectionType=\"Temporal\">\n", pattern);
    for (int i = 0; i < s->n; i++)
      for (int h = 0; h < nh5_files; h++)
        if (strcmp(h5_files[h].path, s->names[i]) == 0)
          xdmf_grid(fp, &h5_files[h], "      ", s->times[i], 1);
    fprintf(fp, "    </Grid>\n  </Domain>\n</Xdmf>\n");
#endif
  } else {
    fprintf(fp, "{\n  \"file-series-version\" : \"1.0\",\n  \"files\" : [\n");
    for (int i = 0; i < s->n; i++) {
      const char *name = strncmp(s->names[i], s->file, dir) == 0 ? s->names[i] + dir : s->names[i];
      fprintf(fp, "    { \"name\" : \"%s\", \"time\" : %.17g }%s\n", name, s->times[i], i + 1 < s->n ? "," : "");
    }
    fprintf(fp, "  ]\n}\n");
  }
  if (!close_atomic(fp, tmp, s->file))
    fprintf(stderr, "error: cannot write the series file '%s': %s\n", s->file, strerror(errno));
}

void stn_series_add(const char *pattern, const char *path, double time)
{
  if (stn_dist.rank == 0)
    series_write(series_entry(pattern, path, time));
}

/* A numbered file name; the format was checked by the compiler. */
void stn_series_path(char *out, size_t len, const char *pattern, int nvals, const double *vals, const int *isint)
{
  size_t k = 0;
  int v = 0;
  for (const char *c = pattern; *c && k + 1 < len;) {
    if (*c != '%') {
      out[k++] = *c++;
      continue;
    }
    if (c[1] == '%') {
      out[k++] = '%';
      c += 2;
      continue;
    }
    char spec[32];
    size_t s = 0;
    while (*c && s + 2 < sizeof spec && !strchr("diufFeEgGxX", *c))
      spec[s++] = *c++;
    char conv = *c ? *c++ : 'g';
    int n;
    if (v < nvals && isint[v]) {
      spec[s++] = 'l';
      spec[s++] = conv;
      spec[s] = 0;
      n = snprintf(out + k, len - k, spec, (long)vals[v]);
    } else {
      spec[s++] = conv;
      spec[s] = 0;
      n = snprintf(out + k, len - k, spec, v < nvals ? vals[v] : 0.0);
    }
    v++;
    if (n > 0)
      k += (size_t)n < len - k ? (size_t)n : len - k - 1;
  }
  out[k] = 0;
}

/* ==== checkpoint and restart ===================================================
 * A checkpoint is one file: "STNCKPT1", the trailer's offset (8 bytes,
 * little-endian), every saved field's points (the whole grid, C order,
 * its own type, each at a 4096-byte boundary), then the trailer: text
 * lines naming the program, its hash and params, the loop and step, every
 * variable of main (its bytes in hex, so values come back exactly) and
 * every field with its shape and offset. It is written to PATH.tmp on a
 * thread of its own while the run goes on, fsync'd, then renamed to PATH:
 * a crash leaves the previous checkpoint whole. */
int stn_ckpt_on;
static const char *ck_path, *rs_path;
static long ck_every_steps;
static double ck_every_secs = 600;
static volatile sig_atomic_t ck_signal;
static double ck_last_time;
static long ck_last_step;
static int ck_last_loop = -1;
static long ck_last_agree;
static long ck_deferred;           /* a checkpoint due since this step waits for the previous one */

typedef struct rs_var { char name[128]; size_t size; unsigned char bytes[16]; } rs_var;
typedef struct rs_field { char name[128]; stn_type type; int rank; long n[STN_MAX_RANK]; long long offset; } rs_field;
static struct {
  int pending, loop;
  long step;
  int nvars, nfields;
  rs_var *vars;
  rs_field *fields;
  char grids[4096];            /* "G 64 64;H 8;" */
  int nfiles;
  char **files;                /* its "series" and "h5ds" lines (ck_restore) */
} rs;

/* A checkpoint's trailer writes bytes in hex, two digits a byte: the
 * variables' values, and paths (they may hold spaces; PATH_HEX is the
 * room for one of at most 4096 bytes). out has room for 2 n + 1. */
enum { PATH_HEX = 2 * 4096 + 1 };
static void hex_of(const void *in, size_t n, char *out)
{
  for (size_t k = 0; k < n; k++)
    snprintf(out + 2 * k, 3, "%02x", ((const unsigned char *)in)[k]);
  out[2 * n] = 0;
}
static void path_hex(const char *path, char *out)
{
  size_t n = strlen(path);
  hex_of(path, n < 4096 ? n : 4096, out);
}
/* hex_of's bytes back, at most max of them; how many */
static size_t bytes_of(const char *hex, void *out, size_t max)
{
  size_t k = 0;
  for (unsigned x; k < max && hex[0] && hex[1] && sscanf(hex, "%2x", &x) == 1; hex += 2)
    ((unsigned char *)out)[k++] = (unsigned char)x;
  return k;
}
static void text_of(const char *hex, char *out, size_t len)
{
  out[bytes_of(hex, out, len - 1)] = 0;
}

static void on_signal(int sig) { ck_signal = sig; }

int stn_ckpt_option(const char *arg)
{
  if (strncmp(arg, "--checkpoint=", 13) == 0) {
    ck_path = arg + 13;
    if (!*ck_path)
      stn_fatal("%s: expected --checkpoint=PATH", arg);
    return 1;
  }
  if (strncmp(arg, "--checkpoint-every=", 19) == 0) {
    char *end;
    double v = strtod(arg + 19, &end);
    if (end == arg + 19 || v <= 0 || (*end && strcmp(end, "s") != 0) || (!*end && v != floor(v)))
      stn_fatal("%s: expected --checkpoint-every=N (steps of the outermost time loop) or =Ns (seconds)", arg);
    if (*end == 's')
      ck_every_secs = v, ck_every_steps = 0;
    else
      ck_every_steps = (long)v, ck_every_secs = 0;
    return 1;
  }
  if (strncmp(arg, "--restart=", 10) == 0) {
    rs_path = arg + 10;
    if (!*rs_path)
      stn_fatal("%s: expected --restart=PATH", arg);
    return 1;
  }
  return 0;
}

/* The hash of the .stn source (FNV-1a), as the generated program was built. */
static char *hash_text(const stn_program *p, char *buf, size_t len)
{
  snprintf(buf, len, "%016llx", p->hash);
  return buf;
}

static void param_text(const stn_param *p, char *buf, size_t len)
{
  if (p->type == STN_INT)
    snprintf(buf, len, "%d", *(int *)p->addr);
  else if (p->type == STN_FLOAT)
    snprintf(buf, len, "%.9g", *(float *)p->addr);
  else
    snprintf(buf, len, "%.17g", *(double *)p->addr);
}

static unsigned char *slurp_trailer(FILE *fp, const char *path, long *len)
{
  unsigned char head[16];
  if (fread(head, 1, 16, fp) != 16 || memcmp(head, "STNCKPT1", 8) != 0)
    stn_fatal("--restart=%s: not a stencilc checkpoint (no STNCKPT1 at the start)", path);
  uint64_t off = 0;
  for (int b = 7; b >= 0; b--)
    off = off << 8 | head[8 + b];
  struct stat st;
  if (fstat(fileno(fp), &st) != 0 || off < 16 || (off_t)off >= st.st_size)
    stn_fatal("--restart=%s: the checkpoint is truncated or damaged (its trailer is missing)", path);
  *len = (long)(st.st_size - (off_t)off);
  unsigned char *t = malloc((size_t)*len + 1);
  if (!t || fseeko(fp, (off_t)off, SEEK_SET) != 0 || fread(t, 1, (size_t)*len, fp) != (size_t)*len)
    stn_fatal("--restart=%s: cannot read the trailer: %s", path, strerror(errno));
  t[*len] = 0;
  if (!strstr((char *)t, "\nend\n"))
    stn_fatal("--restart=%s: the checkpoint is truncated (its trailer does not end)", path);
  return t;
}

/* After the command line: signal handlers, and the restart file checked
 * against this program. */
void stn_ckpt_start(const stn_program *p)
{
  the_program = p;
  stn_ckpt_on = ck_path || rs_path;
  if (ck_path) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", ck_path);
    stn_check_output("--checkpoint", tmp);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    ck_last_time = stn_time();
  }
  if (!rs_path)
    return;
  int collective = stn_fatal_collective;
  stn_fatal_collective = 1;
  FILE *fp = fopen(rs_path, "rb");
  if (!fp)
    stn_fatal("--restart=%s: %s", rs_path, strerror(errno));
  long len;
  char *t = (char *)slurp_trailer(fp, rs_path, &len);
  fclose(fp);
  char want[32];
  hash_text(p, want, sizeof want);
  int hash_ok = 0, name_ok = 0;
  for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
    char a[128], b[256], c[64];
    if (sscanf(line, "program %127s", a) == 1)
      name_ok = strcmp(a, p->name) == 0;
    else if (sscanf(line, "hash %127s", a) == 1)
      hash_ok = strcmp(a, want) == 0;
    else if (sscanf(line, "param %127s %255s", a, b) == 2) {
      for (int i = 0; i < p->nparams; i++)
        if (strcmp(p->params[i].name, a) == 0) {
          param_text(&p->params[i], c, sizeof c);
          if (strcmp(b, c) != 0)
            note("--restart: param %s is %s in this run but was %s when the checkpoint was written; the run goes "
                 "on with %s", a, c, b, c);
        }
    } else if (strncmp(line, "grid ", 5) == 0) {
      size_t k = strlen(rs.grids);
      snprintf(rs.grids + k, sizeof rs.grids - k, "%s;", line + 5);
    } else if (sscanf(line, "loop %d step %ld", &rs.loop, &rs.step) == 2) {
    } else if (strncmp(line, "var ", 4) == 0) {
      rs.vars = realloc(rs.vars, sizeof *rs.vars * (size_t)(rs.nvars + 1));
      rs_var *v = &rs.vars[rs.nvars++];
      char hex[64];
      if (sscanf(line, "var %127s %zu %63s", v->name, &v->size, hex) != 3 || v->size > 16 || strlen(hex) != 2 * v->size)
        stn_fatal("--restart=%s: damaged line '%s'", rs_path, line);
      bytes_of(hex, v->bytes, v->size);
    } else if (strncmp(line, "field ", 6) == 0) {
      rs.fields = realloc(rs.fields, sizeof *rs.fields * (size_t)(rs.nfields + 1));
      rs_field *f = &rs.fields[rs.nfields++];
      char ty[16];
      memset(f->n, 0, sizeof f->n);
      if (sscanf(line, "field %127s %15s %d %ld %ld %ld %lld", f->name, ty, &f->rank, &f->n[0], &f->n[1], &f->n[2],
                 &f->offset) != 7)
        stn_fatal("--restart=%s: damaged line '%s'", rs_path, line);
      f->type = strcmp(ty, "int") == 0 ? STN_INT : strcmp(ty, "float") == 0 ? STN_FLOAT : STN_DOUBLE;
    } else if (strncmp(line, "series ", 7) == 0 || strncmp(line, "h5ds ", 5) == 0) {
      rs.files = realloc(rs.files, sizeof *rs.files * (size_t)(rs.nfiles + 1));
      rs.files[rs.nfiles++] = strdup(line);
    }
  }
  free(t);
  if (!name_ok || !hash_ok)
    stn_fatal("--restart=%s: the checkpoint was written by %s; this is %s (%s.stn, hash %s), so it cannot resume "
              "from it", rs_path, name_ok ? "another version of this program (its .stn file has changed)" : "another program",
              p->name, p->name, want);
  rs.pending = 1;
  stn_fatal_collective = collective;
}

/* A grid's sizes against the checkpoint's (stn_grid_init and the
 * distributed runtime call it with the whole grid's sizes). */
void stn_ckpt_check_grid(const char *name, int rank, const long *n)
{
  if (!rs.pending)
    return;
  for (const char *g = rs.grids; *g;) {
    char gn[128];
    long m[STN_MAX_RANK] = { 0 };
    int k = 0, used;
    if (sscanf(g, "%127s%n", gn, &used) != 1)
      break;
    const char *q = g + used;
    while (k < STN_MAX_RANK && sscanf(q, " %ld%n", &m[k], &used) == 1) {
      q += used;
      k++;
    }
    if (strcmp(gn, name) == 0) {
      int same = k == rank;
      for (int d = 0; same && d < rank; d++)
        same = m[d] == n[d];
      if (!same) {
        char a[96], b[96];
        shape_text(a, sizeof a, rank, n);
        shape_text(b, sizeof b, k, m);
        stn_fatal_collective = 1;
        stn_fatal("--restart=%s: grid %s is %s in this run but was %s in the checkpoint; a checkpoint resumes only "
                  "the same sizes (give the same params)", rs_path, name, a, b);
      }
    }
    const char *semi = strchr(g, ';');
    g = semi ? semi + 1 : g + strlen(g);
  }
}

/* ---- the writer thread ---- */
typedef struct ck_job {
  char *trailer;
  int nbufs;
  void **bufs;
  size_t *sizes;
  long long *offsets;
  const stn_field **snap;        /* a field whose points snapshot_get gives (slot = its index), or NULL */
  char *path;
  int active;
  volatile int finished;         /* set by the writer thread as it ends */
  int failed;
  char why[4400];
  pthread_t thread;
} ck_job;
static ck_job job;

static int write_all(int fd, const void *buf, size_t n, off_t at)
{
  const char *p = buf;
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n > (1u << 30) ? (1u << 30) : n, at);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return 0;
    }
    p += w, n -= (size_t)w, at += w;
  }
  return 1;
}

static void **ck_cache;
static size_t *ck_cache_size;
static int ck_ncache;

static void *ck_buffer(int i, size_t bytes)
{
  if (i >= ck_ncache) {
    ck_cache = realloc(ck_cache, sizeof *ck_cache * (size_t)(i + 1));
    ck_cache_size = realloc(ck_cache_size, sizeof *ck_cache_size * (size_t)(i + 1));
    for (int k = ck_ncache; k <= i; k++)
      ck_cache[k] = NULL, ck_cache_size[k] = 0;
    ck_ncache = i + 1;
  }
  if (ck_cache_size[i] < bytes) {
    if (ck_cache[i])
      stn_field_io.host_free(ck_cache[i]);
    ck_cache[i] = stn_field_io.host_alloc(bytes);
    if (!ck_cache[i])
      stn_fatal("cannot allocate %.2f GiB of host memory for a checkpoint", (double)bytes / (1 << 30));
    ck_cache_size[i] = bytes;
  }
  return ck_cache[i];
}

static void *ck_write_now(ck_job *j);
static void *ck_write(void *arg)
{
  ck_job *j = arg;
  ck_write_now(j);
  __atomic_store_n(&j->finished, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void *ck_write_now(ck_job *j)
{
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", j->path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    snprintf(j->why, sizeof j->why, "cannot create '%s': %s", tmp, strerror(errno));
    j->failed = 1;
    return NULL;
  }
  long long end = 16;
  for (int i = 0; i < j->nbufs; i++)
    if (j->offsets[i] + (long long)j->sizes[i] > end)
      end = j->offsets[i] + (long long)j->sizes[i];
  unsigned char head[16] = "STNCKPT1";
  for (int b = 0; b < 8; b++)
    head[8 + b] = (unsigned char)((unsigned long long)end >> (8 * b));
  int ok = write_all(fd, head, 16, 0);
  for (int i = 0; ok && i < j->nbufs; i++) {
    if (j->snap && j->snap[i]) { /* host memory from this thread: pinned on CUDA, allocated once */
      j->bufs[i] = ck_buffer(i, j->sizes[i]);
      stn_field_io.snapshot_get(j->snap[i], i, j->bufs[i]);
    }
    ok = write_all(fd, j->bufs[i], j->sizes[i], (off_t)j->offsets[i]);
  }
  ok = ok && write_all(fd, j->trailer, strlen(j->trailer), (off_t)end);
  ok = ok && fsync(fd) == 0;
  int e = errno;
  ok = close(fd) == 0 && ok;
  if (ok && rename(tmp, j->path) != 0) {
    e = errno;
    ok = 0;
  }
  if (ok) { /* the rename itself reaches the disk with the folder */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", j->path);
    char *slash = strrchr(dir, '/');
    if (slash)
      *(slash == dir ? slash + 1 : slash) = 0;
    else
      strcpy(dir, ".");
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  } else {
    unlink(tmp);
    snprintf(j->why, sizeof j->why, "cannot write '%s': %s", tmp, strerror(e));
    j->failed = 1;
  }
  return NULL;
}

/* Waits for the checkpoint being written, if any; says if it failed. */
void stn_ckpt_wait(void)
{
  if (!job.active)
    return;
  pthread_join(job.thread, NULL);
  job.active = 0;
  if (job.failed)
    fprintf(stderr, "error: checkpoint failed: %s; the run goes on, the previous checkpoint (if any) is still whole\n",
            job.why);
  job.failed = 0;
  free(job.trailer);
  free(job.path);
  free(job.offsets);
  free(job.sizes);
  /* the buffers stay: the next checkpoint reuses them */
}

static void ck_save(int loop, long step, const stn_ckpt_item *it, int n)
{
  stn_ckpt_wait();
  if (stn_field_io.sync)
    stn_field_io.sync();
  const stn_program *p = the_program;
  size_t cap = 4096, len = 0;
  char *t = malloc(cap);
#define EMIT(...)                                                                    \
  do {                                                                               \
    int need_ = snprintf(NULL, 0, __VA_ARGS__);                                      \
    while (len + (size_t)need_ + 1 > cap)                                            \
      t = realloc(t, cap *= 2);                                                      \
    len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__);                        \
  } while (0)
  char h[32];
  EMIT("\nstencilc checkpoint\nprogram %s\nsource %s\nhash %s\n", p->name, p->source ? p->source : "?",
       hash_text(p, h, sizeof h));
  for (int i = 0; i < p->nparams; i++) {
    char v[64];
    param_text(&p->params[i], v, sizeof v);
    EMIT("param %s %s\n", p->params[i].name, v);
  }
  EMIT("loop %d step %ld\n", loop, step);
  for (int i = 0; i < n; i++)
    if (!it[i].field) {
      double spent = 0; /* a timer: the time since its start */
      const void *var = it[i].var;
      if (it[i].flags & STN_CKPT_TIMER)
        spent = stn_time() - *(const double *)var, var = &spent;
      char hx[2 * 16 + 1]; /* a restart reads at most 16 bytes a variable */
      hex_of(var, it[i].size < 16 ? it[i].size : 16, hx);
      EMIT("var %s %zu %s\n", it[i].name, it[i].size, hx);
    }
  /* The series written so far and the .h5 files' datasets: a restart
   * lists the files written before the checkpoint in its series files. */
  char *ha = malloc(2 * PATH_HEX), *hb = ha + PATH_HEX;
  for (int i = 0; i < nseries; i++)
    for (int e = 0; e < all_series[i].n; e++) {
      path_hex(all_series[i].pattern, ha);
      path_hex(all_series[i].names[e], hb);
      EMIT("series %.17g %s %s\n", all_series[i].times[e], ha, hb);
    }
  for (int i = 0; i < nh5_files; i++)
    for (int d = 0; d < h5_files[i].nds; d++) {
      path_hex(h5_files[i].path, ha);
      EMIT("h5ds %s %s %d %ld %ld %ld %d\n", ha, h5_files[i].ds[d].name, h5_files[i].ds[d].rank, h5_files[i].ds[d].n[0],
           h5_files[i].ds[d].n[1], h5_files[i].ds[d].n[2], (int)h5_files[i].ds[d].t);
    }
  free(ha);
  int nf = 0;
  for (int i = 0; i < n; i++)
    nf += it[i].field != NULL;
  job.bufs = realloc(job.bufs, sizeof *job.bufs * (size_t)(nf + 1));
  job.sizes = malloc(sizeof *job.sizes * (size_t)(nf + 1));
  job.offsets = malloc(sizeof *job.offsets * (size_t)(nf + 1));
  job.snap = realloc(job.snap, sizeof *job.snap * (size_t)(nf + 1));
  job.nbufs = 0;
  long long off = 4096;
  const char *grids_said[16];
  int ngrids = 0;
  for (int i = 0; i < n; i++) {
    stn_field *f = it[i].field;
    if (!f)
      continue;
    const stn_grid *g = f->grid;
    size_t bytes = stn_type_size(f->type);
    for (int d = 0; d < g->rank; d++)
      bytes *= (size_t)g->global_n[d];
    void *buf;
    if (stn_dist.gather) {
      buf = stn_dist.gather(f); /* the whole field on rank 0, NULL elsewhere */
      if (buf) {
        void *c = ck_buffer(job.nbufs, bytes);
        memcpy(c, buf, bytes);
        free(buf);
        buf = c;
      }
    } else if (stn_field_io.snapshot) {
      buf = NULL; /* the writer's, copied out there */
      stn_field_io.snapshot(f, job.nbufs);
      job.snap[job.nbufs] = f;
    } else {
      buf = ck_buffer(job.nbufs, bytes);
      stn_field_io.get(f, buf);
    }
    if (!stn_field_io.snapshot || stn_dist.gather)
      job.snap[job.nbufs] = NULL;
    int said = 0;
    for (int k = 0; k < ngrids; k++)
      said |= strcmp(grids_said[k], g->name) == 0;
    if (!said && ngrids < 16) {
      grids_said[ngrids++] = g->name;
      EMIT("grid %s", g->name);
      for (int d = 0; d < g->rank; d++)
        EMIT(" %ld", g->global_n[d]);
      EMIT("\n");
    }
    EMIT("field %s %s %d %ld %ld %ld %lld\n", f->name, type_name(f->type), g->rank, g->global_n[0],
         g->rank > 1 ? g->global_n[1] : 0L, g->rank > 2 ? g->global_n[2] : 0L, off);
    job.bufs[job.nbufs] = buf;
    job.sizes[job.nbufs] = bytes;
    job.offsets[job.nbufs] = off;
    job.nbufs++;
    off += ((long long)bytes + 4095) / 4096 * 4096;
  }
  EMIT("end\n");
#undef EMIT
  if (stn_dist.rank != 0) {
    free(t);
    free(job.sizes);
    free(job.offsets);
    job.sizes = NULL, job.offsets = NULL;
    return;
  }
  job.trailer = t;
  job.path = strdup(ck_path);
  job.failed = 0;
  job.finished = 0;
  if (pthread_create(&job.thread, NULL, ck_write, &job) != 0) {
    ck_write(&job); /* no thread: write it now */
  }
  job.active = 1;
}

/* The checkpoint's series and .h5 datasets (ck_save): the .h5 files
 * known again (for the XDMF of their series), and rank 0's series files
 * rewritten with the files written before the checkpoint. */
static void ck_restore_files(void)
{
  char *a = malloc(2 * PATH_HEX), *b = a + PATH_HEX, path[4096], name[4096];
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < rs.nfiles; i++) {
      const char *line = rs.files[i];
      char ds[256];
      int rank, t;
      long nn[3];
      double time;
      if (pass == 0 && sscanf(line, "h5ds %8193s %255s %d %ld %ld %ld %d", a, ds, &rank, &nn[0], &nn[1], &nn[2], &t) == 7) {
        int fresh;
        text_of(a, path, sizeof path);
        if (rank >= 1 && rank <= 3)
          h5_note_ds(h5_file_of(path, &fresh), ds, rank, nn, (stn_type)t);
      } else if (pass == 1 && stn_dist.rank == 0 && sscanf(line, "series %lf %8193s %8193s", &time, a, b) == 3) {
        text_of(a, path, sizeof path);
        text_of(b, name, sizeof name);
        series_entry(path, name, time);
      }
    }
  free(a);
  if (stn_dist.rank == 0)
    for (int i = 0; i < nseries; i++)
      series_write(&all_series[i]);
}

/* The checkpoint's value of variable name (size bytes), or NULL. */
static const rs_var *rs_var_of(const char *name, size_t size)
{
  for (int v = 0; v < rs.nvars; v++)
    if (strcmp(rs.vars[v].name, name) == 0 && rs.vars[v].size == size)
      return &rs.vars[v];
  return NULL;
}

static void ck_restore(const stn_ckpt_item *it, int n)
{
  if (stn_field_io.sync)
    stn_field_io.sync(); /* no result from before may arrive after the restored values */
  int collective = stn_fatal_collective;
  stn_fatal_collective = 1;
  for (int i = 0; i < n; i++) {
    if (it[i].field)
      continue;
    const rs_var *v = rs_var_of(it[i].name, it[i].size);
    if (v && !(it[i].flags & STN_CKPT_TIMER)) /* a timer's time spent: its start below */
      memcpy(it[i].var, v->bytes, it[i].size);
    if (!v && !(it[i].flags & STN_CKPT_OPTIONAL))
      stn_fatal("--restart=%s: the checkpoint has no value of '%s'", rs_path, it[i].name);
  }
  FILE *fp = fopen(rs_path, "rb");
  if (!fp)
    stn_fatal("--restart=%s: %s", rs_path, strerror(errno));
  for (int i = 0; i < n; i++) {
    stn_field *f = it[i].field;
    if (!f)
      continue;
    rs_field *r = NULL;
    for (int k = 0; k < rs.nfields; k++)
      if (strcmp(rs.fields[k].name, f->name) == 0)
        r = &rs.fields[k];
    if (!r || r->type != f->type || r->rank != f->grid->rank)
      stn_fatal("--restart=%s: the checkpoint has no %s field '%s'", rs_path, type_name(f->type), f->name);
    box b = box_of(f);
    for (int d = 0; d < b.rank; d++)
      if (r->n[d] != b.glob[d])
        stn_fatal("--restart=%s: field '%s' has another shape in the checkpoint; it resumes only the same sizes",
                  rs_path, f->name);
    source s = { .path = rs_path, .e = f->type == STN_INT ? E_I4 : f->type == STN_FLOAT ? E_F4 : E_F8,
                 .es = stn_type_size(f->type), .data = (off_t)r->offset, .rank = b.rank };
    void *dense = malloc((size_t)box_points(&b) * s.es + 1);
    if (!dense)
      stn_fatal("out of memory restoring field '%s'", f->name);
    stn_read_opts o = { .allow_nonfinite = 1 };
    read_box(fp, &s, &b, 0, f, &o, dense);
    stn_field_io.set(f, dense);
    free(dense);
  }
  fclose(fp);
  /* The timers' starts move back by the time they had spent when the
   * checkpoint was written, now that the restart's own reading is done:
   * the restarted run's timers count the run before the checkpoint, and
   * not the restart. */
  if (stn_field_io.sync)
    stn_field_io.sync();
  ck_restore_files();
  double now = stn_time();
  for (int i = 0; i < n; i++) {
    const rs_var *v = it[i].flags & STN_CKPT_TIMER ? rs_var_of(it[i].name, it[i].size) : NULL;
    if (v) {
      double spent;
      memcpy(&spent, v->bytes, sizeof spent);
      *(double *)it[i].var = now - spent;
    }
  }
  stn_fatal_collective = collective;
}

void stn_ckpt_point(int loop, long step, const stn_ckpt_item *it, int n)
{
  if (rs.pending) {
    if (loop != rs.loop)
      return; /* a loop before the checkpoint's: it runs again, taking no checkpoints */
    ck_restore(it, n);
    stn_progress_resume(rs.step);
    rs.pending = 0;
    ck_last_loop = loop;
    ck_last_step = rs.step;
    ck_last_time = stn_time();
    if (stn_dist.rank == 0)
      fprintf(stderr, "note: resumed from %s at step %ld\n", rs_path, rs.step);
    return;
  }
  if (!ck_path)
    return;
  if (loop != ck_last_loop) {
    ck_last_loop = loop;
    ck_last_step = step;
  }
  int due = ck_signal != 0;
  if (ck_every_steps > 0 && step / ck_every_steps > ck_last_step / ck_every_steps)
    due = 1;
  if (ck_every_secs > 0 && stn_time() - ck_last_time >= ck_every_secs)
    due = 1;
  if (stn_dist.agree) {
    /* The ranks agree (the largest: a signal's number + 1). Due by steps,
     * every rank knows it; a signal or the clock is asked about every 16
     * steps only (the same steps on every rank), not to wait on the others
     * at every step. */
    int by_steps = ck_every_steps > 0 && step / ck_every_steps > ck_last_step / ck_every_steps;
    if (!by_steps && step / 16 == ck_last_agree / 16)
      return;
    ck_last_agree = step;
    due = stn_dist.agree(due ? 1 + ck_signal : 0);
  } else if (due) {
    due = 1 + ck_signal;
  }
  if (!due)
    return;
  int sig = due - 1;
  if (!sig && !stn_dist.agree && job.active && !__atomic_load_n(&job.finished, __ATOMIC_ACQUIRE)) {
    /* The previous checkpoint is still on its way to the disk: this one
     * waits for it at a later step rather than stopping the run. */
    if (!ck_deferred)
      ck_deferred = step;
    return;
  }
  if (ck_deferred && stn_dist.rank == 0) {
    static int said;
    if (said++ < 3)
      fprintf(stderr, "note: the checkpoint due at step %ld is written at step %ld: the previous one was still being "
                      "written (the disk takes longer than %s between checkpoints)\n", ck_deferred, step,
              ck_every_steps ? "the steps" : "the seconds");
  }
  ck_deferred = 0;
  ck_save(loop, step, it, n);
  ck_last_step = step;
  ck_last_time = stn_time();
  if (sig) {
    stn_ckpt_wait();
    stn_progress_clear();
    if (stn_dist.rank == 0)
      fprintf(stderr, "stopped by %s at step %ld: checkpoint written to %s; resume with --restart=%s\n",
              sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal", step, ck_path, ck_path);
    fflush(stdout);
    if (stn_dist.exit)
      stn_dist.exit(128 + sig);
    exit(128 + sig);
  }
}

/* A run that ends (stn_finish): the checkpoint being written is finished. */
void stn_ckpt_finish(void)
{
  stn_ckpt_wait();
  if (rs.pending && stn_dist.rank == 0)
    fprintf(stderr, "warning: --restart=%s: the run ended without reaching the checkpoint's loop; nothing was "
                    "resumed\n", rs_path);
}
