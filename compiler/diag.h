/* diag.h: source text, spans and the one diagnostic printer.
 * A Span is a byte range in the source; line and column are computed only
 * when a message is printed. User errors go through diag_error; compiler
 * bugs go through ice(), which names the compiler's own file and line. */
#ifndef STN_DIAG_H
#define STN_DIAG_H
#include <stdio.h>

typedef struct Span { int lo, hi; } Span;

typedef struct Source {
  const char *name;
  const char *text;
  int len;
  int base;                  /* spans of this file start here (imported files follow the main one) */
  const struct Source *next; /* the files imported after it */
} Source;

/* The file a span offset falls in (src or one after it in the chain). */
const Source *src_of(const Source *src, int off);

/* A func inlined at a call (sema/inline.c): a diagnostic in its copy
 * adds "in 'lap' called from FILE:LINE:COL" for each call around it. */
typedef struct Inline {
  const char *func;
  Span call;
  const struct Inline *up;   /* the call the calling code came from, or NULL */
} Inline;

typedef struct Diag {
  const Source *src;
  const Inline *inl;    /* set while sema checks code inlined from a func */
  int nerrors;
  int max_errors;       /* stop reporting after this many (0: 20) */
  FILE *out;
} Diag;

Span span_join(Span a, Span b);
void src_linecol(const Source *src, int off, int *line, int *col);

void diag_error(Diag *d, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diag *d, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

_Noreturn void ice_at(const char *file, int line, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
#define ice(...) ice_at(__FILE__, __LINE__, __VA_ARGS__)
#define unreachable() ice_at(__FILE__, __LINE__, "unreachable code reached")
#endif
