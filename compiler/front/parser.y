/* parser.y: the grammar of the stencil language (normative; grammar/
 * stencil.bnf is extracted from this file). Actions only build AST nodes:
 * every check, fold and desugaring happens in sema or later. */
%define api.pure full
%define api.location.type {Span}
%define parse.error custom
%locations
%expect 0
%param {ParseCtx *ctx}

%code requires {
#include "front/parse.h"
}

%code {
#include <stdlib.h>
#include <string.h>
static int yylex(YYSTYPE *lval, Span *lloc, ParseCtx *ctx);
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                      \
  do {                                                                   \
    if (N) { (Cur).lo = YYRHSLOC(Rhs, 1).lo; (Cur).hi = YYRHSLOC(Rhs, N).hi; } \
    else { (Cur).lo = (Cur).hi = YYRHSLOC(Rhs, 0).hi; }                  \
  } while (0)
#define NEW(kind, at) ast_new(ctx->arena, kind, at)
static Node *binary(ParseCtx *ctx, int op, Node *l, Node *r, Span at);
static Node *named(ParseCtx *ctx, NodeKind kind, const char *name, Span at);
static void read_words(ParseCtx *ctx, const char *verb, Span vat, const char *from, Span fat);
static void yyerror(Span *at, ParseCtx *ctx, const char *msg);
}

%union {
  Node *node;
  NodeList list;
  const char *text;
  Type type;
  int op;
}

%token PARAM CONST GRID FIELD ON KERNEL OVER INTERIOR REDUCE MAIN
%token IF ELSE FOR IN WHILE BREAK SWAP PRINT TIMER WRITE TO FUNCTION RETURN IMPORT
%token <type> TYPE
%token <text> INTLIT FLOATLIT IDENT STRING
%token DOTDOT ".." EQ "==" NE "!=" LE "<=" GE ">=" ANDAND "&&" OROR "||"
%token ADD_ASSIGN "+=" SUB_ASSIGN "-=" MUL_ASSIGN "*=" DIV_ASSIGN "/="

%type <node> decl param_item const_item field_item kernel_decl region range
%type <node> red_item kparam block stmt else_opt print_item decl_item lvalue
%type <node> expr primary stmt_if
%type <list> param_items const_items dims field_items kparams_opt kparam_list
%type <list> ranges reduce_opt red_list stmts decl_items print_items args args_opt
%type <list> exprs lvalues names write_opts fmt_opt fparams fparams_opt flocals
%type <node> fparam func_decl
%type <op> assign_op
/* Lists the parser discards while recovering from a syntax error: their
 * arrays are malloc'd (the nodes are the arena's). */
%destructor { vec_free(&$$); } <list>

%right '?' ':'
%left "||"
%left "&&"
%left "==" "!="
%left '<' '>' "<=" ">="
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

program
  : %empty
  | program decl              { if ($2) vec_push(&ctx->prog->decls, $2); }
  ;

decl
  : PARAM TYPE param_items ';'   { $$ = NEW(N_PARAM, @$); $$->ty = $2; $$->list = $3; }
  | CONST TYPE const_items ';'   { $$ = NEW(N_CONST, @$); $$->ty = $2; $$->list = $3; }
  | GRID IDENT dims ';'          { $$ = named(ctx, N_GRID, $2, @2); $$->span = @$; $$->list = $3; }
  | GRID IDENT dims IDENT '(' names ')' ';'
                                 { $$ = named(ctx, N_GRID, $2, @2); $$->span = @$; $$->list = $3;
                                   $$->a = named(ctx, N_NAME, $4, @4); $$->list2 = $6; }
  | FIELD TYPE field_items ON IDENT ';'
                                 { $$ = named(ctx, N_FIELD, $5, @5); $$->span = @$; $$->ty = $2; $$->list = $3; }
  | FIELD TYPE field_items ON IDENT IDENT '(' expr ')' ';'
                                 { $$ = named(ctx, N_FIELD, $5, @5); $$->span = @$; $$->ty = $2; $$->list = $3;
                                   $$->a = named(ctx, N_NAME, $6, @6); $$->b = $8; }
  | kernel_decl
  | func_decl
  | IMPORT STRING ';'            { $$ = NEW(N_IMPORT, @$); $$->name = $2; $$->name_span = @2; }
  | MAIN block                   { $$ = NEW(N_MAIN, @1); $$->a = $2; }
  | error ';'                    { $$ = NULL; }
  | error '}'                    { $$ = NULL; }
  ;

param_items
  : param_item                   { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | param_items ',' param_item   { $$ = $1; vec_push(&$$, $3); }
  ;

param_item
  : IDENT '=' expr               { $$ = named(ctx, N_PARAM, $1, @1); $$->a = $3; }
  /* a range the command line must keep to, bounds included: in 1.., in 0..1, in ..10 */
  | IDENT '=' expr IN expr ".." expr
                                 { $$ = named(ctx, N_PARAM, $1, @1); $$->a = $3; $$->b = $5; $$->c = $7; }
  | IDENT '=' expr IN expr ".."  { $$ = named(ctx, N_PARAM, $1, @1); $$->a = $3; $$->b = $5; }
  | IDENT '=' expr IN ".." expr  { $$ = named(ctx, N_PARAM, $1, @1); $$->a = $3; $$->c = $6; }
  ;

const_items
  : const_item                   { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | const_items ',' const_item   { $$ = $1; vec_push(&$$, $3); }
  ;

const_item
  : IDENT '=' expr               { $$ = named(ctx, N_CONST, $1, @1); $$->a = $3; }
  | IDENT '[' ']' '=' '{' exprs '}'
                                 { $$ = named(ctx, N_CONST, $1, @1); $$->has_init = 1; $$->list = $6; }
  | IDENT '[' expr ']' '=' '{' exprs '}'
                                 { $$ = named(ctx, N_CONST, $1, @1); $$->has_init = 1; $$->b = $3; $$->list = $7; }
  ;

dims
  : '[' expr ']'                 { $$ = (NodeList){0}; vec_push(&$$, $2); }
  | dims '[' expr ']'            { $$ = $1; vec_push(&$$, $3); }
  ;

names
  : IDENT                        { $$ = (NodeList){0}; vec_push(&$$, named(ctx, N_NAME, $1, @1)); }
  | names ',' IDENT              { $$ = $1; vec_push(&$$, named(ctx, N_NAME, $3, @3)); }
  ;

field_items
  : field_item                   { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | field_items ',' field_item   { $$ = $1; vec_push(&$$, $3); }
  ;

field_item
  : IDENT                        { $$ = named(ctx, N_FIELD, $1, @1); }
  | IDENT '[' expr ']'           { $$ = named(ctx, N_FIELD, $1, @1); $$->span = @$; $$->b = $3; }
  ;

/* func double lap(field f) { double c = 4; return f[-1, 0] + ... - c * f; }:
 * local declarations, then one return; inlined where it is called. */
func_decl
  : FUNCTION TYPE IDENT '(' fparams_opt ')' '{' flocals RETURN expr ';' '}'
      { $$ = named(ctx, N_FUNC, $3, @3); $$->span = span_join(@1, @7); $$->ty = $2; $$->list2 = $5; $$->list = $8;
        $$->a = $10; }
  ;

fparams_opt
  : %empty                       { $$ = (NodeList){0}; }
  | fparams
  ;

fparams
  : fparam                       { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | fparams ',' fparam           { $$ = $1; vec_push(&$$, $3); }
  ;

fparam
  : TYPE IDENT                   { $$ = named(ctx, N_KPARAM, $2, @2); $$->ty = $1; }
  | FIELD IDENT                  { $$ = named(ctx, N_KPARAM, $2, @2); $$->ty = TY_VOID; $$->ival = 1; }
  ;

flocals
  : %empty                       { $$ = (NodeList){0}; }
  | flocals TYPE decl_items ';'  { Node *d = NEW(N_DECL, span_join(@2, @4)); d->ty = $2; d->list = $3; $$ = $1; vec_push(&$$, d); }
  ;

kernel_decl
  : KERNEL IDENT kparams_opt OVER region reduce_opt block
      { $$ = named(ctx, N_KERNEL, $2, @2); $$->span = @1; $$->list2 = $3; $$->a = $5; $$->list = $6; $$->b = $7; }
  ;

kparams_opt
  : %empty                       { $$ = (NodeList){0}; }
  | '(' ')'                      { $$ = (NodeList){0}; }
  | '(' kparam_list ')'          { $$ = $2; }
  ;

kparam_list
  : kparam                       { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | kparam_list ',' kparam       { $$ = $1; vec_push(&$$, $3); }
  ;

kparam
  : TYPE IDENT                   { $$ = named(ctx, N_KPARAM, $2, @2); $$->ty = $1; }
  ;

region
  : IDENT                        { $$ = named(ctx, N_REGION, $1, @1); $$->ival = REG_WHOLE; }
  | INTERIOR '(' IDENT ')'       { $$ = named(ctx, N_REGION, $3, @3); $$->span = @$; $$->ival = REG_INTERIOR; }
  | INTERIOR '(' IDENT ',' expr ')'
                                 { $$ = named(ctx, N_REGION, $3, @3); $$->span = @$; $$->ival = REG_INTERIOR; $$->a = $5; }
  | IDENT '[' ranges ']'         { $$ = named(ctx, N_REGION, $1, @1); $$->span = @$; $$->ival = REG_BOX; $$->list = $3; }
  ;

ranges
  : range                        { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | ranges ',' range             { $$ = $1; vec_push(&$$, $3); }
  ;

range
  : expr ".." expr               { $$ = NEW(N_RANGE, @$); $$->a = $1; $$->b = $3; }
  ;

reduce_opt
  : %empty                       { $$ = (NodeList){0}; }
  | REDUCE '(' red_list ')'      { $$ = $3; }
  ;

red_list
  : red_item                     { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | red_list ',' red_item        { $$ = $1; vec_push(&$$, $3); }
  ;

red_item
  : '+' ':' IDENT                { $$ = named(ctx, N_REDUCE, $3, @3); $$->op = '+'; $$->a = named(ctx, N_NAME, "+", @1); }
  | '+' ':' TYPE IDENT           { $$ = named(ctx, N_REDUCE, $4, @4); $$->op = '+'; $$->ty = $3; $$->a = named(ctx, N_NAME, "+", @1); }
  | IDENT ':' IDENT              { $$ = named(ctx, N_REDUCE, $3, @3); $$->a = named(ctx, N_NAME, $1, @1); }
  | IDENT ':' TYPE IDENT         { $$ = named(ctx, N_REDUCE, $4, @4); $$->ty = $3; $$->a = named(ctx, N_NAME, $1, @1); }
  ;

block
  : '{' stmts '}'                { $$ = NEW(N_BLOCK, @$); $$->list = $2; }
  ;

stmts
  : %empty                       { $$ = (NodeList){0}; }
  | stmts stmt                   { $$ = $1; if ($2) vec_push(&$$, $2); }
  ;

stmt
  : TYPE decl_items ';'          { $$ = NEW(N_DECL, @$); $$->ty = $1; $$->list = $2; }
  | lvalues '=' expr ';'         { $$ = NEW(N_ASSIGN, @$); $$->list2 = $1; $$->a = $3; $$->op = '='; }
  | lvalue assign_op expr ';'    { $$ = NEW(N_ASSIGN, @$); vec_push(&$$->list2, $1); $$->a = $3; $$->op = $2; }
  | IDENT '(' args_opt ')' ';'   { Node *c = named(ctx, N_CALL, $1, @1); c->span = span_join(@1, @4); c->list = $3;
                                   $$ = NEW(N_EXPRSTMT, @$); $$->a = c; }
  | IF expr block else_opt       { $$ = NEW(N_IF, @1); $$->a = $2; $$->b = $3; $$->c = $4; }
  | FOR IDENT IN expr ".." expr block
                                 { $$ = named(ctx, N_FOR, $2, @2); $$->span = @1; $$->a = $4; $$->b = $6; $$->c = $7; }
  | WHILE expr block             { $$ = NEW(N_WHILE, @1); $$->a = $2; $$->b = $3; }
  | BREAK ';'                    { $$ = NEW(N_BREAK, @1); }
  | SWAP IDENT ',' IDENT ';'     { $$ = NEW(N_SWAP, @$); $$->a = named(ctx, N_NAME, $2, @2); $$->b = named(ctx, N_NAME, $4, @4); }
  | PRINT print_items ';'        { $$ = NEW(N_PRINT, @$); $$->list = $2; }
  | TIMER IDENT block            { $$ = named(ctx, N_TIMER, $2, @2); $$->span = @1; $$->a = $3; }
  | WRITE IDENT TO STRING fmt_opt write_opts ';'
                                 { $$ = NEW(N_WRITE, @$); $$->a = named(ctx, N_NAME, $2, @2); $$->name = $4; $$->name_span = @4;
                                   $$->list2 = $5; $$->list = $6; }
  | WRITE IDENT '[' args ']' TO STRING fmt_opt write_opts ';'
                                 { Node *f = named(ctx, N_INDEX, $2, @2); f->span = span_join(@2, @5); f->list = $4;
                                   $$ = NEW(N_WRITE, @$); $$->a = f; $$->name = $7; $$->name_span = @7; $$->list2 = $8;
                                   $$->list = $9; }
  /* read u from "u.npy"; (`read` and `from` are not reserved words) */
  | IDENT IDENT IDENT STRING write_opts ';'
                                 { $$ = NEW(N_READ, @$); $$->a = named(ctx, N_NAME, $2, @2); $$->name = $4; $$->name_span = @4;
                                   $$->list = $5; read_words(ctx, $1, @1, $3, @3); }
  | IDENT IDENT '[' args ']' IDENT STRING write_opts ';'
                                 { Node *f = named(ctx, N_INDEX, $2, @2); f->span = span_join(@2, @5); f->list = $4;
                                   $$ = NEW(N_READ, @$); $$->a = f; $$->name = $7; $$->name_span = @7; $$->list = $8;
                                   read_words(ctx, $1, @1, $6, @6); }
  | block
  | error ';'                    { $$ = NULL; }
  ;

/* write u to "u_%04d.vtk" % n;  or  % (n, t) */
fmt_opt
  : %empty                       { $$ = (NodeList){0}; }
  | '%' IDENT                    { $$ = (NodeList){0}; vec_push(&$$, named(ctx, N_NAME, $2, @2)); }
  | '%' '(' args ')'             { $$ = $3; }
  ;

write_opts
  : %empty                       { $$ = (NodeList){0}; }
  | write_opts IDENT '(' args ')'
                                 { Node *o = named(ctx, N_CALL, $2, @2); o->span = span_join(@2, @5); o->list = $4;
                                   $$ = $1; vec_push(&$$, o); }
  ;

else_opt
  : %empty                       { $$ = NULL; }
  | ELSE block                   { $$ = $2; }
  | ELSE stmt_if                 { $$ = NEW(N_BLOCK, @2); vec_push(&$$->list, $2); }
  ;

stmt_if
  : IF expr block else_opt       { $$ = NEW(N_IF, @1); $$->a = $2; $$->b = $3; $$->c = $4; }
  ;

decl_items
  : decl_item                    { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | decl_items ',' decl_item     { $$ = $1; vec_push(&$$, $3); }
  ;

decl_item
  : IDENT                        { $$ = named(ctx, N_NAME, $1, @1); }
  | IDENT '=' expr               { $$ = named(ctx, N_NAME, $1, @1); $$->a = $3; }
  ;

lvalues
  : lvalue                       { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | lvalues ',' lvalue           { $$ = $1; vec_push(&$$, $3); }
  ;

lvalue
  : IDENT                        { $$ = named(ctx, N_NAME, $1, @1); }
  | IDENT '[' args ']'           { $$ = named(ctx, N_INDEX, $1, @1); $$->span = @$; $$->list = $3; }
  | IDENT '[' args ']' '[' args ']'
                                 { $$ = named(ctx, N_INDEX, $1, @1); $$->span = @$; $$->list2 = $3; $$->list = $6; }
  ;

assign_op
  : "+="                         { $$ = '+'; }
  | "-="                         { $$ = '-'; }
  | "*="                         { $$ = '*'; }
  | "/="                         { $$ = '/'; }
  ;

print_items
  : print_item                   { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | print_items ',' print_item   { $$ = $1; vec_push(&$$, $3); }
  ;

print_item
  : STRING                       { $$ = named(ctx, N_STRING, $1, @1); }
  | expr
  ;

args_opt
  : %empty                       { $$ = (NodeList){0}; }
  | args
  ;

args
  : expr                         { $$ = (NodeList){0}; vec_push(&$$, $1); }
  | args ',' expr                { $$ = $1; vec_push(&$$, $3); }
  ;

exprs
  : args
  | args ','                     { $$ = $1; }
  ;

expr
  : primary
  | expr '?' expr ':' expr       { $$ = NEW(N_COND, @$); $$->a = $1; $$->b = $3; $$->c = $5; }
  | expr "||" expr               { $$ = binary(ctx, OROR, $1, $3, @2); }
  | expr "&&" expr               { $$ = binary(ctx, ANDAND, $1, $3, @2); }
  | expr "==" expr               { $$ = binary(ctx, EQ, $1, $3, @2); }
  | expr "!=" expr               { $$ = binary(ctx, NE, $1, $3, @2); }
  | expr '<' expr                { $$ = binary(ctx, '<', $1, $3, @2); }
  | expr '>' expr                { $$ = binary(ctx, '>', $1, $3, @2); }
  | expr "<=" expr               { $$ = binary(ctx, LE, $1, $3, @2); }
  | expr ">=" expr               { $$ = binary(ctx, GE, $1, $3, @2); }
  | expr '+' expr                { $$ = binary(ctx, '+', $1, $3, @2); }
  | expr '-' expr                { $$ = binary(ctx, '-', $1, $3, @2); }
  | expr '*' expr                { $$ = binary(ctx, '*', $1, $3, @2); }
  | expr '/' expr                { $$ = binary(ctx, '/', $1, $3, @2); }
  | expr '%' expr                { $$ = binary(ctx, '%', $1, $3, @2); }
  | '-' expr %prec UNARY         { $$ = NEW(N_UNARY, @$); $$->op = '-'; $$->a = $2; }
  | '+' expr %prec UNARY         { $$ = $2; $$->span = @$; }
  | '!' expr %prec UNARY         { $$ = NEW(N_UNARY, @$); $$->op = '!'; $$->a = $2; }
  | '(' TYPE ')' expr %prec UNARY
                                 { $$ = NEW(N_CAST, @$); $$->ty = $2; $$->a = $4; }
  ;

primary
  : INTLIT                       { $$ = NEW(N_INT, @1); $$->name = $1; $$->ival = strtol($1, NULL, 10); }
  | FLOATLIT                     { $$ = NEW(N_FLOAT, @1); $$->name = $1; $$->fval = strtod($1, NULL);
                                   $$->ty = strpbrk($1, "fF") ? TY_FLOAT : TY_LITFLOAT; }
  | IDENT                        { $$ = named(ctx, N_NAME, $1, @1); }
  | IDENT '[' args ']'           { $$ = named(ctx, N_INDEX, $1, @1); $$->span = @$; $$->list = $3; }
  | IDENT '[' args ']' '[' args ']'
                                 { $$ = named(ctx, N_INDEX, $1, @1); $$->span = @$; $$->list2 = $3; $$->list = $6; }
  | IDENT '(' args_opt ')'       { $$ = named(ctx, N_CALL, $1, @1); $$->span = @$; $$->list = $3; }
  /* a stencil function applied at an offset: lap(u)[1, 0] */
  | IDENT '(' args_opt ')' '[' args ']'
                                 { $$ = named(ctx, N_CALL, $1, @1); $$->span = @$; $$->list = $3; $$->list2 = $6;
                                   $$->has_init = 1; }
  | '(' expr ')'                 { $$ = $2; $$->span = @$; }
  ;

%%

static Node *binary(ParseCtx *ctx, int op, Node *l, Node *r, Span at)
{
  Node *n = NEW(N_BINARY, span_join(l->span, r->span));
  n->op = op;
  n->a = l;
  n->b = r;
  n->name_span = at;
  return n;
}

static Node *named(ParseCtx *ctx, NodeKind kind, const char *name, Span at)
{
  Node *n = NEW(kind, at);
  n->name = name;
  n->name_span = at;
  return n;
}

/* `read u from "u.npy";` parses as IDENT IDENT IDENT STRING: the words
 * must be read and from. */
static void read_words(ParseCtx *ctx, const char *verb, Span vat, const char *from, Span fat)
{
  if (strcmp(verb, "read") != 0)
    diag_error(ctx->diag, vat, "expected a statement; did you mean 'read %s'?", "FIELD from \"PATH\"");
  else if (strcmp(from, "from") != 0)
    diag_error(ctx->diag, fat, "expected 'from' after the field: read FIELD from \"PATH\";");
}

/* flex's entry points, under the lex_ prefix. */
typedef void *yyscan_t;
int lex_lex(YYSTYPE *lval, Span *lloc, yyscan_t scanner);
int lex_lex_init_extra(ParseCtx *extra, yyscan_t *scanner);
int lex_lex_destroy(yyscan_t scanner);
typedef struct yy_buffer_state *YY_BUFFER_STATE;
YY_BUFFER_STATE lex__scan_bytes(const char *bytes, int len, yyscan_t scanner);


static int yylex(YYSTYPE *lval, Span *lloc, ParseCtx *ctx)
{
  int tok = lex_lex(lval, lloc, ctx->scanner);
  if (tok == 0)
    lloc->lo = lloc->hi = ctx->src->base + ctx->src->len;
  ctx->prev = ctx->cur;
  ctx->cur = *lloc;
  return tok;
}

const char *parse_op_name(int tok)
{
  switch (tok) {
  case EQ: return "==";
  case NE: return "!=";
  case LE: return "<=";
  case GE: return ">=";
  case ANDAND: return "&&";
  case OROR: return "||";
  case '+': return "+";
  case '-': return "-";
  case '*': return "*";
  case '/': return "/";
  case '%': return "%";
  case '<': return "<";
  case '>': return ">";
  case '!': return "!";
  case '=': return "=";
  }
  return "?";
}

/* How a token is named in messages. */
static const char *token_text(yysymbol_kind_t sym)
{
  switch (sym) {
  case YYSYMBOL_YYEOF: return "end of file";
  case YYSYMBOL_IDENT: return "identifier";
  case YYSYMBOL_INTLIT: return "integer";
  case YYSYMBOL_FLOATLIT: return "number";
  case YYSYMBOL_STRING: return "string";
  case YYSYMBOL_TYPE: return "type name";
  default: break;
  }
  const char *n = yysymbol_name(sym);
  static const struct { yysymbol_kind_t sym; const char *text; } kw[] = {
    { YYSYMBOL_PARAM, "'param'" }, { YYSYMBOL_CONST, "'const'" }, { YYSYMBOL_GRID, "'grid'" },
    { YYSYMBOL_FIELD, "'field'" }, { YYSYMBOL_ON, "'on'" }, { YYSYMBOL_KERNEL, "'kernel'" },
    { YYSYMBOL_OVER, "'over'" }, { YYSYMBOL_INTERIOR, "'interior'" },
    { YYSYMBOL_REDUCE, "'reduce'" }, { YYSYMBOL_MAIN, "'main'" }, { YYSYMBOL_IF, "'if'" },
    { YYSYMBOL_ELSE, "'else'" }, { YYSYMBOL_FOR, "'for'" }, { YYSYMBOL_IN, "'in'" },
    { YYSYMBOL_WHILE, "'while'" }, { YYSYMBOL_BREAK, "'break'" }, { YYSYMBOL_SWAP, "'swap'" },
    { YYSYMBOL_PRINT, "'print'" }, { YYSYMBOL_TIMER, "'timer'" }, { YYSYMBOL_WRITE, "'write'" },
    { YYSYMBOL_FUNCTION, "'func'" }, { YYSYMBOL_RETURN, "'return'" }, { YYSYMBOL_IMPORT, "'import'" },
    { YYSYMBOL_TO, "'to'" },
  };
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (kw[i].sym == sym)
      return kw[i].text;
  return n; /* bison already quotes punctuation: "'('" or "\"..\"" */
}

static void yyerror(Span *at, ParseCtx *ctx, const char *msg)
{
  if (strcmp(msg, "memory exhausted") == 0)
    diag_error(ctx->diag, *at, "the program is nested too deeply for the parser (more than %d levels)", YYMAXDEPTH);
  else
    diag_error(ctx->diag, *at, "%s", msg);
}

static int sym_is(yysymbol_kind_t sym, const char *name) { return strcmp(yysymbol_name(sym), name) == 0; }

static int closer_of(int open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

static int yyreport_syntax_error(const yypcontext_t *yyctx, ParseCtx *ctx)
{
  enum { MAX = 64, LISTED = 6 };
  yysymbol_kind_t expected[MAX];
  int n = yypcontext_expected_tokens(yyctx, expected, MAX);
  yysymbol_kind_t got = yypcontext_token(yyctx);
  Span at = *yypcontext_location(yyctx);

  /* A missing ';' is best reported just after the previous token. */
  int want_semi = 0, want_close = 0;
  int closer = 0;
  Bracket open = { 0, { 0, 0 } };
  if (ctx->brackets.len > 0) {
    open = ctx->brackets.data[ctx->brackets.len - 1];
    closer = closer_of(open.tok);
  }
  /* The lexer has already pushed/popped the unexpected token's bracket. */
  if (sym_is(got, "'('") || sym_is(got, "'['") || sym_is(got, "'{'")) {
    if (ctx->brackets.len > 1) {
      open = ctx->brackets.data[ctx->brackets.len - 2];
      closer = closer_of(open.tok);
    } else {
      closer = 0;
    }
  }
  for (int i = 0; i < n; i++) {
    if (sym_is(expected[i], "';'"))
      want_semi = 1;
    char want[4] = { '\'', (char)closer, '\'', 0 };
    if (closer && sym_is(expected[i], want))
      want_close = 1;
  }
  /* A declaration keyword where a statement should be: a '}' is missing. */
  int decl_kw = got == YYSYMBOL_PARAM || got == YYSYMBOL_CONST || got == YYSYMBOL_GRID ||
                got == YYSYMBOL_FIELD || got == YYSYMBOL_KERNEL || got == YYSYMBOL_MAIN;
  if (decl_kw && open.tok == '{') {
    want_close = 1;
    closer = '}';
  }
  if (want_close && (got == YYSYMBOL_YYEOF || sym_is(got, "';'") || sym_is(got, "'{'") || decl_kw ||
                     sym_is(got, "')'") || sym_is(got, "']'") || sym_is(got, "'}'"))) {
    int line, col;
    src_linecol(ctx->src, open.at.lo, &line, &col);
    diag_error(ctx->diag, at, "expected '%c' (to close '%c' at line %d, column %d)", closer, open.tok, line, col);
    return 0;
  }
  if (want_semi && !sym_is(got, "';'")) {
    Span after = { ctx->prev.hi, ctx->prev.hi };
    diag_error(ctx->diag, after, "expected ';'");
    return 0;
  }
  char msg[512];
  int len = snprintf(msg, sizeof msg, "unexpected %s", token_text(got));
  if (n > 0 && n <= LISTED) {
    len += snprintf(msg + len, sizeof msg - (size_t)len, ", expected ");
    for (int i = 0; i < n && len < (int)sizeof msg - 64; i++)
      len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s",
                      i == 0 ? "" : i == n - 1 ? " or " : ", ", token_text(expected[i]));
  }
  diag_error(ctx->diag, at, "%s", msg);
  return 0;
}

int parse_program(Arena *arena, Diag *diag, const Source *src, Program *prog)
{
  ParseCtx ctx = { .arena = arena, .diag = diag, .prog = prog, .src = src, .offset = src->base };
  yyscan_t scanner;
  if (lex_lex_init_extra(&ctx, &scanner))
    fatal("cannot initialise the lexer");
  lex__scan_bytes(src->text, src->len, scanner);
  ctx.scanner = scanner;
  int before = diag->nerrors;
  int rc = yyparse(&ctx);
  lex_lex_destroy(scanner);
  vec_free(&ctx.brackets);
  if (rc != 0 && diag->nerrors == before)
    diag_error(diag, (Span){ src->base + src->len, src->base + src->len }, "cannot parse the program");
  return diag->nerrors - before;
}
