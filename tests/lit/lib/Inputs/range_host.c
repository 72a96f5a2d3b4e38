/* Sets N outside its range (in 2..): range_create stops with a message
 * (tests/lit/lib/param-range.test). */
#include "range.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
  range_params p = range_defaults();
  p.N = argc > 1 ? atoi(argv[1]) : 8;
  range *ctx = range_create(&p);
  printf("created with N = %d\n", p.N);
  range_destroy(ctx);
  return 0;
}
