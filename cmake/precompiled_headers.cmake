# Precompiled headers for the targets whose sources parse the same large
# third-party headers again and again (gtest/gmock, gRPC, protobuf's generated
# messages, abseil, the standard library). A cold build of the tests spent
# most of each file's time there; CI builds cold, within its time limit.
#
# Only third-party and generated headers are precompiled: a change to one of
# the project's own headers rebuilds what includes it, as before, and no
# header reaches a target that does not already link its library (npu_core
# never sees gRPC). NPU_PRECOMPILED_HEADERS=OFF builds without them.
option(NPU_PRECOMPILED_HEADERS "Precompile common third-party headers" ON)

set(npu_pch_std
  <algorithm> <atomic> <chrono> <cmath> <cstdint> <cstring> <filesystem> <fstream> <functional> <map>
  <memory> <mutex> <optional> <random> <set> <sstream> <string> <string_view> <thread> <unordered_map>
  <utility> <variant> <vector>)
set(npu_pch_absl
  [["absl/status/status.h"]] [["absl/status/statusor.h"]] [["absl/strings/str_cat.h"]]
  [["absl/strings/str_format.h"]] [["absl/types/span.h"]])
set(npu_pch_proto
  [["npu/v1/graph.pb.h"]] [["npu/v1/tensor.pb.h"]] [["npu/v1/runtime.pb.h"]] [["npu/v1/device.pb.h"]]
  [["npu/v1/profile.pb.h"]] [["npu/v1/training.pb.h"]])
set(npu_pch_grpc
  <grpcpp/grpcpp.h> [["npu/v1/runtime.grpc.pb.h"]] [["npu/v1/device.grpc.pb.h"]]
  [["npu/v1/memory.grpc.pb.h"]] [["npu/v1/training.grpc.pb.h"]])
set(npu_pch_gtest [["gtest/gtest.h"]] [["gmock/gmock.h"]])

# npu_precompile(SETS set... TARGETS target...): each existing target gets the
# named header sets (std, absl, proto, grpc, gtest) as its precompiled header.
function(npu_precompile)
  if(NOT NPU_PRECOMPILED_HEADERS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "SETS;TARGETS")
  set(headers)
  foreach(set IN LISTS arg_SETS)
    list(APPEND headers ${npu_pch_${set}})
  endforeach()
  foreach(target IN LISTS arg_TARGETS)
    if(TARGET ${target})
      target_precompile_headers(${target} PRIVATE ${headers})
    endif()
  endforeach()
endfunction()

npu_precompile(SETS std absl proto TARGETS npu_graph npu_train npu_onnx)
npu_precompile(SETS std absl proto grpc TARGETS npu_rpc npu_client npu npu-bench)
npu_precompile(SETS std absl proto gtest TARGETS graph_tests train_tests)
npu_precompile(SETS std absl gtest TARGETS device_tests)
npu_precompile(SETS std gtest TARGETS kernels_tests)
npu_precompile(SETS std absl proto grpc gtest TARGETS e2e_tests rpc_tests client_tests)
