// A one-node graph for op tests: inputs are graph inputs (fed by the test) or
// initializers, attributes are set on the node; the graph and the tensors to
// feed come out.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/host_tensor.h"

namespace npu::graph::testing {

class OneNode {
 public:
  explicit OneNode(const std::string& op) {
    v1::Node* n = g_.add_nodes();
    n->set_name("n");
    n->set_op_type(op);
  }
  // An omitted optional input.
  OneNode& None() {
    node()->add_inputs("");
    return *this;
  }
  OneNode& Input(const std::string& name, DataType dtype, Shape shape, std::vector<double> values) {
    v1::ValueInfo* in = g_.add_inputs();
    in->set_name(name);
    in->set_dtype(dtype);
    for (int64_t d : shape) in->add_shape(d);
    node()->add_inputs(name);
    fed_.push_back(Make(dtype, shape, values));
    return *this;
  }
  OneNode& Const(const std::string& name, DataType dtype, Shape shape, std::vector<double> values) {
    const HostTensor t = Make(dtype, shape, values);
    v1::Initializer* init = g_.add_initializers();
    init->set_name(name);
    init->mutable_tensor()->set_dtype(dtype);
    for (int64_t d : shape) init->mutable_tensor()->add_shape(d);
    init->mutable_tensor()->set_data(t.data(), t.bytes());
    node()->add_inputs(name);
    return *this;
  }
  OneNode& Int(const std::string& name, int64_t v) {
    (*node()->mutable_attributes())[name].set_i(v);
    return *this;
  }
  OneNode& Str(const std::string& name, const std::string& v) {
    (*node()->mutable_attributes())[name].set_s(v);
    return *this;
  }
  OneNode& Ints(const std::string& name, std::vector<int64_t> v) {
    auto& a = (*node()->mutable_attributes())[name];
    a.mutable_ints();
    for (int64_t x : v) a.mutable_ints()->add_values(x);
    return *this;
  }
  OneNode& Tensor(const std::string& name, DataType dtype, Shape shape, std::vector<double> values) {
    const HostTensor t = Make(dtype, shape, values);
    v1::Tensor* p = (*node()->mutable_attributes())[name].mutable_t();
    p->set_dtype(dtype);
    for (int64_t d : shape) p->add_shape(d);
    p->set_data(t.data(), t.bytes());
    return *this;
  }
  OneNode& Outputs(int n) {
    for (int i = 0; i < n; ++i) {
      const std::string name = absl::StrCat("y", i);
      node()->add_outputs(name);
      g_.add_outputs(name);
    }
    return *this;
  }
  const v1::Graph& graph() {
    if (node()->outputs_size() == 0) Outputs(1);
    return g_;
  }
  const std::vector<HostTensor>& fed() const { return fed_; }

 private:
  static HostTensor Make(DataType dtype, const Shape& shape, const std::vector<double>& values) {
    HostTensor t = HostTensor::Allocate({dtype, shape});
    for (int64_t i = 0; i < t.type().elements(); ++i) {
      const double v = values.at(static_cast<size_t>(i));
      switch (dtype) {
        case v1::FLOAT32: t.mutable_as<float>()[i] = static_cast<float>(v); break;
        case v1::INT32: t.mutable_as<int32_t>()[i] = static_cast<int32_t>(v); break;
        case v1::INT64: t.mutable_as<int64_t>()[i] = static_cast<int64_t>(v); break;
        case v1::BOOL: t.mutable_as<uint8_t>()[i] = v != 0; break;
        default: ADD_FAILURE() << "dtype " << DataTypeName(dtype) << " not made here";
      }
    }
    return t;
  }

  v1::Node* node() { return g_.mutable_nodes(0); }  // not kept: the builder is copied

  v1::Graph g_;
  std::vector<HostTensor> fed_;
};

}  // namespace npu::graph::testing
