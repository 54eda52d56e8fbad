// A message's deterministic serialization (map entries sorted): the bytes a
// Graph's content hash is taken over, the same on the client that asks and the
// server that registers.
#pragma once

#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include "base/sha256.h"

namespace npu {

inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&out);
  }
  return bytes;
}

// Sha256Hex(DeterministicBytes(message)), without holding the bytes: they are
// hashed as they are written, 64 KiB at a time. A large model's serialization
// would otherwise be one allocation as big as the model, which raises glibc's
// trim threshold with it and keeps that much of a thread's heap once freed.
inline std::string DeterministicSha256Hex(const google::protobuf::MessageLite& message) {
  class HashingSink final : public google::protobuf::io::CopyingOutputStream {
   public:
    explicit HashingSink(Sha256& hash) : hash_(hash) {}
    bool Write(const void* buffer, int size) override {
      hash_.Update(absl::string_view(static_cast<const char*>(buffer), static_cast<size_t>(size)));
      return true;
    }

   private:
    Sha256& hash_;
  };
  Sha256 hash;
  HashingSink sink(hash);
  {
    google::protobuf::io::CopyingOutputStreamAdaptor raw(&sink, 64 << 10);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&out);
  }
  return hash.HexDigest();
}

}  // namespace npu
