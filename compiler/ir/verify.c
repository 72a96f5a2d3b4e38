/* verify.c: the IR's invariants, checked between passes in debug builds
 * (--verify-ir, on by default with -DSTN_DEBUG). A violation is a compiler
 * bug and is reported with ice(). */
#include "ir/ir.h"

static void check(int ok, const char *after, const char *kernel, int node, const char *what)
{
  if (!ok)
    ice("IR verifier, after pass '%s', kernel '%s', node %%%d: %s", after, kernel, node, what);
}

static int numeric(Type t) { return t == TY_INT || t == TY_FLOAT || t == TY_DOUBLE; }

/* A temporally blocked loop: its pairs are what its kernel reads and writes. */
static void verify_tb(const IrProgram *p, const IrBlock *blk, const char *after)
{
  for (int i = 0; i < blk->len; i++) {
    const IrStmt *s = blk->data[i];
    const IrTb *tb = s->tb;
    if (tb) {
      const IrKernel *k = p->kernels.data[tb->kernel];
      /* one step a pass only as the strip kernel with partial sums (tblock.c tb_strip_single) */
      check(s->kind == H_FOR && tb->steps >= 1 && tb->steps <= 8 && tb->npairs >= 1 &&
                (tb->steps >= 2 || (tb->cuda == TB_STRIP && tb->psum >= 0 && k->rank == 3)),
            after, k->name, -1, "temporal blocking of a loop that is not a counted loop, or with a bad step count");
      for (int q = 0; q < tb->npairs; q++) {
        int loads = 0, stores = 0;
        for (int n = 0; n < k->nodes.len; n++)
          loads += k->nodes.data[n].op == OP_LOAD && k->nodes.data[n].ref == tb->cur[q];
        for (int e = 0; e < k->effects.len; e++)
          stores += k->effects.data[e].kind == EFF_STORE && k->effects.data[e].ref == tb->next[q];
        check(loads && stores, after, k->name, -1, "a temporal-blocking pair the kernel does not read and write");
        check(tb->scratch[q] >= 0 && tb->scratch[q] < p->fields.len &&
              p->fields.data[tb->scratch[q]].scratch_of == tb->cur[q], after, k->name, -1,
              "a temporal-blocking pair without its scratch field");
        int sn = tb->scratch_next[q];
        check(tb->predicated ? sn >= 0 && sn < p->fields.len && p->fields.data[sn].scratch_of == tb->next[q] : sn == -1,
              after, k->name, -1, "a temporal-blocking pair whose next field's twin does not match its predicated store");
      }
    }
    verify_tb(p, &s->body, after);
    verify_tb(p, &s->els, after);
  }
}

void ir_verify(const IrProgram *p, const char *after)
{
  verify_tb(p, &p->main, after);
  for (int ki = 0; ki < p->kernels.len; ki++) {
    const IrKernel *k = p->kernels.data[ki];
    const IrGrid *g = &p->grids.data[k->grid];
    for (int i = 0; i < k->nodes.len; i++) {
      const IrNode *n = &k->nodes.data[i];
      const OpInfo *oi = &op_info[n->op];
      check(n->op >= 0 && n->op < OP__COUNT, after, k->name, i, "bad opcode");
      check(n->ty == TY_BOOL || numeric(n->ty), after, k->name, i, "bad type");
      for (int a = 0; a < oi->nargs; a++) {
        check(n->arg[a] >= 0 && n->arg[a] < i, after, k->name, i, "operand not defined before use");
        if (n->level >= 0)
          check(k->nodes.data[n->arg[a]].level <= n->level, after, k->name, i,
                "operand computed in a deeper loop than its user");
      }
      const IrNode *a0 = oi->nargs > 0 ? &k->nodes.data[n->arg[0]] : NULL;
      const IrNode *a1 = oi->nargs > 1 ? &k->nodes.data[n->arg[1]] : NULL;
      if (oi->form == INFIX && !(oi->flags & F_CMP) && n->op != OP_AND && n->op != OP_OR)
        check(a0->ty == n->ty && a1->ty == n->ty, after, k->name, i, "arithmetic operand types differ from result");
      if (oi->flags & F_CMP)
        check(n->ty == TY_BOOL && a0->ty == a1->ty, after, k->name, i, "comparison types");
      if (n->op == OP_AND || n->op == OP_OR || n->op == OP_NOT)
        check(a0->ty == TY_BOOL && (!a1 || a1->ty == TY_BOOL), after, k->name, i, "logic on non-bool");
      if (n->op == OP_SELECT)
        check(a0->ty == TY_BOOL && k->nodes.data[n->arg[1]].ty == n->ty && k->nodes.data[n->arg[2]].ty == n->ty,
              after, k->name, i, "select types");
      if (n->op == OP_LOAD) {
        check(n->ref >= 0 && n->ref < p->fields.len && p->fields.data[n->ref].grid == k->grid,
              after, k->name, i, "load of a field not on the kernel's grid");
        check(n->ty == p->fields.data[n->ref].ty, after, k->name, i, "load type differs from field");
        for (int d = 0; d < k->rank; d++)
          check(-n->off[d] <= g->halo_lo[d] && n->off[d] <= g->halo_hi[d], after, k->name, i,
                "load reaches beyond the grid's halo");
      }
      if (n->op == OP_INDEX)
        check(n->ref >= 0 && n->ref < k->rank, after, k->name, i, "index dimension out of range");
    }
    for (int d = 0; d < k->rank; d++) {
      check(k->lo[d] >= 0 && k->lo[d] < k->nodes.len && k->nodes.data[k->lo[d]].ty == TY_INT, after, k->name,
            k->lo[d], "bad region bound");
      check(k->hi[d] >= 0 && k->hi[d] < k->nodes.len && k->nodes.data[k->hi[d]].ty == TY_INT, after, k->name,
            k->hi[d], "bad region bound");
    }
    /* --mpi: an exchange is of a field the kernel loads (--tb across
     * ranks: or stores, as its role says), within the halo, and a kernel
     * with loads at offsets exchanges them (passes/mpi.c) */
    check(!k->deep || (k->deep <= g->halo_lo[0] && k->deep <= g->halo_hi[0]), after, k->name, -1,
          "deep exchange deeper than the grid's halo");
    for (int i = 0; i < k->xch.len; i++) {
      const IrXField *x = &k->xch.data[i];
      int roles = x->field >= 0 && x->field < p->fields.len &&
                  (x->role & XF_NOREAD ? !ir_reads_field(k, x->field) : ir_reads_field(k, x->field)) &&
                  !(x->role & (XF_WFULL | XF_WPART)) == !ir_stores_field(k, x->field);
      check(roles && (k->deep || !x->role), after, k->name, -1,
            k->deep ? "exchange whose role is not what the kernel does with the field"
                    : "exchange of a field the kernel does not read");
      for (int d = 0; d < k->rank; d++)
        check(x->lo[d] <= g->halo_lo[d] && x->hi[d] <= g->halo_hi[d], after, k->name, -1,
              "exchange wider than the grid's halo");
      check(x->dirs != 0 && x->dirs < (1u << (k->rank == 3 ? 27 : k->rank == 2 ? 9 : 3)), after, k->name, -1,
            "exchange of no side, or of a side the grid's rank has not");
    }
    for (int j = 0; j < k->nodes.len && p->mpi; j++) {
        const IrNode *n = &k->nodes.data[j];
        int off = 0;
        for (int d = 0; d < k->rank && n->op == OP_LOAD; d++)
          off |= n->off[d] != 0;
        int found = !off;
        for (int x = 0; x < k->xch.len && !found; x++)
          found = k->xch.data[x].field == n->ref;
        check(found, after, k->name, j, "a load at an offset of a field that is not exchanged");
    }
    for (int i = 0; i < k->effects.len; i++) {
      const IrEffect *e = &k->effects.data[i];
      check(e->val >= 0 && e->val < k->nodes.len, after, k->name, e->val, "effect of an undefined value");
      check(e->pred < k->nodes.len && (e->pred < 0 || k->nodes.data[e->pred].ty == TY_BOOL), after, k->name,
            e->pred, "bad predicate");
      if (e->kind == EFF_STORE)
        check(k->nodes.data[e->val].ty == p->fields.data[e->ref].ty, after, k->name, e->val, "store type");
      else
        check(k->nodes.data[e->val].ty == k->reds.data[e->ref].ty, after, k->name, e->val, "reduction type");
    }
  }
}
