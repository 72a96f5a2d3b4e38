/* util.c: arenas, buffers and fatal errors (see util.h). */
#include "util.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 64 * 1024 };

typedef struct Chunk { struct Chunk *next; size_t used, size; max_align_t data[]; } Chunk;
struct Arena { Chunk *head; };

void *xrealloc(void *p, size_t n)
{
  p = realloc(p, n);
  if (!p && n)
    fatal("out of memory (asked for %zu bytes)", n);
  return p;
}

_Noreturn void fatal(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("stencilc: fatal: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

Arena *arena_new(void)
{
  Arena *a = xrealloc(NULL, sizeof *a);
  a->head = NULL;
  return a;
}

void arena_free(Arena *a)
{
  if (!a)
    return;
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t n)
{
  n = (n + 15) & ~(size_t)15;
  Chunk *c = a->head;
  if (!c || c->used + n > c->size) {
    size_t size = n > CHUNK ? n : CHUNK;
    c = xrealloc(NULL, sizeof *c + size);
    c->size = size;
    c->used = 0;
    c->next = a->head;
    a->head = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...)
{
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  va_end(ap);
  return p;
}

void buf_vprintf(Buf *b, const char *fmt, va_list ap)
{
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  b->len += (size_t)n;
  va_end(ap2);
}

void buf_printf(Buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_puts(Buf *b, const char *s) { buf_printf(b, "%s", s); }

void buf_append(Buf *b, const char *data, size_t n)
{
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, data, n);
  b->len += n;
  b->s[b->len] = 0;
}

void buf_free(Buf *b)
{
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }
