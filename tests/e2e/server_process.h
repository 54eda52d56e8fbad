// Starts a real npu-server binary on an ephemeral loopback port for a test,
// and stops it (SIGTERM, then wait) when it goes out of scope.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace npu::testing {

class ServerProcess {
 public:
  explicit ServerProcess(std::vector<std::string> extra_args = {}) {
    std::vector<std::string> args = {NPU_SERVER_BIN, "--listen=127.0.0.1:0", "--threads=2"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    log_path_ = "/tmp/npu-server-test-" + std::to_string(getpid()) + "-" + std::to_string(counter()++) + ".log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error(std::string("cannot start ") + argv[0]);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    // The server prints "npu-server listening on 127.0.0.1:PORT (...)" once it serves.
    FILE* f = fdopen(out[0], "r");
    char line[512];
    if (f == nullptr || std::fgets(line, sizeof line, f) == nullptr) {
      Stop();
      throw std::runtime_error("npu-server exited before listening; see " + log_path_);
    }
    std::fclose(f);
    const std::string s(line);
    const size_t colon = s.find(':', s.find("127.0.0.1"));
    port_ = std::stoi(s.substr(colon + 1));
  }

  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& log_path() const { return log_path_; }

  // SIGTERM and wait; returns the exit status (or -1 if already stopped).
  int Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return -1;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

}  // namespace npu::testing
