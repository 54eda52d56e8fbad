// Cast and CastLike (ONNX; CastLike takes the dtype of its second input): converts between FLOAT16, FLOAT32, INT32, INT8, INT64 and BOOL
// on the Vector unit (element_access.h has the rules): float -> int truncates
// toward zero and saturates; int -> narrower int wraps; -> BOOL is "!= 0";
// -> FLOAT16 rounds to nearest even (saturating on Ascend 910). Between
// integer types the values go through int64, so nothing is lost on the way.
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferCast(InferContext& c) {
  auto to = c.attrs.Int("to");
  if (!to.ok()) return to.status();
  // ONNX TensorProto codes: FLOAT=1, INT8=3, INT32=6, INT64=7, BOOL=9, FLOAT16=10.
  DataType dtype;
  switch (*to) {
    case 1: dtype = v1::FLOAT32; break;
    case 3: dtype = v1::INT8; break;
    case 6: dtype = v1::INT32; break;
    case 7: dtype = v1::INT64; break;
    case 9: dtype = v1::BOOL; break;
    case 10: dtype = v1::FLOAT16; break;
    default:
      return NodeError(c.node, "attribute \"to\" = ", *to,
                       ": that ONNX type is not supported (1 FLOAT, 3 INT8, 6 INT32, 7 INT64, 9 BOOL, 10 FLOAT16)");
  }
  return std::vector<TensorType>{{dtype, c.inputs[0]->shape}};
}

// CastLike: to the dtype of its second input (whose values it never reads).
absl::StatusOr<std::vector<TensorType>> InferCastLike(InferContext& c) {
  return std::vector<TensorType>{{c.inputs[1]->dtype, c.inputs[0]->shape}};
}

absl::Status RunCast(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = out.type().elements();
  const bool to_int = !IsFloat(out.type().dtype);
  const bool from_int = !IsFloat(x.type().dtype);
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const int64_t out_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
  const VectorTiling tiling = PlanVectorTiles(n, std::max<int64_t>(8, in_bytes + out_bytes), ctx.preset);
  ctx.work.tiles.assign(static_cast<size_t>(tiling.tiles), device::TileWork{});
  const bool saturate = ctx.preset.fp16_saturation;
  ParallelFor(tiling.tiles, 2 * n, [&](int64_t t) {
    const int64_t begin = tiling.TileBegin(t);
    const int64_t end = std::min(n, begin + tiling.per_tile);
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    thread_local std::vector<float> f;
    thread_local std::vector<int64_t> i64;
    for (int64_t s = begin; s < end; s += tiling.chunk) {
      const int64_t len = std::min(tiling.chunk, end - s);
      if (from_int && to_int) {
        i64.resize(len);
        LoadAsInt64(x, s, 1, len, i64.data());
        StoreFromInt64(out, s, len, i64.data());
      } else {
        f.resize(len);
        LoadAsFloat(x, s, 1, len, f.data());
        work.overflow_elements += StoreFromFloat(out, s, len, f.data(), saturate);
      }
      work += VectorChunkWork(len, len * in_bytes, len * out_bytes, std::max(in_bytes, out_bytes),
                              device::VectorPasses(device::VectorKernel::kCast));
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterCastOp(OpRegistry& r) {
  OpDef d;
  d.name = "Cast";
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.attributes = {{"to", AttrKind::kInt}, {"saturate", AttrKind::kInt}};
  d.infer = InferCast;
  d.run = RunCast;
  OpDef like = d;
  r.Register(std::move(d));
  like.name = "CastLike";
  like.min_inputs = like.max_inputs = 2;
  like.attributes = {{"saturate", AttrKind::kInt}};
  like.infer = InferCastLike;
  r.Register(std::move(like));
}

}  // namespace npu::graph::ops
