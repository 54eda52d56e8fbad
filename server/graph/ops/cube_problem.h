// The Cube ops' one problem builder (MatMul, Gemm, Conv, and any op that joins
// them): what every Cube op does the same way, in one place.
//
// Two tilings meet here. The device's (cube_tiling.h, PlanCubeTiles) is what a
// Da Vinci chip would run and what the profile counts; it is planned once, at
// plan time, checked against the preset's L0A/L0B/L0C/L1 (a tile that does not
// fit refuses the graph, naming the node and the buffer), and the op's whole
// device work is derived from it then (it depends on shapes only). The host's
// (kHostCubeTile) is how the kernel blocks the same GEMM for the host's caches
// and threads. Neither changes a result bit (each output's K sum runs in one
// fixed order), so the host may compute a batched or folded GEMM that the
// model counts as the chip's own tiles.
//
// Plan time (in the op's infer, kept with InferContext::Prepare):
//   PlanCubeModel     the device tiling of batch x (m x n x k), checked
//   AppendModelGemm   the counted work of one such GEMM (kernels::CountCubeTile,
//                     the function the kernel records its tiles with)
//   PackConstantB     a constant operand converted to fp16 and packed into the
//                     Cube's fractal layout once, so runs never pack it
// Run time:
//   CubeProblem       a kernels::GemmProblem with the element types, the
//                     plan's float mode (operand rounding and FixPipe) and the
//                     run's cancel flag set
//   RunCubeGemm       the GEMM on the host tiles; returns its overflow count
//   SetCubeWork       the op's prepared device work, with that count
// Fused epilogues (fusion.h): PlanEpilogue keeps what InferContext::epilogue
// asks for, BindEpilogue points its operands at a run's inputs, and
// AddEpilogueWork counts its Vector passes in the op's device work.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cube_gemm.h"
#include "kernels/cube_packed_b.h"
#include "server/device/tile_work.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/host_tensor.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

inline kernels::ElemType CubeType(DataType t) {
  return t == v1::FLOAT16 ? kernels::ElemType::kFloat16 : kernels::ElemType::kFloat32;
}

// The host's blocking: 128 x 128 output tiles give every thread of a small team
// several tiles from 256^3 up, and the kernel blocks K for the caches itself.
inline constexpr kernels::CubeTileShape kHostCubeTile{};

// Most C tiles (K slices included) one Cube op may model (each is a record of
// its work, allocated at plan time): 2^18 tiles are 16 GiB of fp32 output at
// the 128 x 128 tiles large GEMMs take, far past what a request carries.
inline constexpr int64_t kMaxModeledCubeTiles = int64_t{1} << 18;

absl::StatusOr<CubePlan> PlanCubeModel(const InferContext& c, int64_t batch, int64_t m, int64_t n, int64_t k);

// The C tiles (K slices included) `plan` models for `batch` GEMMs of m x n,
// and INVALID_ARGUMENT naming the node when an op's `tiles` (summed over the
// GEMMs it models: an RNN's one per step) pass kMaxModeledCubeTiles.
long double ModeledCubeTiles(const CubePlan& plan, int64_t batch, int64_t m, int64_t n);
absl::Status CheckModeledCubeTiles(const InferContext& c, long double tiles, const std::string& what);

// Appends the device work of one m x n x k GEMM writing `c_type`, tiled per `plan`.
void AppendModelGemm(int64_t m, int64_t n, int64_t k, kernels::ElemType c_type, const CubePlan& plan,
                     uint64_t a_panel_key, uint64_t b_panel_key, const device::DevicePreset& preset,
                     device::OpWork& work);

// op(B) of the constant `b`: `batches` matrices `batch_stride` elements apart,
// each k x n (element (kk, j) at kk * ld + j, or j * ld + kk when trans).
// `column_scale`, when given (n per batch, consecutive), multiplies column j in
// fp32 before the single rounding to fp16 (a BatchNormalization folded into the
// weights). The rounding is in the plan's float mode (the preset's
// fp16_saturation), the mode its runs' GEMMs have (CubeProblem).
std::shared_ptr<const kernels::PackedCubeB> PackConstantB(const HostTensor& b, int64_t k, int64_t n, int64_t ld,
                                                          bool trans, int64_t batches, int64_t batch_stride,
                                                          const device::DevicePreset& preset,
                                                          const std::vector<float>* column_scale = nullptr);

// A Cube op's fused epilogue, as prepared (fusion.h).
struct CubeEpiloguePlan {
  kernels::EwProgram program;
  int first_operand = 0;  // program operand i is input first_operand + i of the node
  std::vector<kernels::EpilogueOperand::Kind> kinds;
};

// The epilogue InferContext::epilogue asks for; null when none (or only a
// folded BatchNormalization, which the op applies to its weights itself).
std::shared_ptr<const CubeEpiloguePlan> PlanEpilogue(const InferContext& c);

// The op's device work with the epilogue's Vector passes over `elements`
// results (and its tensor operands read from GM), spread over the tiles.
void AddEpilogueWork(const CubeEpiloguePlan& e, int64_t elements, const std::vector<TensorType>& operand_types,
                     device::OpWork& work);
std::vector<TensorType> EpilogueOperandTypes(const InferContext& c, const CubeEpiloguePlan& e);

// The kernel's epilogue for one run: the operands point at the run's inputs.
// Elements between consecutive GEMM batches: per_column_stride for kPerColumn
// operands, like_c_stride for kLikeC ones (C's batch stride).
kernels::CubeEpilogue BindEpilogue(const RunContext& ctx, const CubeEpiloguePlan& e, int64_t per_column_stride,
                                   int64_t like_c_stride);

kernels::GemmProblem CubeProblem(const RunContext& ctx, DataType a, DataType b, DataType c);

// Runs `p` on the host's tiles; the results that overflowed their type.
uint64_t RunCubeGemm(const kernels::GemmProblem& p);

// ctx.work becomes `modeled` (AI-core work), the overflow count on its first tile.
void SetCubeWork(RunContext& ctx, const device::OpWork& modeled, uint64_t overflow);

}  // namespace npu::graph::ops
