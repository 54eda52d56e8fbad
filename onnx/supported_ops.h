// The ONNX ops (default domain) the server runs and the attributes each
// accepts: the importer refuses a model whole, naming everything else, before
// anything is planned; a test checks the list against the op registry.
#pragma once

#include <map>
#include <set>
#include <string>

namespace npu::onnxio {

const std::map<std::string, std::set<std::string>>& SupportedOps();

}  // namespace npu::onnxio
