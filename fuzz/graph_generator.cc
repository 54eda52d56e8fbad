#include "fuzz/graph_generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/device/device_preset.h"
#include "server/graph/op_registry.h"

namespace npu::fuzz {
namespace {

using graph::AttrDef;
using graph::AttrKind;
using graph::DataType;
using graph::OpDef;
using graph::Shape;
using graph::TensorType;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int kMaxDrawnOutputs = 8;  // outputs of a node whose op allows more (Split has its own rule)

// Integers a hostile client sends: the edges of every width the server
// converts to, and values that overflow once multiplied or added.
const std::vector<int64_t>& ExtremeInts() {
  static const std::vector<int64_t> v = {kI64Max,          kI64Min,          kI64Max - 1,     kI64Min + 1,
                                         int64_t{1} << 31, -(int64_t{1} << 31), int64_t{1} << 32, int64_t{1} << 61,
                                         int64_t{1} << 62, (int64_t{1} << 62) + 1, 65536,        1 << 20,
                                         2147483647,       -2147483647 - 1,  255,             -129};
  return v;
}

// Dims: mostly small (so that graphs run), with 0; `hostile` ones may be huge or negative.
int64_t Dim(ChoiceSource& src, bool hostile) {
  static const std::vector<int64_t> common = {1, 2, 3, 4, 1, 2, 1, 3, 0, 5, 8, 16};
  static const std::vector<int64_t> huge = {int64_t{1} << 20, int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62,
                                            kI64Max, -1, -5, 4096, 65537};
  return hostile && src.Chance(30) ? src.Pick(huge) : src.Pick(common);
}

// Ranks 0-6; `hostile_percent` of shapes have huge or negative dims (rarely a rank > kMaxRank).
Shape RandomShape(ChoiceSource& src, int hostile_percent = 5) {
  const bool hostile = src.Chance(hostile_percent);
  const int rank = static_cast<int>(hostile && src.Chance(20) ? 7 + src.Below(4) : src.Below(7));
  Shape s(static_cast<size_t>(rank));
  for (auto& d : s) d = Dim(src, hostile);
  return s;
}

// An integer for an attribute or a shape input of an op whose values have `rank` dims.
int64_t SmallOrExtremeInt(ChoiceSource& src, int rank) {
  if (src.Chance(12)) return src.Pick(ExtremeInts());
  const int span = rank + 3;
  return static_cast<int64_t>(src.Below(2 * span + 1)) - span;  // [-rank-3, rank+3]
}

std::vector<int64_t> IntList(ChoiceSource& src, int rank) {
  const size_t n = src.Below(static_cast<uint64_t>(rank) + 3);
  std::vector<int64_t> v(n);
  for (auto& x : v) x = SmallOrExtremeInt(src, rank);
  return v;
}

double FloatValue(ChoiceSource& src) {
  static const std::vector<double> special = {0.0,     -0.0,   1.0,     -1.0,   0.5,     65504.0, 65520.0, -65536.0,
                                              1e-8,    6e-8,   1e30,    -1e30,  3.4e38,  1e-45,   2.0,     -3.0,
                                              std::numeric_limits<double>::quiet_NaN(),
                                              std::numeric_limits<double>::infinity(),
                                              -std::numeric_limits<double>::infinity()};
  if (src.Chance(25)) return src.Pick(special);
  return (static_cast<double>(src.Below(65536)) / 65536.0 - 0.5) * 8.0;  // [-4, 4)
}

int64_t IntValue(ChoiceSource& src) {
  if (src.Chance(10)) return src.Pick(ExtremeInts());
  return static_cast<int64_t>(src.Below(9)) - 3;  // [-3, 5]: mostly valid indices, some negative
}

// A random binary16 value: specials (zeros, the largest finite, subnormals,
// infinities, NaN) or a normal number of magnitude in [2^-5, 8).
uint16_t HalfBits(ChoiceSource& src) {
  static const std::vector<uint16_t> special = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x7BFF, 0xFBFF, 0x0001,
                                                0x03FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0x4000, 0xC200, 0x7BFE};
  if (src.Chance(25)) return src.Pick(special);
  const uint16_t sign = src.Chance(50) ? 0x8000 : 0;
  const uint16_t exponent = static_cast<uint16_t>(10 + src.Below(8));  // biased: 2^-5 .. 2^2
  return static_cast<uint16_t>(sign | exponent << 10 | src.Below(1024));
}

// `n` random elements of `dtype` as wire bytes.
std::string RandomBytes(ChoiceSource& src, DataType dtype, int64_t n) {
  const size_t size = graph::ElementSize(dtype);
  std::string bytes(static_cast<size_t>(n) * size, '\0');
  for (int64_t k = 0; k < n; ++k) {
    char* p = bytes.data() + k * size;
    switch (dtype) {
      case v1::FLOAT16: {
        const uint16_t h = HalfBits(src);
        std::memcpy(p, &h, 2);
        break;
      }
      case v1::FLOAT32: {
        const float f = static_cast<float>(FloatValue(src));
        std::memcpy(p, &f, 4);
        break;
      }
      case v1::INT32: {
        const int32_t v = static_cast<int32_t>(IntValue(src));
        std::memcpy(p, &v, 4);
        break;
      }
      case v1::INT64: {
        const int64_t v = IntValue(src);
        std::memcpy(p, &v, 8);
        break;
      }
      case v1::INT8: *p = static_cast<char>(IntValue(src)); break;
      case v1::BOOL: *p = static_cast<char>(src.Below(2)); break;
      default: break;
    }
  }
  return bytes;
}

const std::vector<DataType>& AllDtypes() {
  static const std::vector<DataType> v = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  return v;
}

// True when `s` is a valid shape of at most `max_bytes` bytes of `dtype`; sets its element count.
bool ElementsWithin(const Shape& s, uint64_t max_bytes, DataType dtype, int64_t* elements) {
  const uint64_t size = graph::ElementSize(dtype);
  if (s.size() > static_cast<size_t>(graph::kMaxRank) || size == 0) return false;
  uint64_t n = 1;
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
    } else if (n > max_bytes / static_cast<uint64_t>(d)) {
      return false;  // too big even where another dim is 0 (the planner counts the non-zero dims too)
    } else {
      n *= static_cast<uint64_t>(d);
    }
  }
  *elements = empty ? 0 : static_cast<int64_t>(n);
  return static_cast<uint64_t>(*elements) * size <= max_bytes;
}

class Generator {
 public:
  Generator(ChoiceSource& src, const GeneratorLimits& limits) : src_(src), limits_(limits) {}

  FuzzCase Run() {
    const std::vector<std::string> presets = device::PresetNames();
    case_.preset = src_.Pick(presets);
    case_.graph.set_name("fuzz");
    const int graph_inputs = 1 + static_cast<int>(src_.Below(static_cast<uint64_t>(limits_.max_graph_inputs)));
    for (int i = 0; i < graph_inputs; ++i) {
      AddGraphInput(src_.Chance(98) ? src_.Pick(AllDtypes()) : static_cast<DataType>(src_.Below(9)),
                    RandomShape(src_, 2));
    }
    const std::vector<const OpDef*> ops = graph::OpRegistry::Global().All();
    for (int attempt = 0; attempt < 4 * limits_.max_nodes && case_.graph.nodes_size() < limits_.max_nodes;
         ++attempt) {
      if (!AddNode(*src_.Pick(ops))) break;  // left invalid on purpose: no types to build on
    }
    ChooseOutputs();
    MakeInputs();
    return std::move(case_);
  }

 private:
  struct Value {
    std::string name;
    TensorType type;
    bool known = false;  // type inferred (or declared valid)
  };

  std::string NewName(const char* prefix) { return absl::StrCat(prefix, next_name_++); }

  void AddGraphInput(DataType dtype, const Shape& shape) {
    v1::ValueInfo* vi = case_.graph.add_inputs();
    vi->set_name(NewName("in"));
    vi->set_dtype(dtype);
    for (int64_t d : shape) vi->add_shape(d);
    int64_t n;
    values_.push_back({vi->name(), {dtype, shape}, ElementsWithin(shape, limits_.max_input_bytes, dtype, &n)});
  }

  // An initializer holding `data` (or random bytes); rarely with the wrong length.
  std::string AddInitializer(DataType dtype, const Shape& shape, const std::string* data = nullptr) {
    v1::Initializer* init = case_.graph.add_initializers();
    init->set_name(NewName("c"));
    v1::Tensor* t = init->mutable_tensor();
    t->set_dtype(dtype);
    for (int64_t d : shape) t->add_shape(d);
    int64_t n = 0;
    if (data != nullptr) {
      t->set_data(*data);
    } else if (ElementsWithin(shape, limits_.max_input_bytes, dtype, &n)) {
      t->set_data(RandomBytes(src_, dtype, n));
      values_.push_back({init->name(), {dtype, shape}, true});
    }
    if (src_.Chance(2)) t->mutable_data()->push_back('\x01');  // one byte too many
    return init->name();
  }

  std::string IntListInitializer(const std::vector<int64_t>& v) {
    const bool int32 = src_.Chance(15);
    std::string data;
    for (int64_t x : v) {
      if (int32) {
        const int32_t y = static_cast<int32_t>(x);
        data.append(reinterpret_cast<const char*>(&y), 4);
      } else {
        data.append(reinterpret_cast<const char*>(&x), 8);
      }
    }
    Shape shape = {static_cast<int64_t>(v.size())};
    if (src_.Chance(5)) shape = v.size() == 1 ? Shape{} : Shape{1, static_cast<int64_t>(v.size())};
    if (shape.empty() && v.size() != 1) shape = {static_cast<int64_t>(v.size())};
    return AddInitializer(int32 ? v1::INT32 : v1::INT64, shape, &data);
  }

  // A shape related to `base` (so that broadcasting mostly works): the same,
  // a suffix, some dims set to 1, or unrelated.
  Shape RelatedShape(const Shape& base) {
    if (src_.Chance(10)) return RandomShape(src_);
    Shape s = base;
    if (src_.Chance(30) && !s.empty()) s.erase(s.begin(), s.begin() + static_cast<long>(src_.Below(s.size() + 1)));
    for (auto& d : s) {
      if (src_.Chance(25)) d = 1;
    }
    if (src_.Chance(10)) s.insert(s.begin(), 1);
    return s;
  }

  const Value* KnownValue(DataType want, bool any_dtype) {
    std::vector<const Value*> fits;
    for (const Value& v : values_) {
      if (v.known && (any_dtype || v.type.dtype == want)) fits.push_back(&v);
    }
    if (fits.empty()) return nullptr;
    // Prefer recent values, so graphs grow deep rather than wide.
    if (src_.Chance(50)) return fits.back();
    return fits[src_.Below(fits.size())];
  }

  DataType OpDtype(const OpDef& op) {
    if (src_.Chance(8) || op.dtypes.empty()) return src_.Pick(AllDtypes());
    return src_.Pick(op.dtypes);
  }

  static bool WantsImage(const OpDef& op) {
    return op.name == "Conv" || op.name == "MaxPool" || op.name == "AveragePool" || op.name == "GlobalAveragePool" ||
           op.name == "BatchNormalization" || op.name == "InstanceNormalization" || op.name == "GroupNormalization";
  }

  // A shape that fits input `i` of `op` beside a first input of shape `x`
  // (Conv's weights and bias, a MatMul's right side, a norm's scale), so that
  // these ops get past validation often enough to run.
  std::optional<Shape> ShapeHint(const OpDef& op, int i, const Shape& x) {
    const int64_t channels = x.size() >= 2 ? x[1] : 1;
    const auto small = [&](int64_t hi) { return 1 + static_cast<int64_t>(src_.Below(static_cast<uint64_t>(hi))); };
    if (op.name == "Conv" && i == 1) return Shape{small(4), channels, small(3), small(3)};
    if (op.name == "Conv" && i == 2 && node_input_shapes_.size() > 1 && !node_input_shapes_[1].empty()) {
      return Shape{node_input_shapes_[1][0]};
    }
    if ((op.name == "MatMul" || op.name == "Gemm") && i == 1 && !x.empty()) return Shape{x.back(), small(5)};
    if (op.name == "Gemm" && i == 2 && node_input_shapes_.size() > 1 && node_input_shapes_[1].size() == 2) {
      return Shape{node_input_shapes_[1][1]};
    }
    if (op.name == "BatchNormalization" || op.name == "InstanceNormalization" || op.name == "GroupNormalization") {
      return Shape{channels};
    }
    if (op.name == "LayerNormalization" && !x.empty()) return Shape{x.back()};
    return std::nullopt;
  }

  // The name for input `i` of a node of `op`; "" to omit an optional one.
  std::string ChooseInput(const OpDef& op, int i, const Value* first) {
    if (std::find(op.shape_inputs.begin(), op.shape_inputs.end(), i) != op.shape_inputs.end()) {
      const int rank = first != nullptr ? static_cast<int>(first->type.shape.size()) : 2;
      if (src_.Chance(3)) {  // a shape input that is not a constant: must be refused
        const Value* v = KnownValue(v1::INT64, false);
        if (v != nullptr) return v->name;
      }
      std::vector<int64_t> list = IntList(src_, rank);
      if (first != nullptr && src_.Chance(40)) {  // dims of the first input, permuted or merged: Reshape, Expand
        list = first->type.shape;
        if (list.size() >= 2 && src_.Chance(50)) {
          list[0] *= list[1];
          list.erase(list.begin() + 1);
        }
        for (auto& d : list) {
          if (src_.Chance(15)) d = src_.Chance(50) ? -1 : 0;
        }
      }
      return IntListInitializer(list);
    }
    const bool optional = i >= op.min_inputs && !op.variadic;
    if (optional && src_.Chance(25)) return "";
    if (i == 0 && WantsImage(op) && src_.Chance(60)) {  // N, C, H, W: what Conv, pooling and the norms take
      const auto dim = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(src_.Below(hi - lo + 1)); };
      const Shape image = {dim(1, 2), dim(1, 4), dim(2, 8), dim(2, 8)};
      const DataType dtype = src_.Chance(50) ? v1::FLOAT32 : v1::FLOAT16;
      if (src_.Chance(50)) {
        AddGraphInput(dtype, image);
        return values_.back().name;
      }
      return AddInitializer(dtype, image);
    }
    const DataType dtype = first != nullptr && src_.Chance(70) ? first->type.dtype : OpDtype(op);
    if (src_.Chance(60)) {
      const Value* v = KnownValue(dtype, src_.Chance(10));
      if (v != nullptr && (first == nullptr || src_.Chance(60) || v->type.shape == first->type.shape ||
                           op.variadic)) {
        return v->name;
      }
    }
    Shape shape = first != nullptr ? RelatedShape(first->type.shape) : RandomShape(src_);
    if (first != nullptr && src_.Chance(75)) {
      if (auto hint = ShapeHint(op, i, first->type.shape)) shape = *hint;
    }
    if (first != nullptr && (op.name == "Clip" || op.name == "Gather") && src_.Chance(60)) {
      shape = src_.Chance(50) ? Shape{} : Shape{static_cast<int64_t>(src_.Below(4))};  // bounds, indices
    }
    if (op.name == "Gather" && i == 1 && src_.Chance(80)) {
      return AddInitializer(src_.Chance(50) ? v1::INT64 : v1::INT32, shape);
    }
    if (op.name == "Where" && i == 0 && src_.Chance(80)) return AddInitializer(v1::BOOL, shape);
    if (src_.Chance(30)) {
      AddGraphInput(dtype, shape);
      return values_.back().name;
    }
    return AddInitializer(dtype, shape);
  }

  void SetAttribute(v1::AttributeValue& a, AttrKind kind, const AttrDef* def, int rank) {
    switch (kind) {
      case AttrKind::kInt:
        if (def != nullptr && def->name == "to") {
          a.set_i(src_.Chance(90) ? static_cast<int64_t>(src_.Pick(AllDtypes())) : SmallOrExtremeInt(src_, 8));
        } else {
          a.set_i(SmallOrExtremeInt(src_, rank));
        }
        break;
      case AttrKind::kFloat: a.set_f(static_cast<float>(FloatValue(src_))); break;
      case AttrKind::kString:
        if (def != nullptr && !def->choices.empty() && src_.Chance(90)) {
          a.set_s(src_.Pick(def->choices));
        } else {
          a.set_s(src_.Chance(50) ? "SAME_UPPER" : std::string(src_.Chance(3) ? 6000 : 5, 'q'));
        }
        break;
      case AttrKind::kInts:
        for (int64_t x : IntList(src_, rank)) a.mutable_ints()->add_values(x);
        break;
      case AttrKind::kFloats: {
        const size_t n = src_.Below(4);
        for (size_t k = 0; k < n; ++k) a.mutable_floats()->add_values(static_cast<float>(FloatValue(src_)));
        break;
      }
      case AttrKind::kTensor: {
        v1::Tensor* t = a.mutable_t();
        const DataType dtype = src_.Pick(AllDtypes());
        const Shape shape = src_.Chance(80) ? Shape{static_cast<int64_t>(src_.Below(5))} : RandomShape(src_);
        t->set_dtype(dtype);
        for (int64_t d : shape) t->add_shape(d);
        int64_t n;
        if (ElementsWithin(shape, limits_.max_input_bytes, dtype, &n)) t->set_data(RandomBytes(src_, dtype, n));
        break;
      }
    }
  }

  // Values that fit the op (window geometry for a 2-D input, a permutation,
  // group 1, channel-dividing groups), so that Conv, pooling, Transpose and
  // the norms run often enough; false to draw a hostile value instead.
  bool FittingAttribute(v1::AttributeValue& a, const AttrDef& def, const Shape& x) {
    const auto ints = [&](size_t n, int64_t lo, int64_t hi) {
      for (size_t k = 0; k < n; ++k) a.mutable_ints()->add_values(lo + static_cast<int64_t>(src_.Below(hi - lo + 1)));
    };
    if (def.kind == AttrKind::kInts && def.name == "kernel_shape") return ints(2, 1, 3), true;
    if (def.kind == AttrKind::kInts && (def.name == "strides" || def.name == "dilations")) return ints(2, 1, 2), true;
    if (def.kind == AttrKind::kInts && def.name == "pads") return ints(4, 0, 1), true;
    if (def.kind == AttrKind::kInts && def.name == "perm") {
      std::vector<int64_t> perm(x.size());
      for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
      for (size_t k = perm.size(); k > 1; --k) std::swap(perm[k - 1], perm[src_.Below(k)]);
      for (int64_t p : perm) a.mutable_ints()->add_values(p);
      return true;
    }
    if (def.kind == AttrKind::kInt && (def.name == "group" || def.name == "num_groups")) {
      a.set_i(src_.Chance(50) || x.size() < 2 ? 1 : x[1]);
      return true;
    }
    return false;
  }

  void AddAttributes(const OpDef& op, v1::Node& node, const Shape* x) {
    const int rank = x != nullptr ? static_cast<int>(x->size()) : 2;
    auto& attrs = *node.mutable_attributes();
    for (const AttrDef& def : op.attributes) {
      if (!src_.Chance(55)) continue;
      if (x != nullptr && src_.Chance(70) && FittingAttribute(attrs[def.name], def, *x)) continue;
      attrs[def.name].Clear();
      // Sometimes of another kind than declared: the planner must refuse it by name.
      const AttrKind kind = src_.Chance(4) ? static_cast<AttrKind>(src_.Below(6)) : def.kind;
      SetAttribute(attrs[def.name], kind, &def, rank);
    }
    if (src_.Chance(3)) SetAttribute(attrs[src_.Chance(50) ? "axis" : "bogus"], AttrKind::kInt, nullptr, rank);
  }

  int OutputCount(const OpDef& op, const v1::Node& node) {
    if (op.num_outputs == 1) return 1;
    if (op.name == "Split") {
      auto it = node.attributes().find("num_outputs");
      if (it != node.attributes().end() && it->second.value_case() == v1::AttributeValue::kI &&
          it->second.i() >= 1 && it->second.i() <= 8 && src_.Chance(90)) {
        return static_cast<int>(it->second.i());
      }
      it = node.attributes().find("split");
      if (it != node.attributes().end() && it->second.has_ints() && it->second.ints().values_size() >= 1 &&
          src_.Chance(90)) {
        return it->second.ints().values_size();
      }
      if (node.inputs_size() > 1 && !node.inputs(1).empty() && src_.Chance(90)) {
        for (const auto& init : case_.graph.initializers()) {
          if (init.name() == node.inputs(1) && init.tensor().shape_size() == 1) {
            return static_cast<int>(std::clamp<int64_t>(init.tensor().shape(0), 1, 8));
          }
        }
      }
      return 1 + static_cast<int>(src_.Below(4));
    }
    // One output per input where the op's outputs follow its inputs
    // (HcclAllReduce: a bucket of gradients); otherwise a few. A schema's
    // upper bound (65536) is not a size to draw from: a node of thousands of
    // values makes every later choice scan them all.
    if (op.variadic && op.num_outputs == op.max_inputs && src_.Chance(90)) return node.inputs_size();
    return 1 + static_cast<int>(src_.Below(static_cast<uint64_t>(std::min(op.num_outputs, kMaxDrawnOutputs))));
  }

  // Adds one node of `op`; false when the graph is left invalid on purpose.
  bool AddNode(const OpDef& op) {
    const int init_before = case_.graph.initializers_size();
    const int inputs_before = case_.graph.inputs_size();
    const size_t values_before = values_.size();
    v1::Node node;
    node.set_name(src_.Chance(1) ? std::string(17000, 'n') : NewName("node"));
    node.set_op_type(op.name);
    const int max_inputs = op.variadic ? std::min(op.max_inputs, op.min_inputs + 3) : op.max_inputs;
    int n_inputs = op.min_inputs + static_cast<int>(src_.Below(static_cast<uint64_t>(max_inputs - op.min_inputs + 1)));
    if (src_.Chance(2)) n_inputs = std::max(0, n_inputs + (src_.Chance(50) ? 1 : -1));  // wrong arity
    const Value* first = nullptr;
    Value first_copy;
    node_input_shapes_.clear();
    for (int i = 0; i < n_inputs; ++i) {
      const std::string name = ChooseInput(op, i, first);
      node.add_inputs(name);
      node_input_shapes_.emplace_back();
      for (const Value& v : values_) {
        if (v.name == name && v.known) node_input_shapes_.back() = v.type.shape;
      }
      if (i == 0 && !name.empty()) {
        for (const Value& v : values_) {
          if (v.name == name) first_copy = v;
        }
        if (first_copy.known) first = &first_copy;
      }
    }
    AddAttributes(op, node, first != nullptr ? &first->type.shape : nullptr);
    const int outputs = OutputCount(op, node);
    for (int k = 0; k < outputs; ++k) node.add_outputs(NewName("v"));
    *case_.graph.add_nodes() = node;

    std::vector<std::string> produced(node.outputs().begin(), node.outputs().end());
    if (Typecheck(produced)) return true;
    if (src_.Chance(3)) return false;  // keep the invalid graph: validation is fuzzed too
    // Drop the node and what was made for it, and try another.
    case_.graph.mutable_nodes()->RemoveLast();
    while (case_.graph.initializers_size() > init_before) case_.graph.mutable_initializers()->RemoveLast();
    while (case_.graph.inputs_size() > inputs_before) case_.graph.mutable_inputs()->RemoveLast();
    values_.resize(values_before);
    return true;
  }

  // Plans the graph so far; on success records the types of `produced`.
  bool Typecheck(const std::vector<std::string>& produced) {
    auto g = std::make_shared<v1::Graph>(case_.graph);
    g->clear_outputs();
    for (const auto& n : g->nodes()) {
      for (const auto& o : n.outputs()) g->add_outputs(o);
    }
    auto preset = device::PresetByName(case_.preset);
    if (!preset.ok()) return false;
    auto plan = graph::BuildPlan(g, *preset, limits_.plan);
    if (!plan.ok()) return false;
    for (const std::string& name : produced) {
      for (const auto& v : (*plan)->values) {
        if (v.name == name) values_.push_back({name, v.type, true});
      }
    }
    return true;
  }

  void ChooseOutputs() {
    std::vector<std::string> produced;
    for (const auto& n : case_.graph.nodes()) {
      for (const auto& o : n.outputs()) produced.push_back(o);
    }
    if (produced.empty()) {
      if (case_.graph.inputs_size() > 0) case_.graph.add_outputs(case_.graph.inputs(0).name());
      return;
    }
    // Every value (each is checked; nothing fuses), or only the last (chains
    // fuse), rarely an unknown name.
    if (src_.Chance(50)) {
      for (const auto& o : produced) case_.graph.add_outputs(o);
    } else {
      case_.graph.add_outputs(produced.back());
    }
    if (src_.Chance(2)) case_.graph.add_outputs("nowhere");
  }

  void MakeInputs() {
    case_.runnable = true;
    for (const auto& vi : case_.graph.inputs()) {
      Shape shape(vi.shape().begin(), vi.shape().end());
      int64_t n;
      if (!ElementsWithin(shape, limits_.max_input_bytes, vi.dtype(), &n)) {
        case_.runnable = false;
        case_.inputs.clear();
        return;
      }
      graph::HostTensor t = graph::HostTensor::Allocate({vi.dtype(), shape});
      const std::string bytes = RandomBytes(src_, vi.dtype(), n);
      if (!bytes.empty()) std::memcpy(t.mutable_data(), bytes.data(), bytes.size());
      case_.inputs.push_back(std::move(t));
    }
  }

  ChoiceSource& src_;
  const GeneratorLimits& limits_;
  FuzzCase case_;
  std::vector<Value> values_;
  std::vector<Shape> node_input_shapes_;  // of the node being made, where known
  int next_name_ = 0;
};

}  // namespace

FuzzCase GenerateCase(ChoiceSource& src, const GeneratorLimits& limits) { return Generator(src, limits).Run(); }

}  // namespace npu::fuzz
