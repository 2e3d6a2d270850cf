// The published allocation of the FGD paper's artifact (replay/published_allocation.csv, built
// into the binary): per trace and baseline policy, the mean GPU allocation (%) over seeds 42-51
// at 100 % and 130 % arrived workload. Reference values the replay is compared and tested
// against; nothing here is measured by fleetsched.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace fleetsched::replay {

struct PublishedAllocation {
  std::string trace;   // "default", "cpu050", ... (the pod list's name without openb_pod_list_)
  std::string policy;  // the replay's policy name: random, dotprod, clustering, packing, bestfit, fgd
  double at100 = 0;
  double at130 = 0;
};

// Every row of the table, in file order.
std::span<const PublishedAllocation> publishedTable();

// The row for (trace, policy), or nullptr.
const PublishedAllocation* findPublished(std::string_view trace, std::string_view policy);

}  // namespace fleetsched::replay
