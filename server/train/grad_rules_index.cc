// Gradient rules of the ops that move elements by index: Slice (any steps),
// Pad (every mode, crops included), Tile, CumSum, GatherElements, TopK, ScatterND,
// Trilu, DepthToSpace and SpaceToDepth. Each scatters dy back to where its
// elements came from, composed of forward ops: a Slice's gradient is dy
// padded with zeros (interleaved with them for a step past 1, reversed for a
// negative one); a Pad's sums the runs of output positions that read the same
// input positions (padded back into place); GatherElements' scatter-adds
// through ScatterND; ScatterND's updates gather dy through a linear index.
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "server/graph/ops/pad_source.h"
#include "server/graph/shape_math.h"
#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

using graph::Shape;

// `v` padded along `axis` (of a tensor of `rank` dims) by `before` and
// `after` zeros (negative: cropped).
std::string PadAxis(GradContext& c, const std::string& v, size_t rank, size_t axis, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return v;
  std::vector<int64_t> pads(2 * rank, 0);
  pads[axis] = before;
  pads[rank + axis] = after;
  return c.Op("Pad", {v, c.g.IntsConstant(c.Base() + "/pads", pads)});
}

// Slice of `v` along one axis: [start, end) by `step`.
std::string SliceAxis(GradContext& c, const std::string& v, size_t axis, int64_t start, int64_t end, int64_t step = 1) {
  return c.Op("Slice", {v, c.g.IntsConstant(c.Base() + "/starts", {start}), c.g.IntsConstant(c.Base() + "/ends", {end}),
                        c.g.IntsConstant(c.Base() + "/axes", {static_cast<int64_t>(axis)}),
                        c.g.IntsConstant(c.Base() + "/steps", {step})});
}

std::string Reverse(GradContext& c, const std::string& v, size_t axis) {
  return SliceAxis(c, v, axis, -1, std::numeric_limits<int64_t>::min(), -1);
}

absl::Status SliceRule(GradContext& c) {
  const Shape& x = c.InputType(0).shape;
  const size_t rank = x.size();
  std::vector<std::vector<int64_t>> args(5);
  for (int i = 1; i <= 4; ++i) {
    if (!c.Has(i)) continue;
    auto v = c.ConstantInts(i);
    if (!v.ok()) return v.status();
    args[i] = *std::move(v);
  }
  const std::vector<int64_t>& starts = args[1];
  std::vector<int64_t> axes = args[3], steps = args[4];
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  std::string g = c.dy[0];
  Shape cur = c.OutputType(0).shape;
  if (c.OutputType(0).elements() == 0) {
    c.dx[0] = c.Zeros(c.InputType(0));
    return absl::OkStatus();
  }
  for (size_t j = 0; j < starts.size(); ++j) {
    const size_t a = static_cast<size_t>(axes[j] < 0 ? axes[j] + static_cast<int64_t>(rank) : axes[j]);
    auto range = graph::CheckedSlice(starts[j], args[2][j], steps[j], x[a], "slice");
    if (!range.ok()) return range.status();
    const int64_t count = range->count, n = x[a];
    int64_t lo = range->start, k = steps[j];
    if (count == 1) k = 1;
    if (k < 0) {  // the same elements in ascending order
      g = Reverse(c, g, a);
      lo = range->start + (count - 1) * k;
      k = -k;
    }
    if (k > 1) {  // each element followed by k - 1 zeros: [.., count, 1, ..] -> [.., count, k, ..] -> [.., count k, ..]
      Shape one = cur, wide = cur;
      one.insert(one.begin() + static_cast<int64_t>(a) + 1, 1);
      g = c.Reshape(g, cur, one);
      g = PadAxis(c, g, rank + 1, a + 1, 0, k - 1);
      one[a + 1] = k;
      wide[a] = count * k;
      g = c.Reshape(g, one, wide);
      g = PadAxis(c, g, rank, a, lo, n - lo - count * k);
    } else {
      g = PadAxis(c, g, rank, a, lo, n - lo - count);
    }
    cur[a] = n;
  }
  c.dx[0] = g;
  return absl::OkStatus();
}

// Pad: along each padded axis, output positions in runs that read input
// positions one after another (up or down) or one position repeatedly (edge);
// each run's gradient is sliced out, reversed or summed, and padded back into
// place; the runs add up.
absl::Status PadRule(GradContext& c) {
  if (c.Needs(2)) return c.Unsupported("with respect to constant_value");
  const Shape& x = c.InputType(0).shape;
  const size_t rank = x.size();
  auto pads = c.ConstantInts(1);
  if (!pads.ok()) return pads.status();
  std::vector<int64_t> axes;
  if (c.Has(3)) {
    auto a = c.ConstantInts(3);
    if (!a.ok()) return a.status();
    axes = *a;
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  std::string mode_name = "constant";
  if (auto it = c.node.attributes().find("mode"); it != c.node.attributes().end()) mode_name = it->second.s();
  const graph::ops::PadMode mode = graph::ops::PadModeNamed(mode_name);
  const graph::DataType dt = c.InputType(0).dtype;
  std::string g = c.dy[0];
  Shape cur = c.OutputType(0).shape;
  for (size_t j = 0; j < axes.size(); ++j) {
    const size_t a = static_cast<size_t>(axes[j] < 0 ? axes[j] + static_cast<int64_t>(rank) : axes[j]);
    const int64_t begin = (*pads)[j], end = (*pads)[axes.size() + j], n = x[a], p = cur[a];
    if (begin == 0 && end == 0) continue;
    auto source = [&](int64_t o) { return graph::ops::PadSourceIndex(mode, o - begin, n); };
    std::vector<std::string> parts;
    for (int64_t o = 0; o < p;) {
      const int64_t first = source(o);
      if (first < 0) {
        ++o;
        continue;
      }
      int64_t o1 = o + 1, dir = 0, last = first;
      for (; o1 < p; ++o1) {
        const int64_t s = source(o1);
        if (s < 0 || (o1 == o + 1 ? std::abs(s - last) > 1 : s - last != dir)) break;
        dir = s - last;
        last = s;
      }
      const int64_t len = o1 - o;
      std::string piece = SliceAxis(c, g, a, o, o1);
      int64_t lo = std::min(first, last), size = len;
      if (dir < 0) piece = Reverse(c, piece, a);
      if (dir == 0 && len > 1) {
        piece = c.Op("ReduceSum", {piece, c.g.IntsConstant(c.Base() + "/axes", {static_cast<int64_t>(a)})},
                     {{"keepdims", AttrInt(1)}});
        size = 1;
      }
      parts.push_back(PadAxis(c, piece, rank, a, lo, n - lo - size));
      o = o1;
    }
    cur[a] = n;
    if (parts.empty()) {
      g = c.Zeros(graph::TensorType{dt, cur});
    } else {
      g = parts.size() == 1 ? parts[0] : c.Op("Sum", parts);
    }
  }
  c.dx[0] = g;
  return absl::OkStatus();
}

// Tile: dy viewed as [r0, d0, r1, d1, ...] (the repeated axes split), summed
// over the repeats.
absl::Status TileRule(GradContext& c) {
  const Shape& x = c.InputType(0).shape;
  auto repeats = c.ConstantInts(1);
  if (!repeats.ok()) return repeats.status();
  Shape split;
  std::vector<int64_t> axes;
  for (size_t d = 0; d < x.size(); ++d) {
    if ((*repeats)[d] > 1) {
      axes.push_back(static_cast<int64_t>(split.size()));
      split.push_back((*repeats)[d]);
    }
    split.push_back(x[d]);
  }
  if (axes.empty()) {
    c.dx[0] = c.Reshape(c.dy[0], c.OutputType(0).shape, x);
    return absl::OkStatus();
  }
  if (split.size() > static_cast<size_t>(graph::kMaxRank)) return c.Unsupported("repeating this many axes");
  const std::string v = c.Reshape(c.dy[0], c.OutputType(0).shape, split);
  c.dx[0] = c.Op("ReduceSum", {v, c.g.IntsConstant(c.Base() + "/axes", axes)}, {{"keepdims", AttrInt(0)}});
  return absl::OkStatus();
}

// CumSum: the running sums of dy the other way (exclusive stays exclusive).
absl::Status CumSumRule(GradContext& c) {
  c.dx[0] = c.Op("CumSum", {c.dy[0], c.node.inputs(1)},
                 {{"exclusive", AttrInt(c.IntAttr("exclusive", 0))}, {"reverse", AttrInt(c.IntAttr("reverse", 0) ? 0 : 1)}});
  return absl::OkStatus();
}

// Indices of INT64, negative ones counted from the end of `dims` (broadcast
// along the last axis of `idx`, or one dim).
std::string NormalIndices(GradContext& c, const std::string& idx, graph::DataType dtype, const std::string& dims) {
  const std::string i64 = dtype == v1::INT64 ? idx : c.Op("Cast", {idx}, {{"to", AttrInt(7)}});
  const std::string zero = c.Int64Tensor({}, {0});
  return c.Op("Where", {c.Op("Less", {i64, zero}), c.Op("Add", {i64, dims}), i64});
}

// dy scatter-added (ScatterND, reduction add) into zeros of `data`'s type at
// the full coordinates of each index `idx` (of type `idx_type`): the index
// along `axis`, its own position along the others. GatherElements' gradient,
// and TopK's (its values are X gathered at its indices).
std::string ScatterAddAlong(GradContext& c, const graph::TensorType& data, const std::string& idx_value,
                            const graph::TensorType& idx_type, int64_t axis, const std::string& dy) {
  const Shape& is = idx_type.shape;
  const size_t rank = data.shape.size();
  if (axis < 0) axis += static_cast<int64_t>(rank);
  const std::string idx =
      NormalIndices(c, idx_value, idx_type.dtype, c.Int64Tensor({}, {data.shape[static_cast<size_t>(axis)]}));
  Shape column = is;
  column.push_back(1);
  int64_t count = 1;
  for (int64_t d : is) count *= d;
  std::vector<std::string> coords;
  for (size_t d = 0; d < rank; ++d) {
    if (static_cast<int64_t>(d) == axis) {
      coords.push_back(c.Reshape(idx, is, column));
      continue;
    }
    std::vector<int64_t> at(static_cast<size_t>(count));
    int64_t inner = 1;
    for (size_t e = d + 1; e < is.size(); ++e) inner *= is[e];
    for (int64_t p = 0; p < count; ++p) at[static_cast<size_t>(p)] = (p / inner) % is[d];
    coords.push_back(c.Int64Tensor(column, at));
  }
  const std::string nd = c.Op("Concat", coords, {{"axis", AttrInt(static_cast<int64_t>(rank))}});
  return c.Op("ScatterND", {c.Zeros(data), nd, dy}, {{"reduction", AttrString("add")}});
}

absl::Status GatherElementsRule(GradContext& c) {
  c.dx[0] = ScatterAddAlong(c, c.InputType(0), c.node.inputs(1), c.InputType(1), c.IntAttr("axis", 0), c.dy[0]);
  return absl::OkStatus();
}

// TopK: the values' gradient goes back to the positions they were taken from
// (the indices are distinct, so torch's scatter and this add agree).
absl::Status TopKRule(GradContext& c) {
  if (c.dy[0].empty()) return absl::OkStatus();
  c.dx[0] = ScatterAddAlong(c, c.InputType(0), c.node.outputs(1), c.OutputType(1), c.IntAttr("axis", -1), c.dy[0]);
  return absl::OkStatus();
}

// ScatterND(data, indices, updates): data's gradient is dy with the replaced
// slices zeroed (reduction none) or dy itself (add); the updates' is dy
// gathered at the indices, through the linear index into dy's first k dims.
absl::Status ScatterNdRule(GradContext& c) {
  std::string reduction = "none";
  if (auto it = c.node.attributes().find("reduction"); it != c.node.attributes().end()) reduction = it->second.s();
  if (reduction != "none" && reduction != "add") return c.Unsupported(absl::StrCat("with reduction ", reduction));
  const graph::TensorType& data = c.InputType(0);
  const graph::TensorType& upd = c.InputType(2);
  const Shape& is = c.InputType(1).shape;
  if (c.Needs(0)) {
    c.dx[0] = reduction == "add" ? c.dy[0] : c.Op("ScatterND", {c.dy[0], c.node.inputs(1), c.Zeros(upd)});
  }
  if (c.Needs(2)) {
    const size_t k = static_cast<size_t>(is.back());
    if (k == 0) return c.Unsupported("with empty index tuples");
    const Shape dims(data.shape.begin(), data.shape.begin() + static_cast<int64_t>(k));
    const std::string idx = NormalIndices(c, c.node.inputs(1), v1::INT64, c.Int64Tensor({static_cast<int64_t>(k)}, dims));
    std::string linear;
    int64_t stride = 1;
    for (size_t j = k; j-- > 0;) {
      std::string col = c.Op("Gather", {idx, c.Int64Tensor({}, {static_cast<int64_t>(j)})},
                             {{"axis", AttrInt(static_cast<int64_t>(is.size()) - 1)}});
      if (stride != 1) col = c.Op("Mul", {col, c.Int64Tensor({}, {stride})});
      linear = linear.empty() ? col : c.Op("Add", {linear, col});
      stride *= dims[j];
    }
    Shape rows = {stride};
    rows.insert(rows.end(), data.shape.begin() + static_cast<int64_t>(k), data.shape.end());
    const std::string flat = c.Reshape(c.dy[0], data.shape, rows);
    c.dx[2] = c.Op("Gather", {flat, linear}, {{"axis", AttrInt(0)}});
  }
  return absl::OkStatus();
}

absl::Status TriluRule(GradContext& c) {
  std::vector<std::string> inputs = {c.dy[0]};
  if (c.Has(1)) inputs.push_back(c.node.inputs(1));
  c.dx[0] = c.Op("Trilu", inputs, {{"upper", AttrInt(c.IntAttr("upper", 1))}});
  return absl::OkStatus();
}

// DepthToSpace and SpaceToDepth are a Reshape, a Transpose and a Reshape:
// dy goes back through the inverse permutation.
absl::Status BlockRule(GradContext& c, bool to_space) {
  const Shape& x = c.InputType(0).shape;
  const Shape& y = c.OutputType(0).shape;
  if (x.size() != 4) return c.Unsupported("of a tensor not 4-D");
  const int64_t b = c.IntAttr("blocksize", 0);
  std::string mode = "DCR";
  if (auto it = c.node.attributes().find("mode"); it != c.node.attributes().end()) mode = it->second.s();
  const int64_t n = y[0];
  Shape split;
  std::vector<int64_t> perm;
  if (to_space) {  // y [N, C, H b, W b] as [N, C, H, b, W, b]
    split = {n, y[1], x[2], b, x[3], b};
    perm = mode == "CRD" ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
  } else {  // SpaceToDepth: y [N, C b b, H, W] as [N, b, b, C, H, W]
    split = {n, b, b, x[1], y[2], y[3]};
    perm = {0, 3, 4, 1, 5, 2};
  }
  const std::string v = c.Reshape(c.dy[0], y, split);
  Shape moved(6);
  for (size_t i = 0; i < 6; ++i) moved[i] = split[static_cast<size_t>(perm[i])];
  c.dx[0] = c.Reshape(c.Op("Transpose", {v}, {{"perm", AttrInts(perm)}}), moved, x);
  return absl::OkStatus();
}

}  // namespace

void AddIndexGradRules(std::map<std::string, GradRule>& rules) {
  rules["Slice"] = SliceRule;
  rules["Pad"] = PadRule;
  rules["Tile"] = TileRule;
  rules["CumSum"] = CumSumRule;
  rules["GatherElements"] = GatherElementsRule;
  rules["TopK"] = TopKRule;
  rules["ScatterND"] = ScatterNdRule;
  rules["Trilu"] = TriluRule;
  rules["DepthToSpace"] = [](GradContext& c) { return BlockRule(c, true); };
  rules["SpaceToDepth"] = [](GradContext& c) { return BlockRule(c, false); };
}

}  // namespace npu::train
