#include "kernels/cube_im2col.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu_features.h"
#include "kernels/cube_operand_rounding.h"
#include "kernels/cube_microkernel.h"
#include "kernels/cube_pack.h"
#include "kernels/cube_transposed_im2col.h"
#include "kernels/fp16.h"

// GCC 12's AVX-512 conversion intrinsics start from an undefined register and
// trip -Wmaybe-uninitialized when inlined; every lane is overwritten.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace npu::kernels {
namespace {

// A run of a sliver's rows that are consecutive pixels of one output row (or,
// for a 1x1 stride-1 convolution without padding, of one image).
struct Segment {
  int64_t r0 = 0, len = 0;  // rows [r0, r0 + len) of the sliver
  int64_t image = 0, oz = 0, oy = 0, ox = 0;  // the first pixel
};

// A 1x1(x1), stride-1, unpadded convolution reads each input volume as it is,
// so a run of pixels is a run of input elements even across output rows.
bool IsFlat(const Im2ColGeometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.oh == g.h && g.ow == g.w &&
         g.kd == 1 && g.sd == 1 && g.pf == 0 && g.od == g.d;
}

// The input plane depth tap kz of output plane oz reads (offset within a
// channel's volume), or -1 in the depth padding.
int64_t PlaneAt(const Im2ColGeometry& g, int64_t oz, int64_t kz) {
  const int64_t iz = oz * g.sd - g.pf + kz * g.dd;
  return iz >= 0 && iz < g.d ? iz * g.h * g.w : -1;
}

// The same for a transposed convolution (or -1 between strided planes).
int64_t TransposedPlaneAt(const Im2ColGeometry& g, int64_t oz, int64_t kz) {
  const int64_t iz = TransposedSourceIndex(oz, kz, g.pf, g.sd, g.dd, g.d);
  return iz >= 0 ? iz * g.h * g.w : -1;
}

int Segments(const Im2ColGeometry& g, int64_t first_pixel, int64_t rows, bool flat, Segment* out) {
  int count = 0;
  const int64_t pix = g.pixels();
  for (int64_t r = 0; r < rows;) {
    const int64_t m = first_pixel + r;
    Segment s;
    s.r0 = r;
    s.image = m / pix;
    const int64_t p = m % pix;
    s.oz = p / (g.oh * g.ow);
    s.oy = p / g.ow % g.oh;
    s.ox = p % g.ow;
    s.len = std::min(rows - r, flat ? pix - p : g.ow - s.ox);
    out[count++] = s;
    r += s.len;
  }
  return count;
}

// One tap of one segment, generic: element t of the segment reads input column
// x0 + t * sw of `row` (null: the row is in the padding).
template <typename Src>
void GatherRun(const Src* row, int64_t x0, int64_t sw, int64_t w, int64_t len, bool saturate, float* dst) {
  half_bits h[kCubeMaxMr];
  if (row == nullptr) {
    std::fill_n(dst, len, 0.0f);
    return;
  }
  for (int64_t t = 0; t < len; ++t) {
    const int64_t x = x0 + t * sw;
    if constexpr (sizeof(Src) == 2) {
      h[t] = x >= 0 && x < w ? row[x] : half_bits{0};
    } else {
      dst[t] = x >= 0 && x < w ? row[x] : 0.0f;
    }
  }
  if constexpr (sizeof(Src) == 2) {
    HalfToFloatN(h, dst, static_cast<size_t>(len));
  } else {
    CubeOperandHalves(dst, h, static_cast<size_t>(len), saturate);
    HalfToFloatN(h, dst, static_cast<size_t>(len));
  }
}

// The same for stride 1 with AVX2 + F16C: masked loads of the valid columns
// (zeros elsewhere), rounded through fp16, stored as whole vectors. A store may
// run past the segment into rows written later (the sliver is filled in row
// order per tap, then tap by tap), or into the caller's slack at the end.
__attribute__((target("avx2,f16c"))) __m256 Load8(const float* row, int64_t x, int64_t lo, int64_t hi,
                                                   bool saturate) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane = _mm256_add_epi32(iota, _mm256_set1_epi32(static_cast<int>(x)));
  // lo <= lane < hi
  const __m256i ok = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lo)), lane),
                                         _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane));
  return CubeOperand8(_mm256_maskload_ps(row + x, ok), saturate);
}

__attribute__((target("avx2,f16c"))) __m256 Load8(const half_bits* row, int64_t x, int64_t lo, int64_t hi,
                                                   bool /*saturate: halves are operands already*/) {
  alignas(16) half_bits tmp[8];
  for (int i = 0; i < 8; ++i) tmp[i] = x + i >= lo && x + i < hi ? row[x + i] : half_bits{0};
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
}

template <typename Src>
__attribute__((target("avx2,f16c"))) void CopyRunAvx2(const Src* row, int64_t x0, int64_t w, int64_t len,
                                                       bool saturate, float* dst) {
  if (row == nullptr) {
    for (int64_t t = 0; t < len; t += 8) _mm256_storeu_ps(dst + t, _mm256_setzero_ps());
    return;
  }
  // Columns x0 + t, valid where 0 <= x < w; the masked load never touches the others.
  for (int64_t t = 0; t < len; t += 8) _mm256_storeu_ps(dst + t, Load8(row, x0 + t, 0, w, saturate));
}

template <typename Src>
void PackSliver(const Src* planes, const Im2ColGeometry& g, const Segment* segs, int nsegs, int64_t rows,
                bool flat, bool avx2, bool saturate, float* out) {
  const int64_t volume = g.volume();
  int64_t kk = 0;
  for (int64_t ci = 0; ci < g.channels; ++ci) {
    for (int64_t kz = 0; kz < g.kd; ++kz) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        for (int64_t kx = 0; kx < g.kw; ++kx, ++kk) {
          float* dst = out + kk * rows;
          for (int s = 0; s < nsegs; ++s) {
            const Segment& seg = segs[s];
            const Src* base = planes + seg.image * g.image_stride + ci * volume;
            if (flat) {  // the run is a run of the volume itself
              const int64_t p = (seg.oz * g.oh + seg.oy) * g.ow + seg.ox;
              if (avx2) {
                CopyRunAvx2(base, p, volume, seg.len, saturate, dst + seg.r0);
              } else {
                GatherRun(base, p, 1, volume, seg.len, saturate, dst + seg.r0);
              }
              continue;
            }
            const int64_t iy = seg.oy * g.sh - g.pt + ky * g.dh, plane = PlaneAt(g, seg.oz, kz);
            const Src* row = iy >= 0 && iy < g.h && plane >= 0 ? base + plane + iy * g.w : nullptr;
            const int64_t x0 = seg.ox * g.sw - g.pl + kx * g.dw;
            if (avx2 && g.sw == 1) {
              CopyRunAvx2(row, x0, g.w, seg.len, saturate, dst + seg.r0);
            } else {
              GatherRun(row, x0, g.sw, g.w, seg.len, saturate, dst + seg.r0);
            }
          }
        }
      }
    }
  }
}

// AVX-512 for fp32 input: a segment's lanes in one masked 16-wide vector
// (len <= kCubeMaxMr = 16), loads that never touch a column outside the row,
// stores of exactly the segment's rows. The taps walk the channels innermost,
// so a tap's column mask is made once for all of them. Strides 1 and 2 load
// whole vectors (stride 2: two, then the even lanes); larger ones gather.
// Each value is rounded by the one operand rounding (cube_operand_rounding.h),
// so every path packs the same bits.

// Lanes whose column x0 + lane * step lies in [0, w).
__attribute__((target("avx512f"))) __mmask16 ValidColumns(int64_t x0, int64_t step, int64_t w) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i x = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(x0)),
                                     _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(step))));
  return _mm512_cmpge_epi32_mask(x, _mm512_setzero_si512()) &
         _mm512_cmplt_epi32_mask(x, _mm512_set1_epi32(static_cast<int>(w)));
}

__attribute__((target("avx512f"))) void PackSliverAvx512(const float* planes, const Im2ColGeometry& g,
                                                          const Segment* segs, int nsegs, int64_t rows, bool flat,
                                                          bool saturate, float* out) {
  const int64_t plane = g.volume(), taps = g.kd * g.kh * g.kw, dst_step = taps * rows;  // per channel
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i stride_index = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                  _mm512_set1_epi32(static_cast<int>(g.sw)));
  for (int s = 0; s < nsegs; ++s) {
    const Segment& seg = segs[s];
    const float* image = planes + seg.image * g.image_stride;
    const __mmask16 rows_mask = static_cast<__mmask16>((1u << seg.len) - 1);
    float* seg_out = out + seg.r0;
    if (flat) {  // one tap; the run is a run of the volume itself
      const float* src = image + (seg.oz * g.oh + seg.oy) * g.ow + seg.ox;
      for (int64_t ci = 0; ci < g.channels; ++ci, src += plane) {
        _mm512_mask_storeu_ps(seg_out + ci * rows, rows_mask,
                              CubeOperand16(_mm512_maskz_loadu_ps(rows_mask, src), saturate));
      }
      continue;
    }
    for (int64_t kz = 0; kz < g.kd; ++kz) {
      const int64_t depth = PlaneAt(g, seg.oz, kz);
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = seg.oy * g.sh - g.pt + ky * g.dh;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          float* dst = seg_out + ((kz * g.kh + ky) * g.kw + kx) * rows;
          if (iy < 0 || iy >= g.h || depth < 0) {  // a row of the padding
            for (int64_t ci = 0; ci < g.channels; ++ci) {
              _mm512_mask_storeu_ps(dst + ci * dst_step, rows_mask, _mm512_setzero_ps());
            }
            continue;
          }
          const int64_t x0 = seg.ox * g.sw - g.pl + kx * g.dw;
          const float* src = image + depth + iy * g.w + x0;
          if (g.sw == 1) {
            const __mmask16 valid = ValidColumns(x0, 1, g.w) & rows_mask;
            for (int64_t ci = 0; ci < g.channels; ++ci, src += plane, dst += dst_step) {
              _mm512_mask_storeu_ps(dst, rows_mask, CubeOperand16(_mm512_maskz_loadu_ps(valid, src), saturate));
            }
          } else if (g.sw == 2) {
            // Columns x0 .. x0 + 31 in two vectors; lane t of the result is column x0 + 2t.
            const __mmask16 lo = ValidColumns(x0, 1, g.w), hi = ValidColumns(x0 + 16, 1, g.w);
            for (int64_t ci = 0; ci < g.channels; ++ci, src += plane, dst += dst_step) {
              const __m512 v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo, src), even,
                                                      _mm512_maskz_loadu_ps(hi, src + 16));
              _mm512_mask_storeu_ps(dst, rows_mask, CubeOperand16(v, saturate));
            }
          } else {
            const __mmask16 valid = ValidColumns(x0, g.sw, g.w) & rows_mask;
            for (int64_t ci = 0; ci < g.channels; ++ci, src += plane, dst += dst_step) {
              const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid, stride_index, src, 4);
              _mm512_mask_storeu_ps(dst, rows_mask, CubeOperand16(v, saturate));
            }
          }
        }
      }
    }
  }
}

// Whether the AVX-512 packer's 32-bit lane arithmetic holds for `g`: every
// column it computes (at most 32 past a row's end, or 16 strides) fits.
bool FitsAvx512Lanes(const Im2ColGeometry& g) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  return g.w < kLimit && g.pl < kLimit && g.sw < kLimit / 16 && g.dw * g.kw < kLimit && g.ow * g.sw < kLimit;
}

}  // namespace

void Im2ColA::Pack(int64_t group, int64_t m0, int64_t mt, int64_t k, int mr, bool saturate, float* out) const {
  if (g_.transposed) return PackTransposedIm2Col(input_, type_, g_, group, m0, mt, k, mr, saturate, out);
  // The packer follows the Cube's SIMD path (ForceCubeSimdPath), so each one can be tested on one machine.
  const SimdPath path = ActiveCubeSimdPath();
  const bool avx2 = path != SimdPath::kPortable;
  const bool avx512 = path == SimdPath::kAvx512 && type_ == ElemType::kFloat32 && FitsAvx512Lanes(g_);
  const bool flat = IsFlat(g_);
  Segment segs[kCubeMaxMr];
  for (int64_t s0 = 0, rows = 0; s0 < mt; s0 += rows) {
    rows = CubeSliverRows(mt, mr, s0);
    const int nsegs = Segments(g_, m0 + s0, rows, flat, segs);
    if (type_ == ElemType::kFloat16) {
      const half_bits* planes = static_cast<const half_bits*>(input_) + group * g_.group_stride;
      PackSliver(planes, g_, segs, nsegs, rows, flat, avx2, saturate, out + s0 * k);
    } else {
      const float* planes = static_cast<const float*>(input_) + group * g_.group_stride;
      if (avx512) {
        PackSliverAvx512(planes, g_, segs, nsegs, rows, flat, saturate, out + s0 * k);
      } else {
        PackSliver(planes, g_, segs, nsegs, rows, flat, avx2, saturate, out + s0 * k);
      }
    }
  }
}

uint64_t Im2ColA::SaturatedOperands(int64_t groups, int64_t m) const {
  if (type_ != ElemType::kFloat32 || g_.pixels() == 0) return 0;
  const float* input = static_cast<const float*>(input_);
  const int64_t plane = g_.volume(), images = m / g_.pixels();
  uint64_t count = 0;
  for (int64_t img = 0; img < images; ++img) {
    for (int64_t grp = 0; grp < groups; ++grp) {
      for (int64_t c = 0; c < g_.channels; ++c) {
        const float* at = input + img * g_.image_stride + grp * g_.group_stride + c * plane;
        count += CountHalfOverflow(at, static_cast<size_t>(plane));
      }
    }
  }
  return count;
}

void Im2ColA::ExactRows(int64_t group, int64_t m0, int64_t mt, int64_t k, float* out) const {
  const int64_t volume = g_.volume();
  for (int64_t r = 0; r < mt; ++r) {
    const int64_t m = m0 + r, image = m / g_.pixels(), p = m % g_.pixels();
    const int64_t oz = p / (g_.oh * g_.ow), oy = p / g_.ow % g_.oh, ox = m % g_.ow;
    const int64_t base = image * g_.image_stride + group * g_.group_stride;
    float* row = out + r * k;
    for (int64_t c = 0, kk = 0; c < g_.channels; ++c) {
      for (int64_t kz = 0; kz < g_.kd; ++kz) {
        const int64_t depth = g_.transposed ? TransposedPlaneAt(g_, oz, kz) : PlaneAt(g_, oz, kz);
        for (int64_t ky = 0; ky < g_.kh; ++ky) {
          for (int64_t kx = 0; kx < g_.kw; ++kx, ++kk) {
            int64_t iy, ix;
            if (g_.transposed) {
              iy = TransposedSourceIndex(oy, ky, g_.pt, g_.sh, g_.dh, g_.h);
              ix = TransposedSourceIndex(ox, kx, g_.pl, g_.sw, g_.dw, g_.w);
              if (depth < 0) iy = -1;
            } else {
              iy = oy * g_.sh - g_.pt + ky * g_.dh;
              ix = ox * g_.sw - g_.pl + kx * g_.dw;
              if (iy >= g_.h || ix >= g_.w || depth < 0) iy = -1;
            }
            const int64_t at = base + c * volume + std::max<int64_t>(depth, 0) + iy * g_.w + ix;
            row[kk] = iy < 0 || ix < 0 ? 0.0f
                      : type_ == ElemType::kFloat16 ? HalfToFloat(static_cast<const half_bits*>(input_)[at])
                                                    : static_cast<const float*>(input_)[at];
          }
        }
      }
    }
  }
}

}  // namespace npu::kernels
