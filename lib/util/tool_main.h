// What every tool's main shares: the command line as one string for provenance, and the
// mapping of legalnet::Error to one line on stderr and exit status 1.
#pragma once

#include <fmt/core.h>

#include <string>

#include "util/error.h"

namespace legalnet {

inline std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// Runs fn() and returns its exit status, or prints "<tool>: <error>" and returns 1.
template <class Fn>
int report_errors(const char* tool, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    fmt::print(stderr, "{}: {}\n", tool, e.what());
    return 1;
  }
}

}  // namespace legalnet
