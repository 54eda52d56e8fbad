// Range (ONNX opset 11): start, start + delta, ... while before limit. The
// three scalars are constants (the count decides the output shape); the count
// is ceil((limit - start) / delta), exact for integers, in double for floats
// (as torch.arange and NumPy compute it). Float values are start + i * delta
// in double rounded once, as torch computes them; integer values are exact.
#include <cmath>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

double ScalarAsDouble(const HostTensor& t) {
  switch (t.type().dtype) {
    case v1::FLOAT32: return t.as<float>()[0];
    case v1::INT32: return t.as<int32_t>()[0];
    default: return static_cast<double>(t.as<int64_t>()[0]);
  }
}

int64_t ScalarAsInt(const HostTensor& t) {
  return t.type().dtype == v1::INT32 ? t.as<int32_t>()[0] : t.as<int64_t>()[0];
}

absl::StatusOr<int64_t> RangeCount(const InferContext& c) {
  const HostTensor &start = *c.constants[0], &limit = *c.constants[1], &delta = *c.constants[2];
  if (start.type().dtype != v1::FLOAT32) {
    const __int128 s = ScalarAsInt(start), l = ScalarAsInt(limit), d = ScalarAsInt(delta);
    if (d == 0) return NodeError(c.node, InputLabel(c.node, 2), ": delta is 0");
    const __int128 span = l - s;
    __int128 n = span / d;
    if (n * d != span && (span > 0) == (d > 0)) ++n;  // ceil toward the direction of travel
    if (n < 0) n = 0;
    if (n > kMaxElements) return NodeError(c.node, "the range has ", static_cast<int64_t>(n), " elements; at most ",
                                           kMaxElements);
    return static_cast<int64_t>(n);
  }
  const double s = ScalarAsDouble(start), l = ScalarAsDouble(limit), d = ScalarAsDouble(delta);
  if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
    return NodeError(c.node, "start, limit and delta must be finite, got ", s, ", ", l, ", ", d);
  }
  if (d == 0) return NodeError(c.node, InputLabel(c.node, 2), ": delta is 0");
  const double n = std::ceil((l - s) / d);
  if (!(n <= static_cast<double>(kMaxElements))) {
    return NodeError(c.node, "the range has ", n, " elements; at most ", kMaxElements);
  }
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

absl::StatusOr<std::vector<TensorType>> InferRange(InferContext& c) {
  const DataType dtype = c.inputs[0]->dtype;
  for (int i = 0; i < 3; ++i) {
    const TensorType& t = *c.inputs[i];
    if (t.dtype != v1::FLOAT32 && t.dtype != v1::INT32 && t.dtype != v1::INT64) {
      return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(t.dtype),
                       " is not supported (FLOAT32, INT32, INT64)");
    }
    if (t.dtype != dtype) {
      return NodeError(c.node, InputLabel(c.node, i), " is ", DataTypeName(t.dtype), ", ", InputLabel(c.node, 0),
                       " is ", DataTypeName(dtype), ": start, limit and delta must have one dtype");
    }
    if (!t.shape.empty() && t.elements() != 1) {
      return NodeError(c.node, InputLabel(c.node, i), " must be a scalar, got ", ShapeToString(t.shape));
    }
    if (c.constants[i] == nullptr) {
      return NodeError(c.node, InputLabel(c.node, i),
                       " must be a constant (an initializer): the output shape depends on its value");
    }
  }
  auto n = RangeCount(c);
  if (!n.ok()) return n.status();
  return std::vector<TensorType>{{dtype, {*n}}};
}

template <typename T>
void FillRange(RunContext& ctx, const HostTensor& out) {
  const int64_t n = out.type().elements();
  constexpr int64_t kBlock = 16384;
  ForEachUnitTile(ctx, (n + kBlock - 1) / kBlock, [&](device::TileWork& w, int64_t b0, int64_t b1) {
    T* y = out.mutable_as<T>();
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t end = std::min(n, (b + 1) * kBlock);
      if constexpr (std::is_same_v<T, float>) {
        const double s = ScalarAsDouble(*ctx.inputs[0]), d = ScalarAsDouble(*ctx.inputs[2]);
        for (int64_t i = b * kBlock; i < end; ++i) y[i] = static_cast<float>(s + static_cast<double>(i) * d);
      } else {
        const __int128 s = ScalarAsInt(*ctx.inputs[0]), d = ScalarAsInt(*ctx.inputs[2]);
        for (int64_t i = b * kBlock; i < end; ++i) y[i] = static_cast<T>(s + static_cast<__int128>(i) * d);
      }
      w.vector_instructions += 2;  // index ramp, multiply-add
      w.mte3_bytes += static_cast<uint64_t>((end - b * kBlock) * static_cast<int64_t>(sizeof(T)));
      w.scalar_instructions += 2;
      ++w.pipeline_steps;
    }
  });
}

absl::Status RunRange(RunContext& ctx) {
  const HostTensor& out = ctx.outputs[0];
  switch (out.type().dtype) {
    case v1::FLOAT32: FillRange<float>(ctx, out); break;
    case v1::INT32: FillRange<int32_t>(ctx, out); break;
    default: FillRange<int64_t>(ctx, out); break;
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterRangeOp(OpRegistry& r) {
  OpDef d;
  d.name = "Range";
  d.units = "Vector, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT32, v1::INT32, v1::INT64};
  d.min_inputs = d.max_inputs = 3;
  d.shape_inputs = {0, 1, 2};
  d.infer = InferRange;
  d.run = RunRange;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
