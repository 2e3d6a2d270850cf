// String storage the cache owns on behalf of the records it publishes.
//
// Interner: a small, ever-growing vocabulary (zones, GPU models, resource names) mapped to dense
// ids. Views it returns stay valid for the interner's life, so published records may point at
// them without any reclamation.
//
// SharedStrings: reference-counted storage for strings that come and go with nodes (names,
// label keys and values, taints). Equal strings are stored once: a 5,000-node fleet repeats the
// same few dozen label keys and values, so per-node cold data is mostly views.
//
// Both are writer-side structures: only the thread that owns the cache writer calls them.
// Readers only dereference views, which never move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fleetsched::cache {

class Interner {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  Interner();  // id 0 is the empty string ("none")

  // Returns the id of `s`, adding it when new.
  uint32_t intern(std::string_view s);
  uint32_t find(std::string_view s) const;
  std::string_view name(uint32_t id) const { return strings_[id]; }
  uint32_t size() const { return static_cast<uint32_t>(strings_.size()); }

 private:
  std::deque<std::string> strings_;  // a deque never moves its elements, so views stay valid
  std::unordered_map<std::string_view, uint32_t> ids_;
};

class SharedStrings {
 public:
  SharedStrings() = default;
  SharedStrings(const SharedStrings&) = delete;
  SharedStrings& operator=(const SharedStrings&) = delete;

  // Returns a stable view equal to `s` and takes one reference to it.
  std::string_view acquire(std::string_view s);
  // Drops one reference taken by acquire(); the storage is freed with the last one. The caller
  // guarantees no reader can still see the view (the cache calls this at reclamation time).
  void release(std::string_view s);

  size_t size() const { return map_.size(); }

 private:
  struct Entry {
    uint32_t refs = 0;
    std::string text;
  };
  std::unordered_map<std::string_view, std::unique_ptr<Entry>> map_;
};

}  // namespace fleetsched::cache
