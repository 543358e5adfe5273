// The file-system primitives of the directory store, with the crash-safety rule in one place:
// every file is written to NAME.tmp, fsynced, renamed over NAME and its directory fsynced, so a
// reader (or a restart after a crash) sees the old file or the new one, never a torn one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace s2r {

// The whole file, or nullopt if it does not exist. Other failures throw StoreError(path).
std::optional<std::vector<uint8_t>> ReadFileIfExists(const std::string& path);

// A file opened for reads at offsets (shard index, then single inner chunks).
class RandomAccessFile {
 public:
  // nullopt if the file does not exist; other failures throw StoreError(path).
  static std::optional<RandomAccessFile> Open(const std::string& path);
  RandomAccessFile(RandomAccessFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  RandomAccessFile& operator=(RandomAccessFile&&) = delete;
  RandomAccessFile(const RandomAccessFile&) = delete;
  ~RandomAccessFile();
  uint64_t size() const { return size_; }
  // Exactly `n` bytes at `offset` (StoreError naming the file if the file is shorter).
  void ReadAt(uint64_t offset, size_t n, uint8_t* out) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Atomically replaces `path` with `n` bytes (temp file + fsync + rename + directory fsync).
void WriteFileAtomic(const std::string& path, const void* data, size_t n);

// The same for a file made of several pieces, written in order with writev (no assembly copy).
struct ConstBytes {
  const void* data;
  size_t size;
};
// sync_directory false leaves the rename's durability to a later FsyncDirectory of the parent
// (the file's contents are always fsynced before the rename): for writers that batch them.
void WriteFileAtomicParts(const std::string& path, const std::vector<ConstBytes>& parts,
                          bool sync_directory = true);
// fsync of a directory, making renames and new entries in it durable.
void FsyncDirectory(const std::string& dir);

// Removes `path` if it exists (and fsyncs its directory).
void RemoveFileIfExists(const std::string& path);

// mkdir -p; new directories are made durable by fsyncing their parents.
void MakeDirs(const std::string& path);

bool IsDirectory(const std::string& path);
bool FileExists(const std::string& path);

// Names of the sub-directories of `path` (symlinks are not followed), sorted.
std::vector<std::string> ListSubdirectories(const std::string& path);

// "a" + "b" -> "a/b" (no doubled slash).
std::string JoinPath(const std::string& a, const std::string& b);

}  // namespace s2r
