// Small builders shared by the core unit tests.
#pragma once

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "gtest/gtest.h"
#include "npu/v1/graph.pb.h"
#include "npu/v1/tensor.pb.h"
#include "server/device/device.h"
#include "server/graph/host_tensor.h"

namespace npu::core::testing {

inline device::Device MakeDevice(int index = 0, const char* preset = "ascend910") {
  return device::Device(index, device::PresetByName(preset).value(), device::DeviceOptions{});
}

inline graph::HostTensor FloatTensor(std::vector<float> values) {
  graph::HostTensor t = graph::HostTensor::Allocate({v1::FLOAT32, {static_cast<int64_t>(values.size())}});
  std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(float));
  return t;
}

inline v1::Tensor FloatProto(std::vector<float> values, std::vector<int64_t> shape) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return t;
}

// A graph as a model repository's graph.json holds it (protobuf's JSON mapping).
inline std::string GraphJson(const v1::Graph& graph) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(graph, &json).ok());
  return json;
}

// Writes `text` to `file`, making its folders.
inline void WriteFile(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace npu::core::testing
