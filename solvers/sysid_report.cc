// What `s2r sysid` writes: fit.json, the table, and the plot.
#include <unistd.h>
#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "solvers/sysid.h"

namespace s2r {
namespace {

nlohmann::json Number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string Fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the finished file into place: " + std::strerror(errno));
  }
}

}  // namespace

void WriteFitJson(const SysidConfig& c, const SysidResult& r, const std::string& path) {
  nlohmann::json params = nlohmann::json::array();
  for (size_t k = 0; k < r.params.size(); ++k) {
    const SysidParameterResult& p = r.params[k];
    const SysidParameter& sp = c.params[k];
    nlohmann::json e = {{"name", p.name},
                        {"targets", p.targets},
                        {"value", p.value},
                        {"std", Number(p.std)},
                        {"identifiable", p.identifiable},
                        {"at_bound", p.at_bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.at_bound)},
                        {"initial", p.initial},
                        {"bounds", {sp.lo, sp.hi}},
                        {"scale", sp.log_scale ? "log" : "linear"}};
    if (!p.identifiable) {
      e["why"] = p.why;
      e["partner"] = p.partner.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.partner);
    }
    if (p.latency) {
      e["unit"] = "s";
      e["timesteps"] = std::lround(p.value / c.model.timestep);
    }
    params.push_back(e);
  }
  nlohmann::json names = nlohmann::json::array();
  for (const SysidParameterResult& p : r.params) names.push_back(p.name);
  nlohmann::json corr = nlohmann::json::array();
  for (const auto& row : r.correlation) {
    nlohmann::json jr = nlohmann::json::array();
    for (double v : row) jr.push_back(Number(v));
    corr.push_back(jr);
  }
  nlohmann::json rmse = {{"train", nlohmann::json::object()},
                         {"held_out", nlohmann::json::object()},
                         {"train_initial", nlohmann::json::object()},
                         {"held_out_initial", nlohmann::json::object()},
                         {"units", nlohmann::json::object()}};
  for (const SysidSignalError& s : r.signals) {
    rmse["train"][s.quantity] = Number(s.train);
    rmse["held_out"][s.quantity] = Number(s.held_out);
    rmse["train_initial"][s.quantity] = Number(s.train_initial);
    rmse["held_out_initial"][s.quantity] = Number(s.held_out_initial);
    rmse["units"][s.quantity] = s.unit;
  }
  nlohmann::json starts = nlohmann::json::array();
  for (const SysidStart& st : r.starts) {
    nlohmann::json from = nlohmann::json::object(), to = nlohmann::json::object();
    for (size_t k = 0; k < r.params.size(); ++k) {
      from[r.params[k].name] = st.initial[k];
      to[r.params[k].name] = st.value[k];
    }
    starts.push_back({{"initial", from}, {"value", to},
                      {"cost", {{"initial", Number(st.initial_cost)}, {"final", Number(st.final_cost)},
                                {"scan", Number(st.scan_cost)}}},
                      {"iterations", st.iterations}, {"termination", st.termination}, {"chosen", st.chosen}});
  }
  nlohmann::json files = {{"train", nlohmann::json::array()}, {"held_out", nlohmann::json::array()}};
  for (const Recording& rec : c.recordings) files[rec.held_out ? "held_out" : "train"].push_back(rec.file);
  nlohmann::json j = {{"generator", "s2r sysid"},
                      {"config", c.file},
                      {"scene", c.scene_source},
                      {"parameters", params},
                      {"correlation", {{"parameters", names}, {"matrix", corr}}},
                      {"cost", {{"initial", r.initial_cost}, {"final", r.final_cost}}},
                      {"residual_variance", Number(r.residual_variance)},
                      {"residuals", r.residuals},
                      {"rmse", rmse},
                      {"iterations", r.iterations},
                      {"starts", starts},
                      {"rollouts", r.rollouts},
                      {"windows", {{"train", r.windows_train}, {"held_out", r.windows_held_out}, {"length_s", c.window_s}}},
                      {"recordings", files},
                      {"wall_time_s", r.wall_s},
                      {"termination", r.termination}};
  WriteAtomically(path, j.dump(2) + "\n");
}

std::string SysidTable(const SysidResult& r) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-18s %12s %12s %12s  %-12s %s\n", "parameter", "initial", "fitted", "std",
                "identifiable", "note");
  out << line;
  for (const SysidParameterResult& p : r.params) {
    std::string note = p.at_bound.empty() ? "" : "at the " + p.at_bound + " bound";
    if (!p.identifiable) note += (note.empty() ? "" : "; ") + (p.partner.empty() ? p.why : "trades off against " + p.partner);
    std::snprintf(line, sizeof line, "%-18s %12.6g %12.6g %12s  %-12s %s\n", p.name.c_str(), p.initial, p.value,
                  Fmt("%.4g", p.std).c_str(), p.identifiable ? "yes" : "no", note.c_str());
    out << line;
  }
  out << "\n";
  std::snprintf(line, sizeof line, "%-26s %-6s %12s %12s %12s %12s\n", "signal (RMSE)", "unit", "train before", "train after",
                "held before", "held after");
  out << line;
  for (const SysidSignalError& s : r.signals) {
    std::snprintf(line, sizeof line, "%-26s %-6s %12.4g %12.4g %12.4g %12.4g\n", s.quantity.c_str(), s.unit.c_str(),
                  s.train_initial, s.train, s.held_out_initial, s.held_out);
    out << line;
  }
  std::snprintf(line, sizeof line,
                "\ncost %.6g -> %.6g, residual variance %.4g over %lld residuals, %d iterations, "
                "%lld window rollouts, %.2f s\n",
                r.initial_cost, r.final_cost, r.residual_variance, (long long)r.residuals, r.iterations,
                (long long)r.rollouts, r.wall_s);
  out << line;
  if (r.starts.size() > 1) {  // one line per start of a multi-start
    for (size_t j = 0; j < r.starts.size(); ++j) {
      const SysidStart& st = r.starts[j];
      std::string from, to;
      for (size_t k = 0; k < r.params.size(); ++k) {
        from += (k ? " " : "") + Fmt("%.4g", st.initial[k]);
        to += (k ? " " : "") + Fmt("%.4g", st.value[k]);
      }
      std::snprintf(line, sizeof line, "start %2zu from %s -> %s  cost %s%s\n", j + 1, from.c_str(), to.c_str(),
                    std::isfinite(st.final_cost) ? Fmt("%.6g", st.final_cost).c_str() : st.termination.c_str(),
                    st.chosen ? "  (the fit)" : "");
      out << line;
    }
  }
  return out.str();
}

void PlotSysid(const SysidConfig& c, const SysidResult& r, const std::string& png_path) {
  namespace fs = std::filesystem;
  const char* tmp_env = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp_env != nullptr && *tmp_env ? tmp_env : "/tmp") + "/s2r_sysid_plot.XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error(std::string("--plot: cannot make a temporary folder: ") + std::strerror(errno));
  const fs::path dir(buf.data());
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  // one data file: recordings one after another on a common time axis, a blank line between
  const fs::path data = dir / "traces.dat";
  std::ofstream d(data);
  double offset = 0;
  std::vector<std::pair<double, double>> held_spans;
  for (const SysidTrace& t : r.traces) {
    const double start = offset;
    for (size_t i = 0; i < t.time.size(); ++i) {
      d << offset + (t.time[i] - t.time.front());
      for (size_t q = 0; q < t.recorded.size(); ++q) {
        auto val = [](double v) { return std::isfinite(v) ? std::to_string(v) : std::string("NaN"); };
        d << ' ' << val(t.recorded[q][i]) << ' ' << val(t.initial[q][i]) << ' ' << val(t.fitted[q][i]);
      }
      d << '\n';
    }
    d << "\n\n";
    offset += t.time.back() - t.time.front() + c.period;
    if (t.held_out) held_spans.emplace_back(start, offset - c.period);
  }
  d.close();
  const int S = static_cast<int>(c.signals.size());
  const fs::path script = dir / "plot.gp";
  const std::string tmp_png = png_path + ".tmp";
  std::ofstream g(script);
  g << "set terminal pngcairo size 1200," << 260 * S + 60 << " font ',9'\n";
  g << "set output '" << tmp_png << "'\n";
  g << "set datafile missing 'NaN'\n";
  g << "set multiplot layout " << S << ",1 title 's2r sysid: recorded (points), simulated window by window before (dashed) "
       "and after (solid) the fit; shaded: held out'\n";
  for (int q = 0; q < S; ++q) {
    g << "unset object\n";
    int obj = 1;
    for (const auto& span : held_spans) {
      g << "set object " << obj++ << " rect from " << span.first << ", graph 0 to " << span.second
        << ", graph 1 fc rgb '#e8e8e8' fs solid noborder behind\n";
    }
    g << "set ylabel '" << c.signals[q].quantity << " (" << r.signals[q].unit << ")' noenhanced\n";
    g << "set xlabel 'time, recordings one after another (s)'\n";
    const int col = 2 + 3 * q;
    g << "plot '" << data.string() << "' using 1:" << col << " with points pt 7 ps 0.3 lc rgb '#404040' title 'recorded', "
      << "'' using 1:" << col + 1 << " with lines dt 2 lc rgb '#d62728' title 'before', "
      << "'' using 1:" << col + 2 << " with lines lw 1.5 lc rgb '#1f77b4' title 'after'\n";
  }
  g << "unset multiplot\n";
  g.close();
  const std::string cmd = "gnuplot '" + script.string() + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("--plot: cannot run gnuplot");
  std::string messages;
  char chunk[256];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) messages += chunk;
  const int status = pclose(pipe);
  if (status != 0 || !fs::exists(tmp_png)) {
    std::remove(tmp_png.c_str());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
      throw std::runtime_error("--plot: gnuplot is not installed (Debian: apt install gnuplot-nox)");
    }
    throw std::runtime_error("--plot: gnuplot failed: " + messages);
  }
  if (std::rename(tmp_png.c_str(), png_path.c_str()) != 0) {
    std::remove(tmp_png.c_str());
    throw std::runtime_error(png_path + ": cannot write the plot: " + std::strerror(errno));
  }
}

}  // namespace s2r
