// The chip's shared memory bandwidth over modeled time: how many bytes per
// cycle of HBM and of L2 the ops already scheduled use at each cycle, as a
// step function. A newly scheduled op shares what they leave (op_fluid.h):
// the earlier work keeps its bandwidth, so a later op, or a later client's
// run, is placed into the gaps instead of rewriting history.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace npu::device {

class MemoryTimeline {
 public:
  struct Usage {
    double hbm = 0, l2 = 0;  // bytes per cycle
  };

  // Capacities in bytes per cycle.
  MemoryTimeline(double hbm_capacity, double l2_capacity) : hbm_capacity_(hbm_capacity), l2_capacity_(l2_capacity) {}

  double hbm_capacity() const { return hbm_capacity_; }
  double l2_capacity() const { return l2_capacity_; }

  // Usage at cycle `t` (times are cycles, fractional where a tile ends mid-cycle).
  Usage At(double t) const;
  // The first cycle after `t` where the usage changes; infinity when it never does.
  double NextChange(double t) const;
  // Adds `u` over [from, to).
  void Add(double from, double to, Usage u);
  // Drops what lies before `t`: nothing can be scheduled there any more.
  void ForgetBefore(double t);
  size_t steps() const { return steps_.size(); }

 private:
  // steps_[t] = usage from t until the next key; before the first key, none.
  std::map<double, Usage>::iterator SplitAt(double t);

  const double hbm_capacity_, l2_capacity_;
  std::map<double, Usage> steps_;
};

}  // namespace npu::device
