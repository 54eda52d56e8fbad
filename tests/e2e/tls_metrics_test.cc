// TLS (server-only and mutual) and the Prometheus endpoint, against a real
// npu-server. Certificates are made fresh by Debian's openssl for each run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <grpcpp/security/credentials.h>

#include "client/client.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

using namespace std::chrono_literals;

class CertDir {
 public:
  CertDir() {
    dir_ = std::filesystem::temp_directory_path() / ("npu_tls_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
  }
  ~CertDir() { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // A self-signed P-256 certificate for 127.0.0.1/localhost: NAME.pem, NAME.key.
  bool Make(const std::string& name) const {
    const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1"
                            " -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1"
                            " -keyout " + Path(name + ".key") + " -out " + Path(name + ".pem") + " 2>/dev/null";
    return std::system(cmd.c_str()) == 0;
  }
  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name));
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::filesystem::path dir_;
};

grpc::Status ListDevices(std::shared_ptr<grpc::ChannelCredentials> creds, const std::string& target) {
  auto stub = v1::DeviceService::NewStub(grpc::CreateChannel(target, creds));
  v1::ListDevicesResponse resp;
  return stub->ListDevices(Ctx(10s).get(), {}, &resp);
}

TEST(Tls, ServerCertificateAndMutualTls) {
  CertDir certs;
  ASSERT_TRUE(certs.Make("server"));
  ASSERT_TRUE(certs.Make("client"));
  {
    ServerProcess server({"--tls_cert=" + certs.Path("server.pem"), "--tls_key=" + certs.Path("server.key"),
                          "--log_level=off"});
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = certs.Read("server.pem");
    grpc::Status st = ListDevices(grpc::SslCredentials(ssl), server.target());
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_FALSE(ListDevices(grpc::InsecureChannelCredentials(), server.target()).ok());
    // The CLI's --tls-ca.
    const std::string cli = std::string(NPU_CLI_BIN) + " --target " + server.target() + " --tls-ca " +
                            certs.Path("server.pem") + " health > /dev/null 2>&1";
    EXPECT_EQ(std::system(cli.c_str()), 0);
  }
  {
    ServerProcess server({"--tls_cert=" + certs.Path("server.pem"), "--tls_key=" + certs.Path("server.key"),
                          "--tls_client_ca=" + certs.Path("client.pem"), "--log_level=off"});
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = certs.Read("server.pem");
    EXPECT_FALSE(ListDevices(grpc::SslCredentials(ssl), server.target()).ok()) << "no client certificate";
    ssl.pem_cert_chain = certs.Read("client.pem");
    ssl.pem_private_key = certs.Read("client.key");
    grpc::Status st = ListDevices(grpc::SslCredentials(ssl), server.target());
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
}

absl::Status ClientListDevices(const std::string& target, client::ClientOptions options) {
  options.timeout = absl::Seconds(10);
  options.retry_unavailable = false;
  auto c = client::Client::Connect(target, options);
  if (!c.ok()) return c.status();
  return (*c)->ListDevices().status();
}

// The client library and `npu` present a client certificate, and a TLS
// mismatch in either direction says what to try instead of only "Socket closed".
TEST(Tls, ClientCertificatesAndMismatchHints) {
  CertDir certs;
  ASSERT_TRUE(certs.Make("server"));
  ASSERT_TRUE(certs.Make("client"));
  ServerProcess mtls({"--tls-cert=" + certs.Path("server.pem"), "--tls-key=" + certs.Path("server.key"),
                      "--tls-client-ca=" + certs.Path("client.pem"), "--log-level=off"});
  ServerProcess plain({"--log_level=off"});

  client::ClientOptions with_cert;
  with_cert.root_cert_path = certs.Path("server.pem");
  with_cert.client_cert_path = certs.Path("client.pem");
  with_cert.client_key_path = certs.Path("client.key");
  EXPECT_TRUE(ClientListDevices(mtls.target(), with_cert).ok());

  client::ClientOptions no_cert;
  no_cert.root_cert_path = certs.Path("server.pem");
  absl::Status s = ClientListDevices(mtls.target(), no_cert);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("--tls-cert CERT.pem --tls-key KEY.pem"), std::string::npos) << s;

  s = ClientListDevices(mtls.target(), {});
  EXPECT_NE(s.message().find("if it serves TLS, pass --tls-ca"), std::string::npos) << s;

  s = ClientListDevices(plain.target(), with_cert);
  EXPECT_NE(s.message().find("does not speak TLS"), std::string::npos) << s;

  client::ClientOptions key_only;
  key_only.client_key_path = certs.Path("client.key");
  EXPECT_EQ(client::Client::Connect(mtls.target(), key_only).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string cli = std::string(NPU_CLI_BIN) + " --target " + mtls.target() + " --tls-ca " +
                          certs.Path("server.pem") + " --tls-cert " + certs.Path("client.pem") + " --tls-key " +
                          certs.Path("client.key") + " health > /dev/null 2>&1";
  EXPECT_EQ(std::system(cli.c_str()), 0);
}

// Plain HTTP/1.0 GET over loopback: enough for a scrape, no client library.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) response.append(buf, n);
  close(fd);
  return response;
}

// The server logs "metrics on http://127.0.0.1:PORT/metrics" once it serves them.
int MetricsPort(const ServerProcess& server) {
  const std::regex line("metrics on http://127\\.0\\.0\\.1:([0-9]+)/metrics");
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(server.log_path());
    std::stringstream text;
    text << in.rdbuf();
    std::smatch m;
    const std::string s = text.str();
    if (std::regex_search(s, m, line)) return std::stoi(m[1]);
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

TEST(Metrics, PrometheusEndpointCountsRequestsAndReportsDevices) {
  ServerProcess server({"--metrics_listen=127.0.0.1:0", "--log_level=off"});
  const int port = MetricsPort(server);
  ASSERT_GT(port, 0);
  auto channel = TestChannel(server.target());
  auto runtime = v1::RuntimeService::NewStub(channel);
  v1::RunResponse resp;
  ASSERT_TRUE(runtime->Run(Ctx().get(), AddRun(), &resp).ok());
  v1::RunRequest bad = AddRun();
  bad.mutable_inputs()->RemoveLast();
  EXPECT_FALSE(runtime->Run(Ctx().get(), bad, &resp).ok());

  const std::string scrape = HttpGet(port, "/metrics");
  ASSERT_NE(scrape.find("200 OK"), std::string::npos) << scrape;
  for (const char* expected : {
           "npu_requests_total{method=\"Run\",status=\"OK\"} 1\n",
           "npu_requests_total{method=\"Run\",status=\"INVALID_ARGUMENT\"} 1\n",
           "npu_request_duration_seconds_bucket{method=\"Run\",status=\"OK\",le=\"+Inf\"} 1\n",
           "npu_request_duration_seconds_count{method=\"Run\",status=\"OK\"} 1\n",
           "npu_device_queue_depth{device=\"npu:0\"} 0\n",
           "npu_device_memory_used_bytes{device=\"npu:0\"} 0\n",
           "npu_device_runs_total{device=\"npu:0\"} 1\n",
           "npu_device_unit_utilization{device=\"npu:0\",unit=\"vector\"}",
           "npu_runs_in_flight 0\n",
       }) {
    EXPECT_NE(scrape.find(expected), std::string::npos) << "missing: " << expected << "\n" << scrape;
  }
  EXPECT_NE(HttpGet(port, "/nope").find("404"), std::string::npos);
}

}  // namespace
}  // namespace npu::testing
