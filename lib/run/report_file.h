// A tool's --report: its JSON (opened by util/provenance.h's keys) written whole under a
// temporary name. The caller commits it together with the run's other outputs, so that none of
// them takes its name before all are complete.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "util/files.h"

namespace legalnet::run {

inline std::unique_ptr<OutputFile> finished_report(const std::string& path, const nlohmann::ordered_json& report) {
  auto out = std::make_unique<OutputFile>(path);
  out->write(report.dump(2) + "\n");
  out->finish();
  return out;
}

}  // namespace legalnet::run
