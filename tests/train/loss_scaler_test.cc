// The loss scaler against apex's LossScaler (apex/amp/scaler.py): its
// schedule on a short window, and the defaults a dynamic scale gets
// (amp.initialize(loss_scale="dynamic")) run through their real window of
// 2000 clean steps up to the 2^24 cap.
#include "gtest/gtest.h"
#include "server/train/loss_scaler.h"
#include "server/train/train_config.h"

namespace npu::train {
namespace {

TEST(LossScalerTest, FollowsApexsSchedule) {
  LossScaler s({.dynamic = true, .scale = 65536, .window = 3});
  EXPECT_EQ(s.scale(), 65536);
  EXPECT_TRUE(s.Update(true));  // overflow: skip, halve
  EXPECT_EQ(s.scale(), 32768);
  EXPECT_FALSE(s.Update(false));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 32768);
  EXPECT_FALSE(s.Update(false));  // the third clean step in a row doubles it
  EXPECT_EQ(s.scale(), 65536);
  EXPECT_FALSE(s.Update(false));
  EXPECT_TRUE(s.Update(true));  // an overflow resets the count
  EXPECT_EQ(s.scale(), 32768);
  EXPECT_FALSE(s.Update(false));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 32768);
  // The initial scale is clamped to the maximum (apex: min(max_loss_scale, init_scale)).
  EXPECT_EQ(LossScaler({.dynamic = true, .scale = 1e9, .max_scale = 16777216}).scale(), 16777216);
  // Static: never changes; an overflowing step is skipped.
  LossScaler fixed({.dynamic = false, .scale = 128});
  EXPECT_TRUE(fixed.Update(true));
  EXPECT_FALSE(fixed.Update(false));
  EXPECT_EQ(fixed.scale(), 128);
}

// Runs `n` clean steps; each must apply (not skip).
void Clean(LossScaler& s, int n) {
  for (int i = 0; i < n; ++i) ASSERT_FALSE(s.Update(false));
}

TEST(LossScalerTest, ApexsDefaultsRunTheirRealWindow) {
  const LossScaleConfig c = ApexDynamicLossScale();
  EXPECT_TRUE(c.dynamic);
  EXPECT_EQ(c.scale, 65536.0);  // 2^16
  EXPECT_EQ(c.window, 2000);
  EXPECT_EQ(c.factor, 2.0);
  EXPECT_EQ(c.max_scale, 16777216.0);  // 2^24
  EXPECT_EQ(c.min_scale, 0.0);
  LossScaler s(c);
  EXPECT_EQ(s.scale(), 65536.0);
  // 1999 clean steps keep the scale; the 2000th doubles it and restarts the count.
  Clean(s, 1999);
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.clean_steps(), 1999);
  Clean(s, 1);
  EXPECT_EQ(s.scale(), 131072.0);
  EXPECT_EQ(s.clean_steps(), 0);
  // An overflow one step before the window closes halves it and the count starts again.
  Clean(s, 1999);
  EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.clean_steps(), 0);
  Clean(s, 1999);
  EXPECT_EQ(s.scale(), 65536.0);
  Clean(s, 1);
  EXPECT_EQ(s.scale(), 131072.0);
  // Seven more windows reach 2^24, and a further window stays there.
  for (int w = 0; w < 7; ++w) Clean(s, 2000);
  EXPECT_EQ(s.scale(), 16777216.0);
  Clean(s, 2000);
  EXPECT_EQ(s.scale(), 16777216.0);
  // No minimum by default: apex halves on every overflow, below 1 too.
  for (int k = 0; k < 30; ++k) EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 16777216.0 / 1073741824.0);  // 2^24 / 2^30
}

}  // namespace
}  // namespace npu::train
