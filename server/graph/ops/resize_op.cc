// Resize (ONNX opsets 13-19), modes nearest and linear (cubic is refused),
// with the coordinate modes torch exports (half_pixel, align_corners,
// asymmetric) and the others of the spec but tf_crop_and_resize. scales or
// sizes (and opset 18's axes attribute) are constants: the output shape and,
// per output index, its source index (nearest: dim_map_copy.h) or its two
// taps and weights (linear) are planned once.
//
// The arithmetic is torch's (upsample_nearest / upsample_linear on the CPU),
// in fp32: the ratio is 1/scale when scales are given, in/out when sizes are
// (align_corners: (in-1)/(out-1)); a source coordinate below 0 clamps to 0
// for linear, which is what ONNX's edge-padded neighbours give too. Linear
// interpolates the resized dims innermost first, each as t0 * w0 + t1 * w1,
// rounded once to the output type.
#include <cmath>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/dim_map_copy.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAttrs {
  bool linear = false;
  Coord coord = Coord::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
};

absl::StatusOr<ResizeAttrs> AttrsOf(const InferContext& c) {
  ResizeAttrs a;
  auto mode = c.attrs.String("mode", "nearest");
  auto coord = c.attrs.String("coordinate_transformation_mode", "half_pixel");
  auto rounding = c.attrs.String("nearest_mode", "round_prefer_floor");
  auto antialias = c.attrs.Int("antialias", 0);
  auto policy = c.attrs.String("keep_aspect_ratio_policy", "stretch");
  for (const auto* s : {&mode, &coord, &rounding, &policy}) {
    if (!s->ok()) return s->status();
  }
  if (!antialias.ok()) return antialias.status();
  if (*mode == "cubic") return NodeError(c.node, "attribute \"mode\" = \"cubic\" is not supported (nearest, linear)");
  if (*coord == "tf_crop_and_resize" || *coord == "half_pixel_symmetric") {
    return NodeError(c.node, "attribute \"coordinate_transformation_mode\" = ", Quoted(*coord),
                     " is not supported (half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                     "tf_half_pixel_for_nn)");
  }
  if (*antialias != 0) return NodeError(c.node, "attribute \"antialias\" = ", *antialias, " is not supported (0)");
  if (*policy != "stretch") {
    return NodeError(c.node, "attribute \"keep_aspect_ratio_policy\" = ", Quoted(*policy),
                     " is not supported (stretch)");
  }
  a.linear = *mode == "linear";
  if (*coord == "pytorch_half_pixel") a.coord = Coord::kPytorchHalfPixel;
  if (*coord == "align_corners") a.coord = Coord::kAlignCorners;
  if (*coord == "asymmetric") a.coord = Coord::kAsymmetric;
  if (*coord == "tf_half_pixel_for_nn") a.coord = Coord::kTfHalfPixelForNn;
  if (*rounding == "round_prefer_ceil") a.rounding = Rounding::kRoundPreferCeil;
  if (*rounding == "floor") a.rounding = Rounding::kFloor;
  if (*rounding == "ceil") a.rounding = Rounding::kCeil;
  return a;
}

// One dim's resize: its sizes and the ratio of input to output coordinates.
// A dim outside the `axes` attribute is not resized at all: each index reads
// itself, even where the coordinate transformation would shift an unchanged
// dim (tf_half_pixel_for_nn with a ceil rounding).
struct DimResize {
  int64_t in = 1, out = 1;
  float ratio = 1;
  bool listed = false;

  // The input coordinate that output index o samples.
  float Source(Coord coord, int64_t o) const {
    const float x = static_cast<float>(o);
    if (!listed) return x;
    switch (coord) {
      case Coord::kHalfPixel: return ratio * (x + 0.5f) - 0.5f;
      case Coord::kPytorchHalfPixel: return out > 1 ? ratio * (x + 0.5f) - 0.5f : 0.0f;
      case Coord::kTfHalfPixelForNn: return ratio * (x + 0.5f);
      case Coord::kAlignCorners:
      case Coord::kAsymmetric: return ratio * x;
    }
    return 0;
  }
};

int64_t NearestIndex(Rounding r, float src, int64_t in) {
  float i = 0;
  switch (r) {
    case Rounding::kRoundPreferFloor: i = std::ceil(src - 0.5f); break;
    case Rounding::kRoundPreferCeil: i = std::floor(src + 0.5f); break;
    case Rounding::kFloor: i = std::floor(src); break;
    case Rounding::kCeil: i = std::ceil(src); break;
  }
  if (!(i >= 0)) return 0;
  return std::min<int64_t>(static_cast<int64_t>(std::min(i, 4e18f)), in - 1);
}

// A linearly interpolated dim: per output index its two input indices and weights.
struct LinearTaps {
  int64_t dim = 0;     // the axis
  int64_t stride = 0;  // of the input, in elements
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

struct ResizePlan {
  bool linear = false;
  DimMap nearest;
  Shape in, out;
  std::vector<LinearTaps> taps;  // the interpolated dims, outermost first
};

// The dims' sizes and ratios from scales or sizes (input 2 or 3) over `axes`.
absl::StatusOr<std::vector<DimResize>> DimsOf(const InferContext& c, const ResizeAttrs& a) {
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) axes[d] = d;
  if (c.attrs.Has("axes")) {
    auto given = c.attrs.Ints("axes", {});
    if (!given.ok()) return given.status();
    auto normal = NormalizeAxes(c.node, *given, rank, "attribute \"axes\"");
    if (!normal.ok()) return normal.status();
    axes = *normal;
  }
  const bool has_scales = HasInput(c, 2) && c.inputs[2]->elements() > 0;
  const bool has_sizes = HasInput(c, 3) && c.inputs[3]->elements() > 0;
  if (has_scales == has_sizes) {
    return NodeError(c.node, "give exactly one of scales (input 2) and sizes (input 3), not ",
                     has_scales ? "both" : "neither");
  }
  std::vector<DimResize> dims(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) dims[d] = {x.shape[d], x.shape[d], 1.0f};
  const int input = has_scales ? 2 : 3;
  const HostTensor* t = c.constants[input];
  if (t == nullptr) {
    return NodeError(c.node, InputLabel(c.node, input),
                     " must be a constant (an initializer): the output shape depends on its values");
  }
  if (static_cast<size_t>(t->type().elements()) != axes.size()) {
    return NodeError(c.node, InputLabel(c.node, input), " has ", t->type().elements(), " entries for ", axes.size(),
                     " axes");
  }
  if (has_scales && t->type().dtype != v1::FLOAT32) {
    return NodeError(c.node, InputLabel(c.node, 2), ": scales must be FLOAT32, got ", DataTypeName(t->type().dtype));
  }
  std::vector<int64_t> sizes;
  if (has_sizes) {
    auto v = ConstantInts(c, 3);
    if (!v.ok()) return v.status();
    sizes = *v;
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    DimResize& r = dims[axes[k]];
    r.listed = true;
    if (has_scales) {
      const float scale = t->as<float>()[k];
      const double out = std::floor(static_cast<double>(scale) * static_cast<double>(r.in));
      if (!(scale > 0) || !(out <= static_cast<double>(kMaxElements))) {
        return NodeError(c.node, InputLabel(c.node, 2), ": scale ", scale, " of axis ", axes[k],
                         " must be positive and give at most ", kMaxElements, " elements");
      }
      r.out = static_cast<int64_t>(out);
      r.ratio = 1.0f / scale;
    } else {
      if (sizes[k] < 0) {
        return NodeError(c.node, InputLabel(c.node, 3), ": size ", sizes[k], " of axis ", axes[k], " is negative");
      }
      r.out = sizes[k];
      r.ratio = r.out > 0 ? static_cast<float>(r.in) / static_cast<float>(r.out) : 1.0f;
    }
    if (a.coord == Coord::kAlignCorners) {
      r.ratio = r.out > 1 ? static_cast<float>(r.in - 1) / static_cast<float>(r.out - 1) : 0.0f;
    }
    if (r.in == 0 && r.out > 0) {
      return NodeError(c.node, "axis ", axes[k], " is empty: nothing to resize to ", r.out, " elements");
    }
  }
  return dims;
}

absl::StatusOr<std::vector<TensorType>> InferResize(InferContext& c) {
  auto a = AttrsOf(c);
  if (!a.ok()) return a.status();
  const TensorType& x = *c.inputs[0];
  if (a->linear && !IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": mode linear needs FLOAT16 or FLOAT32, got ",
                     DataTypeName(x.dtype));
  }
  if (x.shape.empty()) return NodeError(c.node, InputLabel(c.node, 0), " is a scalar: nothing to resize");
  auto dims = DimsOf(c, *a);
  if (!dims.ok()) return dims.status();
  Shape out;
  for (const DimResize& d : *dims) out.push_back(d.out);
  const TensorType type{x.dtype, out};
  if (auto n = CheckedElements(out, "the resized output"); !n.ok()) return AtNode(c.node, n.status());
  if (auto b = CheckedBytes(type, c.max_tensor_bytes, "the resized output"); !b.ok()) return AtNode(c.node, b.status());
  ResizePlan plan;
  plan.linear = a->linear;
  plan.in = x.shape;
  plan.out = out;
  if (!a->linear) {
    plan.nearest = MakeDimMap(x.shape, out, [&](int64_t d, int64_t o) {
      return NearestIndex(a->rounding, (*dims)[d].Source(a->coord, o), (*dims)[d].in);
    });
  } else if (type.elements() > 0) {
    const auto strides = RowMajorStrides(x.shape);
    for (size_t d = 0; d < dims->size(); ++d) {
      const DimResize& r = (*dims)[d];
      LinearTaps taps{static_cast<int64_t>(d), strides[d], {}, {}, {}, {}};
      bool identity = r.in == r.out;
      for (int64_t o = 0; o < r.out; ++o) {
        const float src = std::max(0.0f, r.Source(a->coord, o));
        int64_t i0 = static_cast<int64_t>(std::min(src, 4e18f));
        const float lambda = std::min(std::max(src - static_cast<float>(i0), 0.0f), 1.0f);
        i0 = std::min(i0, r.in - 1);
        taps.i0.push_back(i0);
        taps.i1.push_back(i0 + (i0 < r.in - 1 ? 1 : 0));
        taps.w0.push_back(1.0f - lambda);
        taps.w1.push_back(lambda);
        identity = identity && i0 == o && lambda == 0.0f;
      }
      if (!identity) plan.taps.push_back(std::move(taps));
    }
  }
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{type};
}

float LoadFloat(const HostTensor& x, int64_t i) {
  return x.type().dtype == v1::FLOAT16 ? kernels::HalfToFloat(x.as<kernels::half_bits>()[i]) : x.as<float>()[i];
}

// The interpolation over taps[j..] at input offset `off` for output coordinates `o`.
float Interpolate(const HostTensor& x, const std::vector<LinearTaps>& taps, size_t j, int64_t off,
                  const int64_t* o) {
  if (j == taps.size()) return LoadFloat(x, off);
  const LinearTaps& t = taps[j];
  const int64_t k = o[t.dim];
  const float v0 = Interpolate(x, taps, j + 1, off + t.i0[k] * t.stride, o);
  const float v1 = Interpolate(x, taps, j + 1, off + t.i1[k] * t.stride, o);
  return v0 * t.w0[k] + v1 * t.w1[k];
}

absl::Status RunLinear(RunContext& ctx, const ResizePlan& plan) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int rank = static_cast<int>(plan.out.size());
  const int64_t inner = rank == 0 ? 1 : plan.out.back();
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= plan.out[d];
  if (rows == 0 || inner == 0) return absl::OkStatus();
  std::vector<bool> interpolated(static_cast<size_t>(rank), false);
  for (const LinearTaps& t : plan.taps) interpolated[t.dim] = true;
  const auto in_strides = RowMajorStrides(plan.in);
  const int64_t esize = static_cast<int64_t>(ElementSize(out.type().dtype));
  const int64_t corners = int64_t{1} << plan.taps.size();
  const int64_t passes =
      static_cast<int64_t>(plan.taps.size()) * device::VectorPasses(device::VectorKernel::kResizeLinearTap);
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachUnitTile(ctx, rows, [&](device::TileWork& w, int64_t r0, int64_t r1) {
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(inner));
    int64_t o[kMaxRank] = {};
    for (int64_t r = r0; r < r1; ++r) {
      int64_t rem = r, base = 0;
      for (int d = rank - 2; d >= 0; --d) {
        o[d] = rem % plan.out[d];
        rem /= plan.out[d];
        if (!interpolated[d]) base += o[d] * in_strides[d];
      }
      for (int64_t i = 0; i < inner; ++i) {
        o[rank - 1] = i;
        const int64_t off = interpolated[rank - 1] ? base : base + i;
        row[i] = Interpolate(x, plan.taps, 0, off, o);
      }
      w.overflow_elements += StoreFromFloat(out, r * inner, inner, row.data(), saturate);
      w += VectorChunkWork(inner, inner * corners * esize, inner * esize, 4, passes);
    }
  });
  return absl::OkStatus();
}

absl::Status RunResize(RunContext& ctx) {
  const ResizePlan& plan = ctx.State<ResizePlan>();
  if (plan.linear) return RunLinear(ctx, plan);
  CopyByDimMap(ctx, *ctx.inputs[0], ctx.outputs[0], plan.nearest, nullptr);
  return absl::OkStatus();
}

}  // namespace

void RegisterResizeOp(OpRegistry& r) {
  OpDef d;
  d.name = "Resize";
  d.units = "MTE2, MTE3 (nearest); Vector (linear)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = 1;
  d.max_inputs = 4;
  d.attributes = {
      {"mode", AttrKind::kString, {"nearest", "linear", "cubic"}},
      {"coordinate_transformation_mode", AttrKind::kString,
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
        "tf_crop_and_resize", "half_pixel_symmetric"}},
      {"nearest_mode", AttrKind::kString, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}},
      {"cubic_coeff_a", AttrKind::kFloat},
      {"exclude_outside", AttrKind::kInt},
      {"extrapolation_value", AttrKind::kFloat},
      {"antialias", AttrKind::kInt},
      {"axes", AttrKind::kInts},
      {"keep_aspect_ratio_policy", AttrKind::kString},
  };
  d.shape_inputs = {2, 3};
  d.infer = InferResize;
  d.run = RunResize;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
