#include "server/graph/ops/grouped_conv.h"

#include <algorithm>
#include <vector>

#include "kernels/fixpipe.h"
#include "kernels/stencil.h"
#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {

std::vector<float> GroupedConvBias(const HostTensor* bias, int64_t channels) {
  std::vector<float> b(static_cast<size_t>(channels), 0.0f);
  if (bias != nullptr) LoadAsFloat(*bias, 0, 1, channels, b.data());
  for (float& v : b) v += 0.0f;
  return b;
}

absl::Status RunGroupedConv(RunContext& ctx, const GroupedConvShape& g, const GroupedConvPrepared& prepared) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& wt = *ctx.inputs[1];
  const HostTensor* bias_t = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  const HostTensor& out = ctx.outputs[0];
  ctx.work.task_type = device::TaskType::kAiVectorCore;
  const int64_t cg = g.c / g.group, mg = g.m / g.group, taps = cg * g.kh * g.kw;
  const int64_t planes = g.n * g.m;
  if (planes == 0 || g.oh == 0 || g.ow == 0) return absl::OkStatus();
  std::vector<float> weights_now, bias_now;
  if (prepared.weights == nullptr) {
    weights_now.resize(static_cast<size_t>(wt.type().elements()));
    LoadAsFloat(wt, 0, 1, wt.type().elements(), weights_now.data());
  }
  if (prepared.bias == nullptr) bias_now = GroupedConvBias(bias_t, g.m);
  const std::vector<float>& weights = prepared.weights != nullptr ? *prepared.weights : weights_now;
  const std::vector<float>& bias = prepared.bias != nullptr ? *prepared.bias : bias_now;
  // With an epilogue the stencil's fp32 results go through FixPipe's program
  // (channel-major: the plane is one column of C), which also counts the
  // overflows of the Conv's own store (its first step).
  kernels::CubeEpilogue epilogue;
  kernels::FixPipeConfig fixpipe;
  if (prepared.epilogue != nullptr) {
    epilogue = BindEpilogue(ctx, *prepared.epilogue, 0, 0);
    fixpipe.epilogue = &epilogue;
    fixpipe.out_type = CubeType(out.type().dtype);
    fixpipe.saturate_fp16 = ctx.preset.fp16_saturation;
  }
  kernels::StencilShape s;
  s.h = g.h, s.w = g.w, s.oh = g.oh, s.ow = g.ow, s.kh = g.kh, s.kw = g.kw;
  s.sh = g.sh, s.sw = g.sw, s.dh = g.dh, s.dw = g.dw, s.pt = g.pt, s.pl = g.pl;
  const bool fp16_in = x.type().dtype == v1::FLOAT16;
  const int64_t x_elem = static_cast<int64_t>(ElementSize(x.type().dtype));
  const int64_t o_elem = static_cast<int64_t>(ElementSize(out.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  const bool padded_planes = kernels::PaddingIsCheap(s);
  const kernels::StencilPlan plan =
      padded_planes ? kernels::PlanStencil(s, static_cast<size_t>(cg)) : kernels::StencilPlan{};
  const int64_t plane_floats = padded_planes ? plan.plane_floats : g.h * g.w;
  // One multiply-add pass over the output plane per input channel and tap, in fp32 lanes.
  const device::TileWork plane_work = VectorChunkWork(g.oh * g.ow, 0, g.oh * g.ow * o_elem, 4,
                                                      taps * device::VectorPasses(device::VectorKernel::kConvTap));
  ForEachUnitTile(ctx, planes, [&](device::TileWork& w, int64_t p0, int64_t p1) {
    w.mte2_bytes += static_cast<uint64_t>(weights.size() * ElementSize(wt.type().dtype));  // weights stay in UB
    thread_local std::vector<float> buf, res;
    buf.resize(static_cast<size_t>(cg * plane_floats));
    int64_t loaded = -1;  // (image, group) whose planes `buf` holds: a channel multiplier reuses them
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t img = p / g.m, mo = p % g.m, grp = mo / mg;
      uint64_t in_bytes = 0;
      if (img * g.group + grp != loaded) {
        loaded = img * g.group + grp;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t offset = ((img * g.c) + grp * cg + ci) * g.h * g.w;
          float* dst = buf.data() + ci * plane_floats;
          if (!padded_planes) {
            LoadAsFloat(x, offset, 1, g.h * g.w, dst);
            continue;
          }
          const void* plane = fp16_in ? static_cast<const void*>(x.as<kernels::half_bits>() + offset)
                                      : static_cast<const void*>(x.as<float>() + offset);
          kernels::PadPlane(plan, plane, fp16_in, 0.0f, dst);
        }
        in_bytes = static_cast<uint64_t>(cg * g.h * g.w * x_elem);
      }
      const int64_t at = p * g.oh * g.ow;
      if (padded_planes && fixpipe.epilogue == nullptr) {
        w.overflow_elements +=
            k.stencil(kernels::StencilOp::kWeighted, plan, buf.data(), weights.data() + mo * taps, bias[mo], nullptr,
                      DstAt(out, at), saturate);
      } else {
        res.resize(static_cast<size_t>(g.oh * g.ow));
        if (padded_planes) {
          k.stencil(kernels::StencilOp::kWeighted, plan, buf.data(), weights.data() + mo * taps, bias[mo], nullptr,
                    kernels::F32Dst(res.data()), saturate);
        } else {  // a kernel, pad or dilation far larger than the input: only the taps inside it
          thread_local std::vector<const float*> in;
          in.resize(static_cast<size_t>(cg));
          for (int64_t ci = 0; ci < cg; ++ci) in[ci] = buf.data() + ci * plane_floats;
          kernels::StencilSkippingPadding(kernels::StencilOp::kWeighted, s, in.data(), static_cast<size_t>(cg),
                                          weights.data() + mo * taps, bias[mo], nullptr, res.data());
        }
        w.overflow_elements +=
            fixpipe.epilogue == nullptr
                ? StoreFromFloat(out, at, g.oh * g.ow, res.data(), saturate)
                : kernels::FixPipeColumn(res.data(), 1, g.oh * g.ow, mo, at, fixpipe,
                                         out.mutable_data() +
                                             at * static_cast<int64_t>(ElementSize(out.type().dtype)));
      }
      w += plane_work;
      w.mte2_bytes += in_bytes;
    }
  }, static_cast<int64_t>(std::min(1e18, static_cast<double>(planes) * g.oh * g.ow * taps)));  // a cost hint: saturated
  if (prepared.epilogue != nullptr) {
    AddEpilogueWork(*prepared.epilogue, planes * g.oh * g.ow, *prepared.epilogue_operand_types, ctx.work);
  }
  return absl::OkStatus();
}

}  // namespace npu::graph::ops
