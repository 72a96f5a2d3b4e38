/* diag.c: file:line:col messages with the source line and a ^~~~ underline. */
#include "diag.h"
#include <stdarg.h>
#include <stdlib.h>

Span span_join(Span a, Span b)
{
  Span s = { a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi };
  return s;
}

const Source *src_of(const Source *src, int off)
{
  for (const Source *s = src; s; s = s->next)
    if (off >= s->base && off <= s->base + s->len)
      return s;
  return src;
}

void src_linecol(const Source *src, int off, int *line, int *col)
{
  src = src_of(src, off);
  off -= src->base;
  int l = 1, c = 1;
  for (int i = 0; i < off && i < src->len; i++) {
    if (src->text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

static void report(Diag *d, const char *kind, Span at, const char *fmt, va_list ap)
{
  FILE *out = d->out ? d->out : stderr;
  const Source *src = src_of(d->src, at.lo);
  int line, col;
  src_linecol(src, at.lo, &line, &col);
  at.lo -= src->base;
  at.hi -= src->base;
  if (at.lo > src->len)
    at.lo = src->len;
  if (at.lo < 0)
    at.lo = 0;
  fprintf(out, "%s:%d:%d: %s: ", src->name, line, col, kind);
  vfprintf(out, fmt, ap);
  fputc('\n', out);

  int bol = at.lo;
  while (bol > 0 && src->text[bol - 1] != '\n')
    bol--;
  int eol = at.lo;
  while (eol < src->len && src->text[eol] != '\n')
    eol++;
  fprintf(out, "%.*s\n", eol - bol, src->text + bol);
  /* One caret column per character: UTF-8 continuation bytes take none. */
  for (int i = bol; i < at.lo; i++)
    if (((unsigned char)src->text[i] & 0xC0) != 0x80)
      fputc(src->text[i] == '\t' ? '\t' : ' ', out);
  fputc('^', out);
  int hi = at.hi < eol ? at.hi : eol;
  for (int i = at.lo + 1; i < hi; i++)
    if (((unsigned char)src->text[i] & 0xC0) != 0x80)
      fputc('~', out);
  fputc('\n', out);
}

static void note_at(Diag *d, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note_at(Diag *d, Span at, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", at, fmt, ap);
  va_end(ap);
}

/* Where the code of a diagnostic was inlined from: one note per call. */
static void inline_notes(Diag *d)
{
  for (const Inline *f = d->inl; f; f = f->up) {
    int line, col;
    src_linecol(d->src, f->call.lo, &line, &col);
    note_at(d, f->call, "in '%s' called from %s:%d:%d", f->func, src_of(d->src, f->call.lo)->name, line, col);
  }
}

void diag_error(Diag *d, Span at, const char *fmt, ...)
{
  int max = d->max_errors ? d->max_errors : 20;
  if (++d->nerrors > max) {
    if (d->nerrors == max + 1)
      fprintf(d->out ? d->out : stderr, "%s: too many errors, stopping\n", d->src->name);
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  report(d, "error", at, fmt, ap);
  va_end(ap);
  inline_notes(d);
}

void diag_note(Diag *d, Span at, const char *fmt, ...)
{
  int max = d->max_errors ? d->max_errors : 20;
  if (d->nerrors > max)
    return; /* the error it belongs to was not shown */
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", at, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, Span at, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  report(d, "warning", at, fmt, ap);
  va_end(ap);
}

_Noreturn void ice_at(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "stencilc: internal compiler error at %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nThis is a bug in stencilc, not in your program. Please report it "
                  "with the .stn file that triggered it.\n");
  va_end(ap);
  exit(70);
}
