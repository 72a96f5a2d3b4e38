/* import.c: `import "file.stn";` brings another file's consts, params and
 * funcs into the program, in place of the import, so that a project keeps
 * its discretisations in one file. The file is looked for beside the file
 * that imports it, then in each -I directory in order; a file imported
 * twice (by any path) is brought in once. Its spans follow the files read
 * before it (Source.base), so diagnostics name the imported file. */
#include "front/parse.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct Importer {
  Arena *arena;
  Diag *diag;
  const char *const *dirs;
  int ndirs;
  Source *last;            /* the chain's last file: the next one's base follows it */
  Vec(char *) seen;        /* realpath of every file brought in */
} Importer;

static char *slurp(const char *path, int *len)
{
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return NULL;
  Buf b = { 0 };
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
    buf_append(&b, chunk, n);
  fclose(fp);
  *len = (int)b.len;
  if (!b.s)
    buf_puts(&b, "");
  return b.s;
}

static const char *decl_word(NodeKind k)
{
  switch (k) {
  case N_GRID: return "grid";
  case N_FIELD: return "field";
  case N_KERNEL: return "kernel";
  case N_MAIN: return "main";
  default: return "declaration";
  }
}

static void import_into(Importer *im, const Source *from, NodeList *decls, NodeList *out);

/* Resolves and reads the file an import names; NULL (said) when missing. */
static Source *open_import(Importer *im, const Source *from, const Node *imp)
{
  char path[PATH_MAX + 1];
  const char *slash = strrchr(from->name, '/');
  Buf tried = { 0 };
  for (int d = -1; d < im->ndirs; d++) {
    if (imp->name[0] == '/' && d >= 0)
      break;
    if (imp->name[0] == '/')
      snprintf(path, sizeof path, "%s", imp->name);
    else if (d < 0)
      snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - from->name + 1) : 0, from->name, imp->name);
    else
      snprintf(path, sizeof path, "%s/%s", im->dirs[d], imp->name);
    buf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
    int len;
    char *text = slurp(path, &len);
    if (!text)
      continue;
    char real[PATH_MAX + 1];
    if (!realpath(path, real))
      snprintf(real, sizeof real, "%s", path);
    for (int i = 0; i < im->seen.len; i++)
      if (streq(im->seen.data[i], real)) {
        free(text);
        buf_free(&tried);
        return (Source *)-1; /* brought in already */
      }
    vec_push(&im->seen, arena_strdup(im->arena, real));
    Source *s = arena_alloc(im->arena, sizeof *s);
    s->name = arena_strdup(im->arena, path);
    s->text = arena_strndup(im->arena, text, (size_t)len);
    s->len = len;
    s->base = im->last->base + im->last->len + 1;
    im->last->next = s;
    im->last = s;
    free(text);
    buf_free(&tried);
    return s;
  }
  diag_error(im->diag, imp->name_span, "cannot find \"%s\" to import (looked for %s; -I DIR adds a folder)", imp->name,
             tried.s);
  buf_free(&tried);
  return NULL;
}

static void import_into(Importer *im, const Source *from, NodeList *decls, NodeList *out)
{
  for (int i = 0; i < decls->len; i++) {
    Node *d = decls->data[i];
    if (!d)
      continue;
    if (d->kind != N_IMPORT) {
      vec_push(out, d);
      continue;
    }
    Source *s = open_import(im, from, d);
    if (!s || s == (Source *)-1)
      continue;
    Program sub = { .src = *s };
    if (parse_program(im->arena, im->diag, s, &sub))
      continue;
    NodeList mine = { 0 };
    import_into(im, s, &sub.decls, &mine);
    for (int k = 0; k < mine.len; k++) {
      Node *e = mine.data[k];
      if (e->kind == N_CONST || e->kind == N_PARAM || e->kind == N_FUNC) {
        vec_push(out, e);
        continue;
      }
      diag_error(im->diag, e->span, "an imported file brings in consts, params and funcs, not a %s; keep it in the "
                 "program that uses it", decl_word(e->kind));
      diag_note(im->diag, d->span, "imported here");
    }
    vec_free(&mine);
    vec_free(&sub.decls);
  }
}

int import_files(Arena *arena, Diag *diag, Program *prog, Source *src, const char *const *dirs, int ndirs)
{
  Importer im = { .arena = arena, .diag = diag, .dirs = dirs, .ndirs = ndirs, .last = src };
  while (im.last->next)
    im.last = (Source *)im.last->next;
  char real[PATH_MAX + 1];
  if (realpath(src->name, real))
    vec_push(&im.seen, arena_strdup(arena, real));
  int before = diag->nerrors;
  NodeList out = { 0 };
  import_into(&im, src, &prog->decls, &out);
  vec_free(&prog->decls);
  prog->decls = out;
  vec_free(&im.seen);
  return diag->nerrors - before;
}
