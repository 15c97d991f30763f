// Lines for the user on stderr. A stderr that cannot be written (closed, a full device) never
// stops the work or turns into a crash: the line is dropped, and the outputs still count.
#pragma once

#include <fmt/core.h>

#include <cstdio>
#include <string>

namespace legalnet {

inline void say_text(const std::string& text) { (void)std::fputs(text.c_str(), stderr); }

template <class... Args>
void say(fmt::format_string<Args...> format, Args&&... args) {
  say_text(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace legalnet
