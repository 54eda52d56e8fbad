// The ONNX ops (default domain) the server runs and the attributes each
// accepts. Kept next to the importer so a model is refused on the client,
// whole, before upload; tests check it against the server's op registry.
#pragma once

#include <map>
#include <set>
#include <string>

namespace npu::onnxio {

const std::map<std::string, std::set<std::string>>& SupportedOps();

}  // namespace npu::onnxio
