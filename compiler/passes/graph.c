/* graph.c: which time loops replay their iterations as CUDA graphs.
 *
 * A launch costs about 3-4 us however small its grid, so a loop of small
 * steps runs at the launch rate: j2d5pt's default build ran 4.3 us a step
 * at 64^2 to 1024^2 on the H200, where 100 of its steps recorded into a
 * CUDA graph and replayed ran 1.1 us (docs/benchmarks.md 2026-11-29 03:12).
 * A graph freezes what its launches were given, so only a loop whose
 * iterations do the same thing each time qualifies: on CUDA, a counted
 * loop whose body only calls kernels and swaps fields, but for guards
 * (`if`s on the loop's variable alone, without else: the run time replays
 * only runs of iterations where none holds, and runs the others plainly);
 * the kernels' arguments may read main's variables that the loop does not
 * assign, not its own variable (nor any variable where the loop is inside
 * another, whose iterations may assign them). A reduction's result reaches
 * main lazily (runtime/stn_cuda.h stn_reduction): the partials of the last
 * replayed launch are finished when main reads the variable after the
 * loop, so a kernel may reduce (Himeno's gosa), once an iteration (a
 * second call would deliver the first's result on the host). Its period is
 * the order of the body's permutation of the fields (2 for a swap, 1
 * without, 3 for a rotation of three), and a replay runs a multiple of it
 * (IrStmt.graph, about GRAPH_ITERS iterations), so that the fields are
 * where the host's descriptors say after each replay. A temporally
 * blocked loop's single steps (its remainder, or all of them where fused
 * passes do not pay: small grids) qualify the same way; its fused passes
 * are never small launches. The run time records the graph after a few
 * plain iterations and replays it (runtime/stn_cuda.h stn_cuda_graph).
 * Not under --mpi: the halo exchanges between launches wait on the host;
 * nor in library mode, whose contexts bind their fields to one run
 * function (docs/library.md).
 * -fno-graph keeps every launch. Each loop that calls a kernel and does
 * not qualify gets the reason (IrStmt.graph_why) for --report and
 * --emit=ir. */
#include "passes/passes.h"
#include <string.h>

enum { GRAPH_ITERS = 16 };

static int gcd(int a, int b)
{
  while (b) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Whether host expression id reads variable `only` of main, or any where
 * only < 0 (*var: which). */
static int reads_var(const IrProgram *p, int id, int only, int *var)
{
  const IrNode *n = &p->host.data[id];
  if (n->op == OP_VAR && (only < 0 || n->ref == only)) {
    *var = n->ref;
    return 1;
  }
  for (int a = 0; a < op_info[n->op].nargs; a++)
    if (reads_var(p, n->arg[a], only, var))
      return 1;
  return 0;
}

/* Variable v as the program names it (lower.c numbers the C names of
 * variables that share one: n__2). */
static const char *user_name(const IrProgram *p, int v)
{
  const char *n = p->vars.data[v].name, *u = strstr(n, "__");
  if (!u || !u[2])
    return n;
  for (const char *d = u + 2; *d; d++)
    if (*d < '0' || *d > '9')
      return n;
  return arena_printf(p->arena, "%.*s", (int)(u - n), n);
}

/* Marks in `set` the variables that statements of blk assign, at any
 * depth: assignments, reductions' results, loop variables, timers. */
static void assigned_vars(const IrBlock *blk, char *set)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    if (s->kind == H_ASSIGN || s->kind == H_FOR || s->kind == H_TIMER)
      set[s->var] = 1;
    for (int r = 0; s->kind == H_CALL && r < s->results.len; r++)
      if (s->results.data[r] >= 0)
        set[s->results.data[r]] = 1;
    assigned_vars(&s->body, set);
    assigned_vars(&s->els, set);
  }
}

static int has_break(const IrBlock *blk)
{
  for (int i = 0; i < blk->len; i++)
    if (blk->data[i]->kind == H_BREAK || has_break(&blk->data[i]->body) || has_break(&blk->data[i]->els))
      return 1;
  return 0;
}

/* Why the iterations of loop s cannot be one graph's, or NULL; *calls:
 * whether it calls a kernel, *guards: its guards. What the body passes
 * kernels must not change from one iteration to the next: no variable
 * the loop assigns (its own, its reductions' results, what its guards
 * assign), and, where the loop is inside another (nested), no variable at
 * all (the outer loop may assign it between two runs of this one). A
 * guard is an `if` without `else` whose condition reads no variable but
 * the loop's own (`if n % OUT == 0 { write ... }`): the run time replays
 * only runs of iterations in which every guard's condition is false, and
 * runs the others plainly, guards and all. */
static const char *body_why(const IrProgram *p, const IrStmt *loop, int nested, int *calls, int *guards)
{
  const IrBlock *body = &loop->body;
  int loopvar = loop->kind == H_FOR ? loop->var : -1;
  char *set = arena_alloc(p->arena, (size_t)p->vars.len + 1);
  memset(set, 0, (size_t)p->vars.len + 1);
  assigned_vars(body, set);
  if (loopvar >= 0)
    set[loopvar] = 1;
  *calls = *guards = 0;
  for (int i = 0; i < body->len; i++)
    *calls |= body->data[i]->kind == H_CALL;
  for (int i = 0; i < body->len; i++) {
    const IrStmt *s = body->data[i];
    int line = ir_line(p, s->span), v;
    switch (s->kind) {
    case H_SWAP: continue;
    case H_CALL: {
      const IrKernel *k = p->kernels.data[s->kernel];
      for (int j = 0; j < i && k->reds.len; j++)
        if (body->data[j]->kind == H_CALL && body->data[j]->kernel == s->kernel)
          return arena_printf(p->arena, "line %d: kernel %s reduces a second time an iteration", line, k->name);
      for (int a = 0; a < s->args.len; a++)
        if (reads_var(p, s->args.data[a], -1, &v) && (nested || set[v]))
          return arena_printf(p->arena, v == loopvar ? "line %d: kernel %s takes the loop's variable %s, which a graph would freeze"
                                        : set[v] ? "line %d: kernel %s takes %s, which the loop assigns"
                                                 : "line %d: kernel %s takes %s, which the loop around this one may change",
                              line, k->name, user_name(p, v));
      continue;
    }
    case H_IF:
      if (s->els.len)
        return arena_printf(p->arena, "line %d: decides on the host (an if with an else)", line);
      if (reads_var(p, s->expr, -1, &v) && v != loopvar)
        return arena_printf(p->arena, "line %d: decides on the host by %s (an if may test the loop's variable only)",
                            line, user_name(p, v));
      if (has_break(&s->body))
        return arena_printf(p->arena, "line %d: may leave the loop", line);
      ++*guards;
      continue;
    case H_ASSIGN: return arena_printf(p->arena, "line %d: assigns %s on the host", line, user_name(p, s->var));
    case H_PRINT: return arena_printf(p->arena, "line %d: prints", line);
    case H_WRITE: return arena_printf(p->arena, "line %d: writes a file", line);
    case H_READ: return arena_printf(p->arena, "line %d: reads a file", line);
    case H_BREAK: return arena_printf(p->arena, "line %d: may leave the loop", line);
    case H_TIMER: return arena_printf(p->arena, "line %d: times on the host", line);
    case H_FOR:
    case H_WHILE: return arena_printf(p->arena, "line %d: a loop inside it", line);
    }
  }
  return NULL;
}

/* The order of body's permutation of the fields (its swaps, in order). */
static int body_period(const IrProgram *p, const IrBlock *body)
{
  int n = p->fields.len, period = 1;
  int *where = xrealloc(NULL, sizeof(int) * (size_t)(n + 1)), *seen = xrealloc(NULL, sizeof(int) * (size_t)(n + 1));
  for (int f = 0; f < n; f++) {
    where[f] = f; /* whose storage field f holds after the body */
    seen[f] = 0;
  }
  for (int i = 0; i < body->len; i++) {
    const IrStmt *s = body->data[i];
    if (s->kind == H_SWAP) {
      int t = where[s->field];
      where[s->field] = where[s->field2];
      where[s->field2] = t;
    }
  }
  for (int f = 0; f < n; f++) {
    int len = 0;
    for (int g = f; !seen[g]; g = where[g], len++)
      seen[g] = 1;
    if (len)
      period = period / gcd(period, len) * len;
  }
  free(where);
  free(seen);
  return period;
}

static void mark(IrProgram *p, IrBlock *blk, const PassOptions *o, int nested)
{
  for (int i = 0; i < blk->len; i++) {
    IrStmt *s = blk->data[i];
    int loop = s->kind == H_FOR || s->kind == H_WHILE;
    mark(p, &s->body, o, nested + loop);
    mark(p, &s->els, o, nested + loop);
    if (!loop)
      continue;
    int calls, guards;
    const char *why = body_why(p, s, nested, &calls, &guards);
    if (!calls)
      continue;
    if (s->kind == H_WHILE)
      why = "a while loop (its condition is the host's)";
    else if (o->mpi)
      why = "--mpi: the halo exchanges between launches wait on the host";
    else if (o->no_graph)
      why = "-fno-graph";
    else if (o->lib)
      why = "library mode (--emit=lib): the caller's contexts share the run function";
    if (why) {
      s->graph_why = why;
      continue;
    }
    int period = body_period(p, &s->body);
    s->graph_period = period;
    s->graph = (GRAPH_ITERS + period - 1) / period * period;
    s->graph_guards = guards;
  }
}

void pass_graph(IrProgram *p, const PassOptions *o)
{
  if (o->target != TARGET_CUDA)
    return;
  mark(p, &p->main, o, 0);
}
