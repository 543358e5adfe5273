#include "host/trajectory_io.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace s2r {
namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cell);
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  out.push_back(cell);
  for (std::string& s : out) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  return out;
}

[[noreturn]] void Fail(const std::string& path, int line, const std::string& what) {
  throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

const Real* ActionSchedule::At(long step, double t) const {
  if (rows.empty()) return nullptr;
  if (!has_time) return rows[std::min<size_t>(step, rows.size() - 1)].data();
  const Real* current = nullptr;
  for (size_t i = 0; i < rows.size() && time[i] <= t + 1e-9; ++i) current = rows[i].data();
  return current;
}

ActionSchedule ReadActionsCsv(const std::string& path, const Model& m) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open actions file: " + std::strerror(errno));
  std::string line;
  int line_no = 0;
  // header: every actuator exactly once, optional time column
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") != std::string::npos) break;
  }
  if (line_no == 0 || line.find_first_not_of(" \t\r") == std::string::npos) {
    throw InputError(path + ": empty actions file (expected a header naming the actuators)");
  }
  std::vector<std::string> header = SplitCsvLine(line);
  ActionSchedule sched;
  std::vector<int> column_to_actuator(header.size(), -1);
  std::vector<int> seen(m.nactuator(), 0);
  int time_column = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string& name = header[c];
    if (name == "time") {
      if (time_column >= 0) Fail(path, line_no, "column 'time' appears twice");
      time_column = static_cast<int>(c);
      continue;
    }
    int a = m.ActuatorId(name);
    if (a < 0) {
      std::string known;
      for (const std::string& n : m.actuator_name) known += (known.empty() ? "" : ", ") + n;
      Fail(path, line_no, "column " + std::to_string(c + 1) + " '" + name + "' is not an actuator of the scene (actuators: " + known + ")");
    }
    if (seen[a]++) Fail(path, line_no, "column '" + name + "' appears twice");
    column_to_actuator[c] = a;
  }
  for (int a = 0; a < m.nactuator(); ++a) {
    if (!seen[a]) Fail(path, line_no, "missing column for actuator '" + m.actuator_name[a] + "'");
  }
  sched.has_time = time_column >= 0;
  // rows
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() != header.size()) {
      Fail(path, line_no, "expected " + std::to_string(header.size()) + " columns, got " + std::to_string(cells.size()));
    }
    std::vector<Real> row(m.nactuator(), 0);
    for (size_t c = 0; c < cells.size(); ++c) {
      const char* s = cells[c].c_str();
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(s, &end);
      if (cells[c].empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
        Fail(path, line_no, "column '" + header[c] + "': '" + cells[c] + "' is not a finite number");
      }
      if (static_cast<int>(c) == time_column) {
        if (!sched.time.empty() && v <= sched.time.back()) Fail(path, line_no, "column 'time': times must increase");
        sched.time.push_back(v);
      } else {
        row[column_to_actuator[c]] = static_cast<Real>(v);
      }
    }
    sched.rows.push_back(std::move(row));
  }
  if (sched.rows.empty()) throw InputError(path + ": no action rows after the header");
  return sched;
}

std::vector<std::string> TrajectoryColumns(const Model& m) {
  std::vector<std::string> cols{"time"};
  const char* fields[] = {"px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
  for (int b = 1; b < m.nbody(); ++b) {
    for (const char* f : fields) cols.push_back(m.body_name[b] + "." + f);
  }
  for (const std::string& a : m.actuator_name) cols.push_back(a);
  return cols;
}

CsvWriter::CsvWriter(const std::string& path) : path_(path), tmp_path_(path + ".tmp") {
  file_ = std::fopen(tmp_path_.c_str(), "w");
  if (!file_) throw InputError(path + ": cannot create output file: " + std::strerror(errno));
}

CsvWriter::~CsvWriter() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void CsvWriter::WriteHeader(const std::vector<std::string>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) std::fprintf(file_, "%s%s", i ? "," : "", columns[i].c_str());
  std::fputc('\n', file_);
}

void CsvWriter::WriteRow(const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) std::fprintf(file_, "%s%.9g", i ? "," : "", values[i]);
  std::fputc('\n', file_);
}

void CsvWriter::Commit() {
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0) {
    throw InputError(path_ + ": write failed: " + std::strerror(errno));
  }
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw InputError(path_ + ": cannot rename temporary file: " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace s2r
