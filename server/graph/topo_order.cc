#include "server/graph/topo_order.h"

#include <deque>

namespace npu::graph {

TopoOrder TopologicalOrder(const std::vector<std::vector<int>>& producers) {
  const int n = static_cast<int>(producers.size());
  TopoOrder t;
  t.pending.assign(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (int p : producers[i]) {
      ++t.pending[i];
      consumers[p].push_back(i);
    }
  }
  std::deque<int> ready;
  for (int i = 0; i < n; ++i) {
    if (t.pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop_front();
    t.order.push_back(i);
    for (int c : consumers[i]) {
      if (--t.pending[c] == 0) ready.push_back(c);
    }
  }
  return t;
}

}  // namespace npu::graph
