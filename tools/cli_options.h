// What the four tools' mains share around their option tables (lib/run/<tool>/options.h): the
// parse, with its one-line usage errors, and the version flag.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "util/text.h"
#include "util/version.h"

namespace legalnet::cli {

// The edit distance between two words (insertions, deletions, substitutions).
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean --batch-size?)" for an argument that is a near miss of one of the app's long
// options or subcommands (at most two edits, and fewer than a third of its letters), else "".
inline std::string did_you_mean(const CLI::App& app, const std::vector<std::string>& extras) {
  for (const std::string& given : extras) {
    const bool option = given.rfind("--", 0) == 0;
    const std::string word =
        option ? given.substr(2, given.find('=') == std::string::npos ? std::string::npos : given.find('=') - 2)
               : given;
    if (word.empty() || (!option && word[0] == '-')) continue;
    std::string best;
    size_t best_distance = std::min<size_t>(3, (word.size() + 2) / 3);
    const auto consider = [&](const std::string& name, const std::string& shown) {
      const size_t d = edit_distance(word, name);
      if (d < best_distance) best_distance = d, best = shown;
    };
    if (option)
      for (const CLI::Option* opt : app.get_options())
        for (const std::string& name : opt->get_lnames()) consider(name, "--" + name);
    else
      for (const CLI::App* command : app.get_subcommands({})) consider(command->get_name(), command->get_name());
    if (!best.empty()) return " (did you mean " + best + "?)";
  }
  return "";
}

// The sections of a recipe (recipes/*.toml): one per tool, and Makefile.pipeline's own.
inline const std::vector<std::string> RECIPE_SECTIONS = {"gen_moves", "tensorize", "train", "evaluate", "pipeline"};

// --config's reader: CLI11's TOML (or INI) reader, keeping the keys at the top of the file and
// those of the tool's own section ([train] for train), as if they were at the top, and skipping
// the other tools' sections and [pipeline], so that one recipe serves the four tools and the
// Makefile. Any other section (or [train.x]) is left for CLI11, which refuses it.
class SectionConfig : public CLI::ConfigBase {
 public:
  explicit SectionConfig(std::string tool) : tool_(std::move(tool)) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> kept;
    from_section_.clear();
    for (CLI::ConfigItem& item : CLI::ConfigBase::from_config(input)) {
      const bool own = !item.parents.empty() && item.parents.front() == tool_;
      if (own && item.parents.size() == 1) {
        if (item.name == "++" || item.name == "--") continue;  // the section's start and end
        from_section_.push_back(item.name);
        item.parents.clear();
      } else if (!own && !item.parents.empty() &&
                 std::find(RECIPE_SECTIONS.begin(), RECIPE_SECTIONS.end(), item.parents.front()) !=
                     RECIPE_SECTIONS.end()) {
        continue;  // another tool's section, or the pipeline's
      }
      kept.push_back(std::move(item));
    }
    return kept;
  }

  // Whether `key` came from the tool's own section (for the message on a key that names no option).
  bool from_section(const std::string& key) const {
    return std::find(from_section_.begin(), from_section_.end(), key) != from_section_.end();
  }
  const std::string& tool() const { return tool_; }

 private:
  std::string tool_;
  mutable std::vector<std::string> from_section_;
};

// The tool's options as this command line and its --config file resolve them, one `key = value`
// line each: the value given, or the built-in default; a flag is true where given. Options
// without a value (an empty list, no default) are left out.
inline std::string resolved_options(CLI::App& app) {
  std::string out;
  for (CLI::Option* opt : app.get_options({})) {
    if (!opt->get_configurable() || opt->get_group().empty() || opt->get_lnames().empty()) continue;
    const std::string& name = opt->get_lnames().front();
    std::string value;
    if (opt->get_expected_min() == 0) {  // a flag ("!--full-head": given sets its field false)
      bool given = false;
      if (opt->count() > 0) {
        given = opt->as<bool>();
        if (opt->get_flag_value(name, "true") == "false") given = !given;
      }
      value = given ? "true" : "false";
    } else if (opt->count() > 0) {
      value = CLI::detail::ini_join(opt->reduced_results());
    } else {
      opt->capture_default_str();  // the field's value: its built-in default ("[a,b]" for a list)
      const std::string& shown = opt->get_default_str();
      if (shown.size() > 2 && shown.front() == '[' && shown.back() == ']')
        value = shown;
      else if (!shown.empty() && shown != "[]")
        value = CLI::detail::convert_arg_for_ini(shown);
    }
    if (!value.empty()) out += name + " = " + value + "\n";
  }
  return out;
}

// --config FILE (through SectionConfig) and --print-config, added after the tool's option table.
// --print-config prints resolved_options() and exits 0 before the required options are checked,
// so `train --config recipes/default.toml --print-config` shows what a run would take.
inline void add_config(CLI::App& app, const std::string& tool) {
  app.config_formatter(std::make_shared<SectionConfig>(tool));
  app.set_config("--config", "",
                 "Read options from a TOML or INI file (recipes/*.toml): keys are the long option names, at the top or "
                 "in [" +
                     tool + "]; the other tools' sections and [pipeline] are skipped; the command line wins");
  app.add_flag_callback(
         "--print-config",
         [&app] {
           (void)std::fputs(resolved_options(app).c_str(), stdout);
           throw CLI::Success();
         },
         "Print the options as the command line and --config resolve them, one key = value a line, and exit")
      ->configurable(false);
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
      const auto* sections = dynamic_cast<const SectionConfig*>(app.get_config_formatter().get());
      const std::string section = sections && sections->from_section(key) ? " in [" + sections->tool() + "]" : "";
      what = !key.empty() ? fmt::format("--config '{}': unknown key '{}'{} (no such option)", file, key, section)
                          : fmt::format("--config '{}': {}", file, what);
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) what += did_you_mean(app, app.remaining());
    if (what.rfind(": ", 0) == 0) what.erase(0, 2);  // a hidden option's (a deprecated spelling's) empty name
    for (char& c : what)
      if (c == '\n') c = ' ';
    (void)std::fputs(fmt::format("{}: {} (see --help)\n", tool, printable(what, 2000)).c_str(), stderr);
    return 2;
  }
}

// "train 0.3.0 (git 1a2b3c4)" and, on the next line, the libtorch the build used and whether its
// CUDA and NCCL paths were compiled in: what a cluster user checks before a job.
inline void set_version(CLI::App& app, const char* tool) {
  app.set_version_flag("--version", std::string(tool) + " " + VERSION + " (" + GIT_DESCRIBE + ")\n" + "libtorch " +
                                        TORCH_VERSION_BUILT + ", CUDA " + (BUILT_WITH_CUDA ? "yes" : "no") + ", NCCL " +
                                        (BUILT_WITH_NCCL ? "yes" : "no"));
}

}  // namespace legalnet::cli
