// GatherElements (ONNX opset 13): out[i0..] = data[i0.., idx[i0..], ..] with
// the index replacing the coordinate along `axis` (torch.gather). Indices are
// run-time values: each is checked against the axis (negative counts from the
// end) before anything is written. Every element is one Scalar address and a
// one-element MTE move.
#include <algorithm>
#include <cstring>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferGatherElements(InferContext& c) {
  const TensorType& data = *c.inputs[0];
  const TensorType& idx = *c.inputs[1];
  if (idx.dtype != v1::INT64 && idx.dtype != v1::INT32) {
    return NodeError(c.node, InputLabel(c.node, 1), ": indices must be INT64 or INT32, got ", DataTypeName(idx.dtype));
  }
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return NodeError(c.node, InputLabel(c.node, 0), " is a scalar");
  if (static_cast<int64_t>(idx.shape.size()) != rank) {
    return NodeError(c.node, InputLabel(c.node, 1), " ", ToString(idx), " must have the rank of ",
                     InputLabel(c.node, 0), " ", ToString(data));
  }
  auto attr = c.attrs.Int("axis", 0);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  for (int64_t d = 0; d < rank; ++d) {
    if (d != *axis && idx.shape[d] > data.shape[d]) {
      return NodeError(c.node, InputLabel(c.node, 1), " ", ToString(idx), " exceeds ", InputLabel(c.node, 0), " ",
                       ToString(data), " in dim ", d);
    }
  }
  return std::vector<TensorType>{{data.dtype, idx.shape}};
}

absl::Status RunGatherElements(RunContext& ctx) {
  const HostTensor& data = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& ds = data.type().shape;
  const Shape& os = out.type().shape;
  const int64_t rank = static_cast<int64_t>(ds.size());
  const int64_t axis = NormalizeAxis(ctx.node, ctx.attrs.Int("axis", 0).value(), rank).value();
  const std::vector<int64_t> indices = TensorInts(*ctx.inputs[1]);
  const int64_t dim = ds[axis];
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < -dim || indices[i] >= dim) {
      return NodeError(ctx.node, InputLabel(ctx.node, 1), ": index ", indices[i], " at position ", i,
                       " is out of range for axis ", axis, " of size ", dim);
    }
  }
  const auto dstrides = RowMajorStrides(ds);
  const size_t esize = ElementSize(data.type().dtype);
  const int64_t n = out.type().elements();
  constexpr int64_t kBlock = 4096;
  ForEachUnitTile(ctx, (n + kBlock - 1) / kBlock, [&](device::TileWork& w, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t end = std::min(n, (b + 1) * kBlock);
      for (int64_t e = b * kBlock; e < end; ++e) {
        int64_t rem = e, src = 0;
        for (int64_t d = rank - 1; d >= 0; --d) {
          int64_t i = rem % os[d];
          rem /= os[d];
          if (d == axis) i = indices[e] < 0 ? indices[e] + dim : indices[e];
          src += i * dstrides[d];
        }
        std::memcpy(out.mutable_data() + e * static_cast<int64_t>(esize),
                    data.data() + src * static_cast<int64_t>(esize), esize);
      }
      const uint64_t count = static_cast<uint64_t>(end - b * kBlock);
      w.mte2_bytes += count * (esize + ElementSize(ctx.inputs[1]->type().dtype));
      w.mte3_bytes += count * esize;
      w.scalar_instructions += 3 * count;  // load index, address, move
      ++w.pipeline_steps;
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterGatherElementsOp(OpRegistry& r) {
  OpDef d;
  d.name = "GatherElements";
  d.units = "Scalar, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.attributes = {{"axis", AttrKind::kInt}};
  d.infer = InferGatherElements;
  d.run = RunGatherElements;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
