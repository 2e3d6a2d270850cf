#include "cache/string_pool.h"

#include <cassert>

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
