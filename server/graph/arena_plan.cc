#include "server/graph/arena_plan.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

#include "server/graph/plan.h"

namespace npu::graph {
namespace {

constexpr uint64_t kAlign = 64;

uint64_t Aligned(uint64_t bytes) { return (bytes + kAlign - 1) & ~(kAlign - 1); }

// Free ranges of the arena by offset, coalesced; the arena grows at its top.
class OffsetAllocator {
 public:
  uint64_t Allocate(uint64_t bytes) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < bytes) continue;
      const uint64_t offset = it->first;
      const uint64_t rest = it->second - bytes;
      free_.erase(it);
      if (rest > 0) free_.emplace(offset + bytes, rest);
      return offset;
    }
    // No hole fits: extend, reusing a free range that ends at the top.
    uint64_t offset = top_;
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == top_) {
        offset = last->first;
        free_.erase(last);
      }
    }
    top_ = offset + bytes;
    peak_ = std::max(peak_, top_);
    return offset;
  }

  void Free(uint64_t offset, uint64_t bytes) {
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && offset + bytes == next->first) {
      bytes += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        prev->second += bytes;
        return;
      }
    }
    free_.emplace(offset, bytes);
  }

  uint64_t peak() const { return peak_; }

 private:
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes
  uint64_t top_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace

void AssignStorage(Plan& plan) {
  const int nv = static_cast<int>(plan.values.size());
  const int nn = static_cast<int>(plan.nodes.size());

  std::vector<int> alias_of(nv, -1);
  for (const PlanNode& pn : plan.nodes) {
    const int i = pn.op->output_aliases_input;
    if (i >= 0 && i < static_cast<int>(pn.inputs.size()) && pn.inputs[i] >= 0 && !pn.outputs.empty()) {
      alias_of[pn.outputs[0]] = pn.inputs[i];
    }
  }
  auto root = [&](int v) {
    while (alias_of[v] >= 0) v = alias_of[v];
    return v;
  };

  std::vector<bool> is_output(nv, false);
  for (int v : plan.outputs) is_output[v] = true;
  // A buffer's life: from its producer to the last read of it or of any view of it.
  std::vector<int> end(nv, -1);
  std::vector<bool> escapes(nv, false);  // some view of it (or itself) is a graph output
  for (int v = 0; v < nv; ++v) {
    const int r = root(v);
    end[r] = std::max({end[r], plan.values[v].last_use, plan.values[r].producer});
    if (is_output[v]) escapes[r] = true;
  }

  for (int v = 0; v < nv; ++v) {
    PlanValue& value = plan.values[v];
    value.arena_offset = -1;
    if (alias_of[v] >= 0) {
      value.storage = ValueStorage::kView;
    } else if (value.is_constant) {
      value.storage = ValueStorage::kConstant;
    } else if (value.producer < 0) {
      value.storage = ValueStorage::kInput;
    } else {
      value.storage = escapes[v] ? ValueStorage::kHeap : ValueStorage::kArena;
    }
  }

  // Walk the nodes in order: place a node's outputs, then release what dies at it.
  std::vector<std::vector<int>> dies_at(nn);
  for (int v = 0; v < nv; ++v) {
    if (plan.values[v].storage == ValueStorage::kArena) dies_at[end[v]].push_back(v);
  }
  OffsetAllocator arena;
  for (int k = 0; k < nn; ++k) {
    for (int v : plan.nodes[k].outputs) {
      PlanValue& value = plan.values[v];
      if (value.storage != ValueStorage::kArena) continue;
      value.arena_offset = static_cast<int64_t>(arena.Allocate(Aligned(std::max<uint64_t>(value.type.bytes(), 1))));
    }
    for (int v : dies_at[k]) {
      const PlanValue& value = plan.values[v];
      arena.Free(static_cast<uint64_t>(value.arena_offset), Aligned(std::max<uint64_t>(value.type.bytes(), 1)));
    }
  }
  plan.arena_bytes = arena.peak();
}

}  // namespace npu::graph
