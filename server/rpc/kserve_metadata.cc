#include "server/rpc/kserve_metadata.h"

#include "server/rpc/kserve_datatype.h"

namespace npu::rpc {
namespace {

void DescribeValues(const std::vector<v1::ValueInfo>& values,
                    google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const v1::ValueInfo& v : values) {
    auto* t = out->Add();
    t->set_name(v.name());
    if (v.dtype() == v1::DATA_TYPE_UNSPECIFIED) continue;
    t->set_datatype(KserveDataTypeName(v.dtype()));
    for (int64_t d : v.shape()) t->add_shape(d);
  }
}

}  // namespace

inference::ModelMetadataResponse KserveModelMetadata(const core::ModelMetadata& m) {
  inference::ModelMetadataResponse out;
  out.set_name(m.name);
  for (const std::string& v : m.versions) out.add_versions(v);
  out.set_platform(m.platform);
  DescribeValues(m.inputs, out.mutable_inputs());
  DescribeValues(m.outputs, out.mutable_outputs());
  return out;
}

inference::RepositoryIndexResponse KserveIndex(const std::vector<core::IndexEntry>& index) {
  inference::RepositoryIndexResponse out;
  for (const core::IndexEntry& e : index) {
    auto* m = out.add_models();
    m->set_name(e.name);
    m->set_version(e.version);
    m->set_state(e.state);
    if (!e.reason.empty()) m->set_reason(e.reason);
  }
  return out;
}

}  // namespace npu::rpc
