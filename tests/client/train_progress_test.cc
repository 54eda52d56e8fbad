// npu train's progress bar (client/cli/train_progress.h): nothing when not
// enabled (not a terminal); otherwise one line redrawn in place and blanked
// before the epoch's line.
#include "client/cli/train_progress.h"

#include <sstream>

#include "gtest/gtest.h"

namespace npu::client::cli {
namespace {

TEST(TrainProgressTest, WritesNothingWhenNotOnATerminal) {
  std::ostringstream out;
  TrainProgress bar(out, /*enabled=*/false, 1, 3, 23);
  bar.Update(1, 64, 2.5);
  bar.Clear();
  EXPECT_EQ(out.str(), "");
}

TEST(TrainProgressTest, RedrawsOneLineInPlaceAndBlanksIt) {
  std::ostringstream out;
  TrainProgress bar(out, /*enabled=*/true, 2, 3, 23);
  bar.Update(1, 64, 2.5);
  const std::string first = out.str();
  EXPECT_EQ(first.rfind("\repoch 2/3 [#" + std::string(23, '.') + "] 1/23 steps  loss 2.5000  ", 0), 0u) << first;
  EXPECT_EQ(first.substr(first.size() - 10), " samples/s") << first;
  out.str("");
  bar.Update(23, 1438, 0.25);
  const std::string last = out.str();
  EXPECT_EQ(last.rfind("\repoch 2/3 [" + std::string(24, '#') + "] 23/23 steps  loss 0.2500  ", 0), 0u) << last;
  out.str("");
  bar.Clear();
  // Blanks as wide as the line drawn (after its "\r", before the blanks a shorter line is padded with),
  // between two carriage returns; then nothing more to erase.
  const size_t drawn = last.find(" samples/s") + std::string(" samples/s").size() - 1;
  EXPECT_EQ(out.str(), "\r" + std::string(drawn, ' ') + "\r");
  out.str("");
  bar.Clear();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace npu::client::cli
