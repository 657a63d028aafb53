#include "runner/capped_log.h"

#include <algorithm>

namespace perfwatch::runner {

CappedLog::CappedLog(const std::filesystem::path& path, std::size_t head_bytes, std::size_t tail_bytes)
    : file_(std::fopen(path.c_str(), "wb")), head_left_(head_bytes), tail_bytes_(tail_bytes) {}

CappedLog::~CappedLog() { finish(); }

void CappedLog::write(const char* data, std::size_t n) {
  if (finished_) return;
  std::size_t head = std::min(n, head_left_);
  if (head > 0) {
    if (file_) std::fwrite(data, 1, head, file_.get());
    head_left_ -= head;
    data += head;
    n -= head;
  }
  if (n == 0 || tail_bytes_ == 0) {
    dropped_ += n;
    return;
  }
  // Past the head: only the last tail_bytes_ are kept; what they push out is dropped.
  if (n >= tail_bytes_) {
    dropped_ += tail_.size() + (n - tail_bytes_);
    tail_.assign(data + (n - tail_bytes_), tail_bytes_);
    tail_at_ = 0;
    return;
  }
  while (n > 0 && tail_.size() < tail_bytes_) {
    std::size_t take = std::min(n, tail_bytes_ - tail_.size());
    tail_.append(data, take);
    data += take;
    n -= take;
  }
  dropped_ += n;
  while (n > 0) {
    std::size_t take = std::min(n, tail_bytes_ - tail_at_);
    std::copy(data, data + take, tail_.begin() + static_cast<std::ptrdiff_t>(tail_at_));
    tail_at_ = (tail_at_ + take) % tail_bytes_;
    data += take;
    n -= take;
  }
}

void CappedLog::finish() {
  if (finished_) return;
  finished_ = true;
  if (!file_) return;
  if (dropped_ > 0) {
    std::fprintf(file_.get(), "\n[perfwatch: %zu bytes dropped here; the log keeps the first and the last %zu KiB]\n",
                 dropped_, tail_bytes_ / 1024);
  }
  std::fwrite(tail_.data() + tail_at_, 1, tail_.size() - tail_at_, file_.get());
  std::fwrite(tail_.data(), 1, tail_at_, file_.get());
  std::fflush(file_.get());
}

}  // namespace perfwatch::runner
