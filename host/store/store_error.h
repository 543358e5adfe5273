// The one exception type of the Zarr store. Every failure to read, parse, decode or write a store
// is reported as a StoreError that names the file (or node) it concerns, so a bad chunk in a
// million-file dataset can be found without a debugger.
#pragma once

#include <stdexcept>
#include <string>

namespace s2r {

class StoreError : public std::runtime_error {
 public:
  // `path` is the file or node the error is about; what() reads "PATH: MESSAGE".
  StoreError(const std::string& path, const std::string& message)
      : std::runtime_error(path + ": " + message), path_(path), message_(message) {}

  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  std::string message_;
};

}  // namespace s2r
