// Buffer: the bytes of a reply being written. Like a std::string that is only appended to, with
// one difference that matters for 100-500 KB extender replies: growing it leaves the new bytes
// uninitialised (std::string::resize zero-fills them, and a writer that reserves room ahead of
// its writes paid a memset of the whole reply for bytes it then overwrote). Capacity is kept
// across clear(), so a reused buffer allocates nothing in steady state.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace fleetsched::codec {

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string_view s) { append(s); }  // NOLINT(google-explicit-constructor): a value type
  Buffer(const Buffer& o) { append(o.view()); }
  Buffer& operator=(const Buffer& o) {
    if (this != &o) assign(o.view());
    return *this;
  }
  Buffer(Buffer&& o) noexcept : data_(std::move(o.data_)), size_(o.size_), capacity_(o.capacity_) {
    o.size_ = o.capacity_ = 0;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this == &o) return *this;
    data_ = std::move(o.data_);
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.size_ = o.capacity_ = 0;
    return *this;
  }
  Buffer& operator=(std::string_view s) {
    assign(s);
    return *this;
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  std::string_view view() const { return {data_ ? data_.get() : "", size_}; }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)
  std::string str() const { return std::string(view()); }
  size_t find(std::string_view s, size_t from = 0) const { return view().find(s, from); }

  // Drops the contents, keeps the allocation.
  void clear() { size_ = 0; }
  // Drops the contents and the allocation.
  void release() {
    data_.reset();
    size_ = capacity_ = 0;
  }
  void reserve(size_t n) {
    if (n > capacity_) reallocate(n);
  }
  // Sets the size to n. Bytes past the old size are left uninitialised: the caller writes them.
  void resizeUninitialized(size_t n) {
    if (n > capacity_) reallocate(n < 2 * capacity_ ? 2 * capacity_ : n);
    size_ = n;
  }

  void assign(std::string_view s) {
    size_ = 0;
    append(s);
  }
  void append(std::string_view s) {
    const size_t at = size_;
    resizeUninitialized(at + s.size());
    if (!s.empty()) std::memcpy(data_.get() + at, s.data(), s.size());
  }
  void append(size_t n, char c) {
    if (n == 0) return;  // an empty Buffer has no allocation: memset must not see its null
    const size_t at = size_;
    resizeUninitialized(at + n);
    std::memset(data_.get() + at, c, n);
  }
  void push_back(char c) {
    resizeUninitialized(size_ + 1);
    data_[size_ - 1] = c;
  }

  friend bool operator==(const Buffer& a, std::string_view b) { return a.view() == b; }
  friend std::ostream& operator<<(std::ostream& os, const Buffer& b) { return os << b.view(); }

 private:
  void reallocate(size_t n) {
    std::unique_ptr<char[]> bigger(new char[n]);  // default-initialised: no fill
    if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = n;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace fleetsched::codec
