// POSIX implementation: open/write/fsync/rename, with errno text in every error.
#include "host/store/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <climits>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/store/store_error.h"

namespace s2r {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

std::string Parent(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Makes a directory entry change (create, rename, unlink) in `dir` durable.
}  // namespace

void FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw StoreError(dir, "cannot open directory to fsync: " + ErrnoText());
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems do not support fsync on directories; that is not a data error.
  if (rc != 0 && err != EINVAL && err != ENOTSUP)
    throw StoreError(dir, "fsync failed: " + std::string(std::strerror(err)));
}


std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::optional<std::vector<uint8_t>> ReadFileIfExists(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw StoreError(path, "cannot open: " + ErrnoText());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw StoreError(path, "not a regular file");
  }
  std::vector<uint8_t> data(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = n < 0 ? ErrnoText() : "file shrank while reading";
      ::close(fd);
      throw StoreError(path, "read failed: " + why);
    }
    done += size_t(n);
  }
  ::close(fd);
  return data;
}

std::optional<RandomAccessFile> RandomAccessFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw StoreError(path, "cannot open: " + ErrnoText());
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = ErrnoText();
    ::close(fd);
    throw StoreError(path, "cannot stat: " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw StoreError(path, "is not a regular file");
  }
  return RandomAccessFile(path, fd, uint64_t(st.st_size));
}

RandomAccessFile::~RandomAccessFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RandomAccessFile::ReadAt(uint64_t offset, size_t n, uint8_t* out) const {
  if (offset > size_ || n > size_ - offset) {
    throw StoreError(path_, "bytes " + std::to_string(offset) + "+" + std::to_string(n) + " lie outside the file of " +
                                std::to_string(size_) + " bytes (truncated or corrupt)");
  }
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, out + done, n - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw StoreError(path_, "read failed: " + ErrnoText());
    if (r == 0) throw StoreError(path_, "file shrank while being read");
    done += size_t(r);
  }
}

void WriteFileAtomic(const std::string& path, const void* data, size_t n) {
  WriteFileAtomicParts(path, {ConstBytes{data, n}});
}

void WriteFileAtomicParts(const std::string& path, const std::vector<ConstBytes>& parts, bool sync_directory) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw StoreError(path, "cannot create " + tmp + ": " + ErrnoText());
  auto fail = [&](const std::string& what) {
    std::string why = ErrnoText();
    ::close(fd);
    ::unlink(tmp.c_str());
    throw StoreError(path, what + ": " + why);
  };
  // Write everything, make it durable, then publish it under the final name.
  std::vector<struct iovec> iov;
  for (const ConstBytes& p : parts) {
    if (p.size > 0) iov.push_back({const_cast<void*>(p.data), p.size});
  }
  size_t first = 0;
  while (first < iov.size()) {
    const int count = int(std::min<size_t>(iov.size() - first, IOV_MAX));
    ssize_t w = ::writev(fd, iov.data() + first, count);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("write failed");
    // Advance past what was written (writev may stop short).
    size_t done = size_t(w);
    while (first < iov.size() && done >= iov[first].iov_len) {
      done -= iov[first].iov_len;
      ++first;
    }
    if (first < iov.size() && done > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    std::string why = ErrnoText();
    ::unlink(tmp.c_str());
    throw StoreError(path, "close failed: " + why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = ErrnoText();
    ::unlink(tmp.c_str());
    throw StoreError(path, "rename from " + tmp + " failed: " + why);
  }
  if (sync_directory) FsyncDirectory(Parent(path));
}

void RemoveFileIfExists(const std::string& path) {
  if (::unlink(path.c_str()) == 0) {
    FsyncDirectory(Parent(path));
  } else if (errno != ENOENT) {
    throw StoreError(path, "cannot remove: " + ErrnoText());
  }
}

void MakeDirs(const std::string& path) {
  if (path.empty() || IsDirectory(path)) return;
  std::string parent = Parent(path);
  if (parent != path) MakeDirs(parent);
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw StoreError(path, "cannot create directory: " + ErrnoText());
  if (!IsDirectory(path)) throw StoreError(path, "exists and is not a directory");
  FsyncDirectory(parent);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> ListSubdirectories(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) throw StoreError(path, "cannot list directory: " + ErrnoText());
  std::vector<std::string> out;
  while (struct dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::lstat(JoinPath(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace s2r
