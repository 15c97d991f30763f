// Where an output came from: the tool, its build (version and git describe) and the command
// line. Every JSON a tool writes opens with these keys, and datasets carry the same strings as
// attributes: one spelling, so that files from one build compare equal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "util/version.h"

namespace legalnet {

// "0.2.0 (v0.2.0-14-gabc1234)": the release and the commit it was built from.
inline std::string tool_version() { return std::string(VERSION) + " (" + GIT_DESCRIBE + ")"; }

// {"tool", "version", "command_line"}; the caller appends its own keys.
inline nlohmann::ordered_json provenance_json(const std::string& tool, const std::string& command_line) {
  nlohmann::ordered_json j;
  j["tool"] = tool;
  j["version"] = tool_version();
  j["command_line"] = command_line;
  return j;
}

}  // namespace legalnet
