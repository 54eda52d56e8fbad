// libFuzzer target, structure-aware: the input is a serialized
// onnx.ModelProto, and LLVMFuzzerCustomMutator mutates it as a model
// (fuzz/onnx_case.h: opsets, ops, names, attributes, initializers, inputs
// and outputs), falling back to byte mutation for inputs that do not parse.
// scripts/fuzz.sh seeds it with real models: ONNX's conformance models and
// the examples exported from torch. Build and run:
// scripts/fuzz.sh SECONDS BUILD onnx.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <google/protobuf/stubs/logging.h>

#include "fuzz/choice_source.h"
#include "fuzz/onnx_case.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || seed % 8 == 0) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  npu::fuzz::SeededSource src(seed);
  npu::fuzz::MutateModel(model, src);
  const std::string out = model.SerializeAsString();
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  const std::string finding = npu::fuzz::CheckOnnxModel(std::string(reinterpret_cast<const char*>(data), size));
  if (finding.empty()) return 0;
  std::fprintf(stderr, "FINDING: %s\n", finding.c_str());
  std::abort();
}
