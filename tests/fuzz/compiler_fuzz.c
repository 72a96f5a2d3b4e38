/* tests/fuzz/compiler_fuzz.c: libFuzzer harness for the compiler itself
 * (make fuzz-compiler). Each input is a .stn program; it goes through the
 * front end and sema, and when they accept it, lowering, the passes (with
 * the IR verifier between them) and the code generators, for the C,
 * OpenMP and CUDA targets, with and without --mpi and temporal blocking
 * (the options rotate with the input's length, so every input takes
 * one path through each stage). A crash, a sanitizer report or an
 * internal compiler error (stencilc exits 70) is a bug; a rejected
 * program is not. Built with clang -fsanitize=fuzzer,address,undefined
 * from the compiler's sources without main.c. */
#include "backend/cg.h"
#include "front/parse.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "sema/sema.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 1 << 16)
    return 0;
  if (!devnull)
    devnull = fopen("/dev/null", "w");
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  Arena *arena = arena_new();
  Source src = { .name = "fuzz.stn", .text = text, .len = (int)size };
  Diag diag = { .src = &src, .out = devnull };
  Program prog = { .src = src };
  parse_program(arena, &diag, &src, &prog);
  Sema sema = { 0 };
  if (!diag.nerrors)
    sema_check(&sema, arena, &diag, &prog, 1);
  if (!diag.nerrors) {
    /* one configuration per input, chosen by its length */
    static const char *const tbs[] = { NULL, "2", "4", "auto" };
    PassOptions o = { 0 };
    o.target = (Target)(size % 3);
    o.tb = tbs[(size / 3) % 4];
    o.mpi = (size / 12) % 3 == 1;
    o.mpi_exact = (size / 36) % 2;
    o.verify = 1;
    IrProgram *ir = ir_lower(&sema, arena, &src);
    pass_run_pipeline(ir, &o);
    Buf code = { 0 };
    if (o.target == TARGET_CUDA)
      cg_cuda_program(&code, ir);
    else
      cg_c_program(&code, ir, o.target == TARGET_OPENMP);
    buf_free(&code);
  }
  sema_release(&sema);
  ast_release(&prog);
  arena_free(arena);
  free(text);
  return 0;
}
