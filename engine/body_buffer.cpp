#include "engine/body_buffer.h"

#include <cstring>

namespace fleetsched::engine {

void BodyBuffer::reserve(size_t n) {
  if (n <= capacity_) return;
  std::unique_ptr<char[]> bigger(new char[n + kBodyPadding]);
  if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  capacity_ = n;
}

size_t BodyBuffer::append(const char* data, size_t len) {
  if (data_ != nullptr && data == data_.get() + size_ && size_ + len <= capacity_) {
    size_ += len;  // read into place (Server reads Content-Length bodies straight here)
    return 0;
  }
  if (size_ + len > capacity_) {
    size_t grown = capacity_ < 4096 ? 4096 : capacity_ * 2;
    reserve(grown < size_ + len ? size_ + len : grown);
  }
  std::memcpy(data_.get() + size_, data, len);
  size_ += len;
  return len;
}

void BodyBuffer::clear(size_t keepCapacity) {
  size_ = 0;
  if (capacity_ > keepCapacity) {
    data_.reset();
    capacity_ = 0;
  }
}

void BodyBuffer::seal() {
  if (!data_) reserve(0 + 1);
  std::memset(data_.get() + size_, 0, kBodyPadding);
}

}  // namespace fleetsched::engine
