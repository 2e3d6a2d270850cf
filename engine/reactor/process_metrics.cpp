#include "engine/reactor/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace fleetsched::engine {
namespace {

// utime, stime and starttime (clock ticks) from /proc/self/stat: fields 14, 15 and 22 of
// proc(5), counted past the command name, which is in parentheses and may hold spaces.
bool readStat(uint64_t& utime, uint64_t& stime, uint64_t& start) {
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  if (!(rest >> state)) return false;  // field 3
  for (int field = 4; field <= 22; ++field) {
    uint64_t v = 0;
    if (!(rest >> v)) return false;
    if (field == 14) utime = v;
    if (field == 15) stime = v;
    if (field == 22) start = v;
  }
  return true;
}

double ticksPerSecond() { return static_cast<double>(::sysconf(_SC_CLK_TCK)); }

}  // namespace

ProcessMetrics::ProcessMetrics(Metrics& metrics)
    : residentBytes_(metrics.gauge("process_resident_memory_bytes", "Resident memory size in bytes")),
      cpuSeconds_(metrics.gauge("process_cpu_seconds", "User and system CPU time spent, in seconds")),
      openFds_(metrics.gauge("process_open_fds", "Open file descriptors")),
      startTime_(metrics.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds")) {
  // The start time does not change: read once. starttime counts clock ticks since boot, btime
  // in /proc/stat is the boot time.
  std::ifstream procStat("/proc/stat");
  std::string key;
  uint64_t btime = 0, utime = 0, stime = 0, start = 0;
  while (procStat >> key) {
    if (key == "btime" && procStat >> btime) break;
  }
  if (btime != 0 && ticksPerSecond() > 0 && readStat(utime, stime, start)) {
    startTime_.set(static_cast<double>(btime) + static_cast<double>(start) / ticksPerSecond());
  }
  update();
}

uint64_t residentMemoryBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void ProcessMetrics::update() {
  if (const uint64_t resident = residentMemoryBytes()) residentBytes_.set(static_cast<double>(resident));
  uint64_t utime = 0, stime = 0, start = 0;
  if (ticksPerSecond() > 0 && readStat(utime, stime, start)) {
    cpuSeconds_.set(static_cast<double>(utime + stime) / ticksPerSecond());
  }
  if (DIR* d = ::opendir("/proc/self/fd")) {
    int n = 0;
    while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
    openFds_.set(n - 1);  // the directory stream's own descriptor
  }
}

}  // namespace fleetsched::engine
