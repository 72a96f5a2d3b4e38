// --tb=auto's check at run time (stn_cuda_tb_trial, runtime/stn_cuda.h):
// when a loop times its first passes, which candidate each of them runs
// (single steps, a fused pass, two half passes), and what it chooses
// from their times. Host code only: it needs no GPU.
#include "stn_cuda.h"
#include <cstdio>

static const char *state(int s)
{
  return s == STN_TB_TIMING ? "timing" : s == STN_TB_FUSED ? "fused" : s == STN_TB_SINGLE ? "single"
         : s == STN_TB_HALF ? "half" : "undecided";
}

static const char *how(int s)
{
  return state(s);
}

int main()
{
  // 8 passes or more are timed; fewer leave the choice open; STN_TB_TRIAL=0
  // and STN_TB=1 keep the fused passes untimed (STN_TB=0 never gets here:
  // the loop runs single steps from the start); STN_TB_TRIAL=1 times them
  // under STN_TB=1 too (bench/an5d/run.sh's check of the timed passes).
  printf("250 passes: %s\n", state(stn_tb_trial_start(250, NULL, NULL)));
  printf("8 passes: %s\n", state(stn_tb_trial_start(8, NULL, NULL)));
  printf("7 passes: %s\n", state(stn_tb_trial_start(7, NULL, NULL)));
  printf("STN_TB_TRIAL=0: %s\n", state(stn_tb_trial_start(250, "0", NULL)));
  printf("STN_TB_TRIAL=1: %s\n", state(stn_tb_trial_start(250, "1", NULL)));
  printf("STN_TB=1: %s\n", state(stn_tb_trial_start(250, NULL, "1")));
  printf("STN_TB=1 STN_TB_TRIAL=1: %s\n", state(stn_tb_trial_start(250, "1", "1")));
  printf("STN_TB=1 STN_TB_TRIAL=1, 7 passes: %s\n", state(stn_tb_trial_start(7, "1", "1")));
  // Which candidates the first round times: one pass of each, in the
  // order fused, single, half, of those the loop has (3-D: single steps
  // and fused passes, and half passes where T is even and 4 or more;
  // 2-D: fused and half).
  stn_tb_trial t3 = { "step", 4, 1, 1, STN_TB_UNDECIDED, {} }, t3o = { "step", 2, 1, 0, STN_TB_UNDECIDED, {} },
               t2 = { "step", 8, 0, 1, STN_TB_UNDECIDED, {} };
  stn_tb_trial *ts[] = { &t3, &t3o, &t2 };
  const char *tn[] = { "3-D, T = 4", "3-D, T = 2", "2-D, T = 8" };
  for (int i = 0; i < 3; i++) {
    stn_tb_trial_begin(ts[i]);
    printf("%s, first round:", tn[i]);
    for (int n = 0; n < ts[i]->round1; n++)
      printf(" %s", how(ts[i]->order[n]));
    printf("\n");
  }
  // The second round: the fused pass again, and the others that took
  // under 125% of it. ms of the first round's passes.
  const float r3[] = { 1.0f, 1.2f, 1.09f }, r3slow[] = { 1.0f, 1.26f, 0.9f }, r2[] = { 1.0f, 1.45f },
              r2close[] = { 1.0f, 1.24f };
  struct { stn_tb_trial *t; const float *ms; const char *what; } r[] = {
    { &t3, r3, "3-D, single 1.2x, half 1.09x" }, { &t3, r3slow, "3-D, single 1.26x, half 0.9x" },
    { &t2, r2, "2-D, half 1.45x (j2d5pt)" }, { &t2, r2close, "2-D, half 1.24x" } };
  for (int i = 0; i < 4; i++) {
    stn_tb_trial_begin(r[i].t);
    stn_tb_trial_round2(r[i].t, r[i].ms);
    printf("%s: second round:", r[i].what);
    for (int n = r[i].t->round1; n < r[i].t->timed; n++)
      printf(" %s", how(r[i].t->order[n]));
    printf("\n");
  }
  // The choice, from every timed pass (ms of passes 0 1 2 3: fused,
  // single, fused, single, where the first round kept single steps).
  // grad3d on the H200 before half passes (single steps 1.11x fused
  // passes), star3d1r (fused 1.35x: single steps not timed again), the
  // first pass slower (the loop's first: cold), and the 3% margin.
  const float grad3d[] = { 0.64f, 0.62f, 0.633f, 0.57f }, star3d1r[] = { 0.93f, 1.24f, 0.92f },
              cold[] = { 3.0f, 2.0f, 1.0f, 0.90f }, margin_in[] = { 1.0f, 0.969f, 1.0f, 0.98f },
              margin_out[] = { 1.0f, 0.971f, 1.0f, 0.98f };
  stn_tb_trial_begin(&t3o);
  const float *two[] = { grad3d, star3d1r, cold, margin_in, margin_out };
  const char *twon[] = { "grad3d", "star3d1r", "cold first passes", "single 3.1% faster", "single 2.9% faster" };
  for (int i = 0; i < 5; i++) {
    stn_tb_trial_round2(&t3o, two[i]);
    printf("%s: %s\n", twon[i], how(stn_tb_trial_pick(&t3o, two[i])));
  }
  // With half passes: fused, single, half, then those of them again.
  // grad3d on the H200 (2026-11-30 02:40, --profile: single 0.5965,
  // fused 0.5904, half 0.5621, single 0.5748, fused 0.5886, half 0.5613
  // in that run's order: half 4.9% faster, which the old 5% margin
  // missed), a half 6% faster but single steps 7% (the fastest of those
  // clearly faster), and one 2.9% faster (fused stays).
  const float g3[] = { 0.5904f, 0.5965f, 0.5621f, 0.5886f, 0.5748f, 0.5613f },
              both[] = { 1.0f, 0.93f, 0.94f, 1.0f, 0.95f, 0.96f }, near[] = { 1.0f, 1.05f, 0.971f, 1.0f, 1.05f, 0.98f };
  const float *three[] = { g3, both, near };
  const char *threen[] = { "grad3d with halves", "single 7% and half 6% faster", "half 2.9% faster" };
  for (int i = 0; i < 3; i++) {
    stn_tb_trial_begin(&t3);
    stn_tb_trial_round2(&t3, three[i]);
    printf("%s: %s\n", threen[i], how(stn_tb_trial_pick(&t3, three[i])));
  }
  // 2-D: fused, half, then fused again and half where it was close.
  // sqrt2d.double on the H200 (2026-11-30 02:40: fused 1.1091, half
  // 1.0675, fused 1.1029, half 1.0526), and j2d5pt (8 steps 1.4x its 4:
  // the half is not timed again).
  const float sq[] = { 1.1091f, 1.0675f, 1.1029f, 1.0526f }, j5[] = { 0.33f, 0.46f, 0.32f };
  stn_tb_trial_begin(&t2);
  stn_tb_trial_round2(&t2, sq);
  printf("sqrt2d.double: %d timed, %s\n", t2.timed, how(stn_tb_trial_pick(&t2, sq)));
  stn_tb_trial_begin(&t2);
  stn_tb_trial_round2(&t2, j5);
  printf("j2d5pt: %d timed, %s\n", t2.timed, how(stn_tb_trial_pick(&t2, j5)));
  // --restart keeps the choice its checkpoint saved; a checkpoint from
  // before the choice (undecided, or still timing) times again.
  // A choice this build has no candidate for (a checkpoint of another
  // build's) times again too.
  const int saved[] = { STN_TB_FUSED, STN_TB_SINGLE, STN_TB_HALF, STN_TB_TIMING, STN_TB_UNDECIDED };
  for (int i = 0; i < 5; i++) {
    stn_tb_trial t = { "step", 4, 1, 1, STN_TB_UNDECIDED, {} };
    stn_tb_trial_resume(&t, saved[i]);
    printf("resumed from a checkpoint saying %s: %s\n", state(saved[i]), state(t.state));
  }
  for (int i = 1; i < 3; i++) {
    stn_tb_trial t = { "step", 2, 0, 0, STN_TB_UNDECIDED, {} };
    stn_tb_trial_resume(&t, saved[i]);
    printf("resumed without that candidate from %s: %s\n", state(saved[i]), state(t.state));
  }
  return 0;
}
