// The ONNX ops (default domain) the server runs and the attributes each
// accepts: the importer refuses a model whole, naming everything else, before
// anything is planned; a test checks the list against the op registry.
#pragma once

#include <map>
#include <set>
#include <string>

namespace npu::onnxio {

const std::map<std::string, std::set<std::string>>& SupportedOps();

// Ops of the server's training graphs (gradients under ONNX Runtime's names,
// optimizer updates, NPUGetFloatStatus, HcclAllReduce), which SupportedOps
// holds too but are not ONNX's own: an exported model must not have them.
bool IsTrainingOp(const std::string& op_type);

}  // namespace npu::onnxio
