#include "server/core/repository_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::core {
namespace {

// realpath(3), or empty (errno set) when it cannot resolve.
std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return "";
  return resolved;
}

bool Under(const std::string& path, const std::string& root) {
  return path == root || (absl::StartsWith(path, root) && (root == "/" || path[root.size()] == '/'));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RepositoryFiles>> RepositoryFiles::Open(const std::string& dir, bool follow_symlinks) {
  const std::string root = RealPath(dir);
  struct stat st;
  if (root.empty() || ::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat("--model_repository: ", graph::Quoted(dir), " is not a folder"));
  }
  const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("--model_repository: cannot open ", graph::Quoted(dir), ": ", std::strerror(errno)));
  }
  std::string shown = dir;
  while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
  return std::unique_ptr<RepositoryFiles>(new RepositoryFiles(shown, root, fd, follow_symlinks));
}

RepositoryFiles::~RepositoryFiles() { ::close(root_fd_); }

std::string RepositoryFiles::PathOf(const std::string& relative) const {
  return relative.empty() ? shown_ : absl::StrCat(shown_, "/", relative);
}

std::string RepositoryFiles::RealPathOf(const std::string& relative) const {
  return RealPath(relative.empty() ? root_ : absl::StrCat(root_, "/", relative));
}

std::string RepositoryFiles::Outside(const std::string& relative) const {
  return absl::StrCat(PathOf(relative),
                      " is a symbolic link that leaves the model repository; it is not read "
                      "(--model_repository_follow_symlinks follows links, at a risk: docs/serving.md)");
}

RepositoryFiles::Kind RepositoryFiles::Lookup(const std::string& relative) const {
  const std::string resolved = RealPathOf(relative);
  if (resolved.empty()) return errno == ENOENT || errno == ENOTDIR ? Kind::kMissing : Kind::kOther;
  if (!follow_ && !Under(resolved, root_)) return Kind::kOutside;
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0) return Kind::kMissing;
  if (S_ISDIR(st.st_mode)) return Kind::kFolder;
  return S_ISREG(st.st_mode) ? Kind::kFile : Kind::kOther;
}

std::vector<std::string> RepositoryFiles::List(const std::string& relative) const {
  std::vector<std::string> names;
  if (Lookup(relative) != Kind::kFolder) return names;
  DIR* dir = ::opendir(RealPathOf(relative).c_str());
  if (dir == nullptr) return names;
  while (const dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

int RepositoryFiles::OpenBeneath(const std::string& relative) const {
  if (follow_) {
    const int fd = ::open(absl::StrCat(root_, "/", relative).c_str(), O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, root_fd_, relative.c_str(), &how, sizeof(how));
  if (fd >= 0) return static_cast<int>(fd);
  if (errno != ENOSYS) return errno == EXDEV || errno == ELOOP ? -EXDEV : -errno;
  // No openat2: check where it resolves, then open that path without following a last link.
  if (Lookup(relative) == Kind::kOutside) return -EXDEV;
  const std::string resolved = RealPathOf(relative);
  const int plain = ::open(resolved.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  return plain >= 0 ? plain : -errno;
}

absl::StatusOr<std::string> RepositoryFiles::Read(const std::string& relative, uint64_t max_bytes) const {
  const int fd = OpenBeneath(relative);
  if (fd == -EXDEV) return absl::PermissionDeniedError(Outside(relative));
  if (fd == -ENOENT) return absl::NotFoundError(absl::StrCat(PathOf(relative), " does not exist"));
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", PathOf(relative), ": ", std::strerror(-fd)));
  std::string bytes;
  absl::Status status;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(PathOf(relative), " is not a regular file"));
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat(PathOf(relative), " is ", st.st_size, " bytes; the limit is ", max_bytes));
  } else {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got != bytes.size()) status = absl::DataLossError(absl::StrCat(PathOf(relative), " changed while read"));
  }
  ::close(fd);
  if (!status.ok()) return status;
  return bytes;
}

}  // namespace npu::core
