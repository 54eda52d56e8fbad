// The files of a model repository, read without leaving it. Every path is
// relative to the repository's root (its realpath, taken once), and resolves
// under it: a symbolic link (a model folder, a version folder, a model file)
// whose target lies outside the root is refused by name, and its target is
// never opened. Reads go through openat2(RESOLVE_BENEATH), so the kernel holds
// the boundary even against a link swapped in between the check and the read
// (kernels without openat2 fall back to the realpath check, then O_NOFOLLOW).
//
// `follow_symlinks` (--model_repository_follow_symlinks) turns the boundary
// off: links are followed wherever they point. Whoever can write into the
// repository can then make the server read, plan and report on any file the
// server's user may read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npu::core {

class RepositoryFiles {
 public:
  static absl::StatusOr<std::unique_ptr<RepositoryFiles>> Open(const std::string& dir, bool follow_symlinks);
  ~RepositoryFiles();
  RepositoryFiles(const RepositoryFiles&) = delete;
  RepositoryFiles& operator=(const RepositoryFiles&) = delete;

  const std::string& root() const { return root_; }  // the realpath
  bool follows_symlinks() const { return follow_; }
  // The folder as given, then /relative: what messages name.
  std::string PathOf(const std::string& relative) const;

  enum class Kind { kMissing, kFolder, kFile, kOther, kOutside };
  // What `relative` is, through its links; kOutside when it resolves outside
  // the root (never with follow_symlinks).
  Kind Lookup(const std::string& relative) const;
  // The names in folder `relative` (not "." or ".."), sorted; empty when it
  // cannot be listed or lies outside.
  std::vector<std::string> List(const std::string& relative) const;
  // The bytes of file `relative`: NOT_FOUND when absent, PERMISSION_DENIED
  // naming it when it resolves outside the root, INVALID_ARGUMENT when it is
  // not a regular file or holds more than `max_bytes`.
  absl::StatusOr<std::string> Read(const std::string& relative, uint64_t max_bytes) const;

  // What refusing `relative` says (it leaves the repository).
  std::string Outside(const std::string& relative) const;

 private:
  RepositoryFiles(std::string shown, std::string root, int root_fd, bool follow)
      : shown_(std::move(shown)), root_(std::move(root)), root_fd_(root_fd), follow_(follow) {}
  std::string RealPathOf(const std::string& relative) const;
  int OpenBeneath(const std::string& relative) const;  // a descriptor or -errno

  const std::string shown_;
  const std::string root_;
  const int root_fd_;
  const bool follow_;
};

}  // namespace npu::core
