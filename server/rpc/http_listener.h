// An httplib server (routes already set) listening on HOST:PORT on a thread of
// its own: the metrics endpoint and KServe's HTTP/REST frontend. Stops and
// joins when destroyed.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}

namespace npu::rpc {

class HttpListener {
 public:
  // `listen` is HOST:PORT ([V6]:PORT too); port 0 picks a free one (port()).
  // `flag` names the setting in errors.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(std::unique_ptr<httplib::Server> server,
                                                             const std::string& listen, const char* flag);
  ~HttpListener();

  int port() const { return port_; }
  httplib::Server& server() { return *http_; }

 private:
  HttpListener() = default;

  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace npu::rpc
