// The chip's HBM bandwidth as a resource on the device timeline, shared by all
// cores: time is cut into windows of kWindowCycles, each holding at most
// bandwidth x window bytes. A tile's GM traffic is booked window by window
// from its start, no faster than the tile's own pace, so the aggregate traffic
// of all cores never exceeds the bandwidth in any window, and a tile that
// finds HBM saturated is stretched instead.
#pragma once

#include <cstdint>
#include <deque>

namespace npu::device {

class HbmTimeline {
 public:
  static constexpr uint64_t kWindowCycles = 256;

  explicit HbmTimeline(double bytes_per_cycle) : bytes_per_cycle_(bytes_per_cycle) {}

  // Books `bytes` of traffic for a tile starting at cycle `start` whose other
  // units need `min_cycles`; returns the cycle its transfers end, which is at
  // least start + min_cycles.
  uint64_t Book(uint64_t start, uint64_t min_cycles, uint64_t bytes);

  // Forgets windows that end before `cycle` (no tile can start before it).
  void ForgetBefore(uint64_t cycle);

  // Bytes booked in the window holding `cycle` (tests).
  double BookedAt(uint64_t cycle) const;
  double window_capacity() const { return bytes_per_cycle_ * kWindowCycles; }

 private:
  double& Window(uint64_t index);

  const double bytes_per_cycle_;
  uint64_t first_window_ = 0;    // index of booked_.front()
  std::deque<double> booked_;    // bytes per window
};

}  // namespace npu::device
