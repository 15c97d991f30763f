// What the tools' command lines share: range checks that also refuse NaN and say the range in
// plain numbers, the device/precision/threads options of train and evaluate, and the version.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/text.h"
#include "nn/precision_choice.h"
#include "run/device_rows.h"
#include "util/choices.h"
#include "util/option_table.h"
#include "util/version.h"

namespace legalnet::cli {

// The range checks and the count bound every tool's table uses (util/option_table.h).
using options::in_range;
using options::MAX_COUNT;
using options::names_of;

// auto | cpu | cuda | cuda:N (run/device_rows.h, where train's table declares --device).
using run::device_choice;

// --threads, the same in all four tools: 0 is every core.
inline CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& what) {
  return app.add_option("--threads,-t", threads, what + " (0: all cores)")->check(CLI::Range(0, 1024))->capture_default_str();
}

// Makes `old` the old spelling of `replacement` (util/option_table.h's deprecate).
inline CLI::Option* deprecate(CLI::Option* old, const char* tool, CLI::Option* replacement,
                              std::function<std::string(const std::string&)> convert = {}) {
  return options::deprecate(old, tool, replacement->get_name(), std::move(convert));
}

// An option whose values are the names of a table (util/choices.h): --help lists them and shows
// the default (the option struct's), and any other name is refused by the parser.
template <typename Table, typename Value>
CLI::Option* add_choice(CLI::App& app, const std::string& name, Value& value, const Table& table,
                        const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&value, &table](const std::string& text) { value = find_choice(table, text, "choice").value; }, help)
      ->check(CLI::IsMember(names_of(table)))
      ->default_str(choice_of(table, value).name);
}

struct DeviceOptions {
  std::string* device;
  nn::Precision* compute_precision;
  int* threads;
};

// The options train and evaluate share for where and how the net runs.
inline void add_device_options(CLI::App& app, const DeviceOptions& o) {
  app.add_option("--device", *o.device, "auto | cpu | cuda | cuda:N")->check(device_choice())->capture_default_str();
  add_choice(app, "--precision", *o.compute_precision, nn::PRECISIONS,
             "Forward pass arithmetic; auto: bf16 on CUDA and on CPUs with AVX-512 BF16 or AMX, else fp32 "
                 "(weights, optimizer and loss stay fp32); tf32: fp32 tensors, TensorFloat-32 matmuls (CUDA only); "
             "fp32 on CUDA is strict IEEE");
  add_threads_option(app, *o.threads, "CPU threads");
}

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
