#include "apiclient/line_splitter.h"

#include <cstring>

namespace fleetsched::apiclient {

void LineSplitter::emit(std::string_view line, const std::function<void(std::string_view)>& onLine) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return;
  // simdjson reads up to kPadding bytes past the end; copy into a padded scratch buffer rather
  // than relying on what follows the line in the caller's chunk.
  scratch_.assign(line.data(), line.size());
  scratch_.append(kPadding, '\0');
  onLine(std::string_view(scratch_.data(), line.size()));
}

bool LineSplitter::feed(std::string_view bytes, const std::function<void(std::string_view)>& onLine) {
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) {
      if (buf_.size() + bytes.size() > maxLine_) {
        buf_.clear();
        return false;
      }
      buf_.append(bytes.data(), bytes.size());
      return true;
    }
    size_t n = static_cast<const char*>(nl) - bytes.data();
    if (buf_.empty()) {
      emit(bytes.substr(0, n), onLine);
    } else {
      if (buf_.size() + n > maxLine_) {
        buf_.clear();
        return false;
      }
      buf_.append(bytes.data(), n);
      std::string line;
      line.swap(buf_);
      emit(line, onLine);
    }
    bytes.remove_prefix(n + 1);
  }
  return true;
}

}  // namespace fleetsched::apiclient
