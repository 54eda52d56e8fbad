#include "server/rpc/http_listener.h"

#include <httplib.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace npu::rpc {

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(std::unique_ptr<httplib::Server> server,
                                                                  const std::string& listen, const char* flag) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " \"", listen, "\" is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  std::unique_ptr<HttpListener> s(new HttpListener());
  s->http_ = std::move(server);
  s->port_ = port == 0 ? s->http_->bind_to_any_port(host) : (s->http_->bind_to_port(host, port) ? port : -1);
  if (s->port_ <= 0) return absl::UnavailableError(absl::StrCat(flag, ": cannot listen on ", listen));
  httplib::Server* http = s->http_.get();
  s->thread_ = std::thread([http] { http->listen_after_bind(); });
  // httplib's stop() does nothing before the loop runs: wait for it, so that
  // a server stopped right after starting cannot leave the thread listening.
  for (int i = 0; i < 1000 && !http->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return s;
}

HttpListener::~HttpListener() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace npu::rpc
