// The run report page; see report_command.h.
#include "cli/report_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/exit_status.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"
#include "io/json_strict.h"

namespace zt {

namespace {

// metrics.csv as columns: {"step": [...], "loss": [...], ...}; empty cells are null.
StatusOr<Json> read_metrics(const std::string& dir) {
  std::ifstream f(dir + "/metrics.csv");
  if (!f) return Status::NotFound(dir + "/metrics.csv: no such file (is " + dir + " a training output_dir?)");
  std::vector<std::string> header;
  Json cols = Json::object();
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (line.size() && line.back() == ',') cells.emplace_back();
    if (header.empty()) {
      header = cells;
      for (const std::string& h : header) cols[h] = Json::array();
      continue;
    }
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
      if (header[i] == "loss_hex") continue;
      cols[header[i]].push_back(cells[i].empty() ? Json(nullptr) : Json(std::strtod(cells[i].c_str(), nullptr)));
    }
  }
  if (header.empty()) return Status::InvalidArgument(dir + "/metrics.csv: no header line");
  return cols;
}

std::string chart_js_path() {
  if (const char* env = std::getenv("ZT_CHARTJS"); env != nullptr && env[0] != '\0') return env;
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  const std::string exe(buf, n > 0 ? static_cast<size_t>(n) : 0);
  const std::filesystem::path dir = std::filesystem::path(exe).parent_path();
  return (dir / ".." / "third_party/npm/node_modules/chart.js/dist/chart.umd.js").lexically_normal().string();
}

StatusOr<std::string> slurp(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(what + " not found at " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Inside a <script>: "</" must not appear literally.
std::string script_safe(std::string s) {
  for (size_t at = 0; (at = s.find("</", at)) != std::string::npos; at += 3) s.replace(at, 2, "<\\/");
  return s;
}

Status write_png(const Json& runs, const std::string& png) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return Status::NotFound("--png needs gnuplot (apt-get install gnuplot-nox)");
  }
  const std::string dir = png + ".data";
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  std::string plot = "set terminal pngcairo size 900,500; set output '" + png +
                     "'; set xlabel 'step'; set ylabel 'loss'; set grid; set key top right; plot ";
  for (size_t r = 0; r < runs.size(); ++r) {
    std::ofstream data(dir + "/" + std::to_string(r) + ".dat");
    const Json& m = runs[r]["metrics"];
    for (size_t i = 0; i < m["step"].size(); ++i) data << m["step"][i].get<double>() << " " << m["loss"][i].get<double>() << "\n";
    plot += std::string(r ? ", " : "") + "'" + dir + "/" + std::to_string(r) + ".dat' with lines lw 2 title '" +
            runs[r]["name"].get<std::string>() + " train loss'";
  }
  const int rc = std::system(("gnuplot -e \"" + plot + "\" 2>&1").c_str());
  std::filesystem::remove_all(dir);
  if (rc != 0) return Status::Internal("gnuplot failed drawing " + png);
  return Status::OK();
}

}  // namespace

std::string report_page(const Json& runs, const std::string& chart_js);

int run_report(const ReportArgs& args) {
  if (args.runs.empty()) return report_error(Status::InvalidArgument("report: give at least one run directory"), kExitBadInput);
  Json runs = Json::array();
  for (const std::string& dir : args.runs) {
    auto metrics = read_metrics(dir);
    if (!metrics.ok()) return report_error(metrics.status(), kExitBadInput);
    Json run = {{"name", std::filesystem::path(dir).lexically_normal().filename().string()}, {"metrics", *metrics}};
    if (file_exists(dir + "/run_report.json")) {
      auto text = slurp(dir + "/run_report.json", "run_report.json");
      auto j = text.ok() ? parse_json_strict(*text, dir + "/run_report.json") : StatusOr<Json>(text.status());
      if (!j.ok()) return report_error(j.status(), kExitBadInput);
      run["report"] = *j;
    }
    runs.push_back(run);
  }
  auto js = slurp(chart_js_path(), "Chart.js (npm chart.js; setup.sh installs it)");
  if (!js.ok()) return report_error(js.status(), kExitBadInput);
  Status s = write_file_atomic(args.output, report_page(runs, script_safe(*js)));
  if (s.ok() && !args.png.empty()) s = write_png(runs, args.png);
  if (!s.ok()) return report_error(s, kExitFailure);
  std::printf("report: %s (%zu run%s)%s\n", args.output.c_str(), runs.size(), runs.size() == 1 ? "" : "s",
              args.png.empty() ? "" : (", loss curve: " + args.png).c_str());
  return kExitOk;
}

Command add_report_command(CLI::App& app) {
  auto rep = std::make_shared<ReportArgs>();
  CLI::App* r = app.add_subcommand("report", "One self-contained HTML page of one or more runs (overlaid): curves, "
                                             "throughput, breakdown, memory against the estimate, communication");
  r->add_option("runs", rep->runs, "Training output directories (metrics.csv, run_report.json)")->required();
  r->add_option("-o,--output", rep->output, "The HTML file to write (default report.html)");
  r->add_option("--png", rep->png, "Also draw the loss curves into this PNG (needs gnuplot)");
  return {r, [rep] { return run_report(*rep); }, false};
}

}  // namespace zt
