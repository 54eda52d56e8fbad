// npu train's progress bar: on a terminal, one line per epoch redrawn after
// every step (steps done of the epoch's, the epoch's mean loss so far, the
// rate in samples per second), erased before the epoch's summary line is
// printed. Not on a pipe or a file (CI logs keep one line per epoch): the
// command decides with isatty and passes `enabled`.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>

namespace npu::client::cli {

class TrainProgress {
 public:
  TrainProgress(std::ostream& out, bool enabled, int64_t epoch, int64_t epochs, int64_t steps);
  // After step `done` of the epoch: `rows` trained so far, their mean loss.
  void Update(int64_t done, int64_t rows, double mean_loss);
  // Erases the bar (blanks over it), leaving the cursor at the line's start.
  void Clear();

 private:
  std::ostream& out_;
  const bool enabled_;
  const int64_t epoch_, epochs_, steps_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  size_t drawn_ = 0;  // characters on the line now
};

}  // namespace npu::client::cli
