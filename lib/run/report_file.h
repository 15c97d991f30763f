// A tool's --report: the JSON of its report struct (`<Tool>Report::json()`, opened by
// util/provenance.h's keys) as text, written whole under a temporary name. The caller commits it
// together with the run's other outputs, so that none of them takes its name before all are
// complete.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "util/files.h"

namespace legalnet::run {

// report.json's text: two-space indents and a last newline; a name that is not UTF-8 shows as
// U+FFFD instead of failing a finished run.
inline std::string report_text(const nlohmann::ordered_json& report) {
  return report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

inline std::unique_ptr<OutputFile> finished_report(const std::string& path, const nlohmann::ordered_json& report) {
  auto out = std::make_unique<OutputFile>(path);
  out->write(report_text(report));
  out->finish();
  return out;
}

}  // namespace legalnet::run
