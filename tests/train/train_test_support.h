// Helpers of the trainer tests: reading the generated cases, devices, host tensors.
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/graph_json.h"
#include "client/npy.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/device/device.h"
#include "server/graph/host_tensor.h"
#include "server/train/host_tensors.h"

namespace npu::train::testing {

inline device::Device& DeviceFor(const std::string& preset, int index = 0) {
  static auto* devices = new std::map<std::string, std::unique_ptr<device::Device>>();
  auto& d = (*devices)[absl::StrCat(preset, "/", index)];
  if (!d) d = std::make_unique<device::Device>(index, device::PresetByName(preset).value(), device::DeviceOptions{});
  return *d;
}

inline graph::HostTensor ReadNpy(const std::filesystem::path& path) {
  auto t = client::ReadNpy(path.string());
  EXPECT_TRUE(t.ok()) << t.status();
  auto owned = std::make_shared<v1::Tensor>(std::move(*t));
  auto type = graph::ValidateType(owned->dtype(), owned->shape(), path.string());
  return graph::HostTensor(*type, owned, reinterpret_cast<const std::byte*>(owned->data().data()));
}

// max |got - ref| / max |ref|.
inline double RelativeMaxError(const graph::HostTensor& got, const graph::HostTensor& ref) {
  const std::vector<float> g = AsFloats(got), r = AsFloats(ref);
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < r.size(); ++i) {
    err = std::max(err, std::fabs(double{g[i]} - r[i]));
    scale = std::max(scale, std::fabs(double{r[i]}));
  }
  return err / scale;
}

// Appends a node to a graph under construction.
inline void AddNode(v1::Graph& g, const std::string& name, const std::string& op, std::vector<std::string> in,
                    std::vector<std::string> out, std::map<std::string, v1::AttributeValue> attrs = {}) {
  v1::Node* n = g.add_nodes();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& i : in) n->add_inputs(i);
  for (auto& o : out) n->add_outputs(o);
  for (auto& [k, v] : attrs) (*n->mutable_attributes())[k] = v;
}

inline bool BitwiseEqual(const graph::HostTensor& a, const graph::HostTensor& b) {
  // memcmp may not be given the null data of an empty tensor.
  return a.type() == b.type() && (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

}  // namespace npu::train::testing
