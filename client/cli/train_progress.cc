#include "client/cli/train_progress.h"

#include <string>

#include "absl/strings/str_format.h"

namespace npu::client::cli {

constexpr int64_t kBarWidth = 24;

TrainProgress::TrainProgress(std::ostream& out, bool enabled, int64_t epoch, int64_t epochs, int64_t steps)
    : out_(out), enabled_(enabled), epoch_(epoch), epochs_(epochs), steps_(steps) {}

void TrainProgress::Update(int64_t done, int64_t rows, double mean_loss) {
  if (!enabled_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t filled = steps_ > 0 ? done * kBarWidth / steps_ : kBarWidth;
  std::string line = absl::StrFormat("epoch %d/%d [%s%s] %d/%d steps  loss %.4f  %.0f samples/s", epoch_, epochs_,
                                     std::string(static_cast<size_t>(filled), '#'),
                                     std::string(static_cast<size_t>(kBarWidth - filled), '.'), done, steps_,
                                     mean_loss, seconds > 0 ? static_cast<double>(rows) / seconds : 0.0);
  // Blanks over what a longer line before left (no terminal escapes: a dumb terminal draws it too).
  const size_t length = line.size();
  if (length < drawn_) line.append(drawn_ - length, ' ');
  out_ << '\r' << line << std::flush;
  drawn_ = length;
}

void TrainProgress::Clear() {
  if (!enabled_ || drawn_ == 0) return;
  out_ << '\r' << std::string(drawn_, ' ') << '\r' << std::flush;
  drawn_ = 0;
}

}  // namespace npu::client::cli
