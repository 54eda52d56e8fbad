// ConvTranspose (ONNX, 1-D, 2-D and 3-D; torch's ConvTranspose1d/2d/3d) on the
// Cube, as CANN runs it (Conv2DBackpropInput): the convolution of the input
// with stride - 1 zeros between its elements, one GEMM per call over all
// images: rows = output pixels (N * OH * OW), columns = output channels of a
// group, depth = the taps (Cg * kh * kw) of the group's input channels; the
// groups are the GEMM's batch. MTE1 gathers A from the NCHW input
// (kernels/cube_transposed_im2col.h, fp32 rounded to fp16 there), B is the
// weights [C, M / group, kh, kw] laid out as taps x output channels (packed
// into the Cube's layout once when they are constant), the accumulation is
// fp32, and FixPipe adds the bias per output channel and writes NCHW with a
// single rounding. The counted work (conv_cube.h) is the zero-interleaved
// convolution's, as the chip computes it.
//
// Output extent per spatial axis: stride (in - 1) + output_padding +
// dilation (kernel - 1) + 1 - pads; with `output_shape` (or auto_pad SAME_*,
// whose output is in * stride) the pads follow from it as ONNX says.
#include <algorithm>
#include <vector>

#include "kernels/cube_gemm.h"
#include "kernels/cube_packed_b.h"
#include "kernels/cube_im2col.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/conv_cube.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/shape_math.h"

namespace npu::graph::ops {
namespace {

// 1-D convolutions are 2-D ones of height 1, 2-D ones 3-D of depth 1.
struct TransposedGeometry {
  int64_t n = 0, c = 0, d = 1, h = 1, w = 0;  // input
  int64_t m = 0, kd = 1, kh = 1, kw = 1;      // output channels (all groups), kernel
  int64_t group = 1;
  int64_t sd = 1, sh = 1, sw = 1, dd = 1, dh = 1, dw = 1, pf = 0, pt = 0, pl = 0;
  int64_t od = 1, oh = 1, ow = 0;
  int spatial = 2;  // 1, 2 or 3
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  int64_t taps() const { return kd * kh * kw; }
  int64_t kdim() const { return cg() * taps(); }
  int64_t pixels() const { return od * oh * ow; }
  int64_t volume() const { return d * h * w; }  // one input channel
};

// One spatial axis as the attributes give it.
struct AxisAttrs {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, output_padding = 0;
};

// The pads `output_shape` (or SAME_*) implies, as ONNX's ConvTranspose spec
// computes them, halving with floor division as its reference does: SAME_UPPER
// puts the odd one at the end, otherwise at the start. An output larger than
// the input makes gives negative pads: the output grows by rows no input
// reaches (bias only), at the end.
absl::Status PadsForOutput(const v1::Node& node, int64_t out, bool same_upper, AxisAttrs& a) {
  if (out < 1 || out > kMaxElements) {
    return NodeError(node, "output extent ", out, " must be in [1, ", kMaxElements, "]");
  }
  // Both terms are at most kMaxElements (checked by the caller and above).
  const int64_t total =
      a.stride * (a.in - 1) + a.output_padding + a.dilation * (a.kernel - 1) + 1 - out;
  const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
  a.pad_begin = same_upper ? half : total - half;
  a.pad_end = total - a.pad_begin;
  return absl::OkStatus();
}

absl::StatusOr<TransposedGeometry> Geometry(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            const Shape& wt) {
  if (x.size() < 3 || x.size() > 5 || wt.size() != x.size()) {
    return NodeError(node, "transposed convolution of input ", ShapeToString(x), " and weights ", ShapeToString(wt),
                     " is not supported: only 1-D, 2-D and 3-D (3-D to 5-D input and weights of the same rank)");
  }
  const int sp = static_cast<int>(x.size()) - 2;
  const std::vector<int64_t> ones(sp, 1), zeros(sp, 0), zeros2(2 * sp, 0);
  const std::vector<int64_t> kernel(wt.begin() + 2, wt.end());
  auto group = attrs.Int("group", 1);
  auto s = attrs.Ints("strides", ones);
  auto d = attrs.Ints("dilations", ones);
  auto p = attrs.Ints("pads", zeros2);
  auto k = attrs.Ints("kernel_shape", kernel);
  auto op = attrs.Ints("output_padding", zeros);
  auto os = attrs.Ints("output_shape", {});
  auto auto_pad = attrs.String("auto_pad", "NOTSET");
  for (const absl::Status& st :
       {group.status(), s.status(), d.status(), p.status(), k.status(), op.status(), os.status(), auto_pad.status()}) {
    if (!st.ok()) return st;
  }
  const size_t n = static_cast<size_t>(sp);
  if (s->size() != n || d->size() != n || k->size() != n || op->size() != n || p->size() != 2 * n ||
      (!os->empty() && os->size() != n)) {
    return NodeError(node, "attributes \"strides\", \"dilations\", \"kernel_shape\", \"output_padding\" and "
                     "\"output_shape\" need ", n, " entries (one per spatial axis), \"pads\" ", 2 * n, "; got ",
                     s->size(), ", ", d->size(), ", ", k->size(), ", ", op->size(), ", ", os->size(), " and ",
                     p->size());
  }
  if (*k != kernel) return NodeError(node, "attribute \"kernel_shape\" does not match the weights ", ShapeToString(wt));
  TransposedGeometry g;
  g.spatial = sp;
  g.n = x[0], g.c = x[1], g.group = *group;
  if (g.group < 1 || g.c % g.group != 0) {
    return NodeError(node, "attribute \"group\" = ", g.group, " must divide the input channels ", g.c);
  }
  if (wt[0] != g.c) {
    return NodeError(node, "weights ", ShapeToString(wt), " need ", g.c, " rows (the input channels of ",
                     ShapeToString(x), ")");
  }
  auto m = CheckedMul(wt[1], g.group, "output channels");
  if (!m.ok()) return AtNode(node, m.status());
  g.m = *m;
  // As torch: only the batch may be empty.
  if (g.c == 0 || g.m == 0 || std::any_of(x.begin() + 2, x.end(), [](int64_t e) { return e == 0; })) {
    return NodeError(node, "input ", ShapeToString(x), " and weights ", ShapeToString(wt),
                     ": only the batch dimension may be 0");
  }
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    AxisAttrs a{x[2 + i], kernel[i], (*s)[i], (*d)[i], (*p)[i], (*p)[n + i], (*op)[i]};
    const size_t from_end = n - 1 - i;  // 0: width, 1: height, 2: depth
    const char* what = from_end == 0 ? "width" : from_end == 1 ? "height" : "depth";
    if (*auto_pad == "VALID") a.pad_begin = a.pad_end = 0;
    // The output before padding, checked before PadsForOutput's arithmetic uses it.
    auto natural = CheckedTransposedWindowOutput({a.in, a.kernel, a.stride, a.dilation, 0, 0, false},
                                                 a.output_padding, what);
    if (!natural.ok()) return AtNode(node, natural.status());
    const bool same = *auto_pad == "SAME_UPPER" || *auto_pad == "SAME_LOWER";
    absl::StatusOr<int64_t> o = *natural;
    if (!os->empty() || same) {
      int64_t target = 0;
      if (!os->empty()) {
        target = (*os)[i];
      } else {
        auto t = CheckedMul(a.in, a.stride, "output extent");
        if (!t.ok()) return AtNode(node, t.status());
        target = *t;
      }
      if (auto st = PadsForOutput(node, target, *auto_pad == "SAME_UPPER", a); !st.ok()) return st;
      o = target;
    } else {
      o = CheckedTransposedWindowOutput({a.in, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, false},
                                        a.output_padding, what);
      if (!o.ok()) return AtNode(node, o.status());
    }
    out[i] = *o;
    if (from_end == 0) {
      g.w = a.in, g.kw = a.kernel, g.sw = a.stride, g.dw = a.dilation, g.pl = a.pad_begin, g.ow = *o;
    } else if (from_end == 1) {
      g.h = a.in, g.kh = a.kernel, g.sh = a.stride, g.dh = a.dilation, g.pt = a.pad_begin, g.oh = *o;
    } else {
      g.d = a.in, g.kd = a.kernel, g.sd = a.stride, g.dd = a.dilation, g.pf = a.pad_begin, g.od = *o;
    }
  }
  // With an empty batch the output has no elements, so nothing else bounds one plane.
  if (auto e = CheckedElements(out, "the output plane"); !e.ok()) return AtNode(node, e.status());
  return g;
}

struct ConvTransposePlan {
  TransposedGeometry g;
  device::OpWork work;  // the device's tiles (conv_cube.h): shapes alone decide them
  kernels::Im2ColGeometry gather;  // the transposed convolution's strides, dilations, pads
  std::shared_ptr<const kernels::PackedCubeB> weights;  // per group; null when the weights are not constant
  std::vector<float> bias;                              // when constant
};

// The weights [C, Mg, (kd,) kh, kw] as op(B) of each group: taps (c, kz, ky, kx) x Mg,
// row-major, fp32 (the packing's one rounding to fp16 follows).
std::vector<float> TapsByChannels(const HostTensor& wt, const TransposedGeometry& g) {
  const int64_t total = wt.type().elements(), taps = g.taps(), mg = g.mg();
  std::vector<float> w(static_cast<size_t>(total)), b(static_cast<size_t>(total));
  LoadAsFloat(wt, 0, 1, total, w.data());
  for (int64_t c = 0; c < g.c; ++c) {  // c over all groups: group gr's rows are gr * Cg ... (gr + 1) * Cg - 1
    for (int64_t j = 0; j < mg; ++j) {
      for (int64_t t = 0; t < taps; ++t) b[(c * taps + t) * mg + j] = w[(c * mg + j) * taps + t];
    }
  }
  return b;
}

absl::StatusOr<std::vector<TensorType>> InferConvTranspose(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (auto s = CheckConvDtypes(c); !s.ok()) return s;
  auto geometry = Geometry(c.node, c.attrs, x.shape, c.inputs[1]->shape);
  if (!geometry.ok()) return geometry.status();
  const TransposedGeometry& g = *geometry;
  const bool bias = c.inputs.size() > 2 && c.inputs[2] != nullptr;
  if (bias && c.inputs[2]->elements() != g.m) {
    return NodeError(c.node, "bias ", InputLabel(c.node, 2), " ", ToString(*c.inputs[2]), " needs ", g.m, " elements");
  }
  ConvWorkShape work{g.cg(), g.h, g.w, g.mg(), g.kh, g.kw, g.sh, g.dh, g.pt, g.oh, g.ow, true};
  work.d = g.d, work.kd = g.kd, work.sd = g.sd, work.dd = g.dd, work.pf = g.pf, work.od = g.od;
  auto model = PlanCubeModel(c, g.n * g.group, g.mg(), g.pixels(), work.k_fractals() * 16);
  if (!model.ok()) return model.status();
  if (auto s = CheckColumnSliver(c, g.kdim(), g.n * g.pixels()); !s.ok()) return s;
  ConvTransposePlan plan;
  plan.g = g;
  plan.gather = {g.cg(), g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.oh, g.ow, g.c * g.volume(),
                 g.cg() * g.volume(), true};
  plan.gather.d = g.d, plan.gather.kd = g.kd, plan.gather.sd = g.sd, plan.gather.dd = g.dd, plan.gather.pf = g.pf;
  plan.gather.od = g.od;
  AppendConvWork(work, g.n, g.group, *model, ElementSize(x.dtype), bias, *c.preset, plan.work);
  if (c.constants[1] != nullptr && !c.preset->exact_cube_operands) {  // the bench reads them as given
    const std::vector<float> b = TapsByChannels(*c.constants[1], g);
    plan.weights = std::make_shared<const kernels::PackedCubeB>(kernels::PackedCubeB::Pack(
        kernels::OperandView{b.data(), kernels::ElemType::kFloat32, g.mg(), false}, g.kdim(), g.mg(), g.group,
        g.kdim() * g.mg(), c.preset->fp16_saturation));
  }
  if (bias && c.constants[2] != nullptr) {
    plan.bias.resize(static_cast<size_t>(g.m));
    LoadAsFloat(*c.constants[2], 0, 1, g.m, plan.bias.data());
  }
  Shape out{g.n, g.m};
  if (g.spatial == 3) out.push_back(g.od);
  if (g.spatial >= 2) out.push_back(g.oh);
  out.push_back(g.ow);
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::Status RunConvTranspose(RunContext& ctx) {
  const ConvTransposePlan& plan = ctx.State<ConvTransposePlan>();
  const TransposedGeometry& g = plan.g;
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor* bias_t = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  ctx.work.task_type = device::TaskType::kAiCore;
  if (g.n == 0) return absl::OkStatus();
  // Weights or bias fed at run time (rare: exported models make them initializers).
  std::vector<float> weights, bias;
  if (plan.weights == nullptr) weights = TapsByChannels(*ctx.inputs[1], g);
  const kernels::Im2ColA gather(x.data(), CubeType(x.type().dtype), plan.gather);
  kernels::GemmProblem p = ConvGemmProblem(ctx, {g.n, g.pixels(), g.m, g.group, g.kdim()}, gather,
                                           ConvBias(plan.bias, bias_t, g.m, bias));
  p.packed_b = plan.weights.get();
  p.b = weights.data();
  p.b_type = kernels::ElemType::kFloat32;
  p.ldb = g.mg();
  p.b_batch_stride = g.kdim() * g.mg();
  SetCubeWork(ctx, plan.work, RunCubeGemm(p));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ConvTransposeBeginPads(const v1::Node& node, const Shape& x, const Shape& w) {
  auto g = Geometry(node, NodeAttributes(node), x, w);
  if (!g.ok()) return g.status();
  if (g->spatial == 1) return std::vector<int64_t>{g->pl};
  if (g->spatial == 2) return std::vector<int64_t>{g->pt, g->pl};
  return std::vector<int64_t>{g->pf, g->pt, g->pl};
}

void RegisterConvTransposeOp(OpRegistry& r) {
  OpDef d;
  d.name = "ConvTranspose";
  d.units = "Cube, MTE1 (img2col), MTE2, FixPipe";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attributes = {{"auto_pad", AttrKind::kString, {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"}},
                  {"dilations", AttrKind::kInts},
                  {"group", AttrKind::kInt},
                  {"kernel_shape", AttrKind::kInts},
                  {"output_padding", AttrKind::kInts},
                  {"output_shape", AttrKind::kInts},
                  {"pads", AttrKind::kInts},
                  {"strides", AttrKind::kInts}};
  d.infer = InferConvTranspose;
  d.run = RunConvTranspose;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
