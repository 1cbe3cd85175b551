// Hostfile parsing and DeepSpeed's resource filters (see hostfile.h). Order as DeepSpeed's
// runner: --num_nodes and --num_procs trim the pool first, then --include / --exclude.
#include "cli/hostfile.h"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "io/atomic_file.h"

namespace zt {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// "host1:0,1@host2" -> host -> slots (empty: the whole host).
StatusOr<std::map<std::string, std::vector<int>>> parse_filter(const std::string& spec, const char* flag) {
  std::map<std::string, std::vector<int>> out;
  std::stringstream nodes(spec);
  for (std::string node; std::getline(nodes, node, '@');) {
    const size_t colon = node.find(':');
    const std::string host = trim(node.substr(0, colon));
    if (host.empty()) return Status::InvalidArgument(std::string(flag) + " \"" + spec + "\": an empty host name");
    std::vector<int>& slots = out[host];
    if (colon == std::string::npos) continue;
    std::stringstream list(node.substr(colon + 1));
    for (std::string item; std::getline(list, item, ',');) {
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 0) {
        return Status::InvalidArgument(std::string(flag) + " \"" + spec + "\": \"" + item + "\" is not a slot index of " +
                                       host);
      }
      slots.push_back(static_cast<int>(v));
    }
  }
  return out;
}

const HostSlots* find_host(const std::vector<HostSlots>& hosts, const std::string& name) {
  for (const HostSlots& h : hosts) {
    if (h.host == name) return &h;
  }
  return nullptr;
}

StatusOr<std::vector<HostSlots>> apply_filter(const std::vector<HostSlots>& hosts, const std::string& spec,
                                              bool include) {
  const char* flag = include ? "--include" : "--exclude";
  ZT_ASSIGN_OR_RETURN(const auto filter, parse_filter(spec, flag));
  for (const auto& [host, slots] : filter) {
    const HostSlots* h = find_host(hosts, host);
    if (h == nullptr) return Status::InvalidArgument(std::string(flag) + ": host \"" + host + "\" is not in the hostfile");
    for (int s : slots) {
      if (std::find(h->slots.begin(), h->slots.end(), s) == h->slots.end()) {
        return Status::InvalidArgument(std::string(flag) + ": " + host + " has no slot " + std::to_string(s));
      }
    }
  }
  std::vector<HostSlots> out;
  for (const HostSlots& h : hosts) {
    const auto it = filter.find(h.host);
    HostSlots kept{h.host, {}};
    for (int s : h.slots) {
      const bool listed = it != filter.end() && (it->second.empty() ||
                                                 std::find(it->second.begin(), it->second.end(), s) != it->second.end());
      if (listed == include) kept.slots.push_back(s);
    }
    if (!kept.slots.empty()) out.push_back(std::move(kept));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<HostSlots>> parse_hostfile(const std::string& text, const std::string& path) {
  static const std::regex line_re(R"(^(\S+)\s+slots=(\d+)$)");
  std::vector<HostSlots> hosts;
  std::stringstream in(text);
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    std::smatch m;
    const std::string where = path + ":" + std::to_string(number);
    if (!std::regex_match(line, m, line_re)) {
      return Status::InvalidArgument(where + ": \"" + line + "\" is not \"hostname slots=N\"");
    }
    const int slots = std::stoi(m[2].str());
    if (slots <= 0) return Status::InvalidArgument(where + ": slots must be positive");
    if (find_host(hosts, m[1].str()) != nullptr) {
      return Status::InvalidArgument(where + ": host " + m[1].str() + " is listed twice");
    }
    HostSlots h{m[1].str(), {}};
    for (int s = 0; s < slots; ++s) h.slots.push_back(s);
    hosts.push_back(std::move(h));
  }
  if (hosts.empty()) return Status::InvalidArgument(path + ": no hosts");
  return hosts;
}

StatusOr<std::vector<HostSlots>> read_hostfile(const std::string& path) {
  ZT_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  return parse_hostfile(text, path);
}

StatusOr<std::vector<HostSlots>> select_hosts(std::vector<HostSlots> hosts, const HostFilter& f) {
  if (!f.include.empty() && !f.exclude.empty()) {
    return Status::InvalidArgument("--include and --exclude are mutually exclusive (as in DeepSpeed)");
  }
  if (f.num_nodes > 0 && static_cast<size_t>(f.num_nodes) < hosts.size()) hosts.resize(static_cast<size_t>(f.num_nodes));
  if (f.num_procs > 0) {
    for (HostSlots& h : hosts) {
      if (static_cast<size_t>(f.num_procs) < h.slots.size()) h.slots.resize(static_cast<size_t>(f.num_procs));
    }
  }
  if (!f.include.empty()) {
    ZT_ASSIGN_OR_RETURN(hosts, apply_filter(hosts, f.include, true));
  }
  if (!f.exclude.empty()) {
    ZT_ASSIGN_OR_RETURN(hosts, apply_filter(hosts, f.exclude, false));
  }
  if (hosts.empty()) return Status::InvalidArgument("no hosts or slots left after --include/--exclude");
  return hosts;
}

std::string mpirun_host_list(const std::vector<HostSlots>& hosts) {
  std::string out;
  for (const HostSlots& h : hosts) out += (out.empty() ? "" : ",") + h.host + ":" + std::to_string(h.slots.size());
  return out;
}

int total_slots(const std::vector<HostSlots>& hosts) {
  int n = 0;
  for (const HostSlots& h : hosts) n += static_cast<int>(h.slots.size());
  return n;
}

}  // namespace zt
