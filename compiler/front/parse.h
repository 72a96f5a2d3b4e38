/* parse.h: the parser's entry point and the state the reentrant lexer and
 * parser share (no globals: everything hangs off ParseCtx). */
#ifndef STN_PARSE_H
#define STN_PARSE_H
#include "front/ast.h"

typedef struct Bracket { int tok; Span at; } Bracket;

typedef struct ParseCtx {
  Arena *arena;
  Diag *diag;
  Program *prog;
  const Source *src;
  int offset;              /* lexer: byte offset of the next token */
  void *scanner;           /* flex's reentrant state */
  Span prev, cur;          /* the last two tokens read */
  Span comment_at;         /* lexer: where the open comment started */
  Vec(Bracket) brackets;   /* lexer: open ( [ { for "to close" hints */
} ParseCtx;

/* Parses src into prog; returns the number of errors reported. */
int parse_program(Arena *arena, Diag *diag, const Source *src, Program *prog);
const char *parse_op_name(int tok);
/* `import "file.stn";` (front/import.c): the imported files' consts, params
 * and funcs spliced in place of each import; dirs: -I, searched after the
 * importing file's folder. Returns the errors reported. */
int import_files(Arena *arena, Diag *diag, Program *prog, Source *src, const char *const *dirs, int ndirs);
#endif
