// BodyBuffer: a growable byte buffer that always keeps kBodyPadding readable (zeroed) bytes after
// its contents, so simdjson can parse a request body in place without copying it again.
// Capacity is kept across clear() so a connection's steady state allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "engine/handler.h"

namespace fleetsched::engine {

class BodyBuffer {
 public:
  BodyBuffer() = default;
  BodyBuffer(BodyBuffer&&) noexcept = default;
  BodyBuffer& operator=(BodyBuffer&&) noexcept = default;

  // Appends len bytes. Bytes already in place (data == tail(), written there by a read into
  // the buffer) are only counted, not copied. Returns how many bytes were copied (0 or len).
  size_t append(const char* data, size_t len);
  // Where the next byte goes; at least capacity() - size() writable bytes follow.
  char* tail() { return data_.get() + size_; }
  // Makes room for at least n bytes of content without further allocation.
  void reserve(size_t n);
  // Drops the contents; keeps the allocation unless it is larger than keepCapacity.
  void clear(size_t keepCapacity = SIZE_MAX);
  // Zeroes the padding after the current contents (call once the body is complete).
  void seal();

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  const char* data() const { return data_.get(); }
  std::string_view view() const { return {data_.get() ? data_.get() : "", size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;  // usable bytes; the allocation is capacity_ + kBodyPadding
};

}  // namespace fleetsched::engine
