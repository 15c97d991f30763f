// The option tables' binding to CLI11 (util/option_table.h holds the rows): the row builders,
// the checks a number passes in the parser, deprecated spellings and Table::add_to. Included by
// the sources that declare a table (run/*/options.cpp) or parse a command line (tools/), and by
// nothing else: CLI11 costs a few seconds of compile per source.
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
#include "util/option_table.h"

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

// The chain of a row that the parser carries out (declared in util/option_table.h).
template <class Options>
Row<Options>& Row<Options>::range(double min, double max) {
  then.push_back([min, max](CLI::Option* o) { o->check(in_range(min, max)); });
  return bounded(min, max);
}

template <class Options>
Row<Options>& Row<Options>::int_range(int64_t min, int64_t max) {
  then.push_back([min, max](CLI::Option* o) { o->check(CLI::Range(min, max)); });
  return bounded(double(min), double(max));
}

template <class Options>
Row<Options>& Row<Options>::show_default() {
  then.push_back([](CLI::Option* o) { o->capture_default_str(); });
  return *this;
}

template <class Options>
Row<Options>& Row<Options>::required() {
  then.push_back([](CLI::Option* o) { o->required(); });
  return *this;
}

template <class Options>
Row<Options>& Row<Options>::excludes(std::string other) {
  then.push_back([other](CLI::Option* o) { o->excludes(other); });
  return *this;
}

template <class Options>
Row<Options>& Row<Options>::delimiter(char c) {
  then.push_back([c](CLI::Option* o) { o->delimiter(c); });
  return *this;
}

template <class Options>
Row<Options>& Row<Options>::validator(CLI::Validator validator) {
  then.push_back([validator](CLI::Option* o) { o->check(validator); });
  return *this;
}

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

template <class Options>
void Table<Options>::add_to(CLI::App& app, Options& o) const {
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

}  // namespace legalnet::options
