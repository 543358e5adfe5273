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

// Atomically replaces `path` with `n` bytes (temp file + fsync + rename + directory fsync).
void WriteFileAtomic(const std::string& path, const void* data, size_t n);

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
