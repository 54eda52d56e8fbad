#include "server/device/memory_timeline.h"

#include <iterator>
#include <limits>

namespace npu::device {

MemoryTimeline::Usage MemoryTimeline::At(double t) const {
  auto it = steps_.upper_bound(t);
  if (it == steps_.begin()) return {};
  return std::prev(it)->second;
}

double MemoryTimeline::NextChange(double t) const {
  auto it = steps_.upper_bound(t);
  return it == steps_.end() ? std::numeric_limits<double>::infinity() : it->first;
}

std::map<double, MemoryTimeline::Usage>::iterator MemoryTimeline::SplitAt(double t) {
  auto it = steps_.lower_bound(t);
  if (it != steps_.end() && it->first == t) return it;
  return steps_.emplace_hint(it, t, At(t));
}

void MemoryTimeline::Add(double from, double to, Usage u) {
  if (!(to > from) || (u.hbm == 0 && u.l2 == 0)) return;
  auto first = SplitAt(from);
  auto last = SplitAt(to);
  for (auto it = first; it != last; ++it) {
    it->second.hbm += u.hbm;
    it->second.l2 += u.l2;
  }
  // Merge equal neighbours so the function stays as short as its changes.
  for (auto it = first == steps_.begin() ? first : std::prev(first); it != steps_.end();) {
    auto next = std::next(it);
    if (next == steps_.end() || next->first > to) break;
    if (next->second.hbm == it->second.hbm && next->second.l2 == it->second.l2) {
      steps_.erase(next);
    } else {
      it = next;
    }
  }
}

void MemoryTimeline::ForgetBefore(double t) {
  auto it = steps_.upper_bound(t);
  if (it == steps_.begin()) return;
  const Usage now = std::prev(it)->second;
  steps_.erase(steps_.begin(), it);
  if (now.hbm != 0 || now.l2 != 0) steps_.emplace(t, now);
}

}  // namespace npu::device
