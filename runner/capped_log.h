// A log file of bounded size: the first head_bytes of what a child wrote, then
// one line saying how much was dropped, then the last tail_bytes. A build or a
// bench that writes 1 GB of warnings cannot fill the disk, and both the start
// (the first error) and the end (how it died) survive.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace perfwatch::runner {

class CappedLog {
 public:
  // Truncates `path` first. A log that cannot be opened drops everything
  // (ok() says so); the child still runs.
  CappedLog(const std::filesystem::path& path, std::size_t head_bytes, std::size_t tail_bytes);
  ~CappedLog();  // finish()es
  CappedLog(const CappedLog&) = delete;
  CappedLog& operator=(const CappedLog&) = delete;

  void write(const char* data, std::size_t n);
  // Writes the dropped-bytes line and the tail; later writes are ignored.
  void finish();
  bool ok() const { return file_ != nullptr; }
  std::size_t dropped() const { return dropped_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> file_;
  std::size_t head_left_;
  std::size_t tail_bytes_;
  std::string tail_;       // a ring of the last tail_bytes_ bytes past the head
  std::size_t tail_at_ = 0;  // where the ring's oldest byte is, once full
  std::size_t dropped_ = 0;
  bool finished_ = false;
};

}  // namespace perfwatch::runner
