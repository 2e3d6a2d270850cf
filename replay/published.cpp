#include "replay/published.h"

#include <cstdlib>
#include <vector>

#include "replay/published_allocation_csv.h"

namespace fleetsched::replay {

namespace {

std::vector<PublishedAllocation> parse(std::string_view text) {
  std::vector<PublishedAllocation> rows;
  bool header = true;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (line.empty() || line.front() == '#') continue;
    if (header) {  // trace,policy,seeds,alloc_100,alloc_130
      header = false;
      continue;
    }
    std::string_view field[5];
    for (auto& f : field) {
      const size_t comma = line.find(',');
      f = line.substr(0, comma);
      line = comma == std::string_view::npos ? std::string_view{} : line.substr(comma + 1);
    }
    rows.push_back({std::string(field[0]), std::string(field[1]), std::strtod(std::string(field[3]).c_str(), nullptr),
                    std::strtod(std::string(field[4]).c_str(), nullptr)});
  }
  return rows;
}

}  // namespace

std::span<const PublishedAllocation> publishedTable() {
  static const std::vector<PublishedAllocation> table = parse(kPublishedAllocationCsv);
  return table;
}

const PublishedAllocation* findPublished(std::string_view trace, std::string_view policy) {
  for (const auto& row : publishedTable()) {
    if (row.trace == trace && row.policy == policy) return &row;
  }
  return nullptr;
}

}  // namespace fleetsched::replay
