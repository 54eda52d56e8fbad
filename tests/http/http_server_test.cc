// The HTTP server over real loopback sockets, written to as a hostile or
// merely unusual client would: RFC 9112's framing (conflicting lengths,
// Content-Length with chunked, pipelining, half-close, 100-continue,
// HTTP/1.0), the limits (414, 431, 413 on Content-Length, chunked and gzip
// bodies as soon as they pass), gzip both ways, and the threads (idle
// keep-alive connections hold none; too many connections get 503).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http/http_server.h"

namespace npu::http {
namespace {

using ::testing::HasSubstr;

struct Answer {
  int status = 0;
  std::string head;  // status line and fields, lower-cased names kept as sent
  std::string body;
};

class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }

  void Send(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return;
      at += static_cast<size_t>(n);
    }
  }
  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

  // One response (Content-Length framed); status 0 when none came in time.
  Answer Next(int timeout_ms = 5000) {
    Answer a;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(timeout_ms)) return a;
    }
    a.head = buf_.substr(0, end + 2);
    buf_.erase(0, end + 4);
    absl::SimpleAtoi(a.head.substr(9, 3), &a.status);
    size_t length = 0;
    const size_t cl = Lower(a.head).find("\r\ncontent-length: ");
    if (cl != std::string::npos) {
      absl::SimpleAtoi(a.head.substr(cl + 18, a.head.find("\r\n", cl + 2) - cl - 18), &length);
    }
    if (a.status == 100) return a;
    while (buf_.size() < length) {
      if (!Fill(timeout_ms)) break;
    }
    a.body = buf_.substr(0, length);
    buf_.erase(0, std::min(length, buf_.size()));
    return a;
  }

  // The server closed the connection (nothing more than `extra` bytes came first).
  bool Closed(int timeout_ms = 5000) {
    while (Fill(timeout_ms)) {
    }
    return eof_ && buf_.empty();
  }

 private:
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  bool Fill(int timeout_ms) {
    if (eof_) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

std::string Gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(int threads = 4, int max_connections = 64, absl::Duration read_timeout = absl::Seconds(30)) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    o.threads = threads;
    o.max_connections = max_connections;
    o.read_timeout = read_timeout;
    o.limits.max_body_bytes = 1 << 20;
    o.limits.body_limit_name = "--max_message_bytes";
    auto s = HttpServer::Start(std::move(o), [this](const HttpRequest& req, HttpResponse& res) {
      ++handled_;
      if (req.path == "/slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (req.path == "/big") {
        res.content_type = "application/json";
        res.body = "[" + std::string(20000, '1') + "]";
        return;
      }
      res.content_type = "text/plain";
      res.body = absl::StrCat(req.method, " ", req.path, " ", req.body.size(), " ", req.body.substr(0, 16));
    });
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
  }
  void SetUp() override { StartServer(); }
  int port() const { return server_->port(); }

  std::unique_ptr<HttpServer> server_;
  std::atomic<int> handled_{0};
};

TEST_F(HttpServerTest, AnswersAndKeepsTheConnection) {
  Client c(port());
  for (int i = 0; i < 3; ++i) {
    c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    Answer a = c.Next();
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.body, "POST /echo 5 hello");
    EXPECT_THAT(a.head, HasSubstr("\r\nDate: "));
    EXPECT_THAT(a.head, ::testing::Not(HasSubstr("Connection: close")));
  }
  c.Send("HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  Answer a = c.Next(500);
  EXPECT_EQ(a.status, 200);
  EXPECT_THAT(a.head, HasSubstr("Content-Length: 13"));  // "HEAD /echo 0 "
  EXPECT_EQ(a.body, "");  // HEAD: the length of what GET would send, no body
}

TEST_F(HttpServerTest, ConflictingContentLengthsAre400AndClose) {
  Client c(port());
  c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\nhelloGET /x HTTP/1.1\r\n\r\n");
  Answer a = c.Next();
  EXPECT_EQ(a.status, 400);
  EXPECT_THAT(a.body, HasSubstr("conflicting Content-Length"));
  EXPECT_THAT(a.head, HasSubstr("Connection: close"));
  EXPECT_TRUE(c.Closed());
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(HttpServerTest, ContentLengthWithChunkedIsReadChunkedThenCloses) {
  Client c(port());
  c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
         "5\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
  Answer a = c.Next();
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "POST /echo 5 hello");
  EXPECT_THAT(a.head, HasSubstr("Connection: close"));
  EXPECT_TRUE(c.Closed());
  EXPECT_EQ(handled_.load(), 1);  // the smuggled request is never served
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  Client c(port());
  std::string bytes;
  for (int i = 0; i < 5; ++i) bytes += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  c.Send(bytes);
  for (int i = 0; i < 5; ++i) {
    Answer a = c.Next();
    EXPECT_EQ(a.status, 200) << i;
    EXPECT_EQ(a.body, "GET /" + std::to_string(i) + " 0 ");
  }
}

TEST_F(HttpServerTest, HalfClosedRequestsAreAnswered) {
  for (int round = 0; round < 20; ++round) {
    Client c(port());
    c.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
    c.ShutdownWrite();
    EXPECT_EQ(c.Next().body, "GET /a 0 ") << round;
    EXPECT_EQ(c.Next().body, "POST /b 2 hi") << round;
    EXPECT_TRUE(c.Closed());
  }
}

TEST_F(HttpServerTest, HeaderAndTargetLimits) {
  {
    Client c(port());
    std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 200; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
    c.Send(many + "\r\n");
    EXPECT_EQ(c.Next().status, 431);
    EXPECT_TRUE(c.Closed());
  }
  {
    // 62 MiB of headers were once taken in full: now refused at 64 KiB, without waiting for the rest.
    Client c(port());
    c.Send("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(100000, 'v'));
    EXPECT_EQ(c.Next().status, 431);
  }
  {
    Client c(port());
    c.Send("GET /" + std::string(10000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(c.Next().status, 414);
  }
}

TEST_F(HttpServerTest, TheBodyLimitHoldsWhileReading) {
  {
    Client c(port());
    c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n");
    Answer a = c.Next();  // before any body byte is sent
    EXPECT_EQ(a.status, 413);
    EXPECT_THAT(a.body, HasSubstr("1048576 bytes (--max_message_bytes)"));
  }
  {
    Client c(port());
    c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, 'c') + "\r\n";
    for (int i = 0; i < 16; ++i) c.Send(chunk);  // exactly 1 MiB: still fine
    c.Send("1\r\n");                             // one byte more: refused now
    Answer a = c.Next();
    EXPECT_EQ(a.status, 413);
    EXPECT_THAT(a.body, HasSubstr("chunked request body passed"));
  }
  {
    // 64 MiB of zeros gzip to 64 KiB: refused once 1 MiB has come out.
    Client c(port());
    const std::string bomb = Gzip(std::string(64 << 20, '\0'));
    c.Send(absl::StrCat("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: ", bomb.size(),
                        "\r\n\r\n", bomb));
    Answer a = c.Next();
    EXPECT_EQ(a.status, 413);
    EXPECT_THAT(a.body, HasSubstr("inflates past the server's limit"));
    // The framing held, so the connection serves on.
    const std::string small = Gzip("hello gzip");
    c.Send(absl::StrCat("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: ", small.size(),
                        "\r\n\r\n", small));
    EXPECT_EQ(c.Next().body, "POST /echo 10 hello gzip");
  }
  EXPECT_EQ(handled_.load(), 1);
}

TEST_F(HttpServerTest, ContinueAndHttp10) {
  {
    Client c(port());
    c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
    EXPECT_EQ(c.Next().status, 100);
    c.Send("abc");
    EXPECT_EQ(c.Next().body, "POST /echo 3 abc");
  }
  {
    Client c(port());
    c.Send("GET /old HTTP/1.0\r\n\r\n");
    Answer a = c.Next();
    EXPECT_EQ(a.status, 200);
    EXPECT_THAT(a.head, HasSubstr("Connection: close"));
    EXPECT_TRUE(c.Closed());
  }
  {
    Client c(port());
    c.Send("GET / HTTP/2.0\r\nHost: x\r\n\r\n");
    EXPECT_EQ(c.Next().status, 505);
  }
}

TEST_F(HttpServerTest, GzipAnswersForClientsThatAcceptIt) {
  Client c(port());
  c.Send("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: deflate, gzip;q=0.5\r\n\r\n");
  Answer a = c.Next();
  EXPECT_THAT(a.head, HasSubstr("Content-Encoding: gzip"));
  EXPECT_LT(a.body.size(), 1000u);
  c.Send("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0\r\n\r\n");
  a = c.Next();
  EXPECT_THAT(a.head, ::testing::Not(HasSubstr("Content-Encoding")));
  EXPECT_EQ(a.body.size(), 20002u);
}

TEST_F(HttpServerTest, IdleConnectionsHoldNoThread) {
  server_.reset();
  StartServer(/*threads=*/2);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 10; ++i) {
    idle.push_back(std::make_unique<Client>(port()));
    idle.back()->Send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(idle.back()->Next().status, 200);
  }
  // Ten kept-alive connections and two workers: a new client is served at once.
  Client c(port());
  c.Send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.Next(1000).body, "GET /now 0 ");
  // And the idle ones still serve.
  idle[3]->Send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(idle[3]->Next(1000).body, "GET /again 0 ");
}

// Slowloris: clients that send a request's head a byte at a time, or stop
// in the middle of it, hold connections, not workers; a head that does not
// complete in time gets 408.
TEST_F(HttpServerTest, SlowClientsHoldNoThread) {
  server_.reset();
  StartServer(/*threads=*/2, /*max_connections=*/64, /*read_timeout=*/absl::Milliseconds(800));
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(std::make_unique<Client>(port()));
    slow.back()->Send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Le");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Client c(port());
  c.Send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.Next(500).body, "GET /now 0 ");
  // One of them goes on, slowly, and is served; the rest time out.
  slow[0]->Send("ngth: 2\r\n\r\n");
  slow[0]->Send("ok");
  EXPECT_EQ(slow[0]->Next(2000).body, "POST /slow 2 ok");
  Answer late = slow[1]->Next(3000);
  EXPECT_EQ(late.status, 408);
  EXPECT_TRUE(slow[1]->Closed(3000));
}

TEST_F(HttpServerTest, ConnectionsPastTheLimitGet503) {
  server_.reset();
  StartServer(/*threads=*/2, /*max_connections=*/3);
  std::vector<std::unique_ptr<Client>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(std::make_unique<Client>(port()));
    open.back()->Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(open.back()->Next().status, 200);
  }
  Client extra(port());
  EXPECT_EQ(extra.Next().status, 503);
  open.clear();
  // Once they are closed, connections are taken again.
  for (int tries = 0; tries < 50; ++tries) {
    Client again(port());
    again.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    if (again.Next().status == 200) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "the server never took a connection again";
}

TEST_F(HttpServerTest, StopsWithConnectionsOpen) {
  Client idle(port());
  idle.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(idle.Next().status, 200);
  Client partial(port());
  partial.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = std::chrono::steady_clock::now();
  server_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(idle.Closed(2000));
}

}  // namespace
}  // namespace npu::http
