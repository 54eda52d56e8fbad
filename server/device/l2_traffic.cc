#include "server/device/l2_traffic.h"

#include <algorithm>
#include <map>
#include <utility>

namespace npu::device {
namespace {

using u128 = unsigned __int128;

uint64_t Scale(uint64_t x, uint64_t num, uint64_t den) {
  return den == 0 ? 0 : static_cast<uint64_t>(static_cast<u128>(x) * num / den);
}

// Bytes [at, at + bytes) of `total` bytes of traffic, placed proportionally on `r`.
AddressRange Place(const AddressRange& r, uint64_t at, uint64_t bytes, uint64_t total) {
  const uint64_t lo = Scale(at, r.bytes, total), hi = Scale(at + bytes, r.bytes, total);
  return AddressRange{r.space, r.offset + lo, hi - lo};
}

// Reads `bytes` of traffic at `at` of `total`, spread over `ranges`; hits
// scaled back to `bytes`, the rest from HBM with what the reads evicted.
void ReadSpread(const std::vector<AddressRange>& ranges, uint64_t at, uint64_t bytes, uint64_t total, L2Cache& l2,
                TileL2Traffic& t) {
  uint64_t mapped = 0, hits = 0;
  for (const AddressRange& r : ranges) {
    const AddressRange p = Place(r, at, bytes, total);
    const L2Access a = l2.Read(p);
    mapped += p.bytes;
    hits += a.hit_bytes;
    t.hbm_bytes += a.written_back_bytes;
  }
  const uint64_t hit = mapped == 0 ? 0 : Scale(bytes, hits, mapped);
  t.hit_bytes += hit;
  t.hbm_bytes += bytes - hit;
}

void WriteSpread(const std::vector<AddressRange>& ranges, uint64_t at, uint64_t bytes, uint64_t total, L2Cache& l2,
                 TileL2Traffic& t) {
  for (const AddressRange& r : ranges) t.hbm_bytes += l2.Write(Place(r, at, bytes, total)).written_back_bytes;
  t.l2_write_bytes += bytes;
}

// Slice j of n (bytes [j*b/n, (j+1)*b/n)) is issued at step j*steps/n (a
// read) or at step (j+1)*steps/n - 1 (a write); the slice issued at step s,
// or n when none is.
uint64_t ReadSliceAt(uint64_t s, uint64_t n, uint64_t steps) {
  const uint64_t j = (s * n + steps - 1) / steps;
  return j < n && j * steps / n == s ? j : n;
}
uint64_t WriteSliceAt(uint64_t s, uint64_t n, uint64_t steps) {
  const uint64_t q = ((s + 1) * n + steps - 1) / steps;
  return q >= 1 && q <= n && q * steps / n == s + 1 ? q - 1 : n;
}

uint64_t SharedBytes(const TileWork& w) {
  uint64_t b = 0;
  for (const SharedRead& r : w.shared_reads) b += r.bytes;
  return std::min(b, w.mte2_bytes);
}

std::vector<AddressRange> Known(const std::vector<AddressRange>& v) {
  std::vector<AddressRange> out;
  for (const AddressRange& r : v) {
    if (r.known()) out.push_back(r);
  }
  return out;
}

}  // namespace

OpL2Traffic::OpL2Traffic(const OpWork& work, uint64_t op_serial) : work_(work), places_(work.tiles.size()) {
  // Panels: each distinct (operand, key) once, in the order tiles first read
  // them, laid end to end in the operand's panel traffic.
  const int no_address = -1;
  std::map<std::pair<int, uint64_t>, size_t> index;
  std::map<int, uint64_t> totals;
  std::vector<bool> named(work.reads.size(), false);
  for (size_t i = 0; i < work.tiles.size(); ++i) {
    for (const SharedRead& r : work.tiles[i].shared_reads) {
      const bool addressed = r.operand >= 0 && static_cast<size_t>(r.operand) < work.reads.size() &&
                             work.reads[r.operand].known();
      const int group = addressed ? r.operand : no_address;
      if (addressed) named[r.operand] = true;
      auto [it, fresh] = index.emplace(std::make_pair(group, r.key), panels_.size());
      if (fresh) {
        panels_.push_back(Panel{addressed ? work.reads[r.operand] : AddressRange{}, totals[group], 0});
        totals[group] += r.bytes;
      }
      places_[i].panels.push_back(it->second);
    }
  }
  for (auto& [key, p] : index) {
    Panel& panel = panels_[p];
    panel.total = totals[key.first];
    if (key.first == no_address) panel.operand = AddressRange{OpPrivateSpace(op_serial), 0, panel.total};
  }
  for (size_t v = 0; v < work.reads.size(); ++v) {
    if (!named[v] && work.reads[v].known()) streamed_.push_back(work.reads[v]);
  }
  if (streamed_.empty()) streamed_ = Known(work.reads);
  for (size_t i = 0; i < work.tiles.size(); ++i) {
    const TileWork& w = work.tiles[i];
    places_[i].stream_at = stream_total_;
    places_[i].write_at = write_total_;
    stream_total_ += w.mte2_bytes - SharedBytes(w);
    write_total_ += w.gm_write_bytes();
  }
}

std::vector<TileL2Traffic> OpL2Traffic::Wave(size_t begin, size_t end, L2Cache& l2) const {
  std::vector<TileL2Traffic> out(end - begin);
  const std::vector<AddressRange> writes = Known(work_.writes);
  uint64_t max_steps = 1;
  for (size_t i = begin; i < end; ++i) max_steps = std::max(max_steps, work_.tiles[i].pipeline_steps);
  for (uint64_t s = 0; s < max_steps; ++s) {
    for (size_t i = begin; i < end; ++i) {
      const TileWork& w = work_.tiles[i];
      const TilePlace& place = places_[i];
      TileL2Traffic& t = out[i - begin];
      const uint64_t steps = std::max<uint64_t>(1, w.pipeline_steps);
      if (s >= steps) continue;
      for (size_t k = 0; k < w.shared_reads.size(); ++k) {
        const uint64_t bytes = w.shared_reads[k].bytes, per_step = bytes / steps;
        const uint64_t slice = per_step + (s + 1 == steps ? bytes % steps : 0);
        const Panel& p = panels_[place.panels[k]];
        ReadSpread({p.operand}, p.offset + s * per_step, slice, p.total, l2, t);
      }
      const uint64_t stream = w.mte2_bytes - SharedBytes(w), written = w.gm_write_bytes();
      if (streamed_.empty() || writes.empty()) {
        // Unaddressed traffic goes straight to HBM, once per tile.
        if (s == 0) t.hbm_bytes += (streamed_.empty() ? stream : 0) + (writes.empty() ? written : 0);
      }
      const uint64_t n = std::min(steps, kStreamSlices);
      if (stream > 0 && !streamed_.empty()) {
        if (const uint64_t j = ReadSliceAt(s, n, steps); j < n) {
          const uint64_t lo = Scale(j, stream, n), hi = Scale(j + 1, stream, n);
          ReadSpread(streamed_, place.stream_at + lo, hi - lo, stream_total_, l2, t);
        }
      }
      const uint64_t nw = w.shared_reads.empty() ? n : 1;
      if (written > 0 && !writes.empty()) {
        if (const uint64_t j = WriteSliceAt(s, nw, steps); j < nw) {
          const uint64_t lo = Scale(j, written, nw), hi = Scale(j + 1, written, nw);
          WriteSpread(writes, place.write_at + lo, hi - lo, write_total_, l2, t);
        }
      }
    }
  }
  return out;
}

}  // namespace npu::device
