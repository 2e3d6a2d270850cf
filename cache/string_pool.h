// String storage the cache owns on behalf of the records it publishes.
//
// Interner: a small, ever-growing vocabulary (zones, GPU models, resource names) mapped to dense
// ids. Views it returns stay valid for the interner's life, so published records may point at
// them without any reclamation.
//
// StringTable: reference-counted strings that come and go with nodes (names, label keys and
// values, taints), addressed by dense 32-bit ids so a node's ~70 labels cost 8 bytes each.
// Equal strings are stored once: a 5,000-node fleet repeats the same few dozen label keys and
// values. Readers resolve ids with str() (two loads, no lock); ids and text stay put until the
// last reference is released, which the cache does at reclamation time.
//
// SharedStrings: the same sharing for writer-only strings, handed out as views.
//
// Writer-side structures: only the thread that owns the cache writer acquires and releases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plugins/node_labels.h"

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

class StringTable final : public plugins::StringSource {
 public:
  // Live strings are capped at kMaxPages * kPageSize (4M): the directory of pages is allocated
  // once (8 KB) so readers never see it move; pages (32 KB) come as needed.
  static constexpr uint32_t kPageShift = 12;
  static constexpr uint32_t kPageSize = 1U << kPageShift;
  static constexpr uint32_t kMaxPages = 1024;

  StringTable();
  ~StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // The id of a string equal to `s`, taking one reference to it.
  uint32_t acquire(std::string_view s);
  // Takes one more reference to `id`.
  void addRef(uint32_t id);
  // Drops one reference; the string is freed and its id reused after the last one. The caller
  // guarantees no reader can still reach the id.
  void release(uint32_t id);

  std::string_view str(uint32_t id) const override {
    const Block* b = pages_[id >> kPageShift][id & (kPageSize - 1)];
    return {b->text(), b->size};
  }
  size_t size() const { return live_; }

 private:
  struct Block {
    uint32_t refs;
    uint32_t size;
    const char* text() const { return reinterpret_cast<const char*>(this + 1); }
    char* text() { return reinterpret_cast<char*>(this + 1); }
  };
  // Open addressing, linear probing, backward-shift deletion; at most half full.
  struct Slot {
    uint32_t hash = 0;
    uint32_t id = UINT32_MAX;  // UINT32_MAX: empty
  };

  Block*& block(uint32_t id) { return pages_[id >> kPageShift][id & (kPageSize - 1)]; }
  void put(uint32_t hash, uint32_t id);
  void grow();

  std::unique_ptr<std::unique_ptr<Block*[]>[]> pages_;
  uint32_t nextId_ = 0;
  std::vector<uint32_t> freeIds_;
  std::vector<Slot> slots_;
  uint32_t mask_ = 0;
  uint32_t live_ = 0;
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
