#include "engine/reactor/body_buffer.h"

#include <cstring>

namespace fleetsched::engine {

void BodyBuffer::reserve(size_t n) {
  if (n <= capacity_) return;
  std::unique_ptr<char[]> bigger(new char[n + kBodyPadding]);
  if (size_ > 0) std::memcpy(bigger.get(), data(), size_);
  data_ = std::move(bigger);
  begin_ = 0;
  capacity_ = n;
}

bool BodyBuffer::adopt(const char* at) {
  if (size_ != 0 || !holds(at)) return false;
  const auto offset = static_cast<size_t>(at - data_.get());
  capacity_ = begin_ + capacity_ - offset;
  begin_ = offset;
  return true;
}

size_t BodyBuffer::append(const char* data, size_t len) {
  if (data_ != nullptr && data == tail() && size_ + len <= capacity_) {
    size_ += len;  // read into place (Server reads Content-Length bodies straight here)
    return 0;
  }
  if (size_ + len > capacity_) {
    size_t grown = capacity_ < 4096 ? 4096 : capacity_ * 2;
    reserve(grown < size_ + len ? size_ + len : grown);
  }
  std::memcpy(tail(), data, len);
  size_ += len;
  return len;
}

void BodyBuffer::clear(size_t keepCapacity) {
  size_ = 0;
  capacity_ += begin_;
  begin_ = 0;
  if (capacity_ > keepCapacity) {
    data_.reset();
    capacity_ = 0;
  }
}

void BodyBuffer::seal() {
  if (!data_) reserve(0 + 1);
  std::memset(tail(), 0, kBodyPadding);
}

}  // namespace fleetsched::engine
