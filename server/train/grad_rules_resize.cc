// Resize's gradient. Every mode the server serves (nearest, linear) is
// separable: along each resized axis, output = M · input for an [out, in]
// interpolation matrix M, so the gradient is Mᵀ · dy along that axis. M is
// Resize itself applied to an identity along that one axis, with the node's
// attributes and that axis's scale or size, so the forward's coordinate
// transformation, nearest rounding and border handling are what the gradient
// transposes, not a second copy of them. The contraction is a MatMul (on the
// Cube) per resized axis.
#include <vector>

#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

using graph::Shape;

// The [n, n] identity of `dtype`.
std::string Identity(GradContext& c, int64_t n, graph::DataType dtype) {
  std::vector<float> v(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0f;
  return c.CastTo(c.FloatTensor({n, n}, v), v1::FLOAT32, dtype);
}

absl::Status ResizeRule(GradContext& c) {
  const graph::TensorType& x = c.InputType(0);
  const Shape& in = x.shape;
  const Shape& out = c.OutputType(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::string coordinates = "half_pixel";
  Attributes attrs;
  for (const auto& [name, value] : c.node.attributes()) {
    if (name == "axes") continue;  // the identity's resize has its own
    if (name == "coordinate_transformation_mode") coordinates = value.s();
    attrs[name] = value;
  }
  // Only the identity's rows resize: its columns (tf_half_pixel_for_nn shifts
  // even an unchanged axis) stay the input's positions.
  attrs["axes"] = AttrInts({0});
  std::vector<int64_t> all(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) all[static_cast<size_t>(d)] = d;
  std::vector<int64_t> axes = c.IntsAttr("axes", all);
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  const bool by_scales = c.Has(2) && c.InputType(2).elements() > 0;
  std::vector<float> scales;
  if (by_scales) {
    auto s = c.ConstantFloats(2);
    if (!s.ok()) return s.status();
    scales = *std::move(s);
    if (scales.size() != axes.size()) return c.Unsupported("with one scale per axis missing");
  }
  std::string g = c.dy[0];
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k];
    const float scale = by_scales ? scales[k] : 1.0f;
    // An unchanged axis maps each position to itself, but for
    // tf_half_pixel_for_nn, whose half-pixel shift a ceil rounding keeps.
    if (in[a] == out[a] && (!by_scales || scale == 1.0f) && coordinates != "tf_half_pixel_for_nn") continue;
    std::vector<std::string> inputs{Identity(c, in[a], x.dtype), ""};
    if (by_scales) {
      inputs.push_back(c.FloatTensor({1}, {scale}));
    } else {
      inputs.push_back("");
      inputs.push_back(c.Int64Tensor({1}, {out[a]}));
    }
    const std::string m = c.Op("Resize", inputs, attrs);  // [out, in]
    if (a == rank - 1) {
      g = c.Op("MatMul", {g, m});
    } else if (a == rank - 2) {
      g = c.Op("MatMul", {c.Op("Transpose", {m}, {{"perm", AttrInts({1, 0})}}), g});
    } else {
      std::vector<int64_t> swap;
      for (int64_t d = 0; d < rank; ++d) swap.push_back(d == a ? rank - 1 : d == rank - 1 ? a : d);
      g = c.Op("Transpose", {g}, {{"perm", AttrInts(swap)}});
      g = c.Op("Transpose", {c.Op("MatMul", {g, m})}, {{"perm", AttrInts(swap)}});
    }
  }
  c.dx[0] = g;
  return absl::OkStatus();
}

}  // namespace

void AddResizeGradRules(std::map<std::string, GradRule>& rules) { rules["Resize"] = ResizeRule; }

}  // namespace npu::train
