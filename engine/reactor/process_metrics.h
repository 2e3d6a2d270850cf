// The process's own resource use on /metrics, as Prometheus' client libraries export it (here
// with the fleetsched_ prefix every series carries): resident memory, CPU seconds, open file
// descriptors read from /proc/self when /metrics is rendered, the start time once.
#pragma once

#include <cstdint>

#include "engine/reactor/metrics.h"

namespace fleetsched::engine {

// The process's resident memory from /proc/self/statm, in bytes; 0 when it cannot be read.
uint64_t residentMemoryBytes();

class ProcessMetrics {
 public:
  explicit ProcessMetrics(Metrics& metrics);
  // Reads /proc/self into the gauges; a file that cannot be read leaves its gauge as it was.
  void update();

 private:
  Gauge& residentBytes_;
  Gauge& cpuSeconds_;
  Gauge& openFds_;
  Gauge& startTime_;
};

}  // namespace fleetsched::engine
