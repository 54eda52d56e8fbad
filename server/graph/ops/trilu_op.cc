// Trilu (ONNX opset 14): the upper (upper = 1: j - i >= k) or lower (j - i <=
// k) triangle of each matrix in the last two dims, zeros elsewhere; k is an
// optional constant scalar. Each matrix row is a kept run copied by MTE and a
// zero run the Vector unit fills.
#include <algorithm>
#include <cstring>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

struct TriluPlan {
  int64_t k = 0;
  bool upper = true;
};

absl::StatusOr<std::vector<TensorType>> InferTrilu(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (x.shape.size() < 2) {
    return NodeError(c.node, InputLabel(c.node, 0), " ", ToString(x), " needs rank >= 2 (matrices in its last two dims)");
  }
  TriluPlan p;
  if (HasInput(c, 1)) {
    auto k = ConstantInts(c, 1);
    if (!k.ok()) return k.status();
    if (k->size() != 1) return NodeError(c.node, InputLabel(c.node, 1), ": k must hold one value, got ", k->size());
    p.k = (*k)[0];
  }
  auto upper = c.attrs.Int("upper", 1);
  if (!upper.ok()) return upper.status();
  p.upper = *upper != 0;
  c.Prepare(p);
  return std::vector<TensorType>{x};
}

absl::Status RunTrilu(RunContext& ctx) {
  const TriluPlan& p = ctx.State<TriluPlan>();
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  const int64_t rows_per = s[s.size() - 2], cols = s.back();
  const int64_t rows = rows_per == 0 ? 0 : x.type().elements() / std::max<int64_t>(1, cols);
  const int64_t esize = static_cast<int64_t>(ElementSize(x.type().dtype));
  ForEachUnitTile(ctx, rows, [&](device::TileWork& w, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r % rows_per;
      // Kept columns: upper j >= i + k, lower j <= i + k; k may be any int64,
      // so it is first clamped to where it stops mattering.
      const int64_t k = std::clamp<int64_t>(p.k, -(rows_per + cols), rows_per + cols);
      const int64_t edge = std::clamp<int64_t>(p.upper ? i + k : i + k + 1, 0, cols);
      const int64_t keep_begin = p.upper ? edge : 0, keep_end = p.upper ? cols : edge;
      std::byte* dst = out.mutable_data() + r * cols * esize;
      const std::byte* src = x.data() + r * cols * esize;
      std::memset(dst, 0, static_cast<size_t>(cols * esize));
      std::memcpy(dst + keep_begin * esize, src + keep_begin * esize,
                  static_cast<size_t>((keep_end - keep_begin) * esize));
      w.mte2_bytes += static_cast<uint64_t>((keep_end - keep_begin) * esize);
      w.mte3_bytes += static_cast<uint64_t>(cols * esize);
      w.vector_instructions += 1;   // the zero fill
      w.scalar_instructions += 3;   // bounds, address, burst
      ++w.pipeline_steps;
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterTriluOp(OpRegistry& r) {
  OpDef d;
  d.name = "Trilu";
  d.units = "MTE2, MTE3, Vector (zero fill)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = 1;
  d.max_inputs = 2;
  d.attributes = {{"upper", AttrKind::kInt}};
  d.shape_inputs = {1};
  d.infer = InferTrilu;
  d.run = RunTrilu;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
