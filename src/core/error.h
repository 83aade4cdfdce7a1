// Errors in user input: every message names the file, the line (when known) and what was expected.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace rocesim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, const std::string& what)
      : std::runtime_error(format(file, line, what)), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  static std::string format(const std::string& file, int line, const std::string& what) {
    std::string s;
    s.reserve(file.size() + what.size() + 16);
    s.append(file.empty() ? std::string_view("<input>") : std::string_view(file));
    if (line > 0) {
      s.push_back(':');
      s.append(std::to_string(line));
    }
    s.append(": ");
    s.append(what);
    return s;
  }
  std::string file_;
  int line_;
};

}  // namespace rocesim
