// Where the graph generator's choices come from: libFuzzer's input bytes (so
// coverage-guided mutation edits choices, not protobuf framing) or a seeded
// PRNG (for the CI regression run and for reproducing a seed). Every choice
// takes the same two bytes, so a mutated byte changes one decision and the
// ones after it keep their meaning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace npu::fuzz {

class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;

  // A number in [0, n); 0 for n == 0.
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next16() % n; }
  // True `percent` times in a hundred.
  bool Chance(int percent) { return static_cast<int>(Below(100)) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& options) {
    return options[Below(options.size())];
  }

 protected:
  virtual uint32_t Next16() = 0;  // 16 bits
};

// The fuzzer's bytes, two per choice; zeros once they run out (so a short
// input makes the simplest choices, and libFuzzer grows inputs to make more).
class BytesSource final : public ChoiceSource {
 public:
  BytesSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}

 protected:
  uint32_t Next16() override {
    uint32_t v = 0;
    for (int i = 0; i < 2; ++i) v = v << 8 | (pos_ < size_ ? data_[pos_++] : 0);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

class SeededSource final : public ChoiceSource {
 public:
  explicit SeededSource(uint64_t seed) : rng_(seed) {}

 protected:
  uint32_t Next16() override { return static_cast<uint32_t>(rng_() & 0xFFFF); }

 private:
  std::mt19937_64 rng_;
};

}  // namespace npu::fuzz
