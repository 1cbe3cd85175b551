// The `latest` pointer file: three lines, the last one a checksum of the others.
#include "checkpoint/latest_file.h"

#include <algorithm>

#include "io/checksum.h"
#include "checkpoint/manifest.h"

namespace zt {

namespace {

constexpr size_t kTrailer = 22;  // "xxh3 " + 16 hex digits + '\n'

}  // namespace

bool valid_tag(const std::string& tag) {
  if (tag.empty() || tag.size() > 200 || tag[0] == '.') return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

std::string latest_to_text(const LatestPointer& p) {
  const std::string body = p.tag + "\nmanifest " + p.manifest_checksum + "\n";
  return body + "xxh3 " + checksum_hex(body.data(), body.size()) + "\n";
}

StatusOr<LatestPointer> parse_latest(const std::string& text, const std::string& label) {
  auto bad = [&label](const std::string& what) { return Status::Corruption(label + ": " + what); };
  if (text.size() > kMaxLatestBytes) return bad("is " + std::to_string(text.size()) + " bytes; a latest file is a few lines");
  if (text.size() < kTrailer) return bad("is " + std::to_string(text.size()) + " bytes, too short for its checksum line");
  const std::string body = text.substr(0, text.size() - kTrailer);
  const std::string trailer = text.substr(text.size() - kTrailer);
  const std::string actual = checksum_hex(body.data(), body.size());
  const std::string expected = trailer.substr(5, 16);
  if (trailer.compare(0, 5, "xxh3 ") != 0 || trailer.back() != '\n' || !is_checksum_hex(expected)) {
    return bad("damaged checksum line (expected \"xxh3 <16 hex digits>\"); actual checksum of the contents " + actual);
  }
  if (expected != actual) {
    return bad("checksum mismatch: expected " + expected + ", actual " + actual + " (the file was modified or damaged)");
  }
  const size_t nl = body.find('\n');
  LatestPointer p;
  p.tag = body.substr(0, nl);
  const std::string rest = nl == std::string::npos ? "" : body.substr(nl + 1);
  if (!valid_tag(p.tag)) return bad("first line \"" + p.tag + "\" is not a checkpoint tag");
  if (rest.size() != 26 || rest.compare(0, 9, "manifest ") != 0 || rest.back() != '\n' ||
      !is_checksum_hex(rest.substr(9, 16))) {
    return bad("second line must be \"manifest <16 hex digits>\"");
  }
  p.manifest_checksum = rest.substr(9, 16);
  return p;
}

}  // namespace zt
