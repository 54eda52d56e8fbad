#include "client/npz.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/npy.h"

namespace npu::client {
namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64Extra = 0x0001;
constexpr uint64_t kMaxMemberBytes = uint64_t{1} << 34;  // 16 GiB: larger is not a sane training set here

// Little-endian fields of a byte string, bounds-checked.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  bool Has(uint64_t at, uint64_t n) const { return at <= bytes_.size() && n <= bytes_.size() - at; }
  uint64_t Le(uint64_t at, int n) const {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(bytes_[at + i]);
    return v;
  }
  absl::string_view Slice(uint64_t at, uint64_t n) const { return bytes_.substr(at, n); }
  uint64_t size() const { return bytes_.size(); }

 private:
  absl::string_view bytes_;
};

// Deflate turns at most 258 bytes into a 2-bit code, so no stream inflates past
// 1032 times its size: a larger declared size is a lie told to make us allocate.
constexpr uint64_t kMaxDeflateRatio = 1032;

absl::StatusOr<std::string> Inflate(absl::string_view in, uint64_t size, const std::string& what) {
  if (size / kMaxDeflateRatio > in.size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": declares ", size, " bytes from ", in.size(),
                                                   " deflated bytes, more than deflate can produce"));
  }
  if (in.size() > std::numeric_limits<uInt>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its ", in.size(), " deflated bytes are more than read"));
  }
  std::string out(size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return absl::InternalError("zlib inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != size) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": its deflated data does not inflate to ", size, " bytes"));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, npu::v1::Tensor>> ReadNpz(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot read \"", path, "\""));
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const Reader r(bytes);
  auto bad = [&](const std::string& why) { return absl::InvalidArgumentError(absl::StrCat("\"", path, "\": ", why)); };
  // The end-of-central-directory record: the last 22 bytes, or before a comment.
  uint64_t eocd = r.size() >= 22 ? r.size() - 22 : UINT64_MAX;
  while (eocd != UINT64_MAX && r.Le(eocd, 4) != kEndOfCentralDirectory) eocd = eocd == 0 ? UINT64_MAX : eocd - 1;
  if (eocd == UINT64_MAX || r.size() - eocd > 22 + 65535) return bad("not a .npz (ZIP) file");
  const uint64_t entries = r.Le(eocd + 10, 2);
  uint64_t at = r.Le(eocd + 16, 4);
  std::map<std::string, npu::v1::Tensor> arrays;
  for (uint64_t e = 0; e < entries; ++e) {
    if (!r.Has(at, 46) || r.Le(at, 4) != kCentralHeader) return bad(absl::StrCat("ZIP directory entry ", e, " is damaged"));
    const uint64_t method = r.Le(at + 10, 2), name_len = r.Le(at + 28, 2), extra_len = r.Le(at + 30, 2),
                   comment_len = r.Le(at + 32, 2);
    uint64_t packed = r.Le(at + 20, 4), size = r.Le(at + 24, 4), local = r.Le(at + 42, 4);
    if (!r.Has(at + 46, name_len + extra_len + comment_len)) return bad(absl::StrCat("ZIP directory entry ", e, " is cut"));
    const std::string name(r.Slice(at + 46, name_len));
    // ZIP64: the fields that read 0xFFFFFFFF follow in the extra field, in this order.
    for (uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = r.Le(x, 2), len = r.Le(x + 2, 2);
      uint64_t p = x + 4;
      if (id == kZip64Extra) {
        for (uint64_t* field : {&size, &packed, &local}) {
          if (*field == 0xFFFFFFFF && p + 8 <= x + 4 + len && r.Has(p, 8)) {
            *field = r.Le(p, 8);
            p += 8;
          }
        }
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    const std::string what = absl::StrCat("\"", path, "\" member \"", name, "\"");
    if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") continue;
    if (size > kMaxMemberBytes) return bad(absl::StrCat("member \"", name, "\" is ", size, " bytes"));
    if (!r.Has(local, 30) || r.Le(local, 4) != kLocalHeader) return absl::InvalidArgumentError(what + ": no local header");
    const uint64_t data = local + 30 + r.Le(local + 26, 2) + r.Le(local + 28, 2);
    if (!r.Has(data, packed)) return absl::InvalidArgumentError(what + ": its data runs past the file");
    std::string npy;
    if (method == 0 && packed == size) {
      npy = std::string(r.Slice(data, packed));
    } else if (method == 8) {
      auto inflated = Inflate(r.Slice(data, packed), size, what);
      if (!inflated.ok()) return inflated.status();
      npy = *std::move(inflated);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(what, ": compression method ", method,
                                                     " is not read (stored or deflated, as NumPy writes)"));
    }
    auto tensor = DecodeNpy(npy, what);
    if (!tensor.ok()) return tensor.status();
    arrays[name.substr(0, name.size() - 4)] = *std::move(tensor);
  }
  return arrays;
}

}  // namespace npu::client
