// Cuts a watch stream into events. kube-apiserver writes one JSON document per line, but HTTP
// chunk boundaries fall anywhere, so bytes are buffered until a newline completes an event.
// Each complete line is handed out with simdjson's padding readable after it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace fleetsched::apiclient {

class LineSplitter {
 public:
  static constexpr size_t kPadding = 64;
  // A line longer than this is an error (a runaway stream), reported once.
  static constexpr size_t kDefaultMaxLine = 64u << 20;

  explicit LineSplitter(size_t maxLine = kDefaultMaxLine) : maxLine_(maxLine) {}

  // Feeds bytes; calls `onLine` for every complete non-empty line (without the newline; the
  // view is followed by kPadding readable bytes and is valid only during the call). Returns
  // false when a line exceeds the limit; the splitter then drops its buffer.
  bool feed(std::string_view bytes, const std::function<void(std::string_view)>& onLine);

  // Bytes of an incomplete line held back.
  size_t pending() const { return buf_.size(); }
  void reset() { buf_.clear(); }

 private:
  void emit(std::string_view line, const std::function<void(std::string_view)>& onLine);

  size_t maxLine_;
  std::string buf_;      // incomplete line carried over from earlier chunks
  std::string scratch_;  // a padded copy for lines that end inside the current chunk's tail
};

}  // namespace fleetsched::apiclient
