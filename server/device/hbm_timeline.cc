#include "server/device/hbm_timeline.h"

#include <algorithm>
#include <cmath>

namespace npu::device {

double& HbmTimeline::Window(uint64_t index) {
  if (index < first_window_) index = first_window_;  // never happens: ForgetBefore keeps live windows
  while (index - first_window_ >= booked_.size()) booked_.push_back(0.0);
  return booked_[index - first_window_];
}

uint64_t HbmTimeline::Book(uint64_t start, uint64_t min_cycles, uint64_t bytes) {
  const uint64_t unhindered_end = start + min_cycles;
  if (bytes == 0 || bytes_per_cycle_ <= 0) return unhindered_end;
  // The tile's own pace: its bytes spread evenly over the cycles its units need.
  const double pace = static_cast<double>(bytes) / static_cast<double>(std::max<uint64_t>(1, min_cycles));
  const double capacity = window_capacity();
  double remaining = static_cast<double>(bytes);
  double t = static_cast<double>(start);
  for (;;) {
    const uint64_t w = static_cast<uint64_t>(t) / kWindowCycles;
    const double window_end = static_cast<double>((w + 1) * kWindowCycles);
    const double span = window_end - t;
    double& booked = Window(w);
    const double rate = std::min(pace, std::max(0.0, capacity - booked) / span);  // bytes per cycle here
    if (rate > 0 && rate * span >= remaining) {
      booked += remaining;
      const uint64_t end = static_cast<uint64_t>(std::ceil(t + remaining / rate));
      return std::max(unhindered_end, end);
    }
    booked += rate * span;
    remaining -= rate * span;
    t = window_end;
  }
}

void HbmTimeline::ForgetBefore(uint64_t cycle) {
  const uint64_t w = cycle / kWindowCycles;
  while (first_window_ < w && !booked_.empty()) {
    booked_.pop_front();
    ++first_window_;
  }
  if (booked_.empty()) first_window_ = std::max(first_window_, w);
}

double HbmTimeline::BookedAt(uint64_t cycle) const {
  const uint64_t w = cycle / kWindowCycles;
  if (w < first_window_ || w - first_window_ >= booked_.size()) return 0.0;
  return booked_[w - first_window_];
}

}  // namespace npu::device
