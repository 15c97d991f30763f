// One declaration per option (lc0's OptionId is the model): a row holds the flag, the field it
// sets, the key options.json and report.json record it under, its range or choice table, its
// help text and whether --resume must keep it. Everything else reads the rows: the command-line
// parser and --help (CLI11), validate() for callers that fill the struct themselves, the JSON a
// run records and the list the resume check compares. A new option is one row plus its use.
// This header holds the rows and what reads them without the parser; the builders below (Rows)
// and Table::add_to are in util/option_cli.h, which the sources that declare a table include.
//
//   using R = options::Rows<TrainOptions>;
//   const options::Table<TrainOptions> TABLE{"train", {
//       R::value(&TrainOptions::lr, "--lr", "lr", "Peak learning rate").range(0, 100).keep_on_resume(),
//       R::choice(&TrainOptions::optimizer, "--optimizer", "optimizer", OPTIMIZERS, "Adam, AdamW or SGD"),
//       R::fact("total_steps"),  // recorded, not an option: the run supplies the value
//       R::alias("--model", "--arch"),
//   }};
//
// A field is named by a member pointer, or by a lambda `[](auto& o) -> auto& { return o.model.hidden; }`
// for one inside a member (it serves both the parser, which sets it, and the JSON, which reads it).
#pragma once

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"
#include "util/option_table_fwd.h"

// The parser's types, named here and used in util/option_cli.h, so that the many sources which
// record or validate options do not compile CLI11 (a few seconds each).
namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace legalnet::options {

// Counts of things a run makes or reads: games, positions, steps. Bounded so that a negative
// count (read as 2^64-1 by an unsigned type) or a typo never starts a run that cannot end.
inline constexpr double MAX_COUNT = 1e12;

// One option, or one recorded fact (no flag), of the options struct `Options`.
template <class Options>
struct Row {
  std::string flag;  // CLI11's names, "--games,-n" ("!--full-head": a flag that sets false); empty for a fact
  std::string key;   // the JSON key it is recorded under; "model/hidden": inside the fact "model"; empty: not recorded
  std::string help;
  bool kept = false;     // --resume refuses another value
  std::string kept_as;   // the name the resume check gives it, when not its flag (a fact's)
  bool in_fact = false;  // `key` points into a fact the run records whole: compared on resume, not written
  std::string alias_of;  // a deprecated spelling of this flag
  std::function<std::string(const std::string&)> convert;  // an alias's old meaning to the new one
  // Declares the option on a parser under `flag` with `help` (an alias: the old name, no help).
  std::function<CLI::Option*(CLI::App&, Options&, const std::string& flag, const std::string& help)> add;
  std::function<nlohmann::json(const Options&)> value;  // what is recorded under `key`
  std::function<std::string(const Options&)> check;     // validate(): "" or what is wrong
  std::vector<std::function<void(CLI::Option*)>> then;  // required, defaults shown, exclusions
  std::function<void(CLI::Option*)> last;               // after them: a number's fit in its type

  // A number in [min, max] (--help: "min..max"; NaN refused).
  Row& range(double min, double max);
  // An integer in [min, max] by CLI::Range (--help: "INT in [min - max]"), as the options had
  // before the tables; kept so that --help stays byte for byte what scripts and docs quote.
  // The bounds are integers: CLI::Range of doubles says "FLOAT in [1 - 1.04858e+06]".
  Row& int_range(int64_t min, int64_t max);
  // --help shows the struct's default.
  Row& show_default();
  Row& required();
  Row& excludes(std::string other);
  Row& delimiter(char c);
  Row& validator(CLI::Validator validator);
  // --resume must keep the value (a run learns from other rows, or otherwise, if it changes).
  Row& keep_on_resume() {
    kept = true;
    return *this;
  }
  // The same for a fact, which has no flag to be named by: `name` says what it is in the resume
  // check's message ("the number of processes (WORLD_SIZE) is 2 here but 1 ...").
  Row& keep_on_resume(std::string name) {
    kept_as = std::move(name);
    return keep_on_resume();
  }
  // `key` ("model/hidden") names a value inside a fact the run records whole ("model").
  Row& inside_fact() {
    in_fact = true;
    return *this;
  }

 private:
  std::function<double(const Options&)> number;  // set by the numeric builders, for validate()
  template <class O>
  friend struct Rows;
  Row& bounded(double min, double max) {
    auto number_of = number;
    const std::string name = flag.substr(0, flag.find(','));
    check = [number_of, min, max, name](const Options& o) -> std::string {
      const double v = number_of(o);
      if (std::isfinite(v) && v >= min && v <= max) return {};
      return fmt::format("{} {:g} is not in {:g}..{:g}", name, v, min, max);
    };
    return *this;
  }
};

// A kept option as the resume check compares it: a JSON pointer into options.json
// ("/model/hidden") and the option's name for the message.
struct KeptOption {
  std::string pointer;
  std::string option;
};

// A tool's (or a subcommand's) options: the rows in the order --help lists them and JSON
// records them.
template <class Options>
class Table {
 public:
  Table(std::string tool, std::vector<Row<Options>> rows) : tool_(std::move(tool)), rows_(std::move(rows)) {}

  // Declares every row on `app`, bound to the fields of `o` (which must outlive the parse);
  // defined in util/option_cli.h.
  void add_to(CLI::App& app, Options& o) const;

  // What a run records: each row with a key, in order, its value from `o` or, for a fact, from
  // `facts` (a fact missing there is left out). Rows inside a fact are not written again.
  nlohmann::ordered_json record(const Options& o, const nlohmann::ordered_json& facts = {}) const {
    nlohmann::ordered_json j;
    for (const Row<Options>& row : rows_) {
      if (row.key.empty() || row.in_fact || !row.alias_of.empty()) continue;
      if (!row.value) {
        if (facts.contains(row.key)) j[row.key] = facts[row.key];
        continue;
      }
      j[row.key] = row.value(o);
    }
    return j;
  }

  // The options --resume must keep, in the table's order.
  std::vector<KeptOption> kept() const {
    std::vector<KeptOption> out;
    for (const Row<Options>& row : rows_)
      if (row.kept)
        out.push_back({"/" + row.key, !row.kept_as.empty() ? row.kept_as
                                      : row.flag.empty()   ? row.key
                                                           : long_name(row.flag)});
    return out;
  }

  // The ranges, for a struct filled without the parser (a library caller, a test): throws
  // legalnet::Error naming the first option out of its range.
  void validate(const Options& o) const {
    for (const Row<Options>& row : rows_)
      if (row.check)
        if (std::string what = row.check(o); !what.empty()) throw Error(what);
  }

  const std::vector<Row<Options>>& rows() const { return rows_; }
  const std::string& tool() const { return tool_; }

 private:
  // "--games" of "--games,-n" (or "-n,--games"); "--full-head" of "!--full-head".
  static std::string long_name(const std::string& flag) {
    size_t start = 0;
    while (start < flag.size()) {
      size_t end = flag.find(',', start);
      if (end == std::string::npos) end = flag.size();
      std::string name = flag.substr(start, end - start);
      if (!name.empty() && name[0] == '!') name.erase(0, 1);
      if (name.rfind("--", 0) == 0) return name;
      start = end + 1;
    }
    return flag;
  }
  const Row<Options>& find(const std::string& flag) const {
    for (const Row<Options>& row : rows_)
      if (row.alias_of.empty() && !row.flag.empty() && long_name(row.flag) == flag) return row;
    throw Error(tool_ + ": the option table has no " + flag + " for its alias");  // a table's own mistake
  }
  std::string tool_;
  std::vector<Row<Options>> rows_;
};

}  // namespace legalnet::options
