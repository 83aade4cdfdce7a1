#include "core/text.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rocesim {

std::vector<std::string> split(std::string_view s, std::string_view seps) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    const size_t next = s.find_first_of(seps, at);
    out.emplace_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

std::vector<std::string> words(std::string_view s) {
  constexpr std::string_view kBlank = " \t\r";
  std::vector<std::string> out;
  size_t at = s.find_first_not_of(kBlank);
  while (at != std::string_view::npos) {
    const size_t end = s.find_first_of(kBlank, at);
    out.emplace_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    at = s.find_first_not_of(kBlank, end == std::string_view::npos ? s.size() : end);
  }
  return out;
}

std::string trim(std::string_view s, std::string_view chars) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(chars) - b + 1));
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp-" + std::to_string(getpid());
  write_file(tmp, text);
  std::filesystem::rename(tmp, path);
}

}  // namespace rocesim
