// BodyBuffer: a growable byte buffer that always keeps kBodyPadding readable (zeroed) bytes after
// its contents, so simdjson can parse a request body in place without copying it again.
// Capacity is kept across clear() so a connection's steady state allocates nothing.
//
// The contents may start past the allocation's first byte: a read that brought a request's head
// and body into the buffer keeps the body where it landed (adopt()), after the head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "engine/reactor/handler.h"

namespace fleetsched::engine {

class BodyBuffer {
 public:
  BodyBuffer() = default;
  // A moved-from buffer is empty and owns nothing.
  BodyBuffer(BodyBuffer&& o) noexcept { *this = std::move(o); }
  BodyBuffer& operator=(BodyBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    begin_ = std::exchange(o.begin_, 0);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    return *this;
  }

  // Appends len bytes. Bytes already in place (data == tail(), written there by a read into
  // the buffer) are only counted, not copied. Returns how many bytes were copied (0 or len).
  size_t append(const char* data, size_t len);
  // Where the next byte goes; at least capacity() - size() writable bytes follow.
  char* tail() { return data_.get() + begin_ + size_; }
  // Makes room for at least n bytes of content without further allocation (a new allocation
  // holds the contents from its first byte).
  void reserve(size_t n);
  // Drops the contents; keeps the allocation unless it is larger than keepCapacity.
  void clear(size_t keepCapacity = SIZE_MAX);
  // Zeroes the padding after the current contents (call once the body is complete).
  void seal();

  // The whole allocation, for reading into: [allocation(), allocation() + allocated()).
  char* allocation() { return data_.get(); }
  size_t allocated() const { return begin_ + capacity_; }
  bool holds(const char* p) const { return data_ != nullptr && p >= data_.get() && p <= data_.get() + begin_ + capacity_; }
  // Makes the contents start at `at`, a byte of this empty buffer's allocation already written
  // (the rest of the allocation after it is the room). Returns false, changing nothing, when
  // the buffer is not empty or `at` is not in its allocation.
  bool adopt(const char* at);

  size_t size() const { return size_; }
  // Room for contents from where they start.
  size_t capacity() const { return capacity_; }
  const char* data() const { return data_.get() + begin_; }
  std::string_view view() const { return {data_.get() ? data() : "", size_}; }

 private:
  std::unique_ptr<char[]> data_;
  size_t begin_ = 0;     // where the contents start in the allocation
  size_t size_ = 0;
  size_t capacity_ = 0;  // usable bytes from begin_; the allocation is begin_ + capacity_ + kBodyPadding
};

}  // namespace fleetsched::engine
