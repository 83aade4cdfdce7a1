#include "config/config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

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
        if (next_is_index) arr->push_back(toml::array{});
        else arr->push_back(toml::table{});
      }
      at = arr->get(idx);
    } else {
      auto* tbl = at->as_table();
      if (!tbl) return nullptr;
      if (!tbl->contains(p)) {
        if (next_is_index) tbl->insert(p, toml::array{});
        else tbl->insert(p, toml::table{});
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
    std::move(value).visit([&](auto&& v) { arr->replace(arr->begin() + static_cast<std::ptrdiff_t>(idx), std::move(v)); });
  } else if (auto* tbl = parent->as_table()) {
    std::move(value).visit([&](auto&& v) { tbl->insert_or_assign(last, std::move(v)); });
  }
}

std::string fmt_num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, overrides);
}

Config Config::parse(std::string_view text, const std::string& name, const std::vector<std::string>& overrides) {
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
  for (const auto& part : parts)
    if (part[0] == '[') (void)index_of(part, key);
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

void Config::set_resolved(const std::string& key, toml::node&& value) { put(resolved_, key, std::move(value)); }

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
    if (v < lo || v > hi) fail(key, fmt::format("{} is out of range; expected an integer in [{}, {}]", v, lo, hi));
  }
  set_resolved(key, toml::value<int64_t>(v));
  return v;
}

double Config::get_double(const std::string& key, double def, double lo, double hi) {
  mark(key);
  double v = def;
  if (const toml::node* n = find(key)) {
    if (auto d = n->value<double>()) v = *d;
    else fail(key, fmt::format("expected a number in [{}, {}]", fmt_num(lo), fmt_num(hi)));
    if (!(v >= lo && v <= hi))
      fail(key, fmt::format("{} is out of range; expected a number in [{}, {}]", fmt_num(v), fmt_num(lo), fmt_num(hi)));
  }
  set_resolved(key, toml::value<double>(v));
  return v;
}

bool Config::get_bool(const std::string& key, bool def) {
  mark(key);
  bool v = def;
  if (const toml::node* n = find(key)) {
    if (auto b = n->value_exact<bool>()) v = *b;
    else fail(key, "expected true or false");
  }
  set_resolved(key, toml::value<bool>(v));
  return v;
}

std::string Config::get_string(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) {
  mark(key);
  std::string v = def;
  if (const toml::node* n = find(key)) {
    if (auto s = n->value_exact<std::string>()) v = *s;
    else fail(key, "expected a string");
  }
  if (!allowed.empty() && (has(key) || !v.empty())) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == v;
    if (!ok) fail(key, fmt::format("'{}' is not one of: {}", v, fmt::join(allowed, ", ")));
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

std::vector<std::string> Config::get_string_list(const std::string& key, const std::vector<std::string>& def) {
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

void Config::reject_unknown_keys() const {
  // Walk the tree; leaves (and whole tables nobody asked about) must have been read.
  std::vector<std::pair<std::string, const toml::node*>> stack{{"", &root_}};
  while (!stack.empty()) {
    auto [prefix, node] = stack.back();
    stack.pop_back();
    if (const auto* tbl = node->as_table()) {
      for (const auto& [k, v] : *tbl) {
        const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (used_.count(key) && !v.is_table() && !(v.is_array() && v.as_array()->is_array_of_tables())) continue;
        if (v.is_table() || (v.is_array() && v.as_array()->is_array_of_tables() && used_.count(key))) {
          stack.emplace_back(key, &v);
          continue;
        }
        // Find valid siblings to suggest.
        std::vector<std::string> valid;
        const std::string pre = prefix.empty() ? "" : prefix + ".";
        for (const auto& u : used_)
          if (u.rfind(pre, 0) == 0 && u.find('.', pre.size()) == std::string::npos &&
              u.find('[', pre.size()) == std::string::npos)
            valid.push_back(u.substr(pre.size()));
        const std::string where = overridden_.count(key) ? "--set " + key : file_;
        const int line = overridden_.count(key) ? 0 : static_cast<int>(v.source().begin.line);
        throw InputError(where, line,
                         fmt::format("unknown key '{}'{}", key,
                                     valid.empty() ? std::string("")
                                                   : fmt::format(" (valid here: {})", fmt::join(valid, ", "))));
      }
    } else if (const auto* arr = node->as_array()) {
      for (size_t i = 0; i < arr->size(); ++i) stack.emplace_back(prefix + "[" + std::to_string(i) + "]", arr->get(i));
    }
  }
}

}  // namespace rocesim
