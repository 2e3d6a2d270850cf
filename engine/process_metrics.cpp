#include "engine/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace fleetsched::engine {

ProcessMetrics::ProcessMetrics(Metrics& metrics)
    : residentBytes_(metrics.gauge("process_resident_memory_bytes", "Resident memory size in bytes")),
      cpuSeconds_(metrics.gauge("process_cpu_seconds", "User and system CPU time spent, in seconds")),
      openFds_(metrics.gauge("process_open_fds", "Open file descriptors")),
      startTime_(metrics.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds")) {
  update();
}

void ProcessMetrics::update() {
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  {
    std::ifstream statm("/proc/self/statm");
    unsigned long long size = 0, resident = 0;
    if (statm >> size >> resident) residentBytes_.set(static_cast<double>(resident) * page);
  }
  std::ifstream statFile("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(statFile)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3,
  // utime 14, stime 15, starttime 22 (proc(5)).
  const size_t close = stat.rfind(')');
  if (close != std::string::npos && tick > 0) {
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0, start = 0;
    for (int i = 3; rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
      if (i == 22) {
        start = std::stoull(field);
        break;
      }
    }
    cpuSeconds_.set(static_cast<double>(utime + stime) / tick);
    // starttime counts clock ticks since boot: add the boot time (btime in /proc/stat).
    std::ifstream procStat("/proc/stat");
    std::string key;
    unsigned long long btime = 0;
    while (procStat >> key) {
      if (key == "btime" && procStat >> btime) break;
    }
    if (btime != 0) startTime_.set(static_cast<double>(btime) + static_cast<double>(start) / tick);
  }
  if (DIR* d = ::opendir("/proc/self/fd")) {
    int n = 0;
    while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
    openFds_.set(n - 1);  // the directory stream's own descriptor
  }
}

}  // namespace fleetsched::engine
