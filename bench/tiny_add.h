// The tiny graph the service benches time calls with: out = x + y over 64
// floats, so that a call costs its protocol and not its arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/v1/runtime.pb.h"

namespace npu::bench {

inline constexpr int kTinyAddElements = 64;

// A FLOAT32 [n] tensor of i % 97.
inline v1::Tensor Floats(int64_t n) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  t.add_shape(n);
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 97);
  t.set_data(reinterpret_cast<const char*>(v.data()), n * sizeof(float));
  return t;
}

inline v1::RegisterGraphRequest TinyAddGraph() {
  v1::RegisterGraphRequest reg;
  v1::Graph* g = reg.mutable_graph();
  g->set_name("add64");
  for (const char* name : {"x", "y"}) {
    v1::ValueInfo* in = g->add_inputs();
    in->set_name(name);
    in->set_dtype(v1::FLOAT32);
    in->add_shape(kTinyAddElements);
  }
  v1::Node* add = g->add_nodes();
  add->set_op_type("Add");
  add->add_inputs("x");
  add->add_inputs("y");
  add->add_outputs("out");
  g->add_outputs("out");
  return reg;
}

// A Run of the registered TinyAddGraph `graph_id`, both inputs Floats(64).
inline v1::RunRequest TinyAddRun(const std::string& graph_id) {
  v1::RunRequest run;
  run.set_graph_id(graph_id);
  for (const char* name : {"x", "y"}) {
    v1::RunInput* in = run.add_inputs();
    in->set_name(name);
    *in->mutable_tensor() = Floats(kTinyAddElements);
  }
  return run;
}

}  // namespace npu::bench
