#include "absl/strings/str_cat.h"
#include "server/graph/ops/cube_problem.h"

#include <algorithm>

#include "kernels/cube_tile_counts.h"
#include "server/graph/element_access.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {

long double ModeledCubeTiles(const CubePlan& plan, int64_t batch, int64_t m, int64_t n) {
  const auto tiles = [](int64_t extent, int64_t tile) { return tile > 0 ? (extent + tile - 1) / tile : extent; };
  return static_cast<long double>(batch) * tiles(m, plan.tile.m) * tiles(n, plan.tile.n) *
         std::max<int64_t>(plan.split_k, 1);
}

absl::Status CheckModeledCubeTiles(const InferContext& c, long double tiles, const std::string& what) {
  if (tiles <= static_cast<long double>(kMaxModeledCubeTiles)) return absl::OkStatus();
  return NodeError(c.node, what, " take ", static_cast<double>(tiles), " Cube tiles, past the ", kMaxModeledCubeTiles,
                   " one op may take: split the op, or give it a smaller shape");
}

absl::StatusOr<CubePlan> PlanCubeModel(const InferContext& c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  // First the fewest tiles any plan could take (all of the largest edge), so
  // the tiler's own tile counts stay far inside int64 (a batch of 2^40 GEMMs
  // overflowed them: UBSan, found by the onnx fuzzer).
  const std::string what = absl::StrCat("its ", batch, " GEMM(s) of ", m, " x ", n, " x ", k);
  if (auto s = CheckModeledCubeTiles(c, ModeledCubeTiles(CubePlan{{kMaxCubeTileEdge, kMaxCubeTileEdge, 16}, 1}, batch, m, n), what);
      !s.ok()) {
    return s;
  }
  const CubePlan plan = PlanCubeTiles(batch, m, n, k, *c.preset);
  if (auto s = CheckCubeTileFits(plan.tile, *c.preset); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(NodeLabel(c.node), ": ", s.message()));
  }
  // The plan models every C tile (and K slice) before any data arrives, so a
  // declared shape alone must not make it allocate without bound (a Conv over
  // an input 2^31 wide asked for gigabytes of tile records).
  if (auto s = CheckModeledCubeTiles(c, ModeledCubeTiles(plan, batch, m, n), what); !s.ok()) return s;
  return plan;
}

void AppendModelGemm(int64_t m, int64_t n, int64_t k, kernels::ElemType c_type, const CubePlan& plan,
                     uint64_t a_panel_key, uint64_t b_panel_key, const device::DevicePreset& preset,
                     device::OpWork& work) {
  kernels::GemmProblem shape;
  shape.m = m, shape.n = n, shape.k = k;
  shape.c_type = c_type;
  AppendCubeTiles(kernels::CountCubeTiles(shape, plan.tile), m, n, k, plan, a_panel_key, b_panel_key, preset, work);
}

std::shared_ptr<const kernels::PackedCubeB> PackConstantB(const HostTensor& b, int64_t k, int64_t n, int64_t ld,
                                                          bool trans, int64_t batches, int64_t batch_stride,
                                                          const device::DevicePreset& preset,
                                                          const std::vector<float>* column_scale) {
  // The bench reads B as given (kernels/exact_gemm.h); it never runs fused, so
  // no folded scale is lost.
  if (preset.exact_cube_operands) return nullptr;
  kernels::OperandView view{b.data(), CubeType(b.type().dtype), ld, trans};
  std::vector<float> scaled;
  if (column_scale != nullptr) {
    // Scale in fp32, keeping B's layout; the one rounding to fp16 is the packing's.
    scaled.resize(static_cast<size_t>(b.type().elements()));
    LoadAsFloat(b, 0, 1, b.type().elements(), scaled.data());
    for (int64_t bt = 0; bt < batches; ++bt) {
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) {
          scaled[bt * batch_stride + (trans ? j * ld + kk : kk * ld + j)] *= (*column_scale)[bt * n + j];
        }
      }
    }
    view = kernels::OperandView{scaled.data(), kernels::ElemType::kFloat32, ld, trans};
  }
  return std::make_shared<const kernels::PackedCubeB>(
      kernels::PackedCubeB::Pack(view, k, n, batches, batch_stride, preset.fp16_saturation));
}

std::shared_ptr<const CubeEpiloguePlan> PlanEpilogue(const InferContext& c) {
  if (c.epilogue == nullptr || c.epilogue->program.steps.empty()) return nullptr;
  auto e = std::make_shared<CubeEpiloguePlan>();
  e->program = c.epilogue->program;
  e->first_operand = c.epilogue->first_operand;
  e->kinds = c.epilogue->kinds;
  return e;
}

std::vector<TensorType> EpilogueOperandTypes(const InferContext& c, const CubeEpiloguePlan& e) {
  std::vector<TensorType> types;
  for (size_t i = 0; i < e.kinds.size(); ++i) {
    const size_t input = static_cast<size_t>(e.first_operand) + i;
    types.push_back(input < c.inputs.size() && c.inputs[input] != nullptr ? *c.inputs[input] : TensorType{});
  }
  return types;
}

void AddEpilogueWork(const CubeEpiloguePlan& e, int64_t elements, const std::vector<TensorType>& operand_types,
                     device::OpWork& work) {
  if (work.tiles.empty()) return;
  int64_t passes = 0;
  for (const kernels::EwStep& s : e.program.steps) {
    if (s.kind == kernels::EwStep::Kind::kUnary) passes += device::VectorPasses(device::KernelOf(s.unary));
    if (s.kind == kernels::EwStep::Kind::kBinary) passes += device::VectorPasses(device::KernelOf(s.binary));
  }
  uint64_t read = 0;  // tensor operands come from GM; a bias or a scalar stays in UB
  for (size_t i = 0; i < e.kinds.size(); ++i) {
    if (e.kinds[i] == kernels::EpilogueOperand::Kind::kLikeC) read += operand_types[i].bytes();
  }
  const device::TileWork total = VectorChunkWork(elements, static_cast<int64_t>(read), 0, 4, passes);
  const uint64_t share = work.tiles.size();
  for (device::TileWork& w : work.tiles) {
    w.vector_repeats += total.vector_repeats / share;
    w.vector_instructions += total.vector_instructions / share;
    w.mte2_bytes += total.mte2_bytes / share;
  }
}

kernels::CubeEpilogue BindEpilogue(const RunContext& ctx, const CubeEpiloguePlan& e, int64_t per_column_stride,
                                   int64_t like_c_stride) {
  kernels::CubeEpilogue bound{&e.program, {}};
  for (size_t i = 0; i < e.kinds.size(); ++i) {
    const HostTensor& t = *ctx.inputs[static_cast<size_t>(e.first_operand) + i];
    kernels::EpilogueOperand o;
    o.kind = e.kinds[i];
    o.data = t.data();
    o.type = CubeType(t.type().dtype);
    o.batch_stride = o.kind == kernels::EpilogueOperand::Kind::kPerColumn ? per_column_stride
                     : o.kind == kernels::EpilogueOperand::Kind::kLikeC  ? like_c_stride
                                                                         : 0;
    bound.operands.push_back(o);
  }
  return bound;
}

kernels::GemmProblem CubeProblem(const RunContext& ctx, DataType a, DataType b, DataType c) {
  kernels::GemmProblem p;
  p.a_type = CubeType(a);
  p.b_type = CubeType(b);
  p.c_type = CubeType(c);
  p.saturate_fp16 = ctx.preset.fp16_saturation;
  p.exact_operands = ctx.preset.exact_cube_operands;
  p.cancel = ctx.cancel;
  return p;
}

uint64_t RunCubeGemm(const kernels::GemmProblem& p) {
  std::vector<kernels::CubeTileCounts> counts;
  kernels::CubeGemm(p, kHostCubeTile, &counts);
  uint64_t overflow = 0;
  for (const kernels::CubeTileCounts& c : counts) overflow += c.overflow_elements;
  return overflow;
}

void SetCubeWork(RunContext& ctx, const device::OpWork& modeled, uint64_t overflow) {
  ctx.work = modeled;
  ctx.work.task_type = device::TaskType::kAiCore;
  if (!ctx.work.tiles.empty()) ctx.work.tiles[0].overflow_elements += overflow;
}

}  // namespace npu::graph::ops
