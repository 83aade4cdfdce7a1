#include "config/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "core/text.h"
namespace rocesim {

namespace {

// The index of an "[N]" component (at most 100000: scenarios are written by people).
size_t index_of(const std::string& part, const std::string& key) {
  const std::string digits = part.substr(1, part.size() - 2);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(digits) > 100000)
    throw InputError("--set " + key, 0, fmt::format("bad array index '{}' (expected [0] .. [100000])", part));
  return std::stoul(digits);
}

// Splits "a.b[2].c" into components: "a", "b", "[2]", "c".
std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : key) {
    if (c == '.') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else if (c == '[') {
      if (!cur.empty()) parts.push_back(cur);
      cur = "[";
    } else if (c == ']') {
      cur += c;
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

// Finds or creates the node at `key` in `root` (tables and arrays created on the way).
toml::node* ensure_parent(toml::table& root, const std::vector<std::string>& parts) {
  toml::node* at = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    const bool next_is_index = parts[i + 1][0] == '[';
    if (p[0] == '[') {
      auto* arr = at->as_array();
      if (!arr) return nullptr;
      const size_t idx = index_of(p, "");
      while (arr->size() <= idx) {
        if (next_is_index)
          arr->push_back(toml::array{});
        else
          arr->push_back(toml::table{});
      }
      at = arr->get(idx);
    } else {
      auto* tbl = at->as_table();
      if (!tbl) return nullptr;
      if (!tbl->contains(p)) {
        if (next_is_index)
          tbl->insert(p, toml::array{});
        else
          tbl->insert(p, toml::table{});
      }
      at = tbl->get(p);
    }
  }
  return at;
}

void put(toml::table& root, const std::string& key, toml::node&& value) {
  const auto parts = split_key(key);
  toml::node* parent = ensure_parent(root, parts);
  if (!parent) return;
  const std::string& last = parts.back();
  if (last[0] == '[') {
    auto* arr = parent->as_array();
    if (!arr) return;
    const size_t idx = index_of(last, key);
    while (arr->size() <= idx) arr->push_back(toml::table{});
    std::move(value).visit(
        [&](auto&& v) { arr->replace(arr->begin() + static_cast<std::ptrdiff_t>(idx), std::move(v)); });
  } else if (auto* tbl = parent->as_table()) {
    std::move(value).visit([&](auto&& v) { tbl->insert_or_assign(last, std::move(v)); });
  }
}

std::string fmt_num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

// Edit distance: insertions, deletions, substitutions and transpositions of neighbours ("dctpc" is one
// edit from "dctcp").
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                           d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  return d.back();
}

// Lower case without '_' and '-', so that "alltoall" and "All-To-All" both meet "all_to_all".
std::string folded(const std::string& s) {
  std::string f;
  for (char ch : s)
    if (ch != '_' && ch != '-') f += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return f;
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(1, word.size() / 3) + 1;  // farther than this is not a misspelling
  for (const auto& c : candidates) {
    if (c == word) continue;
    const size_t d = std::min(edit_distance(word, c), edit_distance(folded(word), folded(c)));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string m = closest_match(word, candidates);
  return m.empty() ? "" : fmt::format(" (did you mean '{}'?)", m);
}

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  const std::optional<std::string> text = read_text(path);
  if (!text) throw InputError(path, 0, "cannot open scenario file");
  return parse(*text, path, overrides);
}

Config Config::parse(std::string_view text, const std::string& name,
                     const std::vector<std::string>& overrides) {
  Config c;
  c.file_ = name;
  try {
    c.root_ = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw InputError(name, static_cast<int>(e.source().begin.line),
                     fmt::format("TOML syntax error: {}", e.description()));
  }
  for (const auto& o : overrides) c.apply_override(o);
  return c;
}

std::string Config::dir() const {
  const auto p = std::filesystem::path(file_).parent_path();
  return p.empty() ? "." : p.string();
}

void Config::apply_override(const std::string& kv) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set " + kv, 0, "expected key=value, e.g. --set switch.buffer_bytes=16000000");
  const std::string key = kv.substr(0, eq);
  const std::string val = kv.substr(eq + 1);
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + val);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("v", val);  // a bare word is a string
  }
  const auto parts = split_key(key);
  if (parts.empty()) throw InputError("--set " + kv, 0, "empty key");
  // An array of tables needs an element: "traffic.load" -> "traffic[0].load".
  const toml::node* at = &root_;
  for (size_t i = 0; i + 1 < parts.size() && at; ++i) {
    if (parts[i][0] == '[') {
      const auto* arr = at->as_array();
      const std::string digits = parts[i].substr(1, parts[i].size() - 2);
      at = arr && !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                   digits.size() <= 6
               ? arr->get(std::stoul(digits))
               : nullptr;
      continue;
    }
    const auto* tbl = at->as_table();
    at = tbl ? tbl->get(parts[i]) : nullptr;
    if (at && at->is_array() && at->as_array()->is_array_of_tables() && parts[i + 1][0] != '[') {
      std::string fix;
      for (size_t j = 0; j < parts.size(); ++j) {
        if (j > 0 && parts[j][0] != '[') fix += '.';
        fix += parts[j];
        if (j == i) fix += "[0]";
      }
      throw InputError("--set " + kv, 0,
                       fmt::format("'{}' is an array of tables ([[{}]], {} of them): name one element, e.g. "
                                   "--set {}={}",
                                   parts[i], parts[i], at->as_array()->size(), fix, val));
    }
  }
  for (const auto& part : parts)
    if (part[0] == '[')
      (void)index_of(part, key);
    else if (part.find_first_of(" \t\"'") != std::string::npos)
      throw InputError("--set " + kv, 0, fmt::format("bad key component '{}'", part));
  toml::node* parent = ensure_parent(root_, parts);
  if (!parent || (parts.back()[0] == '[' ? !parent->is_array() : !parent->is_table()))
    throw InputError("--set " + kv, 0, fmt::format("'{}' does not name a value inside a table", key));
  put(root_, key, std::move(*parsed.get("v")));
  overridden_.insert(key);
}

const toml::node* Config::find(const std::string& key) const {
  const toml::node* at = &root_;
  for (const auto& p : split_key(key)) {
    if (p[0] == '[') {
      const auto* arr = at->as_array();
      if (!arr) return nullptr;
      const std::string digits = p.substr(1, p.size() - 2);
      if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
        return nullptr;
      at = arr->get(std::stoul(digits));
    } else {
      const auto* tbl = at->as_table();
      if (!tbl) return nullptr;
      at = tbl->get(p);
    }
    if (!at) return nullptr;
  }
  return at;
}

bool Config::has(const std::string& key) const { return find(key) != nullptr; }

void Config::mark(const std::string& key) { used_.insert(key); }

int Config::line_of(const std::string& key) const {
  const toml::node* n = find(key);
  return n ? static_cast<int>(n->source().begin.line) : 0;
}

std::string Config::source_of(const std::string& key) const {
  return overridden_.count(key) ? "--set " + key : file_;
}

void Config::fail(const std::string& key, const std::string& what) const {
  if (overridden_.count(key)) throw InputError("--set " + key, 0, what);
  throw InputError(file_, line_of(key), fmt::format("{}: {}", key, what));
}

void Config::set_resolved(const std::string& key, toml::node&& value) {
  put(resolved_, key, std::move(value));
}

int64_t Config::get_int(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
  mark(key);
  int64_t v = def;
  if (const toml::node* n = find(key)) {
    if (auto i = n->value_exact<int64_t>()) {
      v = *i;
    } else if (auto d = n->value_exact<double>(); d && std::floor(*d) == *d && std::fabs(*d) < 9e18) {
      v = static_cast<int64_t>(*d);
    } else {
      fail(key, fmt::format("expected an integer in [{}, {}]", lo, hi));
    }
    if (v < lo || v > hi)
      fail(key, fmt::format("{} is out of range; expected an integer in [{}, {}]", v, lo, hi));
  }
  set_resolved(key, toml::value<int64_t>(v));
  return v;
}

double Config::get_double(const std::string& key, double def, double lo, double hi) {
  mark(key);
  double v = def;
  if (const toml::node* n = find(key)) {
    if (auto d = n->value<double>())
      v = *d;
    else
      fail(key, fmt::format("expected a number in [{}, {}]", fmt_num(lo), fmt_num(hi)));
    if (!(v >= lo && v <= hi))
      fail(key, fmt::format("{} is out of range; expected a number in [{}, {}]", fmt_num(v), fmt_num(lo),
                            fmt_num(hi)));
  }
  set_resolved(key, toml::value<double>(v));
  return v;
}

bool Config::get_bool(const std::string& key, bool def) {
  mark(key);
  bool v = def;
  if (const toml::node* n = find(key)) {
    if (auto b = n->value_exact<bool>())
      v = *b;
    else
      fail(key, "expected true or false");
  }
  set_resolved(key, toml::value<bool>(v));
  return v;
}

std::string Config::get_string(const std::string& key, const std::string& def,
                               const std::vector<std::string>& allowed) {
  mark(key);
  std::string v = def;
  if (const toml::node* n = find(key)) {
    if (auto s = n->value_exact<std::string>())
      v = *s;
    else
      fail(key, "expected a string");
  }
  if (!allowed.empty() && (has(key) || !v.empty())) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == v;
    if (!ok)
      fail(key,
           fmt::format("'{}' is not one of: {}{}", v, fmt::join(allowed, ", "), did_you_mean(v, allowed)));
  }
  set_resolved(key, toml::value<std::string>(v));
  return v;
}

std::vector<double> Config::get_double_list(const std::string& key, const std::vector<double>& def, double lo,
                                            double hi) {
  mark(key);
  std::vector<double> v = def;
  if (const toml::node* n = find(key)) {
    const auto* arr = n->as_array();
    if (!arr) fail(key, "expected an array of numbers");
    v.clear();
    for (const auto& e : *arr) {
      auto d = e.value<double>();
      if (!d || !(*d >= lo && *d <= hi))
        fail(key, fmt::format("expected numbers in [{}, {}]", fmt_num(lo), fmt_num(hi)));
      v.push_back(*d);
    }
  }
  toml::array out;
  for (double d : v) out.push_back(d);
  set_resolved(key, std::move(out));
  return v;
}

std::vector<std::string> Config::get_string_list(const std::string& key,
                                                 const std::vector<std::string>& def) {
  mark(key);
  std::vector<std::string> v = def;
  if (const toml::node* n = find(key)) {
    v.clear();
    if (auto s = n->value_exact<std::string>()) {
      v.push_back(*s);
    } else if (const auto* arr = n->as_array()) {
      for (const auto& e : *arr) {
        auto s2 = e.value_exact<std::string>();
        if (!s2) fail(key, "expected an array of strings");
        v.push_back(*s2);
      }
    } else {
      fail(key, "expected a string or an array of strings");
    }
  }
  toml::array out;
  for (const auto& s : v) out.push_back(s);
  set_resolved(key, std::move(out));
  return v;
}

size_t Config::table_array_size(const std::string& key) {
  mark(key);
  const toml::node* n = find(key);
  if (!n) return 0;
  const auto* arr = n->as_array();
  if (!arr) fail(key, "expected an array of tables, e.g. [[" + key + "]]");
  for (size_t i = 0; i < arr->size(); ++i)
    if (!arr->get(i)->is_table()) fail(key, "expected an array of tables, e.g. [[" + key + "]]");
  return arr->size();
}

std::string Config::get_id_or_name(const std::string& key) {
  mark(key);
  const toml::node* n = find(key);
  if (!n) fail(key, "missing (a node name such as \"H1\" or a node id)");
  if (auto i = n->value_exact<int64_t>()) {
    set_resolved(key, toml::value<int64_t>(*i));
    return std::to_string(*i);
  }
  if (auto s = n->value_exact<std::string>()) {
    set_resolved(key, toml::value<std::string>(*s));
    return *s;
  }
  fail(key, "expected a node name (string) or a node id (integer)");
}

std::vector<std::string> Config::get_id_or_name_list(const std::string& key) {
  mark(key);
  std::vector<std::string> v;
  const toml::node* n = find(key);
  if (!n) return v;
  const auto* arr = n->as_array();
  if (!arr) fail(key, "expected an array of node names (strings) or node ids (integers)");
  toml::array out;
  for (const auto& e : *arr) {
    if (auto i = e.value_exact<int64_t>()) {
      v.push_back(std::to_string(*i));
      out.push_back(*i);
    } else if (auto s = e.value_exact<std::string>()) {
      v.push_back(*s);
      out.push_back(*s);
    } else {
      fail(key, "expected an array of node names (strings) or node ids (integers)");
    }
  }
  set_resolved(key, std::move(out));
  return v;
}

void Config::reject_unknown_top_level(const std::vector<std::string>& known) const {
  for (const auto& [k, v] : root_) {
    const std::string key(k.str());
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string where = file_;
    int line = static_cast<int>(v.source().begin.line);
    for (const auto& o : overridden_)
      if (split_key(o).front() == key) {
        where = "--set " + o;
        line = 0;
      }
    throw InputError(
        where, line,
        fmt::format("unknown {} '{}'{} (valid at the top level: {})", v.is_table() ? "table" : "key", key,
                    did_you_mean(key, known), fmt::join(known, ", ")));
  }
}

void Config::reject_unknown_keys(const std::string& under, const std::vector<std::string>& also_valid) const {
  // Walk the tree; leaves (and whole tables nobody asked about) must have been read.
  const toml::node* start = under.empty() ? &root_ : find(under);
  if (!start) return;
  const auto read_under = [&](const std::string& key) {  // any key below `key` was read
    const auto it = used_.lower_bound(key + ".");
    const auto ia = used_.lower_bound(key + "[");
    return (it != used_.end() && it->rfind(key + ".", 0) == 0) ||
           (ia != used_.end() && ia->rfind(key + "[", 0) == 0);
  };
  std::vector<std::pair<std::string, const toml::node*>> stack{{under, start}};
  while (!stack.empty()) {
    auto [prefix, node] = stack.back();
    stack.pop_back();
    if (const auto* tbl = node->as_table()) {
      for (const auto& [k, v] : *tbl) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (used_.count(key) && !v.is_table() && !(v.is_array() && v.as_array()->is_array_of_tables()))
          continue;
        const bool unknown_table = v.is_table() && !v.as_table()->empty() && !read_under(key);
        if (!unknown_table &&
            (v.is_table() || (v.is_array() && v.as_array()->is_array_of_tables() && used_.count(key)))) {
          stack.emplace_back(key, &v);
          continue;
        }
        // Valid siblings (keys and tables read here) to suggest.
        std::vector<std::string> valid;
        const std::string pre = prefix.empty() ? "" : prefix + ".";
        for (const auto& u : used_)
          if (u.rfind(pre, 0) == 0) {
            std::string name = u.substr(pre.size(), u.find_first_of(".[", pre.size()) - pre.size());
            if (!name.empty() && std::find(valid.begin(), valid.end(), name) == valid.end())
              valid.push_back(name);
          }
        std::vector<std::string> suggest = valid;
        if (prefix == under) suggest.insert(suggest.end(), also_valid.begin(), also_valid.end());
        std::string where = file_;
        int line = static_cast<int>(v.source().begin.line);
        for (const auto& o : overridden_)
          if (o == key || o.rfind(key + ".", 0) == 0 || o.rfind(key + "[", 0) == 0) {
            where = "--set " + o;
            line = 0;
          }
        throw InputError(
            where, line,
            fmt::format(
                "unknown {} '{}'{}{}", unknown_table ? "table" : "key", key,
                did_you_mean(std::string(k.str()), suggest),
                valid.empty() ? std::string("") : fmt::format(" (valid here: {})", fmt::join(valid, ", "))));
      }
    } else if (const auto* arr = node->as_array()) {
      for (size_t i = 0; i < arr->size(); ++i)
        stack.emplace_back(prefix + "[" + std::to_string(i) + "]", arr->get(i));
    }
  }
}

}  // namespace rocesim
