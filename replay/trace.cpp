#include "replay/trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "plugins/framework.h"

namespace fleetsched::replay {

namespace {

constexpr int32_t kMaxGpuCount = plugins::kMaxGpusPerNode;

// Splits one CSV line on commas. The trace has no quoted fields; a quote is reported, not
// half-parsed.
bool splitLine(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  if (line.find('"') != std::string_view::npos) return false;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

class Reader {
 public:
  Reader(std::string_view text, std::string_view source, std::string& error)
      : text_(text), source_(source), error_(error) {}

  // Reads the header and maps each wanted column to its position; false if one is missing.
  bool header(std::initializer_list<std::string_view> required, std::initializer_list<std::string_view> optional) {
    std::string_view line;
    if (!next(line)) return fail("empty file, expected a header line");
    if (!splitLine(line, header_)) return fail("quoted fields are not supported");
    for (auto name : required) {
      if (column(name) < 0) return fail("header lacks column \"" + std::string(name) + "\"");
    }
    (void)optional;
    return true;
  }

  int column(std::string_view name) const {
    for (size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == name) return static_cast<int>(i);
    }
    return -1;
  }

  // Next non-empty row, split; false at the end or on error (error() tells which).
  bool row(std::vector<std::string_view>& fields) {
    std::string_view line;
    while (next(line)) {
      if (line.empty()) continue;
      if (!splitLine(line, fields)) return fail("quoted fields are not supported");
      if (fields.size() != header_.size()) {
        return fail("expected " + std::to_string(header_.size()) + " fields, found " + std::to_string(fields.size()));
      }
      return true;
    }
    return false;
  }

  bool integer(std::string_view field, std::string_view column, int64_t& out) {
    const char* end = field.data() + field.size();
    auto [ptr, ec] = std::from_chars(field.data(), end, out);
    if (field.empty() || ec != std::errc() || ptr != end) {
      return fail("column " + std::string(column) + ": \"" + std::string(field) + "\" is not an integer");
    }
    return true;
  }

  bool fail(const std::string& what) {
    error_ = std::string(source_) + ":" + std::to_string(line_) + ": " + what;
    failed_ = true;
    return false;
  }
  bool failed() const { return failed_; }

 private:
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_;
    return true;
  }

  std::string_view text_;
  std::string_view source_;
  std::string& error_;
  std::vector<std::string_view> header_;
  size_t pos_ = 0;
  int line_ = 0;
  bool failed_ = false;
};

bool readFile(const std::string& path, std::string& text, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  text = std::move(buf).str();
  return true;
}

}  // namespace

bool parseNodeList(std::string_view text, std::string_view source, std::vector<NodeRow>& out, std::string& error) {
  Reader r(text, source, error);
  if (!r.header({"sn", "cpu_milli", "memory_mib", "gpu", "model"}, {})) return false;
  const int cSn = r.column("sn"), cCpu = r.column("cpu_milli"), cMem = r.column("memory_mib"),
            cGpu = r.column("gpu"), cModel = r.column("model");
  std::vector<std::string_view> f;
  while (r.row(f)) {
    NodeRow n;
    int64_t gpu = 0;
    n.name = std::string(f[cSn]);
    if (n.name.empty()) return r.fail("empty node name");
    if (!r.integer(f[cCpu], "cpu_milli", n.milliCpu) || !r.integer(f[cMem], "memory_mib", n.memoryMiB) ||
        !r.integer(f[cGpu], "gpu", gpu)) {
      return false;
    }
    if (n.milliCpu < 0 || n.memoryMiB < 0) return r.fail("negative capacity");
    if (gpu < 0 || gpu > kMaxGpuCount) return r.fail("gpu " + std::to_string(gpu) + " outside 0.." + std::to_string(kMaxGpuCount));
    n.gpuCount = static_cast<int32_t>(gpu);
    n.gpuModel = std::string(f[cModel]);
    if (n.gpuCount > 0 && n.gpuModel.empty()) return r.fail("node with GPUs but no model");
    out.push_back(std::move(n));
  }
  return !r.failed();
}

bool parsePodList(std::string_view text, std::string_view source, std::vector<PodRow>& out, std::string& error) {
  Reader r(text, source, error);
  if (!r.header({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, {"gpu_spec"})) return false;
  const int cName = r.column("name"), cCpu = r.column("cpu_milli"), cMem = r.column("memory_mib"),
            cGpu = r.column("num_gpu"), cMilli = r.column("gpu_milli"), cSpec = r.column("gpu_spec");
  std::vector<std::string_view> f;
  while (r.row(f)) {
    PodRow p;
    int64_t gpu = 0, milli = 0;
    p.name = std::string(f[cName]);
    if (p.name.empty()) return r.fail("empty pod name");
    if (!r.integer(f[cCpu], "cpu_milli", p.milliCpu) || !r.integer(f[cMem], "memory_mib", p.memoryMiB) ||
        !r.integer(f[cGpu], "num_gpu", gpu) || !r.integer(f[cMilli], "gpu_milli", milli)) {
      return false;
    }
    if (p.milliCpu < 0 || p.memoryMiB < 0) return r.fail("negative request");
    if (gpu < 0 || gpu > kMaxGpuCount) return r.fail("num_gpu " + std::to_string(gpu) + " outside 0.." + std::to_string(kMaxGpuCount));
    if (milli < 0) return r.fail("negative gpu_milli");
    p.gpuCount = static_cast<int32_t>(gpu);
    // The published converter clamps shares above one GPU; a CPU-only pod has no share.
    p.gpuMilli = p.gpuCount == 0 ? 0 : static_cast<int32_t>(std::min<int64_t>(milli, plugins::kMilliPerGpu));
    if (p.gpuCount > 0 && p.gpuMilli == 0) return r.fail("num_gpu > 0 with gpu_milli 0");
    if (p.gpuCount > 1 && p.gpuMilli < plugins::kMilliPerGpu) return r.fail("a GPU share below 1000 needs num_gpu 1");
    if (cSpec >= 0 && f[cSpec] != "nan") p.gpuSpec = std::string(f[cSpec]);
    out.push_back(std::move(p));
  }
  return !r.failed();
}

bool readNodeList(const std::string& path, std::vector<NodeRow>& out, std::string& error) {
  std::string text;
  return readFile(path, text, error) && parseNodeList(text, path, out, error);
}

bool readPodList(const std::string& path, std::vector<PodRow>& out, std::string& error) {
  std::string text;
  return readFile(path, text, error) && parsePodList(text, path, out, error);
}

}  // namespace fleetsched::replay
