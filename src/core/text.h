// Small text and file helpers shared by the layers above: splitting and trimming strings, reading a whole
// file, writing one (atomically: complete or absent).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocesim {

// The parts of `s` between the characters in `seps` (each one separates): "a,,b" -> "a", "", "b"; a text
// without a separator (the empty text too) is one part.
std::vector<std::string> split(std::string_view s, std::string_view seps);

// The words of `s`: its runs of characters other than space, tab and CR (an empty or blank `s` has none).
std::vector<std::string> words(std::string_view s);

// `s` without its leading and trailing characters in `chars`.
std::string trim(std::string_view s, std::string_view chars = " \t");

// The bytes of file `path`; nullopt when it cannot be opened. A path that opens but cannot be read (a
// directory) reads as empty.
std::optional<std::string> read_text(const std::filesystem::path& path);

// Writes `text` to `path`, replacing it; throws std::runtime_error "cannot write <path>" when that fails.
void write_file(const std::filesystem::path& path, const std::string& text);

// write_file to a temporary file next to `path` (`path`.tmp-<pid>), then renamed to `path`: readers see the
// old file or the new one, never a part.
void write_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace rocesim
