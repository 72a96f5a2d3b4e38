/* util.h: arenas, growable arrays and small string helpers shared by every
 * phase. Memory is owned by arenas tied to a lifetime (the whole
 * compilation); nothing inside a pass frees. Out of memory is fatal. */
#ifndef STN_UTIL_H
#define STN_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define STENCILC_VERSION "0.1.0"

typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n);          /* zeroed */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...);

void *xrealloc(void *p, size_t n);
_Noreturn void fatal(const char *fmt, ...);

/* Growable array: `Vec(T) v = {0}; vec_push(&v, x); v.len; v.data[i]`.
 * Storage is malloc'd and released with vec_free. */
#define Vec(T) struct { T *data; int len, cap; }
#define vec_push(v, x) do {                                              \
    if ((v)->len == (v)->cap) {                                          \
      (v)->cap = (v)->cap ? 2 * (v)->cap : 8;                            \
      (v)->data = xrealloc((v)->data, (size_t)(v)->cap * sizeof *(v)->data); \
    }                                                                    \
    (v)->data[(v)->len++] = (x);                                         \
  } while (0)
#define vec_free(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* A growing output buffer, used by the printers. */
typedef struct Buf { char *s; size_t len, cap; } Buf;
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_puts(Buf *b, const char *s);
void buf_append(Buf *b, const char *data, size_t n);
void buf_free(Buf *b);

int streq(const char *a, const char *b);
#endif
