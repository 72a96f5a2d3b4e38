/* inline.c: funcs, inlined where they are called, before the rest of sema
 * checks the program. A call's copy of the func's body replaces the call:
 * scalar parameters become the argument (converted to the parameter's
 * type), locals their initial value, and a field parameter read at an
 * offset becomes the argument field read at that offset plus the offset
 * the func is applied at (lap(u)[1, 0]). A field argument may itself be a
 * stencil func's application, so lap(lap(u)) is the Laplacian of the
 * Laplacian. Every analysis after this sees ordinary expressions; the
 * copied nodes remember the call (Node.inl), so that a diagnostic inside a
 * func says where it was called from, and so that their names bind to
 * globals, not to the caller's locals. */
#include "sema/sema.h"
#include <string.h>

typedef struct Bind {
  const char *name;
  int field;               /* a field parameter: expr is the argument (a field, a component, an application) */
  Node *expr;              /* a scalar: the value, copied at each use */
} Bind;

typedef struct Env {
  Bind *binds;
  int nbinds;
  NodeList offs;           /* the offset the func is applied at (empty: none) */
  const Inline *inl;       /* the call being expanded */
} Env;

typedef struct X {
  Arena *arena;
  Diag *diag;
  Vec(Node *) funcs;
  Vec(const char *) comps; /* fields with components: f[q] names a component */
  int depth;
} X;

static Node *find_func(X *x, const char *name)
{
  for (int i = 0; i < x->funcs.len; i++)
    if (streq(x->funcs.data[i]->name, name))
      return x->funcs.data[i];
  return NULL;
}

static int has_comps(X *x, const char *name)
{
  for (int i = 0; i < x->comps.len; i++)
    if (streq(x->comps.data[i], name))
      return 1;
  return 0;
}

static Node *copy(X *x, const Node *n)
{
  Node *c = ast_new(x->arena, n->kind, n->span);
  Node *keep = c;
  *c = *n;
  c = keep;
  c->list = (NodeList){ 0 };
  c->list2 = (NodeList){ 0 };
  return c;
}

/* A deep copy (the arguments: each use gets its own). */
static Node *clone(X *x, const Node *n)
{
  if (!n)
    return NULL;
  Node *c = copy(x, n);
  c->a = clone(x, n->a);
  c->b = clone(x, n->b);
  c->c = clone(x, n->c);
  for (int i = 0; i < n->list.len; i++)
    vec_push(&c->list, clone(x, n->list.data[i]));
  for (int i = 0; i < n->list2.len; i++)
    vec_push(&c->list2, clone(x, n->list2.data[i]));
  return c;
}

/* a + b as offset lists (either may be empty) */
static NodeList add_offsets(X *x, NodeList a, NodeList b, Span at, const Inline *inl)
{
  NodeList out = { 0 };
  if (!a.len) {
    for (int i = 0; i < b.len; i++)
      vec_push(&out, clone(x, b.data[i]));
    return out;
  }
  if (!b.len) {
    for (int i = 0; i < a.len; i++)
      vec_push(&out, clone(x, a.data[i]));
    return out;
  }
  if (a.len != b.len) {
    const Inline *save = x->diag->inl;
    x->diag->inl = inl;
    diag_error(x->diag, at, "this read has %d offset%s but the func is applied at %d", a.len, a.len == 1 ? "" : "s",
               b.len);
    x->diag->inl = save;
    return out;
  }
  for (int i = 0; i < a.len; i++) {
    Node *s = ast_new(x->arena, N_BINARY, at);
    s->op = '+';
    s->a = clone(x, a.data[i]);
    s->b = clone(x, b.data[i]);
    s->inl = inl;
    vec_push(&out, s);
  }
  return out;
}

static Node *expand_call(X *x, Node *call);
static Node *subst(X *x, const Node *e, Env *env);
static Node *subst_app(X *x, const Node *a, Env *env);

/* The field argument `arg` read at `offs` (a read in the func's body at
 * `at`): u[offs], f[q][offs], or the stencil func arg applied at offs. */
static Node *access(X *x, Node *arg, NodeList offs, const Node *at, const Inline *inl)
{
  if (arg->kind == N_NAME) {
    Node *r = ast_new(x->arena, offs.len ? N_INDEX : N_NAME, at->span);
    r->name = arg->name;
    r->name_span = at->name_span;
    r->list = offs;
    r->inl = inl;
    return r;
  }
  if (arg->kind == N_INDEX && arg->op == 'S') { /* a field (or component) at a shift */
    Node *r = ast_new(x->arena, N_INDEX, at->span);
    r->name = arg->name;
    r->name_span = at->name_span;
    for (int i = 0; i < arg->list2.len; i++)
      vec_push(&r->list2, clone(x, arg->list2.data[i]));
    r->list = add_offsets(x, arg->list, offs, at->span, inl);
    r->inl = inl;
    return r;
  }
  if (arg->kind == N_INDEX) { /* a component, f[q] */
    Node *r = ast_new(x->arena, N_INDEX, at->span);
    r->name = arg->name;
    r->name_span = at->name_span;
    vec_push(&r->list2, clone(x, arg->list.data[0]));
    if (offs.len) {
      r->list = offs;
    } else { /* f[q] at the point: f[q][0, ...] needs a rank; f[q] alone is the component */
      r->list = r->list2;
      r->list2 = (NodeList){ 0 };
    }
    r->inl = inl;
    return r;
  }
  /* a stencil func's application, applied again at offs */
  Node *c = clone(x, arg);
  c->list2 = add_offsets(x, arg->list2, offs, at->span, inl);
  c->has_init = c->list2.len > 0;
  return expand_call(x, c);
}

/* A field argument moved by offs: u -> u shifted, an application applied
 * further along. */
static Node *shift(X *x, Node *arg, NodeList offs, const Inline *inl)
{
  if (!offs.len)
    return clone(x, arg);
  if (arg->kind == N_CALL) {
    Node *c = clone(x, arg);
    c->list2 = add_offsets(x, arg->list2, offs, arg->span, inl);
    c->has_init = 1;
    return c;
  }
  Node *r = ast_new(x->arena, N_INDEX, arg->span);
  r->op = 'S';
  r->name = arg->name;
  r->name_span = arg->name_span;
  r->inl = arg->inl;
  if (arg->kind == N_INDEX && arg->op == 'S') {
    for (int i = 0; i < arg->list2.len; i++)
      vec_push(&r->list2, clone(x, arg->list2.data[i]));
    r->list = add_offsets(x, arg->list, offs, arg->span, inl);
  } else {
    if (arg->kind == N_INDEX) /* a component */
      vec_push(&r->list2, clone(x, arg->list.data[0]));
    r->list = add_offsets(x, (NodeList){ 0 }, offs, arg->span, inl);
  }
  return r;
}

static Bind *bound(Env *env, const char *name)
{
  for (int i = env->nbinds - 1; i >= 0; i--)
    if (streq(env->binds[i].name, name))
      return &env->binds[i];
  return NULL;
}

/* The func's body node e with the call's bindings. */
static Node *subst(X *x, const Node *e, Env *env)
{
  if (!e)
    return NULL;
  if (e->kind == N_NAME) {
    Bind *b = bound(env, e->name);
    if (b && b->field)
      return access(x, b->expr, add_offsets(x, (NodeList){ 0 }, env->offs, e->span, env->inl), e, env->inl);
    if (b)
      return clone(x, b->expr);
  }
  if (e->kind == N_INDEX) {
    Bind *b = bound(env, e->name);
    if (b && b->field) {
      if (e->list2.len) {
        const Inline *save = x->diag->inl;
        x->diag->inl = env->inl;
        diag_error(x->diag, e->span, "'%s' is a field parameter: one field or one component, read as %s[offsets]",
                   e->name, e->name);
        x->diag->inl = save;
      }
      NodeList offs = { 0 };
      for (int i = 0; i < e->list.len; i++)
        vec_push(&offs, subst(x, e->list.data[i], env));
      return access(x, b->expr, add_offsets(x, offs, env->offs, e->span, env->inl), e, env->inl);
    }
  }
  if (e->kind == N_CALL && find_func(x, e->name)) /* a call in the body: its field arguments stay fields */
    return expand_call(x, subst_app(x, e, env));
  Node *c = copy(x, e);
  c->inl = env->inl;
  c->a = subst(x, e->a, env);
  c->b = subst(x, e->b, env);
  c->c = subst(x, e->c, env);
  for (int i = 0; i < e->list.len; i++)
    vec_push(&c->list, subst(x, e->list.data[i], env));
  for (int i = 0; i < e->list2.len; i++)
    vec_push(&c->list2, subst(x, e->list2.data[i], env));
  return c;
}

/* An application used as a field argument in the body: its arguments
 * substituted, itself not expanded (access() applies it where read). */
static Node *subst_app(X *x, const Node *a, Env *env)
{
  Node *g = find_func(x, a->name);
  Node *c = copy(x, a);
  c->inl = env->inl;
  for (int i = 0; i < a->list.len; i++) {
    const Node *arg = a->list.data[i];
    int field = i < g->list2.len && g->list2.data[i]->ival;
    Bind *b = arg->kind == N_NAME ? bound(env, arg->name) : NULL;
    if (field && b && b->field)
      vec_push(&c->list, shift(x, b->expr, env->offs, env->inl));
    else if (field && arg->kind == N_CALL && find_func(x, arg->name))
      vec_push(&c->list, subst_app(x, arg, env));
    else
      vec_push(&c->list, subst(x, arg, env));
  }
  for (int i = 0; i < a->list2.len; i++)
    vec_push(&c->list2, subst(x, a->list2.data[i], env));
  return c;
}

static Node *convert_to(X *x, Type ty, Node *v, const Inline *inl)
{
  Node *c = ast_new(x->arena, N_CAST, v->span);
  c->ty = ty;
  c->a = v;
  c->inl = inl;
  return c;
}

/* A call of a func (its arguments already expanded): the body's copy. */
static Node *expand_call(X *x, Node *call)
{
  Node *f = find_func(x, call->name);
  if (++x->depth > 64) { /* recursion is reported before expansion; this is a guard */
    x->depth--;
    return call;
  }
  Inline *fr = arena_alloc(x->arena, sizeof *fr);
  fr->func = f->name;
  fr->call = call->span;
  fr->up = call->inl;
  if (call->list.len != f->list2.len) {
    const Inline *save = x->diag->inl;
    x->diag->inl = call->inl;
    diag_error(x->diag, call->span, "'%s' takes %d argument%s, but %d %s given", f->name, f->list2.len,
               f->list2.len == 1 ? "" : "s", call->list.len, call->list.len == 1 ? "is" : "are");
    diag_note(x->diag, f->name_span, "'%s' is defined here", f->name);
    x->diag->inl = save;
    x->depth--;
    return call;
  }
  Env env = { 0 };
  env.inl = fr;
  env.offs = call->list2;
  env.binds = arena_alloc(x->arena, sizeof *env.binds * (size_t)(f->list2.len + 64 * (f->list.len + 1)));
  int ok = 1;
  for (int i = 0; i < f->list2.len; i++) {
    Node *p = f->list2.data[i], *a = call->list.data[i];
    Bind *b = &env.binds[env.nbinds++];
    b->name = p->name;
    b->field = (int)p->ival;
    if (!b->field) {
      b->expr = convert_to(x, p->ty, a, call->inl);
      continue;
    }
    int is_field_arg = a->kind == N_NAME || (a->kind == N_INDEX && a->op == 'S') ||
                       (a->kind == N_INDEX && !a->list2.len && a->list.len == 1 && has_comps(x, a->name)) ||
                       (a->kind == N_CALL && find_func(x, a->name));
    if (!is_field_arg) {
      const Inline *save = x->diag->inl;
      x->diag->inl = call->inl;
      diag_error(x->diag, a->span, "argument %d of '%s' is the field parameter '%s': pass a field, one component "
                 "of one (f[q]) or a stencil func applied to one", i + 1, f->name, p->name);
      x->diag->inl = save;
      ok = 0;
    }
    b->expr = a;
  }
  if (!ok) {
    x->depth--;
    return call;
  }
  for (int i = 0; i < f->list.len; i++) { /* locals: their values */
    Node *d = f->list.data[i];
    for (int k = 0; k < d->list.len; k++) {
      Node *item = d->list.data[k];
      Bind *b = &env.binds[env.nbinds++];
      b->name = item->name;
      b->field = 0;
      b->expr = item->a ? convert_to(x, d->ty, subst(x, item->a, &env), fr) : NULL;
      if (!b->expr) {
        const Inline *save = x->diag->inl;
        x->diag->inl = fr;
        diag_error(x->diag, item->span, "a local of a func needs a value: %s %s = ...;", type_name(d->ty), item->name);
        x->diag->inl = save;
        b->expr = ast_new(x->arena, N_INT, item->span);
      }
    }
  }
  Node *body = convert_to(x, f->ty, subst(x, f->a, &env), fr);
  body->span = call->span;
  x->depth--;
  return body;
}

/* Replaces every call of a func in n's subtree, outermost first (a field
 * argument that is an application stays one until it is read), then the
 * calls the copies still hold (in scalar arguments). */
static void expand_top(X *x, Node **np)
{
  Node *n = *np;
  if (!n)
    return;
  if (n->kind == N_CALL && find_func(x, n->name)) {
    *np = expand_call(x, n);
    if (*np != n)
      expand_top(x, np);
    return;
  }
  expand_top(x, &n->a);
  expand_top(x, &n->b);
  expand_top(x, &n->c);
  for (int i = 0; i < n->list.len; i++)
    expand_top(x, &n->list.data[i]);
  for (int i = 0; i < n->list2.len; i++)
    expand_top(x, &n->list2.data[i]);
}

/* Calls of funcs in n's subtree (for the recursion check). */
static void calls_in(X *x, const Node *n, NodeList *out)
{
  if (!n)
    return;
  if (n->kind == N_CALL && find_func(x, n->name))
    vec_push(out, (Node *)n);
  calls_in(x, n->a, out);
  calls_in(x, n->b, out);
  calls_in(x, n->c, out);
  for (int i = 0; i < n->list.len; i++)
    calls_in(x, n->list.data[i], out);
  for (int i = 0; i < n->list2.len; i++)
    calls_in(x, n->list2.data[i], out);
}

/* Does func f reach target through its calls? (path: the calls on the way) */
static int reaches(X *x, Node *f, Node *target, int *seen, Node **via)
{
  int id = -1;
  for (int i = 0; i < x->funcs.len; i++)
    if (x->funcs.data[i] == f)
      id = i;
  if (seen[id])
    return 0;
  seen[id] = 1;
  NodeList calls = { 0 };
  calls_in(x, f, &calls);
  int hit = 0;
  for (int i = 0; i < calls.len && !hit; i++) {
    Node *g = find_func(x, calls.data[i]->name);
    if (g == target || reaches(x, g, target, seen, via)) {
      hit = 1;
      *via = calls.data[i];
    }
  }
  vec_free(&calls);
  return hit;
}

int sema_inline(Arena *arena, Diag *diag, Program *prog)
{
  X x = { .arena = arena, .diag = diag };
  int before = diag->nerrors;
  for (int i = 0; i < prog->decls.len; i++) {
    Node *d = prog->decls.data[i];
    if (d->kind == N_FUNC) {
      Node *prev = find_func(&x, d->name);
      if (prev) {
        diag_error(diag, d->name_span, "redefinition of func '%s'", d->name);
        diag_note(diag, prev->name_span, "previous definition is here");
        continue;
      }
      for (int p = 0; p < d->list2.len; p++)
        for (int q = 0; q < p; q++)
          if (streq(d->list2.data[p]->name, d->list2.data[q]->name))
            diag_error(diag, d->list2.data[p]->span, "parameter '%s' is declared twice", d->list2.data[p]->name);
      vec_push(&x.funcs, d);
    }
    if (d->kind == N_FIELD)
      for (int k = 0; k < d->list.len; k++)
        if (d->list.data[k]->b)
          vec_push(&x.comps, d->list.data[k]->name);
  }
  /* recursion: funcs are inlined, so a func may not reach itself */
  int *seen = calloc((size_t)x.funcs.len + 1, sizeof *seen);
  for (int i = 0; i < x.funcs.len; i++) {
    Node *f = x.funcs.data[i];
    memset(seen, 0, sizeof *seen * (size_t)(x.funcs.len + 1));
    Node *via = NULL;
    NodeList calls = { 0 };
    calls_in(&x, f, &calls);
    for (int c = 0; c < calls.len; c++) {
      Node *g = find_func(&x, calls.data[c]->name);
      memset(seen, 0, sizeof *seen * (size_t)(x.funcs.len + 1));
      if (g == f || reaches(&x, g, f, seen, &via)) {
        diag_error(diag, calls.data[c]->span, "'%s' calls itself%s%s%s: funcs are inlined where they are called, so "
                   "they cannot be recursive", f->name, g == f ? "" : " (through '", g == f ? "" : g->name,
                   g == f ? "" : "')");
        f->has_init = -1; /* not expanded */
        break;
      }
    }
    vec_free(&calls);
  }
  free(seen);
  if (diag->nerrors > before) {
    vec_free(&x.funcs);
    vec_free(&x.comps);
    return diag->nerrors - before;
  }
  for (int i = 0; i < prog->decls.len; i++) {
    Node *d = prog->decls.data[i];
    if (d->kind == N_KERNEL)
      expand_top(&x, &d->b);
    else if (d->kind == N_MAIN)
      expand_top(&x, &d->a);
  }
  vec_free(&x.funcs);
  vec_free(&x.comps);
  return diag->nerrors - before;
}
