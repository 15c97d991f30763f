// One declaration per option (lc0's OptionId is the model): a row holds the flag, the field it
// sets, the key options.json and report.json record it under, its range or choice table, its
// help text and whether --resume must keep it. Everything else reads the rows: the command-line
// parser and --help (CLI11), validate() for callers that fill the struct themselves, the JSON a
// run records and the list the resume check compares. A new option is one row plus its use.
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

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/choices.h"
#include "util/error.h"

namespace legalnet::options {

// A number in [min, max], NaN and infinities refused (CLI::Range lets NaN through and prints
// its bounds with 300 digits); --help shows "min..max".
inline CLI::Validator in_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < min || value > max)
          return fmt::format("{} is not a number in {:g}..{:g}", text, min, max);
        return {};
      },
      fmt::format("{:g}..{:g}", min, max));
}

// The text of a number, refused where CLI11 2.1 would read it wrongly without a word. Its form,
// checked first: empty (read as the default) or, for an integer field, not an integer ("1e3",
// which a range of integers called "not in range"); hexadecimal ("0x10") reads as CLI11 reads it.
template <class T>
CLI::Validator number_form() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const size_t start = text.find_first_not_of(" \t");
        if (start == std::string::npos) return "an empty value is not a number";
        if constexpr (std::is_integral_v<T>) {
          char* end = nullptr;
          (void)std::strtoll(text.c_str() + start, &end, 0);
          if (end == text.c_str() + start ||
              text.find_first_not_of(" \t", size_t(end - text.c_str())) != std::string::npos)
            return fmt::format("{} is not an integer", text);
        }
        return {};
      },
      "");
}
// Then, after the row's own range (whose message names it): an integer beyond the type, which
// CLI11 wraps (-1 in an unsigned field: 2^64-1) or clamps (2^64 seeded as 2^64-1 did).
template <class T>
CLI::Validator number_fits() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if constexpr (std::is_integral_v<T>) {
          const char* begin = text.c_str() + std::min(text.size(), text.find_first_not_of(" \t"));
          errno = 0;
          bool below = false, above = false;
          if constexpr (std::is_unsigned_v<T>) {
            const unsigned long long v = std::strtoull(begin, nullptr, 0);
            above = errno == ERANGE || v > std::numeric_limits<T>::max();
            below = *begin == '-' && v != 0;
          } else {
            const long long v = std::strtoll(begin, nullptr, 0);
            above = (errno == ERANGE && v > 0) || v > std::numeric_limits<T>::max();
            below = (errno == ERANGE && v < 0) || v < std::numeric_limits<T>::min();
          }
          if (below) return fmt::format("{} is below {}", text, std::numeric_limits<T>::min());
          if (above) return fmt::format("{} is above {}", text, std::numeric_limits<T>::max());
        }
        return {};
      },
      "");
}

// Counts of things a run makes or reads: games, positions, steps. Bounded so that a negative
// count (read as 2^64-1 by an unsigned type) or a typo never starts a run that cannot end.
inline constexpr double MAX_COUNT = 1e12;

// Makes `old` the old spelling of a renamed option: hidden from --help, converting its value
// (`convert`, where the old meaning differs) and warning once per run on stderr, "train: --model
// is deprecated, use --arch", so that scripts keep working.
inline CLI::Option* deprecate(CLI::Option* old, const std::string& tool, const std::string& replacement,
                              std::function<std::string(const std::string&)> convert = {}) {
  auto warned = std::make_shared<bool>(false);
  const std::string name = old->get_name();
  const std::string message = fmt::format("{}: {} is deprecated, use {}\n", tool, name, replacement);
  // Hidden, the option has no name in CLI11's messages: a value `convert` refuses (it appends
  // " (expected ...)") is refused here, with the name.
  return old->group("")->transform(CLI::Validator(
      [warned, message, convert, name](std::string& text) -> std::string {
        if (!*warned) (void)std::fputs(message.c_str(), stderr);
        *warned = true;
        if (convert) text = convert(text);
        if (text.find(" (expected ") != std::string::npos) return fmt::format("{} {}", name, text);
        return {};
      },
      ""));
}

// The names of a choice table (util/choices.h), for CLI::IsMember.
template <typename Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

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
  Row& range(double min, double max) {
    then.push_back([min, max](CLI::Option* o) { o->check(in_range(min, max)); });
    return bounded(min, max);
  }
  // An integer in [min, max] by CLI::Range (--help: "INT in [min - max]"), as the options had
  // before the tables; kept so that --help stays byte for byte what scripts and docs quote.
  // The bounds are integers: CLI::Range of doubles says "FLOAT in [1 - 1.04858e+06]".
  Row& int_range(int64_t min, int64_t max) {
    then.push_back([min, max](CLI::Option* o) { o->check(CLI::Range(min, max)); });
    return bounded(double(min), double(max));
  }
  // --help shows the struct's default.
  Row& show_default() {
    then.push_back([](CLI::Option* o) { o->capture_default_str(); });
    return *this;
  }
  Row& required() {
    then.push_back([](CLI::Option* o) { o->required(); });
    return *this;
  }
  Row& excludes(std::string other) {
    then.push_back([other](CLI::Option* o) { o->excludes(other); });
    return *this;
  }
  Row& delimiter(char c) {
    then.push_back([c](CLI::Option* o) { o->delimiter(c); });
    return *this;
  }
  Row& validator(CLI::Validator validator) {
    then.push_back([validator](CLI::Option* o) { o->check(validator); });
    return *this;
  }
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

// The row builders for `Options` (`using R = options::Rows<MyOptions>;`).
template <class Options>
struct Rows {
  // An option taking a value (a number, a string, or a list of them with `...`).
  template <class Get>
  static Row<Options> value(Get get, std::string flag, std::string key, std::string help) {
    Row<Options> r = named(std::move(flag), std::move(key), std::move(help));
    using T = std::remove_cvref_t<decltype(std::invoke(get, std::declval<Options&>()))>;
    r.add = [get](CLI::App& app, Options& o, const std::string& flag, const std::string& help) {
      CLI::Option* option = app.add_option(flag, std::invoke(get, o), help);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) option->check(number_form<T>());
      return option;
    };
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
      r.last = [](CLI::Option* option) { option->check(number_fits<T>()); };
    r.value = [get](const Options& o) { return nlohmann::json(std::invoke(get, o)); };
    if constexpr (std::is_arithmetic_v<T>) r.number = [get](const Options& o) { return double(std::invoke(get, o)); };
    return r;
  }
  // A flag without a value: "--se" sets true, "!--full-head" sets false.
  template <class Get>
  static Row<Options> flag(Get get, std::string flag, std::string key, std::string help) {
    Row<Options> r = named(std::move(flag), std::move(key), std::move(help));
    r.add = [get](CLI::App& app, Options& o, const std::string& flag, const std::string& help) {
      return app.add_flag(flag, std::invoke(get, o), help);
    };
    r.value = [get](const Options& o) { return nlohmann::json(bool(std::invoke(get, o))); };
    return r;
  }
  // One of the names of a choice table (util/choices.h): --help lists them and shows the
  // struct's default, any other name is refused by the parser, and JSON records the name.
  template <class Get, class Table>
  static Row<Options> choice(Get get, std::string flag, std::string key, const Table& table, std::string help) {
    Row<Options> r = named(std::move(flag), std::move(key), std::move(help));
    r.add = [get, &table](CLI::App& app, Options& o, const std::string& flag, const std::string& help) {
      auto& field = std::invoke(get, o);
      return app
          .add_option_function<std::string>(
              flag, [&field, &table](const std::string& text) { field = find_choice(table, text, "choice").value; },
              help)
          ->check(CLI::IsMember(names_of(table)))
          ->default_str(choice_of(table, field).name);
    };
    r.value = [get, &table](const Options& o) { return nlohmann::json(choice_of(table, std::invoke(get, o)).name); };
    return r;
  }
  // A value the run records under `key` that is not an option (a count, a resolved setting):
  // record() takes it from the facts it is given, in the table's order.
  static Row<Options> fact(std::string key) {
    Row<Options> r;
    r.key = std::move(key);
    return r;
  }
  // The deprecated spelling `old` of `flag` (hidden, warns once, `convert`s an old meaning).
  static Row<Options> alias(std::string old, std::string flag,
                            std::function<std::string(const std::string&)> convert = {}) {
    Row<Options> r;
    r.flag = std::move(old);
    r.alias_of = std::move(flag);
    r.convert = std::move(convert);
    return r;
  }

 private:
  static Row<Options> named(std::string flag, std::string key, std::string help) {
    Row<Options> r;
    r.flag = std::move(flag);
    r.key = std::move(key);
    r.help = std::move(help);
    return r;
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

  // Declares every row on `app`, bound to the fields of `o` (which must outlive the parse).
  void add_to(CLI::App& app, Options& o) const {
    for (const Row<Options>& row : rows_) {
      if (row.flag.empty()) continue;  // a fact
      if (!row.alias_of.empty()) {
        const Row<Options>& target = find(row.alias_of);
        CLI::Option* old = deprecate(target.add(app, o, row.flag, ""), tool_, row.alias_of, row.convert);
        if (target.last) target.last(old);
        continue;
      }
      CLI::Option* option = row.add(app, o, row.flag, row.help);
      for (const auto& then : row.then) then(option);
      if (row.last) row.last(option);
    }
  }

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
