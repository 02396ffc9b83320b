// A loopback HTTP "server" that answers every connection with bytes the test gives, exactly as given (status
// line, headers, body): for the responses no well-behaved server sends, which the scripted TestLlmServer cannot
// produce (folded or broken header lines, lying lengths, garbage). Reads the request (its head and a
// Content-Length body), writes the response, closes the connection. Header-only; used by the LLM tests and by
// tests/fuzz/fuzz_llm_response.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace evalgraph::testing {

class RawHttpServer {
 public:
  RawHttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0)
      throw std::runtime_error("RawHttpServer: cannot listen on 127.0.0.1");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~RawHttpServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  RawHttpServer(const RawHttpServer &) = delete;
  RawHttpServer &operator=(const RawHttpServer &) = delete;

  unsigned short port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // The answers to the next connections, in order; the last one is repeated after that.
  void set_responses(std::vector<std::string> r) {
    std::lock_guard lk(mu_);
    responses_ = std::move(r);
    next_ = 0;
  }
  void set_response(std::string r) { set_responses({std::move(r)}); }
  std::size_t connections() const { return connections_.load(); }

 private:
  void loop() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      timeval tv{2, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      read_request(c);
      std::string r;
      {
        std::lock_guard lk(mu_);
        if (!responses_.empty()) r = responses_[std::min(next_++, responses_.size() - 1)];
      }
      ++connections_;
      for (std::size_t done = 0; done < r.size();) {
        ssize_t n = ::send(c, r.data() + done, r.size() - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::shutdown(c, SHUT_WR);  // then wait for the client to close: no reset that could eat the response
      char buf[4096];
      while (::recv(c, buf, sizeof buf, 0) > 0) {
      }
      ::close(c);
    }
  }
  static void read_request(int c) {
    std::string req;
    char buf[4096];
    std::size_t head_end = std::string::npos, need = 0;
    for (;;) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos) {
        head_end = req.find("\r\n\r\n");
        if (head_end == std::string::npos) continue;
        head_end += 4;
        std::string head = req.substr(0, head_end);
        for (auto &ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        auto cl = head.find("content-length:");
        need = cl == std::string::npos ? 0 : std::strtoul(head.c_str() + cl + 15, nullptr, 10);
      }
      if (req.size() >= head_end + need) return;
    }
  }

  int fd_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> connections_{0};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> responses_;
  std::size_t next_ = 0;
};

}  // namespace evalgraph::testing
