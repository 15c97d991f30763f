// Name tables for the choices an option or a file field takes (model kinds, optimizers, data
// modes, precisions, input kinds): one row per choice with its `name`, so that the parser, the
// command line's choice list, the default shown in --help and the error message all read the
// same table, and a choice is added in one place. A table whose rows are a value and its name
// alone is of Choice rows; one whose rows carry more (nn::MODEL_SPECS, chess::SITUATIONS) has a
// struct of its own that starts with the same `value` and `name`.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"
#include "util/text.h"

namespace legalnet {

// A row of a choice table: an enum value and its name (on the command line, in JSON).
template <typename Value>
struct Choice {
  Value value;
  const char* name;
};

// "a | b | c"
template <typename Table>
std::string choice_list(const Table& table) {
  std::string out;
  for (const auto& row : table) out += (out.empty() ? "" : " | ") + std::string(row.name);
  return out;
}

// The row named `name`; legalnet::Error "unknown WHAT 'name' (expected a | b | c)" otherwise.
template <typename Table>
const auto& find_choice(const Table& table, std::string_view name, std::string_view what) {
  for (const auto& row : table)
    if (name == row.name) return row;
  throw Error("unknown " + std::string(what) + " '" + printable(name) + "' (expected " + choice_list(table) + ")");
}

// The row whose `value` is `value` (every enum value has one: the tables are complete).
template <typename Table, typename Value>
const auto& choice_of(const Table& table, Value value) {
  for (const auto& row : table)
    if (row.value == value) return row;
  throw Error("choice " + std::to_string(int(value)) + " has no name");  // tests check every value has one
}

}  // namespace legalnet
