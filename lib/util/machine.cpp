#include "util/machine.h"

#include <fmt/core.h>
#include <sched.h>

#include <fstream>
#include <sstream>

namespace legalnet {
namespace {

// The value of /proc/cpuinfo's first line that starts with `key`.
std::string cpuinfo_field(const std::string& key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind(key, 0) == 0) {
      const size_t value = line.find_first_not_of(" \t", line.find(':') + 1);
      return value == std::string::npos ? "" : line.substr(value);
    }
  return "";
}

}  // namespace

std::string cpu_model_name() { return cpuinfo_field("model name"); }

std::string cpu_description() {
  const std::string flags = fmt::format(" {} ", cpuinfo_field("flags"));
  std::string isa;
  for (const char* flag : {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16"})
    if (flags.find(fmt::format(" {} ", flag)) != std::string::npos)
      isa += fmt::format("{}{}", isa.empty() ? "" : " ", flag);
  cpu_set_t set;
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  const std::string model = cpu_model_name();
  std::ostringstream s;
  s << (model.empty() ? "an unnamed CPU" : model) << " (" << (isa.empty() ? "no AVX2" : isa) << ")";
  if (cores > 0) s << ", " << cores << (cores == 1 ? " core" : " cores");
  return s.str();
}

}  // namespace legalnet
