// Whitespace-separated fields of one line of a text input (topology, CDF and flow files).
#pragma once
#include <cstddef>
#include <string_view>

namespace rocesim {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

// Splits `line` (with any `#` comment removed) into whitespace-separated fields; stores at most `max` in
// `out` and returns how many there are (which may exceed `max`).
inline size_t split_fields(std::string_view line, std::string_view* out, size_t max) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  size_t n = 0, i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    if (n < max) out[n] = line.substr(i, j - i);
    ++n;
    i = j;
  }
  return n;
}

}  // namespace rocesim
