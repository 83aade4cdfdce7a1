// Reading a scenario file: typed getters that validate ranges, remember every key read (so unknown keys
// are errors with their line) and record every value used, defaults included, for scenario.resolved.toml.
#pragma once
#include <toml++/toml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/key_reader.h"
#include "core/time.h"

namespace rocesim {

// The candidate closest to `word` by edit distance when it is close enough to be a likely misspelling
// (e.g. "topolgy" -> "topology", "alltoall" -> "all_to_all"); empty otherwise.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'X'?)" for closest_match, or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// The KeyReader the schemes read their tables through (core/key_reader.h), with the getters of the rest of
// the scenario.
class Config : public KeyReader {
 public:
  // Parses `path`, then applies `overrides` ("a.b.c=value", value in TOML syntax; bare words are strings).
  static Config load(const std::string& path, const std::vector<std::string>& overrides = {});
  static Config parse(std::string_view text, const std::string& name,
                      const std::vector<std::string>& overrides = {});

  const std::string& file() const { return file_; }
  std::string dir() const;  // directory of the file, for relative paths

  // Keys are dotted paths; array elements as "flows[2].src".
  // get_us (a duration in microseconds) is KeyReader's.
  bool has(const std::string& key) const override;
  int64_t get_int(const std::string& key, int64_t def, int64_t lo, int64_t hi) override;
  double get_double(const std::string& key, double def, double lo, double hi) override;
  bool get_bool(const std::string& key, bool def) override;
  std::string get_string(const std::string& key, const std::string& def,
                         const std::vector<std::string>& allowed = {}) override;
  std::vector<double> get_double_list(const std::string& key, const std::vector<double>& def, double lo,
                                      double hi);
  std::vector<std::string> get_string_list(const std::string& key, const std::vector<std::string>& def);
  // Number of elements of an array of tables (0 when absent).
  size_t table_array_size(const std::string& key);
  // A value that may be an integer or a string (e.g. a node id or a node name).
  std::string get_id_or_name(const std::string& key);
  // An array whose elements are node ids or names (each as get_id_or_name returns it); missing: empty.
  std::vector<std::string> get_id_or_name_list(const std::string& key);

  // Throws for any key present in the file that no getter asked for: everywhere, or only under the table
  // `prefix` (called as soon as a table has been read, so that a misspelled key is reported before any
  // error its default value causes further on). The message suggests the closest valid key.
  // `also_valid`: more names to suggest from under `under` (e.g. every scheme's table under cc).
  void reject_unknown_keys(const std::string& under = "",
                           const std::vector<std::string>& also_valid = {}) const;
  // Throws for a top-level key or table that is not one of `known` (before anything is read).
  void reject_unknown_top_level(const std::vector<std::string>& known) const;
  // final: a call from Config's own code is then known not to return (GCC's -Wreturn-type).
  [[noreturn]] void fail(const std::string& key, const std::string& what) const final;
  int line_of(const std::string& key) const;

  // Every value used, defaults included.
  const toml::table& resolved() const { return resolved_; }
  // Records a value computed from others (e.g. the seed actually used).
  void set_resolved(const std::string& key, toml::node&& value);
  void set_resolved_bool(const std::string& key, bool value) override {
    set_resolved(key, toml::value<bool>(value));
  }
  // Records how a value left out was decided by rule (e.g. "all hosts"), for the resolved file's comments:
  // such values are not written as keys, so the resolved file stays a loadable scenario.
  void note(const std::string& key, const std::string& text) { notes_.emplace_back(key, text); }
  const std::vector<std::pair<std::string, std::string>>& notes() const { return notes_; }

 private:
  const toml::node* find(const std::string& key) const;
  void mark(const std::string& key);
  void apply_override(const std::string& kv);
  std::string source_of(const std::string& key) const;

  std::string file_;
  toml::table root_;
  toml::table resolved_;
  std::set<std::string> used_;
  std::set<std::string> overridden_;
  std::vector<std::pair<std::string, std::string>> notes_;
};

}  // namespace rocesim
