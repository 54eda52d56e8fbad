// The taps of a strided window that land inside an axis: the stencil kernels,
// the pools and the convolution gradients clip their windows with it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace npu::kernels {

// Taps k in [begin, end) of a window starting at `start` (taps `dilation`
// apart, dilation >= 1) that land in [0, extent). Written so that nothing
// overflows for any start >= -2^62 and any dilation: a kernel of one tap may
// have a dilation near INT64_MAX, and a window that starts far outside
// (a huge stride) has an empty range.
struct TapRange {
  int64_t begin = 0, end = 0;
};
inline TapRange TapsInside(int64_t start, int64_t kernel, int64_t dilation, int64_t extent) {
  TapRange r;
  r.begin = start >= 0 ? 0 : (-start - 1) / dilation + 1;  // ceil(-start / dilation)
  r.end = start >= extent ? 0 : std::min(kernel, (extent - 1 - start) / dilation + 1);
  r.end = std::max(r.end, r.begin);
  return r;
}

}  // namespace npu::kernels
