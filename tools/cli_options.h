// What the four tools' mains share around their option tables (lib/run/<tool>/options.h): the
// parse, with its one-line usage errors, and the version flag.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "util/text.h"
#include "util/version.h"

namespace legalnet::cli {

// Parses the command line. --help and --version print and give 0; a usage error prints one line,
// "<tool>: <what> (see --help)", and gives 2; -1 means the run goes on.
// A --config file's key that names no option is an error, not a silent no-op: a misspelt
// "learning-rate = 0.1" would otherwise train at the default.
inline int parse(CLI::App& app, int argc, char** argv, const char* tool) {
  app.allow_config_extras(CLI::config_extras_mode::error);
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (dynamic_cast<const CLI::ConfigError*>(&e) && app.get_config_ptr()) {
      const std::string file = app.get_config_ptr()->as<std::string>();
      const std::string extra = "INI was not able to parse ";
      std::string key = what.rfind(extra, 0) == 0 ? what.substr(extra.size()) : "";
      if (key.size() > 3 && key.compare(key.size() - 3, 3, ".++") == 0)  // CLI11's mark of a section's start
        key = "[" + key.substr(0, key.size() - 3) + "]";
      what = !key.empty() ? fmt::format("--config '{}': unknown key '{}' (no such option)", file, key)
                          : fmt::format("--config '{}': {}", file, what);
    }
    for (char& c : what)
      if (c == '\n') c = ' ';
    (void)std::fputs(fmt::format("{}: {} (see --help)\n", tool, printable(what, 2000)).c_str(), stderr);
    return 2;
  }
}

// "train 0.3.0 (git 1a2b3c4)" and, on the next line, the libtorch the build used and whether its
// CUDA and NCCL paths were compiled in: what a cluster user checks before a job.
inline void set_version(CLI::App& app, const char* tool) {
  app.set_version_flag("--version", std::string(tool) + " " + VERSION + " (" + GIT_DESCRIBE + ")\n" +
                                        "libtorch " + TORCH_VERSION_BUILT + ", CUDA " +
                                        (BUILT_WITH_CUDA ? "yes" : "no") + ", NCCL " +
                                        (BUILT_WITH_NCCL ? "yes" : "no"));
}

}  // namespace legalnet::cli
