// JSON from files (model and checkpoint metadata, a run's options.json): read through one
// bounded reader. nlohmann's values are recursive (copying, comparing and dumping one recurses
// once per level), so text nested thousands of levels deep would overflow the stack; the reader
// refuses it, and text over a size cap, by a linear scan before the library sees a byte.
// Messages that quote a parsed value use json_excerpt(), never an unbounded dump().
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.h"

namespace legalnet {

struct JsonLimits {
  size_t max_bytes = size_t(16) << 20;  // a safetensors header's own cap (nn/safetensors.h)
  int max_depth = 64;                   // our files nest 3 levels; a model config 1
};

// What the reader refuses; what() is the reason alone ("not JSON (...)", "JSON nested deeper
// than 64 levels", ...), for the caller to put after the file and field it names.
class JsonError : public Error {
 public:
  using Error::Error;
};

// Throws JsonError when `text` is longer than limits.max_bytes or opens more than
// limits.max_depth arrays and objects inside each other (strings skipped, escapes included).
// Linear, no recursion: it runs before a parser builds anything.
void check_json_bounds(std::string_view text, const JsonLimits& limits = {});

// "not JSON (MESSAGE)" with the library's message escaped and cut (it quotes the text it stopped at).
std::string json_parse_failure(const nlohmann::json::exception& e);

// `text` parsed, after check_json_bounds; JsonError "not JSON (the parser's message, escaped)".
template <typename Json = nlohmann::json>
Json parse_json(std::string_view text, const JsonLimits& limits = {}) {
  check_json_bounds(text, limits);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw JsonError(json_parse_failure(e));
  }
}

// A parsed value as one line for a message: compact JSON, invalid UTF-8 replaced, control
// characters escaped, cut at `max_bytes` (ends "...").
std::string json_excerpt(const nlohmann::json& value, size_t max_bytes = 200);
std::string json_excerpt(const nlohmann::ordered_json& value, size_t max_bytes = 200);

}  // namespace legalnet
