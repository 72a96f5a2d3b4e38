/* ops.h: the IR's opcodes and their properties, in one table so the enum,
 * the printers and the passes cannot drift apart.
 *   OP(name, nargs, form, c_text, flags)
 * form: LEAF (no operands), PREFIX (C unary operator), INFIX (C binary
 * operator), FUNC (C math function; float variants get an 'f' suffix),
 * SPECIAL (printed by hand). flags: F_FLOP counts as a floating-point
 * operation, F_COMM commutative, F_CMP yields bool. */
OP(CONST,  0, LEAF,    "",      0)
OP(PARAM,  0, LEAF,    "",      0)              /* program param (run-time value) */
OP(ARG,    0, LEAF,    "",      0)              /* kernel argument */
OP(INDEX,  0, LEAF,    "",      0)              /* grid index along dimension `ref` */
OP(EXTENT, 0, LEAF,    "",      0)              /* size of grid `ref` along dimension `imm` */
OP(LOAD,   0, LEAF,    "",      0)              /* field `ref` at offset `off` */
OP(VAR,    0, LEAF,    "",      0)              /* host variable `ref` (main only) */
OP(TABLE,  1, SPECIAL, "",      0)              /* const array `ref` at index arg0 */
OP(NEG,    1, PREFIX,  "-",     F_FLOP)
OP(NOT,    1, PREFIX,  "!",     0)
OP(CAST,   1, SPECIAL, "",      0)
OP(ADD,    2, INFIX,   "+",     F_FLOP | F_COMM)
OP(SUB,    2, INFIX,   "-",     F_FLOP)
OP(MUL,    2, INFIX,   "*",     F_FLOP | F_COMM)
OP(DIV,    2, INFIX,   "/",     F_FLOP)
OP(MOD,    2, INFIX,   "%",     0)
OP(LT,     2, INFIX,   "<",     F_CMP)
OP(LE,     2, INFIX,   "<=",    F_CMP)
OP(GT,     2, INFIX,   ">",     F_CMP)
OP(GE,     2, INFIX,   ">=",    F_CMP)
OP(EQ,     2, INFIX,   "==",    F_CMP | F_COMM)
OP(NE,     2, INFIX,   "!=",    F_CMP | F_COMM)
OP(AND,    2, INFIX,   "&&",    F_COMM)
OP(OR,     2, INFIX,   "||",    F_COMM)
OP(SELECT, 3, SPECIAL, "",      0)
OP(SQRT,   1, FUNC,    "sqrt",  F_FLOP)
OP(EXP,    1, FUNC,    "exp",   F_FLOP)
OP(LOG,    1, FUNC,    "log",   F_FLOP)
OP(FABS,   1, FUNC,    "fabs",  F_FLOP)
OP(SIN,    1, FUNC,    "sin",   F_FLOP)
OP(COS,    1, FUNC,    "cos",   F_FLOP)
OP(TAN,    1, FUNC,    "tan",   F_FLOP)
OP(TANH,   1, FUNC,    "tanh",  F_FLOP)
OP(FLOOR,  1, FUNC,    "floor", F_FLOP)
OP(CEIL,   1, FUNC,    "ceil",  F_FLOP)
OP(POW,    2, FUNC,    "pow",   F_FLOP)
OP(FMIN,   2, FUNC,    "fmin",  F_FLOP | F_COMM)
OP(FMAX,   2, FUNC,    "fmax",  F_FLOP | F_COMM)
OP(IMIN,   2, SPECIAL, "",      F_COMM)         /* int min/max/abs */
OP(IMAX,   2, SPECIAL, "",      F_COMM)
OP(IABS,   1, SPECIAL, "",      0)
OP(RSQRT,  1, SPECIAL, "",      F_FLOP)         /* 1 / sqrt(arg0), CUDA only (passes/hoist.c) */
