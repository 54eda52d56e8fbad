// A corpus of malformed requests sent over real gRPC to a real npu-server:
// each must get the right status code with the culprit named, and the server
// must keep serving (health SERVING and a good run after every one).
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

using grpc::StatusCode;

// Small limits so oversize cases stay small: 1 MiB messages, 64 KiB tensors, 64 nodes.
const std::vector<std::string> kServerFlags = {"--max_message_bytes=1048576", "--max_tensor_bytes=65536",
                                               "--max_graph_nodes=64", "--log_level=error"};

struct Stubs {
  explicit Stubs(const std::string& target)
      : channel(TestChannel(target)),
        runtime(v1::RuntimeService::NewStub(channel)),
        memory(v1::MemoryService::NewStub(channel)),
        devices(v1::DeviceService::NewStub(channel)),
        health(grpc::health::v1::Health::NewStub(channel)) {}

  grpc::Status Run(const v1::RunRequest& req) {
    v1::RunResponse resp;
    return runtime->Run(Ctx().get(), req, &resp);
  }
  grpc::Status Register(const v1::Graph& g, const std::string& device = "") {
    v1::RegisterGraphRequest req;
    *req.mutable_graph() = g;
    req.set_device(device);
    v1::RegisterGraphResponse resp;
    return runtime->RegisterGraph(Ctx().get(), req, &resp);
  }
  // Sends the chunks as they are, then finishes the stream.
  grpc::Status Upload(const std::vector<v1::UploadChunk>& chunks) {
    auto ctx = Ctx();
    v1::TensorHandle handle;
    auto writer = memory->Upload(ctx.get(), &handle);
    for (const auto& c : chunks) {
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::RuntimeService::Stub> runtime;
  std::unique_ptr<v1::MemoryService::Stub> memory;
  std::unique_ptr<v1::DeviceService::Stub> devices;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

v1::UploadChunk Header(v1::DataType dtype, std::vector<int64_t> shape, std::string data = "") {
  v1::UploadChunk c;
  c.mutable_header()->set_device("npu:0");
  c.mutable_header()->mutable_type()->set_dtype(dtype);
  for (int64_t d : shape) c.mutable_header()->mutable_type()->add_shape(d);
  c.set_data(std::move(data));
  return c;
}

v1::UploadChunk Data(std::string data) {
  v1::UploadChunk c;
  c.set_data(std::move(data));
  return c;
}

// A graph with one FLOAT32 input "x" of `shape` and no nodes yet.
v1::Graph InputOnly(std::vector<int64_t> shape, v1::DataType dtype = v1::FLOAT32) {
  v1::Graph g;
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(dtype);
  for (int64_t d : shape) in->add_shape(d);
  return g;
}

// An INT64 list initializer (shapes, axes, starts, ...).
void IntsInitializer(v1::Graph& g, const std::string& name, const std::vector<int64_t>& values) {
  v1::Initializer* init = g.add_initializers();
  init->set_name(name);
  init->mutable_tensor()->set_dtype(v1::INT64);
  init->mutable_tensor()->add_shape(static_cast<int64_t>(values.size()));
  init->mutable_tensor()->set_data(values.data(), values.size() * sizeof(int64_t));
}

void SetInts(v1::Node* n, const std::string& name, const std::vector<int64_t>& values) {
  auto* ints = (*n->mutable_attributes())[name].mutable_ints();
  for (int64_t v : values) ints->add_values(v);
}

struct Case {
  std::string name;
  StatusCode code;
  std::string culprit;  // must appear in the status message
  std::function<grpc::Status(Stubs&)> send;
};

std::vector<Case> Corpus() {
  std::vector<Case> cases;
  auto add = [&cases](std::string name, StatusCode code, std::string culprit, std::function<grpc::Status(Stubs&)> f) {
    cases.push_back({std::move(name), code, std::move(culprit), std::move(f)});
  };
  auto run_with_x = [](std::function<void(v1::Tensor&)> mutate) {
    return [mutate](Stubs& s) {
      v1::RunRequest req = AddRun();
      mutate(*req.mutable_inputs(0)->mutable_tensor());
      return s.Run(req);
    };
  };
  auto run_graph = [](std::function<void(v1::Graph&)> mutate) {
    return [mutate](Stubs& s) {
      v1::RunRequest req = AddRun();
      mutate(*req.mutable_graph());
      return s.Run(req);
    };
  };

  // --- tensor bytes, dtypes and shapes of run inputs
  add("short tensor bytes", StatusCode::INVALID_ARGUMENT, "input \"x\": FLOAT32[4] needs 16 bytes of data, got 12",
      run_with_x([](v1::Tensor& t) { t.mutable_data()->resize(12); }));
  add("long tensor bytes", StatusCode::INVALID_ARGUMENT, "input \"x\": FLOAT32[4] needs 16 bytes of data, got 20",
      run_with_x([](v1::Tensor& t) { t.mutable_data()->append(4, '\0'); }));
  add("empty tensor bytes", StatusCode::INVALID_ARGUMENT, "got 0",
      run_with_x([](v1::Tensor& t) { t.clear_data(); }));
  add("wrong dtype", StatusCode::INVALID_ARGUMENT, "input \"x\" is INT32[4]; the graph takes FLOAT32[4]",
      run_with_x([](v1::Tensor& t) { t.set_dtype(v1::INT32); }));
  add("unspecified dtype", StatusCode::INVALID_ARGUMENT, "input \"x\": unsupported dtype",
      run_with_x([](v1::Tensor& t) { t.set_dtype(v1::DATA_TYPE_UNSPECIFIED); }));
  add("dtype out of the enum", StatusCode::INVALID_ARGUMENT, "DataType(99)",
      run_with_x([](v1::Tensor& t) { t.set_dtype(static_cast<v1::DataType>(99)); }));
  add("negative dim", StatusCode::INVALID_ARGUMENT, "input \"x\": dimension 0 is negative (-4)",
      run_with_x([](v1::Tensor& t) { t.set_shape(0, -4); }));
  add("wrong shape", StatusCode::INVALID_ARGUMENT, "input \"x\"", run_with_x([](v1::Tensor& t) {
        t.set_shape(0, 2);
        t.add_shape(2);
      }));
  add("overflowing element count", StatusCode::INVALID_ARGUMENT, "input \"x\": shape", run_with_x([](v1::Tensor& t) {
        t.set_shape(0, int64_t{1} << 40);
        t.add_shape(int64_t{1} << 40);
      }));
  add("int64 max dims", StatusCode::INVALID_ARGUMENT, "elements", run_with_x([](v1::Tensor& t) {
        t.set_shape(0, std::numeric_limits<int64_t>::max());
        t.add_shape(2);
      }));
  add("rank 9", StatusCode::INVALID_ARGUMENT, "input \"x\": rank 9 exceeds", run_with_x([](v1::Tensor& t) {
        for (int i = 0; i < 8; ++i) t.add_shape(1);
      }));

  // --- graph inputs and initializers
  add("graph input negative dim", StatusCode::INVALID_ARGUMENT, "graph input \"x\": dimension 0 is negative",
      run_graph([](v1::Graph& g) { g.mutable_inputs(0)->set_shape(0, -3); }));  // -1 is a dynamic dim
  add("graph input over the tensor limit", StatusCode::INVALID_ARGUMENT, "graph input \"x\"",
      run_graph([](v1::Graph& g) { g.mutable_inputs(0)->set_shape(0, 1 << 20); }));
  add("graph input overflowing dims", StatusCode::INVALID_ARGUMENT, "graph input \"x\": shape",
      run_graph([](v1::Graph& g) {
        g.mutable_inputs(0)->set_shape(0, std::numeric_limits<int64_t>::max());
        g.mutable_inputs(0)->add_shape(3);
      }));
  add("graph input with empty name", StatusCode::INVALID_ARGUMENT, "graph input has an empty name",
      run_graph([](v1::Graph& g) { g.mutable_inputs(0)->set_name(""); }));
  add("graph input defined twice", StatusCode::INVALID_ARGUMENT, "value \"x\" is defined more than once",
      run_graph([](v1::Graph& g) { g.mutable_inputs(1)->set_name("x"); }));
  add("short initializer", StatusCode::INVALID_ARGUMENT, "initializer \"w\": FLOAT32[4] needs 16 bytes",
      run_graph([](v1::Graph& g) {
        v1::Initializer* w = g.add_initializers();
        w->set_name("w");
        *w->mutable_tensor() = Float32({4}, {1, 2, 3});
      }));

  // --- structure: cycles, dangling names, duplicates
  add("cycle", StatusCode::INVALID_ARGUMENT, "cycle through nodes \"a\", \"b\"", run_graph([](v1::Graph& g) {
        g.clear_nodes();
        AddNode(g, "a", "Add", {"x", "bv"}, {"av"});
        AddNode(g, "b", "Add", {"av", "y"}, {"bv"});
        g.clear_outputs();
        g.add_outputs("bv");
      }));
  add("self-loop", StatusCode::INVALID_ARGUMENT, "node \"a\" (Add): input \"av\" is its own output (self-loop)",
      run_graph([](v1::Graph& g) {
        g.clear_nodes();
        AddNode(g, "a", "Add", {"x", "av"}, {"av"});
        g.clear_outputs();
        g.add_outputs("av");
      }));
  add("dangling node input", StatusCode::INVALID_ARGUMENT, "node \"add\" (Add): input 1 \"nope\" is not defined",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->set_inputs(1, "nope"); }));
  add("dangling graph output", StatusCode::INVALID_ARGUMENT, "graph output \"nope\" is not defined",
      run_graph([](v1::Graph& g) { g.add_outputs("nope"); }));
  add("duplicate graph outputs", StatusCode::INVALID_ARGUMENT, "graph output \"out\" is listed more than once",
      run_graph([](v1::Graph& g) { g.add_outputs("out"); }));
  add("no graph outputs", StatusCode::INVALID_ARGUMENT, "graph has no outputs",
      run_graph([](v1::Graph& g) { g.clear_outputs(); }));
  add("value defined by two nodes", StatusCode::INVALID_ARGUMENT, "value \"out\" is defined more than once",
      run_graph([](v1::Graph& g) { AddNode(g, "add2", "Add", {"x", "y"}, {"out"}); }));
  add("duplicate node names", StatusCode::INVALID_ARGUMENT, "node name \"add\" is used more than once",
      run_graph([](v1::Graph& g) { AddNode(g, "add", "Add", {"x", "y"}, {"out2"}); }));
  add("node output shadows an input", StatusCode::INVALID_ARGUMENT, "value \"x\" is defined more than once",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->set_outputs(0, "x"); }));
  add("enormous graph", StatusCode::INVALID_ARGUMENT, "graph has 65 nodes; the limit is 64",
      run_graph([](v1::Graph& g) {
        for (int i = 0; i < 64; ++i) {
          std::string name(1, 'r');
          name += std::to_string(i);
          AddNode(g, name, "Relu", {"x"}, {name});
        }
      }));

  // --- ops and attributes
  add("unknown op", StatusCode::INVALID_ARGUMENT, "node \"add\" (Frobnicate): unknown op type \"Frobnicate\"",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->set_op_type("Frobnicate"); }));
  add("unknown attribute", StatusCode::INVALID_ARGUMENT, "unknown attribute \"alpha\"", run_graph([](v1::Graph& g) {
        (*g.mutable_nodes(0)->mutable_attributes())["alpha"].set_f(0.5f);
      }));
  add("wrong attribute type", StatusCode::INVALID_ARGUMENT, "node \"c\" (Cast): attribute \"to\" must be",
      run_graph([](v1::Graph& g) {
        v1::Node* c = AddNode(g, "c", "Cast", {"out"}, {"cv"});
        (*c->mutable_attributes())["to"].set_s("float16");
        g.clear_outputs();
        g.add_outputs("cv");
      }));
  add("missing required attribute", StatusCode::INVALID_ARGUMENT, "node \"c\" (Cast)", run_graph([](v1::Graph& g) {
        AddNode(g, "c", "Cast", {"out"}, {"cv"});
        g.clear_outputs();
        g.add_outputs("cv");
      }));
  add("too few node inputs", StatusCode::INVALID_ARGUMENT, "node \"add\" (Add): takes 2 inputs, got 1",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->mutable_inputs()->RemoveLast(); }));
  add("too many node outputs", StatusCode::INVALID_ARGUMENT, "node \"add\" (Add): defines 2 outputs",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->add_outputs("extra"); }));
  add("empty required input", StatusCode::INVALID_ARGUMENT, "node \"add\" (Add): required input 0 is empty",
      run_graph([](v1::Graph& g) { g.mutable_nodes(0)->set_inputs(0, ""); }));
  add("matmul inner dims differ", StatusCode::INVALID_ARGUMENT, "node \"mm\" (MatMul): inner dimensions",
      run_graph([](v1::Graph& g) {
        g.clear_nodes();
        g.mutable_inputs(0)->set_shape(0, 2);  // x: [2,3]
        g.mutable_inputs(0)->add_shape(3);
        g.mutable_inputs(1)->add_shape(3);     // y: [4,3]: 3 != 4
        AddNode(g, "mm", "MatMul", {"x", "y"}, {"mv"});
        g.clear_outputs();
        g.add_outputs("mv");
      }));
  add("matmul on int32", StatusCode::INVALID_ARGUMENT, "node \"mm\" (MatMul): input \"x\": dtype INT32",
      [](Stubs& s) {
        v1::Graph g = InputOnly({4, 4}, v1::INT32);
        AddNode(g, "mm", "MatMul", {"x", "x"}, {"mv"});
        g.add_outputs("mv");
        return s.Register(g);
      });
  add("broadcast mismatch", StatusCode::INVALID_ARGUMENT, "node \"add\" (Add)",
      run_graph([](v1::Graph& g) { g.mutable_inputs(1)->set_shape(0, 3); }));
  add("output over the tensor limit", StatusCode::INVALID_ARGUMENT, "node \"mm\" (MatMul) output \"mv\"",
      [](Stubs& s) {
        v1::Graph g = InputOnly({256, 1});
        v1::ValueInfo* y = g.add_inputs();
        y->set_name("y");
        y->set_dtype(v1::FLOAT32);
        y->add_shape(1);
        y->add_shape(256);
        AddNode(g, "mm", "MatMul", {"x", "y"}, {"mv"});  // 256x256 fp32 = 256 KiB > 64 KiB
        g.add_outputs("mv");
        return s.Register(g);
      });

  // --- run requests: inputs, handles, devices
  add("no graph", StatusCode::INVALID_ARGUMENT, "names no graph", [](Stubs& s) { return s.Run(v1::RunRequest()); });
  add("unknown graph id", StatusCode::NOT_FOUND, "graph id \"g-nope\" not found", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.set_graph_id("g-nope");
    return s.Run(req);
  });
  add("bad handle", StatusCode::NOT_FOUND, "input \"x\": handle \"00000000deadbeef\" not found", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_inputs(0)->set_handle("00000000deadbeef");
    return s.Run(req);
  });
  add("missing input", StatusCode::INVALID_ARGUMENT, "input \"y\" of the graph is missing; it takes FLOAT32[4]",
      [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_inputs()->RemoveLast();
    return s.Run(req);
  });
  add("unknown input", StatusCode::INVALID_ARGUMENT, "the graph has no input \"z\" (inputs: x, y)", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    v1::RunInput* z = req.add_inputs();
    z->set_name("z");
    *z->mutable_tensor() = Float32({1}, {1});
    return s.Run(req);
  });
  add("input given twice", StatusCode::INVALID_ARGUMENT, "input \"x\" is given twice", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    *req.add_inputs() = req.inputs(0);
    return s.Run(req);
  });
  add("input without a source", StatusCode::INVALID_ARGUMENT, "input \"x\" has neither a tensor nor a handle",
      [](Stubs& s) {
        v1::RunRequest req = AddRun();
        req.mutable_inputs(0)->clear_tensor();
        return s.Run(req);
      });
  add("keep_on_device names no output", StatusCode::INVALID_ARGUMENT, "keep_on_device names \"x\"", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_options()->add_keep_on_device("x");
    return s.Run(req);
  });
  add("malformed device", StatusCode::INVALID_ARGUMENT, "device \"gpu:0\" is not of the form npu:N", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_options()->set_device("gpu:0");
    return s.Run(req);
  });
  add("device past the pool", StatusCode::NOT_FOUND, "device \"npu:7\" does not exist", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_options()->set_device("npu:7");
    return s.Run(req);
  });
  add("negative device index", StatusCode::INVALID_ARGUMENT, "\"-1\" is not a device index",
      [](Stubs& s) { return s.Register(AddGraph(), "npu:-1"); });

  // --- oversize and undecodable payloads
  add("oversize message", StatusCode::RESOURCE_EXHAUSTED, "larger than max", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_graph()->set_name(std::string(2 << 20, 'n'));
    return s.Run(req);
  });
  add("invalid UTF-8 in a node name", StatusCode::INVALID_ARGUMENT, "npu.v1.Node.name", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_graph()->mutable_nodes(0)->set_name("MARKER");
    return RawUnary(s.channel.get(), "/npu.v1.RuntimeService/Run",
                    Patch(req.SerializeAsString(), "MARKER", "\xff\xfe\xc3\x28\x80\xbf"));
  });
  add("invalid UTF-8 in an input name", StatusCode::INVALID_ARGUMENT, "UTF-8", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.mutable_inputs(0)->set_name("MARKER");
    return RawUnary(s.channel.get(), "/npu.v1.RuntimeService/Run",
                    Patch(req.SerializeAsString(), "MARKER", "\xc0\xaf\xed\xa0\x80x"));
  });
  add("garbage bytes", StatusCode::INVALID_ARGUMENT, "/npu.v1.RuntimeService/Run is not a valid protobuf",
      [](Stubs& s) { return RawUnary(s.channel.get(), "/npu.v1.RuntimeService/Run", "\xff\xff\xff\xff\x0f garbage"); });
  add("truncated message", StatusCode::INVALID_ARGUMENT, "RegisterGraph is not a valid protobuf", [](Stubs& s) {
    v1::RegisterGraphRequest req;
    *req.mutable_graph() = AddGraph();
    const std::string bytes = req.SerializeAsString();
    return RawUnary(s.channel.get(), "/npu.v1.RuntimeService/RegisterGraph", bytes.substr(0, bytes.size() / 2));
  });

  // --- upload streams
  add("upload with no header", StatusCode::INVALID_ARGUMENT, "first upload chunk must carry the header",
      [](Stubs& s) { return s.Upload({Data(std::string(16, 'a'))}); });
  add("empty upload stream", StatusCode::INVALID_ARGUMENT, "upload stream ended before its header",
      [](Stubs& s) { return s.Upload({}); });
  add("upload with too many bytes", StatusCode::INVALID_ARGUMENT, "upload sent more than the 16 bytes of FLOAT32[4]",
      [](Stubs& s) { return s.Upload({Header(v1::FLOAT32, {4}, std::string(12, 'a')), Data(std::string(8, 'b'))}); });
  add("upload with too few bytes", StatusCode::INVALID_ARGUMENT, "sent 8 of 16 bytes",
      [](Stubs& s) { return s.Upload({Header(v1::FLOAT32, {4}, std::string(8, 'a'))}); });
  add("upload with a second header", StatusCode::INVALID_ARGUMENT, "only the first upload chunk may carry a header",
      [](Stubs& s) { return s.Upload({Header(v1::FLOAT32, {4}), Header(v1::FLOAT32, {4})}); });
  add("upload with a bad dtype", StatusCode::INVALID_ARGUMENT, "upload header: unsupported dtype",
      [](Stubs& s) { return s.Upload({Header(v1::DATA_TYPE_UNSPECIFIED, {4})}); });
  add("upload with a negative dim", StatusCode::INVALID_ARGUMENT, "upload header: dimension 1 is negative",
      [](Stubs& s) { return s.Upload({Header(v1::FLOAT32, {4, -4})}); });
  add("upload over the tensor limit", StatusCode::INVALID_ARGUMENT, "the limit is 65536",
      [](Stubs& s) { return s.Upload({Header(v1::FLOAT32, {1 << 20})}); });
  add("upload to a missing device", StatusCode::NOT_FOUND, "device \"npu:9\" does not exist", [](Stubs& s) {
    v1::UploadChunk c = Header(v1::FLOAT32, {4}, std::string(16, 'a'));
    c.mutable_header()->set_device("npu:9");
    return s.Upload({c});
  });

  // --- issue 11: one request that crashed, wedged or fooled the server. Each
  // class is refused at registration now, naming the node and the value.
  auto register_graph = [](std::function<void(v1::Graph&)> build) {
    return [build](Stubs& s) {
      v1::Graph g;
      build(g);
      return s.Register(g);
    };
  };
  // A node `op` over a scalar input x (rank 0), output "v".
  auto on_scalar = [register_graph](std::string op, std::function<void(v1::Graph&, v1::Node*)> more) {
    return register_graph([op, more](v1::Graph& g) {
      g = InputOnly({});
      v1::Node* n = AddNode(g, "n", op, {"x"}, {"v"});
      more(g, n);
      g.add_outputs("v");
    });
  };
  add("ReduceSum of a scalar at axis 0", StatusCode::INVALID_ARGUMENT,
      "node \"n\" (ReduceSum): attribute \"axes\" = 0 is out of range: the input is a scalar",
      on_scalar("ReduceSum", [](v1::Graph&, v1::Node* n) { SetInts(n, "axes", {0}); }));
  add("Squeeze of a scalar at axis 0", StatusCode::INVALID_ARGUMENT,
      "node \"n\" (Squeeze): input \"axes\" = 0 is out of range: the input is a scalar",
      on_scalar("Squeeze", [](v1::Graph& g, v1::Node* n) {
        IntsInitializer(g, "axes", {0});
        n->add_inputs("axes");
      }));
  add("Slice of a scalar", StatusCode::INVALID_ARGUMENT, "node \"n\" (Slice): the axis of starts = 0 is out of range",
      on_scalar("Slice", [](v1::Graph& g, v1::Node* n) {
        IntsInitializer(g, "starts", {0});
        IntsInitializer(g, "ends", {1});
        n->add_inputs("starts");
        n->add_inputs("ends");
      }));
  add("ArgMax of a scalar", StatusCode::INVALID_ARGUMENT, "node \"n\" (ArgMax): attribute \"axis\" = 0",
      on_scalar("ArgMax", [](v1::Graph&, v1::Node*) {}));
  add("Concat of scalars", StatusCode::INVALID_ARGUMENT, "node \"n\" (Concat): attribute \"axis\" = 0",
      on_scalar("Concat", [](v1::Graph&, v1::Node* n) {
        n->add_inputs("x");
        (*n->mutable_attributes())["axis"].set_i(0);
      }));
  add("Split of a scalar", StatusCode::INVALID_ARGUMENT, "node \"n\" (Split): attribute \"axis\" = 0",
      on_scalar("Split", [](v1::Graph&, v1::Node* n) { n->add_outputs("w"); }));
  add("Concat with an empty input", StatusCode::INVALID_ARGUMENT, "node \"n\" (Concat): required input 1 is empty",
      register_graph([](v1::Graph& g) {
        g = InputOnly({2});
        v1::Node* n = AddNode(g, "n", "Concat", {"x", ""}, {"v"});
        (*n->mutable_attributes())["axis"].set_i(0);
        g.add_outputs("v");
      }));
  // The training ops that take a list of values: each is required (no
  // optional inputs to skip), as for Concat.
  for (const char* op : {"HcclAllReduce", "NPUGetFloatStatus"}) {
    add(absl::StrCat(op, " with an empty input"), StatusCode::INVALID_ARGUMENT,
        absl::StrCat("node \"n\" (", op, "): required input 1 is empty"), register_graph([op](v1::Graph& g) {
          g = InputOnly({2});
          AddNode(g, "n", op, {"x", ""}, std::string(op) == "HcclAllReduce" ? std::vector<std::string>{"v", "w"}
                                                                             : std::vector<std::string>{"v"});
          g.add_outputs("v");
        }));
  }
  add("Expand to an overflowing shape", StatusCode::INVALID_ARGUMENT,
      "node \"e\" (Expand): input \"shape\": shape [4294967296,4294967296] has more than",
      register_graph([](v1::Graph& g) {
        g = InputOnly({1});
        IntsInitializer(g, "shape", {int64_t{1} << 32, int64_t{1} << 32});
        AddNode(g, "e", "Expand", {"x", "shape"}, {"v"});
        g.add_outputs("v");
      }));
  add("Reshape to an overflowing shape", StatusCode::INVALID_ARGUMENT, "node \"r\" (Reshape): input \"shape\": shape",
      register_graph([](v1::Graph& g) {
        g = InputOnly({4});
        IntsInitializer(g, "shape", {int64_t{1} << 62, 4, 0});
        v1::Node* n = AddNode(g, "r", "Reshape", {"x", "shape"}, {"v"});
        (*n->mutable_attributes())["allowzero"].set_i(1);
        g.add_outputs("v");
      }));
  auto conv = [register_graph](std::vector<int64_t> w_shape, std::vector<int64_t> pads) {
    return register_graph([w_shape, pads](v1::Graph& g) {
      g = InputOnly({1, 1, 4, 4});
      v1::Initializer* w = g.add_initializers();
      w->set_name("w");
      int64_t n = 1;
      for (int64_t d : w_shape) n *= d;
      *w->mutable_tensor() = Float32(w_shape, std::vector<float>(static_cast<size_t>(n), 1.0f));
      v1::Node* c = AddNode(g, "c", "Conv", {"x", "w"}, {"v"});
      SetInts(c, "pads", pads);
      g.add_outputs("v");
    });
  };
  const int64_t p61 = (int64_t{1} << 61) - 1;
  add("Conv with pads near 2^61", StatusCode::INVALID_ARGUMENT,
      "node \"c\" (Conv): height: the padded input extent (input 4, pads 2305843009213693951 + 2305843009213693951)",
      conv({1, 1, 3, 3}, {p61, p61, p61, p61}));
  add("Conv with a kernel larger than the padded input", StatusCode::INVALID_ARGUMENT,
      "node \"c\" (Conv): height: the kernel spans 7 elements", conv({1, 1, 7, 3}, {1, 0, 1, 0}));
  add("Conv with a zero-size kernel", StatusCode::INVALID_ARGUMENT,
      "node \"c\" (Conv): height: kernel size 0 must be >= 1", conv({1, 1, 0, 3}, {0, 0, 0, 0}));
  add("MaxPool with pads near 2^61", StatusCode::INVALID_ARGUMENT, "node \"p\" (MaxPool): height: the padded input",
      register_graph([p61](v1::Graph& g) {
        g = InputOnly({1, 1, 4, 4});
        v1::Node* n = AddNode(g, "p", "MaxPool", {"x"}, {"v"});
        SetInts(n, "kernel_shape", {p61 * 2 + 1, 2});
        SetInts(n, "pads", {p61, 0, p61, 0});
        g.add_outputs("v");
      }));

  // Streaming calls decode their requests like unary ones.
  add("undecodable Download request", StatusCode::INVALID_ARGUMENT,
      "the request to /npu.v1.MemoryService/Download is not a valid protobuf message", [](Stubs& s) {
        return RawStreaming(s.channel.get(), "/npu.v1.MemoryService/Download", {"\xff\xff\xff\xff\x0f garbage"});
      });
  add("Download handle with invalid UTF-8", StatusCode::INVALID_ARGUMENT, "npu.v1.DownloadRequest.handle",
      [](Stubs& s) {
        v1::DownloadRequest req;
        req.set_handle("MARKER");
        return RawStreaming(s.channel.get(), "/npu.v1.MemoryService/Download",
                            {Patch(req.SerializeAsString(), "MARKER", "\xff\xfe\xc3\x28\x80\xbf")});
      });
  add("Upload header with invalid UTF-8", StatusCode::INVALID_ARGUMENT,
      "upload chunk 1 is not a valid npu.v1.UploadChunk message: String field 'npu.v1.UploadHeader.device'",
      [](Stubs& s) {
        v1::UploadChunk c = Header(v1::FLOAT32, {4}, std::string(16, 'a'));
        c.mutable_header()->set_device("MARKER");
        return RawStreaming(s.channel.get(), "/npu.v1.MemoryService/Upload",
                            {Patch(c.SerializeAsString(), "MARKER", "\xc0\xaf\xed\xa0\x80x")});
      });
  add("Upload with an undecodable second chunk", StatusCode::INVALID_ARGUMENT, "sent 8 of 16 bytes; the stream ended after chunk 1",
      [](Stubs& s) {
        return RawStreaming(s.channel.get(), "/npu.v1.MemoryService/Upload",
                            {Header(v1::FLOAT32, {4}, std::string(8, 'a')).SerializeAsString(), "\xff\xff\xff"});
      });

  // Long client-chosen names: the message keeps the start of the name, its length and the reason.
  add("16 KiB node name", StatusCode::INVALID_ARGUMENT, "...\" (16384 bytes) (MatMul): inner dimensions",
      [](Stubs& s) {
        v1::Graph g = InputOnly({2, 3});
        AddNode(g, std::string(16384, 'n'), "MatMul", {"x", "x"}, {"v"});
        g.add_outputs("v");
        return s.Register(g);
      });
  add("64 KiB graph id", StatusCode::NOT_FOUND, "...\" (65536 bytes) not found", [](Stubs& s) {
    v1::RunRequest req = AddRun();
    req.set_graph_id(std::string(65536, 'g'));
    return s.Run(req);
  });
  add("64 KiB value name", StatusCode::INVALID_ARGUMENT, "graph output \"oooo", run_graph([](v1::Graph& g) {
        g.add_outputs(std::string(65536, 'o'));
      }));

  // --- handles and graphs that do not exist
  add("download of a bad handle", StatusCode::NOT_FOUND, "handle \"nope\" not found", [](Stubs& s) {
    v1::DownloadRequest req;
    req.set_handle("nope");
    auto ctx = Ctx();
    auto reader = s.memory->Download(ctx.get(), req);
    v1::DownloadChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish();
  });
  add("free of a bad handle", StatusCode::NOT_FOUND, "handle \"nope\" not found", [](Stubs& s) {
    v1::FreeRequest req;
    req.set_handle("nope");
    v1::FreeResponse resp;
    return s.memory->Free(Ctx().get(), req, &resp);
  });
  add("unregister of an unknown graph", StatusCode::NOT_FOUND, "graph id \"g-0\" not found", [](Stubs& s) {
    v1::UnregisterGraphRequest req;
    req.set_graph_id("g-0");
    v1::UnregisterGraphResponse resp;
    return s.runtime->UnregisterGraph(Ctx().get(), req, &resp);
  });
  add("stats of a bad device", StatusCode::INVALID_ARGUMENT, "device \"npu:x\"", [](Stubs& s) {
    v1::GetDeviceRequest req;
    req.set_device("npu:x");
    v1::DeviceInfo resp;
    return s.devices->GetDevice(Ctx().get(), req, &resp);
  });
  return cases;
}

// The server still answers health and computes a good run correctly.
void ExpectServing(Stubs& s) {
  grpc::health::v1::HealthCheckResponse health;
  ASSERT_TRUE(s.health->Check(Ctx().get(), {}, &health).ok());
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  v1::RunResponse resp;
  grpc::Status st = s.runtime->Run(Ctx().get(), AddRun(), &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.outputs_size(), 1);
  const std::string& data = resp.outputs(0).tensor().data();
  ASSERT_EQ(data.size(), 16u);
  float out[4];
  std::memcpy(out, data.data(), 16);
  EXPECT_EQ(out[0], 11.0f);
  EXPECT_EQ(out[3], 44.0f);
}

// The "wrong numbers": Slice with INT64_MAX / INT64_MIN steps takes one element, as NumPy and ONNX do.
TEST(HostileInput, SliceWithExtremeStepsTakesOneElement) {
  ServerProcess server(kServerFlags);
  Stubs stubs(server.target());
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const struct {
    int64_t start, end, step;
    float want;
  } cases[] = {{0, kMax, kMax, 1.0f}, {kMax, kMin, kMin, 4.0f}, {-2, kMin, kMin, 3.0f}, {1, kMax, kMax - 1, 2.0f}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.start << ":" << c.end << ":" << c.step);
    v1::RunRequest req;
    v1::Graph& g = *req.mutable_graph();
    g = InputOnly({4});
    IntsInitializer(g, "starts", {c.start});
    IntsInitializer(g, "ends", {c.end});
    IntsInitializer(g, "axes", {0});
    IntsInitializer(g, "steps", {c.step});
    AddNode(g, "s", "Slice", {"x", "starts", "ends", "axes", "steps"}, {"v"});
    g.add_outputs("v");
    v1::RunInput* x = req.add_inputs();
    x->set_name("x");
    *x->mutable_tensor() = Float32({4}, {1, 2, 3, 4});
    v1::RunResponse resp;
    const grpc::Status st = stubs.runtime->Run(Ctx().get(), req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.outputs(0).tensor().shape_size(), 1);
    EXPECT_EQ(resp.outputs(0).tensor().shape(0), 1);
    ASSERT_EQ(resp.outputs(0).tensor().data().size(), 4u);
    float got;
    std::memcpy(&got, resp.outputs(0).tensor().data().data(), 4);
    EXPECT_EQ(got, c.want);
  }
}

TEST(HostileInput, EachMalformedRequestIsRefusedByNameAndTheServerKeepsServing) {
  ServerProcess server(kServerFlags);
  Stubs stubs(server.target());
  const std::vector<Case> corpus = Corpus();
  ASSERT_GE(corpus.size(), 40u);
  for (const Case& c : corpus) {
    SCOPED_TRACE(c.name);
    const grpc::Status st = c.send(stubs);
    EXPECT_EQ(st.error_code(), c.code) << st.error_message();
    EXPECT_NE(st.error_message().find(c.culprit), std::string::npos)
        << "message \"" << st.error_message() << "\" does not name \"" << c.culprit << "\"";
    // Every message fits what a client accepts as metadata (8 KiB by default), with room to spare.
    EXPECT_LE(st.error_message().size(), 4096u);
    ExpectServing(stubs);
  }
}

}  // namespace
}  // namespace npu::testing
