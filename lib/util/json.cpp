#include "util/json.h"

#include "util/text.h"

namespace legalnet {

void check_json_bounds(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw JsonError("JSON of " + std::to_string(text.size()) + " bytes (at most " + std::to_string(limits.max_bytes) +
                    ")");
  // Brackets inside strings do not count; a backslash in a string escapes the byte after it.
  // On text that is not JSON the count may be off past the first error, where a parser stops.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth)
        throw JsonError("JSON nested deeper than " + std::to_string(limits.max_depth) + " levels (at byte " +
                        std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string json_parse_failure(const nlohmann::json::exception& e) { return "not JSON (" + printable(e.what()) + ")"; }

namespace {

template <typename Json>
std::string excerpt(const Json& value, size_t max_bytes) {
  return printable(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_bytes);
}

}  // namespace

std::string json_excerpt(const nlohmann::json& value, size_t max_bytes) { return excerpt(value, max_bytes); }
std::string json_excerpt(const nlohmann::ordered_json& value, size_t max_bytes) { return excerpt(value, max_bytes); }

}  // namespace legalnet
