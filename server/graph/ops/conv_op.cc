// Conv (ONNX, 1-D NCL, 2-D NCHW and 3-D NCDHW) on the Cube (a 1-D or 2-D one
// with group > 1 runs on the Vector unit: grouped_conv.h), the way a Da Vinci core runs a
// dense one: one GEMM per call over all images, rows = output pixels
// (N * OD * OH * OW), columns = output channels, depth = the taps
// (Cg * kd * kh * kw) of a group (the 3-D layout NDC1HWC0); the groups are the GEMM's
// batch. MTE1's img2col lays the input under each tile's rows out as the Cube's A
// (fp32 inputs rounded to fp16 there), B is the weights (packed into the Cube's
// fractal layout once at plan time when they are constant), the accumulation is
// fp32, and FixPipe adds the bias per output channel in fp32 and writes NCHW with
// a single rounding.
//
// What is counted is what the chip does with its NC1HWC0 layout
// (conv_cube.h), derived once, at plan time.
#include <algorithm>
#include <vector>

#include "kernels/cube_gemm.h"
#include "kernels/cube_im2col.h"
#include "kernels/fp16.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/conv_geometry.h"
#include "server/graph/ops/conv_cube.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/grouped_conv.h"
#include "server/graph/shape_math.h"

namespace npu::graph::ops {
namespace {

using kernels::half_bits;

absl::StatusOr<ConvGeometry> Geometry(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                      const Shape& wt) {
  if (x.size() < 3 || x.size() > 5 || wt.size() != x.size()) {
    return NodeError(node, "only 1-D, 2-D and 3-D convolution (3-D to 5-D input and weights) is supported, got input ",
                     ShapeToString(x), " and weights ", ShapeToString(wt));
  }
  const size_t sp = x.size() - 2;
  const Shape kernel(wt.begin() + 2, wt.end());
  auto group = attrs.Int("group", 1);
  auto s = attrs.Ints("strides", std::vector<int64_t>(sp, 1));
  auto d = attrs.Ints("dilations", std::vector<int64_t>(sp, 1));
  auto p = attrs.Ints("pads", std::vector<int64_t>(2 * sp, 0));
  auto k = attrs.Ints("kernel_shape", kernel);
  auto auto_pad = attrs.String("auto_pad", "NOTSET");
  for (const absl::Status& st : {group.status(), s.status(), d.status(), p.status(), k.status(), auto_pad.status()}) {
    if (!st.ok()) return st;
  }
  if (s->size() != sp || d->size() != sp || p->size() != 2 * sp || k->size() != sp) {
    return NodeError(node, "attributes \"strides\", \"dilations\" and \"kernel_shape\" need ", sp,
                     " entries, \"pads\" ", 2 * sp, "; got ", s->size(), ", ", d->size(), ", ", k->size(), " and ",
                     p->size());
  }
  if (*k != kernel) return NodeError(node, "attribute \"kernel_shape\" does not match the weights ", ShapeToString(wt));
  // Axis a of the window (0: depth, 1: height, 2: width); a 2-D convolution has a unit depth.
  const size_t lead = 3 - sp;
  auto at = [&](const std::vector<int64_t>& v, size_t axis, int64_t unit) { return axis < lead ? unit : v[axis - lead]; };
  const bool explicit_pads = *auto_pad == "NOTSET";
  auto pad_of = [&](size_t axis, bool end) {
    return axis < lead || !explicit_pads ? 0 : (*p)[axis - lead + (end ? sp : 0)];
  };
  ConvGeometry g;
  g.spatial = static_cast<int64_t>(sp);
  g.n = x[0], g.c = x[1], g.d = sp == 3 ? x[2] : 1, g.h = sp >= 2 ? x[x.size() - 2] : 1, g.w = x.back();
  g.m = wt[0], g.kd = sp == 3 ? wt[2] : 1, g.kh = sp >= 2 ? wt[wt.size() - 2] : 1, g.kw = wt.back();
  g.group = *group;
  g.sd = at(*s, 0, 1), g.sh = at(*s, 1, 1), g.sw = at(*s, 2, 1);
  g.dd = at(*d, 0, 1), g.dh = at(*d, 1, 1), g.dw = at(*d, 2, 1);
  g.pf = pad_of(0, false), g.pt = pad_of(1, false), g.pl = pad_of(2, false);
  g.pk = pad_of(0, true), g.pb = pad_of(1, true), g.pr = pad_of(2, true);
  if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0) {
    return NodeError(node, "attribute \"group\" = ", g.group, " must divide input channels ", g.c,
                     " and output channels ", g.m);
  }
  if (wt[1] != g.cg()) {
    return NodeError(node, "weights ", ShapeToString(wt), " need ", g.cg(), " input channels per group (input ",
                     ShapeToString(x), ", group ", g.group, ")");
  }
  // As torch: only the batch may be empty (no channels or pixels leave nothing to convolve).
  if (std::any_of(x.begin() + 1, x.end(), [](int64_t v) { return v == 0; }) || g.m == 0) {
    return NodeError(node, "input ", ShapeToString(x), " and weights ", ShapeToString(wt),
                     ": only the batch dimension may be 0");
  }
  auto od = CheckedWindowOutput({g.d, g.kd, g.sd, g.dd, g.pf, g.pk, false}, "depth");
  if (!od.ok()) return AtNode(node, od.status());
  auto oh = CheckedWindowOutput({g.h, g.kh, g.sh, g.dh, g.pt, g.pb, false}, "height");
  if (!oh.ok()) return AtNode(node, oh.status());
  auto ow = CheckedWindowOutput({g.w, g.kw, g.sw, g.dw, g.pl, g.pr, false}, "width");
  if (!ow.ok()) return AtNode(node, ow.status());
  g.od = *od, g.oh = *oh, g.ow = *ow;
  // With an empty batch the output has no elements, so nothing else bounds one plane.
  if (auto n = CheckedElements({g.od, g.oh, g.ow}, "the output plane"); !n.ok()) return AtNode(node, n.status());
  return g;
}

absl::Status PrepareConv(InferContext& c, const ConvGeometry& g);

// A grouped (or depthwise) 1-D or 2-D convolution runs as a direct stencil on
// the Vector unit; every other, 3-D grouped ones too, on the Cube with the
// groups as the GEMM's batch.
bool OnTheStencil(const ConvGeometry& g) { return g.group > 1 && g.spatial < 3; }

absl::StatusOr<std::vector<TensorType>> InferConv(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (auto s = CheckConvDtypes(c); !s.ok()) return s;
  auto g = Geometry(c.node, c.attrs, x.shape, c.inputs[1]->shape);
  if (!g.ok()) return g.status();
  if (c.inputs.size() > 2 && c.inputs[2] != nullptr && c.inputs[2]->elements() != g->m) {
    return NodeError(c.node, "bias ", InputLabel(c.node, 2), " ", ToString(*c.inputs[2]), " needs ", g->m,
                     " elements");
  }
  if (auto s = PrepareConv(c, *g); !s.ok()) return s;
  return std::vector<TensorType>{{x.dtype, g->OutputShape()}};
}

// How a run calls the Cube, prepared once at plan time. The GEMM is the
// convolution as a Da Vinci core computes it: output pixels x output channels,
// A the img2col of the input (laid out per tile, never stored), B the weights
// (constant weights packed into the Cube's layout here), written as NCHW by
// FixPipe with the bias added in fp32 before the single rounding.
struct ConvPlan {
  ConvGeometry g;
  device::OpWork work;  // the device's tiles (conv_cube.h): shapes alone decide them
  kernels::Im2ColGeometry im2col;
  std::shared_ptr<const kernels::PackedCubeB> weights;  // per group; null when the weights are not constant
  std::vector<float> bias;  // when constant (with a folded BatchNormalization's shift)
  std::shared_ptr<const CubeEpiloguePlan> epilogue;  // fused ops FixPipe applies (fusion.h)
  // group > 1 (the Vector stencil): constant weights as fp32, the epilogue's operand types.
  std::vector<float> grouped_weights;
  std::vector<TensorType> epilogue_types;
};

// What the device work of the GEMM depends on (conv_cube.h).
ConvWorkShape WorkShape(const ConvGeometry& g) {
  ConvWorkShape s{g.cg(), g.h, g.w, g.mg(), g.kh, g.kw, g.sh, g.dh, g.pt, g.oh, g.ow, false};
  s.d = g.d, s.kd = g.kd, s.sd = g.sd, s.dd = g.dd, s.pf = g.pf, s.od = g.od;
  return s;
}

kernels::Im2ColGeometry Im2ColOf(const ConvGeometry& g) {
  kernels::Im2ColGeometry i;
  i.channels = g.cg();
  i.h = g.h, i.w = g.w;
  i.kh = g.kh, i.kw = g.kw;
  i.sh = g.sh, i.sw = g.sw;
  i.dh = g.dh, i.dw = g.dw;
  i.pt = g.pt, i.pl = g.pl;
  i.oh = g.oh, i.ow = g.ow;
  i.d = g.d, i.kd = g.kd, i.sd = g.sd, i.dd = g.dd, i.pf = g.pf, i.od = g.od;
  i.image_stride = g.c * g.volume();
  i.group_stride = g.cg() * g.volume();
  return i;
}

absl::Status PrepareConv(InferContext& c, const ConvGeometry& g) {
  auto model = PlanCubeModel(c, g.n * g.group, g.mg(), g.pixels(), WorkShape(g).k_fractals() * 16);
  if (!model.ok()) return model.status();
  if (auto s = CheckColumnSliver(c, g.kdim(), g.n * g.pixels()); !s.ok()) return s;
  ConvPlan plan;
  plan.g = g;
  plan.im2col = Im2ColOf(g);
  // The chip's work: per image and group, the C tiles of weights x pixels, each K slice.
  const bool bias = c.inputs.size() > 2 && c.inputs[2] != nullptr;
  const size_t x_elem = ElementSize(c.inputs[0]->dtype);
  AppendConvWork(WorkShape(g), g.n, g.group, *model, x_elem, bias, *c.preset, plan.work);
  // op(B) of group grp is its weights [Mg, Cg*kh*kw] transposed.
  // A BatchNormalization folded in (fusion.h): y = scale * conv + shift per
  // output channel, so the weights are scaled before their one rounding to
  // fp16 and the bias becomes scale * bias + shift.
  const std::vector<float>* scale = nullptr;
  if (c.epilogue != nullptr && !c.epilogue->channel_scale.empty()) {
    if (g.group > 1) {  // the stencil computes in fp32: scaled weights would change its bits
      return NodeError(c.node, "a BatchNormalization is folded only into a Conv with group = 1");
    }
    if (c.constants[1] == nullptr || (bias && c.constants[2] == nullptr)) {
      return NodeError(c.node, "folding a BatchNormalization needs constant weights and bias");
    }
    scale = &c.epilogue->channel_scale;
  }
  if (c.constants[1] != nullptr && g.group == 1) {
    plan.weights =
        PackConstantB(*c.constants[1], g.kdim(), g.mg(), g.kdim(), true, g.group, g.mg() * g.kdim(),
                      *c.preset, scale);
  }
  if (bias && c.constants[2] != nullptr) {
    plan.bias.resize(static_cast<size_t>(g.m));
    LoadAsFloat(*c.constants[2], 0, 1, g.m, plan.bias.data());
  }
  if (scale != nullptr) {
    plan.bias.resize(static_cast<size_t>(g.m), 0.0f);
    for (int64_t ch = 0; ch < g.m; ++ch) {
      plan.bias[ch] = plan.bias[ch] * (*scale)[ch] + c.epilogue->channel_shift[ch];
    }
  }
  plan.epilogue = PlanEpilogue(c);
  if (OnTheStencil(g)) {
    if (c.constants[1] != nullptr) {
      plan.grouped_weights.resize(static_cast<size_t>(c.constants[1]->type().elements()));
      LoadAsFloat(*c.constants[1], 0, 1, c.constants[1]->type().elements(), plan.grouped_weights.data());
    }
    if (!bias || c.constants[2] != nullptr) plan.bias = GroupedConvBias(bias ? c.constants[2] : nullptr, g.m);
    if (plan.epilogue) plan.epilogue_types = EpilogueOperandTypes(c, *plan.epilogue);
  } else if (plan.epilogue) {
    AddEpilogueWork(*plan.epilogue, g.n * g.m * g.pixels(), EpilogueOperandTypes(c, *plan.epilogue), plan.work);
  }
  c.Prepare(std::move(plan));
  return absl::OkStatus();
}

absl::Status RunConv(RunContext& ctx) {
  const ConvPlan& plan = ctx.State<ConvPlan>();
  const ConvGeometry& g = plan.g;
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& wt = *ctx.inputs[1];
  const HostTensor* bias_t = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  if (OnTheStencil(g)) {  // depthwise and grouped 1-D/2-D: a direct stencil on the Vector unit
    GroupedConvPrepared prepared;
    prepared.epilogue_operand_types = &plan.epilogue_types;
    if (!plan.grouped_weights.empty()) prepared.weights = &plan.grouped_weights;
    if (!plan.bias.empty()) prepared.bias = &plan.bias;
    prepared.epilogue = plan.epilogue.get();
    return RunGroupedConv(ctx,
                          {g.n, g.c, g.h, g.w, g.m, g.kh, g.kw, g.group, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.oh, g.ow},
                          prepared);
  }
  ctx.work.task_type = device::TaskType::kAiCore;
  if (g.n == 0 || g.m == 0 || g.pixels() == 0) return absl::OkStatus();

  std::vector<float> bias;
  const kernels::Im2ColA im2col(x.data(), CubeType(x.type().dtype), plan.im2col);
  kernels::GemmProblem p = ConvGemmProblem(ctx, {g.n, g.pixels(), g.m, g.group, g.kdim()}, im2col,
                                           ConvBias(plan.bias, bias_t, g.m, bias));
  p.packed_b = plan.weights.get();
  p.b = wt.data();
  p.ldb = g.kdim();
  p.trans_b = true;
  p.b_batch_stride = g.mg() * g.kdim();
  kernels::CubeEpilogue epilogue;
  if (plan.epilogue) {
    epilogue = BindEpilogue(ctx, *plan.epilogue, g.mg(), p.c_batch_stride);
    p.epilogue = &epilogue;
  }

  SetCubeWork(ctx, plan.work, RunCubeGemm(p));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvGeometry> ConvGeometryOf(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            const Shape& w) {
  return Geometry(node, attrs, x, w);
}

std::vector<AttrDef> ConvAttributes() {
  return {{"auto_pad", AttrKind::kString, {"NOTSET", "VALID"}},
          {"dilations", AttrKind::kInts},
          {"group", AttrKind::kInt},
          {"kernel_shape", AttrKind::kInts},
          {"pads", AttrKind::kInts},
          {"strides", AttrKind::kInts}};
}

void RegisterConvOp(OpRegistry& r) {
  OpDef d;
  d.name = "Conv";
  d.units = "Cube, MTE1 (img2col), MTE2, FixPipe; 1-D/2-D with group > 1: Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attributes = ConvAttributes();
  d.infer = InferConv;
  d.run = RunConv;
  d.epilogue_axis = 1;  // FixPipe applies fused ops; per-column operands are per output channel
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
