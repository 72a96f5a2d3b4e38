// --tb=auto's check at run time (stn_cuda_tb_trial, runtime/stn_cuda.h):
// when a loop times its first passes, which of them run as single steps,
// and what it chooses from their times. Host code only: it needs no GPU.
#include "stn_cuda.h"
#include <cstdio>

static const char *state(int s)
{
  return s == STN_TB_TIMING ? "timing" : s == STN_TB_FUSED ? "fused" : s == STN_TB_SINGLE ? "single" : "undecided";
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
  printf("single steps at passes 0 1 2 3: %d %d %d %d\n", stn_tb_trial_timing_single(0), stn_tb_trial_timing_single(1),
         stn_tb_trial_timing_single(2), stn_tb_trial_timing_single(3));
  // ms of passes 0 (single) 1 (fused) 2 (single) 3 (fused). grad3d on the
  // H200 (single steps 1.11x fused passes), star3d1r (fused 1.35x), the
  // first pass of each kind slower (loading), and the 5% margin.
  const float grad3d[] = { 0.62f, 0.64f, 0.57f, 0.633f }, star3d1r[] = { 1.24f, 0.93f, 1.25f, 0.92f },
              cold[] = { 3.0f, 2.0f, 0.90f, 1.0f }, margin_in[] = { 0.949f, 1.0f, 0.96f, 1.0f },
              margin_out[] = { 0.951f, 1.0f, 0.96f, 1.0f };
  printf("grad3d: %s\n", stn_tb_trial_pick_single(grad3d) ? "single" : "fused");
  printf("star3d1r: %s\n", stn_tb_trial_pick_single(star3d1r) ? "single" : "fused");
  printf("cold first passes: %s\n", stn_tb_trial_pick_single(cold) ? "single" : "fused");
  printf("single 5.1%% faster: %s\n", stn_tb_trial_pick_single(margin_in) ? "single" : "fused");
  printf("single 4.9%% faster: %s\n", stn_tb_trial_pick_single(margin_out) ? "single" : "fused");
  // --restart keeps the choice its checkpoint saved; a checkpoint from
  // before the choice (undecided, or still timing) times again.
  const int saved[] = { STN_TB_FUSED, STN_TB_SINGLE, STN_TB_TIMING, STN_TB_UNDECIDED };
  for (int i = 0; i < 4; i++) {
    stn_tb_trial t = { "step", 4, STN_TB_UNDECIDED, {} };
    stn_tb_trial_resume(&t, saved[i]);
    printf("resumed from a checkpoint saying %s: %s\n", state(saved[i]), state(t.state));
  }
  return 0;
}
