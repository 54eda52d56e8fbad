// protobuf's JSON values (google.protobuf.Value), for the JSON files the
// commands write with MessageToJsonString (diff_analyze.json, the profiler's
// communication files).
#pragma once

#include <string>

#include <google/protobuf/struct.pb.h>

namespace npu::client::cli {

inline google::protobuf::Value JsonNumber(double v) {
  google::protobuf::Value x;
  x.set_number_value(v);
  return x;
}

inline google::protobuf::Value JsonText(const std::string& s) {
  google::protobuf::Value x;
  x.set_string_value(s);
  return x;
}

}  // namespace npu::client::cli
