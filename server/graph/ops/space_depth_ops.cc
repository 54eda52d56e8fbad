// DepthToSpace (modes DCR and CRD; torch's pixel_shuffle is CRD) and
// SpaceToDepth (ONNX opset 13) on NCHW: one 6-D strided copy each (the
// reshape-transpose-reshape of the spec done as addressing), on the MTEs.
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/strided_copy.h"

namespace npu::graph::ops {
namespace {

enum class Move { kDepthToSpace, kSpaceToDepth };

absl::StatusOr<std::vector<TensorType>> InferMove(InferContext& c, Move m) {
  const TensorType& x = *c.inputs[0];
  if (x.shape.size() != 4) return NodeError(c.node, InputLabel(c.node, 0), " ", ToString(x), " must be NCHW (rank 4)");
  auto b = c.attrs.Int("blocksize");
  if (!b.ok()) return b.status();
  if (*b < 1) return NodeError(c.node, "attribute \"blocksize\" = ", *b, " must be at least 1");
  const int64_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], w = x.shape[3];
  auto bb = CheckedMul(*b, *b, "attribute \"blocksize\" squared");
  if (!bb.ok()) return AtNode(c.node, bb.status());
  if (m == Move::kDepthToSpace) {
    if (ch % *bb != 0) {
      return NodeError(c.node, "channels ", ch, " are not a multiple of blocksize^2 = ", *bb);
    }
    auto oh = CheckedMul(h, *b, "the output height");
    auto ow = CheckedMul(w, *b, "the output width");
    if (!oh.ok()) return AtNode(c.node, oh.status());
    if (!ow.ok()) return AtNode(c.node, ow.status());
    return std::vector<TensorType>{{x.dtype, {n, ch / *bb, *oh, *ow}}};
  }
  if (h % *b != 0 || w % *b != 0) {
    return NodeError(c.node, "height ", h, " and width ", w, " must be multiples of blocksize ", *b);
  }
  auto oc = CheckedMul(ch, *bb, "the output channels");
  if (!oc.ok()) return AtNode(c.node, oc.status());
  return std::vector<TensorType>{{x.dtype, {n, *oc, h / *b, w / *b}}};
}

absl::Status RunMove(RunContext& ctx, Move m) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int64_t b = ctx.attrs.Int("blocksize").value();
  const Shape& s = x.type().shape;
  const int64_t ch = s[1], h = s[2], w = s[3], hw = h * w;
  StridedRegion r;
  if (m == Move::kDepthToSpace) {
    const int64_t oc = ch / (b * b);
    const bool crd = ctx.attrs.String("mode", "DCR").value_or("DCR") == "CRD";
    // Region (n, c, h, b1, w, b2): the output in row-major order.
    r.shape = {s[0], oc, h, b, w, b};
    const int64_t c_stride = crd ? b * b * hw : hw;
    const int64_t b1_stride = crd ? b * hw : b * oc * hw;
    const int64_t b2_stride = crd ? hw : oc * hw;
    r.src_strides = {ch * hw, c_stride, w, b1_stride, 1, b2_stride};
  } else {
    // Region (n, b1, b2, c, h', w'): the output in row-major order.
    r.shape = {s[0], b, b, ch, h / b, w / b};
    r.src_strides = {ch * hw, w, 1, hw, b * w, b};
  }
  r.dst_strides = RowMajorStrides(r.shape);
  CopyRegion(ctx, x, out, r);
  return absl::OkStatus();
}

OpDef MoveDef(std::string name, Move m) {
  OpDef d;
  d.name = std::move(name);
  d.units = "MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.attributes = {{"blocksize", AttrKind::kInt}};
  if (m == Move::kDepthToSpace) d.attributes.push_back({"mode", AttrKind::kString, {"DCR", "CRD"}});
  d.infer = [m](InferContext& c) { return InferMove(c, m); };
  d.run = [m](RunContext& c) { return RunMove(c, m); };
  return d;
}

}  // namespace

void RegisterSpaceDepthOps(OpRegistry& r) {
  r.Register(MoveDef("DepthToSpace", Move::kDepthToSpace));
  r.Register(MoveDef("SpaceToDepth", Move::kSpaceToDepth));
}

}  // namespace npu::graph::ops
