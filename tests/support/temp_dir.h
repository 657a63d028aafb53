// A fresh directory for one test, removed with everything in it when the
// object goes away.
#pragma once

#include <filesystem>
#include <string>

namespace perfwatch::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "perfwatch-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `text` to `path`, creating parent folders.
void write_file(const std::filesystem::path& path, const std::string& text);
std::string read_file(const std::filesystem::path& path);

}  // namespace perfwatch::testing
