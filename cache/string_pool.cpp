#include "cache/string_pool.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

namespace fleetsched::cache {

Interner::Interner() { intern(""); }

uint32_t Interner::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(strings_.size());
  const std::string& kept = strings_.emplace_back(s);
  ids_.emplace(std::string_view(kept), id);
  return id;
}

uint32_t Interner::find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? kNotFound : it->second;
}

StringTable::StringTable()
    : pages_(std::make_unique<std::unique_ptr<Block*[]>[]>(kMaxPages)), slots_(16), mask_(15) {}

StringTable::~StringTable() {
  for (uint32_t p = 0; p < kMaxPages && pages_[p]; ++p) {
    for (uint32_t i = 0; i < kPageSize; ++i) ::operator delete(pages_[p][i]);
  }
}

void StringTable::put(uint32_t hash, uint32_t id) {
  for (uint32_t i = hash & mask_;; i = (i + 1) & mask_) {
    if (slots_[i].id == UINT32_MAX) {
      slots_[i] = {hash, id};
      return;
    }
  }
}

void StringTable::grow() {
  std::vector<Slot> old(std::move(slots_));
  mask_ = mask_ * 2 + 1;
  slots_.assign(mask_ + 1, Slot{});
  for (const Slot& s : old) {
    if (s.id != UINT32_MAX) put(s.hash, s.id);
  }
}

uint32_t StringTable::acquire(std::string_view s) {
  const auto h = static_cast<uint32_t>(std::hash<std::string_view>{}(s));
  for (uint32_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id == UINT32_MAX) break;
    if (slot.hash == h && str(slot.id) == s) {
      ++block(slot.id)->refs;
      return slot.id;
    }
  }
  if ((live_ + 1) * 2 > mask_ + 1) grow();
  uint32_t id;
  if (!freeIds_.empty()) {
    id = freeIds_.back();
    freeIds_.pop_back();
  } else {
    id = nextId_++;
    const uint32_t page = id >> kPageShift;
    if (page >= kMaxPages) {
      // Millions of distinct label strings is far beyond any cluster this serves; continuing
      // would corrupt published records.
      std::fputs("fleetsched: cache string table full\n", stderr);
      std::abort();
    }
    if (!pages_[page]) pages_[page] = std::make_unique<Block*[]>(kPageSize);
  }
  auto* b = static_cast<Block*>(::operator new(sizeof(Block) + s.size()));
  b->refs = 1;
  b->size = static_cast<uint32_t>(s.size());
  if (!s.empty()) std::memcpy(b->text(), s.data(), s.size());
  block(id) = b;
  put(h, id);
  ++live_;
  return id;
}

void StringTable::addRef(uint32_t id) { ++block(id)->refs; }

void StringTable::release(uint32_t id) {
  Block*& b = block(id);
  assert(b != nullptr && b->refs > 0 && "release of a string the table does not hold");
  if (--b->refs != 0) return;
  const auto h = static_cast<uint32_t>(std::hash<std::string_view>{}(std::string_view(b->text(), b->size)));
  uint32_t i = h & mask_;
  while (slots_[i].id != id) i = (i + 1) & mask_;
  // Backward-shift deletion: move later entries of the probe run into the hole unless their home
  // slot lies (cyclically) between the hole and their position.
  uint32_t hole = i;
  for (uint32_t j = (i + 1) & mask_; slots_[j].id != UINT32_MAX; j = (j + 1) & mask_) {
    const uint32_t home = slots_[j].hash & mask_;
    const bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!between) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  ::operator delete(b);
  b = nullptr;
  freeIds_.push_back(id);
  --live_;
}

std::string_view SharedStrings::acquire(std::string_view s) {
  if (auto it = map_.find(s); it != map_.end()) {
    ++it->second->refs;
    return it->first;
  }
  auto entry = std::make_unique<Entry>();
  entry->refs = 1;
  entry->text.assign(s);
  // The key views the entry's own text: the unique_ptr keeps it in place when the map rehashes.
  std::string_view key(entry->text);
  map_.emplace(key, std::move(entry));
  return key;
}

void SharedStrings::release(std::string_view s) {
  auto it = map_.find(s);
  assert(it != map_.end() && "release of a string the pool does not hold");
  if (it == map_.end()) return;
  if (--it->second->refs == 0) map_.erase(it);
}

}  // namespace fleetsched::cache
