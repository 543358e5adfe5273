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

CsvTable ReadCsvTable(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") != std::string::npos) break;
  }
  if (line_no == 0 || line.find_first_not_of(" \t\r") == std::string::npos) {
    throw InputError(path + ": empty " + what + " (expected a header row naming the columns)");
  }
  CsvTable t;
  t.path = path;
  t.header_line = line_no;
  t.header = SplitCsvLine(line);
  for (size_t c = 0; c < t.header.size(); ++c) {
    if (t.header[c].empty()) Fail(path, line_no, "column " + std::to_string(c + 1) + " has no name");
    for (size_t d = 0; d < c; ++d) {
      if (t.header[d] == t.header[c]) Fail(path, line_no, "column '" + t.header[c] + "' appears twice");
    }
  }
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (cells.size() != t.header.size()) {
      Fail(path, line_no, "expected " + std::to_string(t.header.size()) + " columns, got " + std::to_string(cells.size()));
    }
    std::vector<double> row(cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      const char* s = cells[c].c_str();
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(s, &end);
      if (cells[c].empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
        Fail(path, line_no, "column '" + t.header[c] + "': '" + cells[c] + "' is not a finite number");
      }
      row[c] = v;
    }
    t.rows.push_back(std::move(row));
    t.lines.push_back(line_no);
  }
  if (t.rows.empty()) throw InputError(path + ": no rows after the header");
  return t;
}

int CsvTable::Column(const std::string& name) const {
  for (size_t c = 0; c < header.size(); ++c) {
    if (header[c] == name) return static_cast<int>(c);
  }
  return -1;
}

ActionSchedule ReadActionsCsv(const std::string& path, const Model& m) {
  CsvTable t = ReadCsvTable(path, "actions file");
  // header: every actuator exactly once, optional time column
  ActionSchedule sched;
  std::vector<int> column_to_actuator(t.header.size(), -1);
  std::vector<int> seen(m.nactuator(), 0);
  const int time_column = t.Column("time");
  for (size_t c = 0; c < t.header.size(); ++c) {
    const std::string& name = t.header[c];
    if (static_cast<int>(c) == time_column) continue;
    int a = m.ActuatorId(name);
    if (a < 0) {
      std::string known;
      for (const std::string& n : m.actuator_name) known += (known.empty() ? "" : ", ") + n;
      Fail(path, t.header_line, "column " + std::to_string(c + 1) + " '" + name + "' is not an actuator of the scene (actuators: " + known + ")");
    }
    seen[a] = 1;
    column_to_actuator[c] = a;
  }
  for (int a = 0; a < m.nactuator(); ++a) {
    if (!seen[a]) Fail(path, t.header_line, "missing column for actuator '" + m.actuator_name[a] + "'");
  }
  sched.has_time = time_column >= 0;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<Real> row(m.nactuator(), 0);
    for (size_t c = 0; c < t.header.size(); ++c) {
      const double v = t.rows[r][c];
      if (static_cast<int>(c) == time_column) {
        if (!sched.time.empty() && v <= sched.time.back()) Fail(path, t.lines[r], "column 'time': times must increase");
        sched.time.push_back(v);
      } else {
        row[column_to_actuator[c]] = static_cast<Real>(v);
      }
    }
    sched.rows.push_back(std::move(row));
  }
  return sched;
}

std::vector<std::string> TrajectoryColumns(const Model& m) {
  std::vector<std::string> cols{"time"};
  const char* fields[] = {"px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
  for (int b : m.TrajectoryBodies()) {
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
