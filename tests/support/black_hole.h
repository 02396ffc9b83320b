// A loopback port whose connections never complete: a listener that never accepts, its accept queue filled, so the
// kernel drops further SYNs and a client waits in connect (what a black-holed address does).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace testsupport {

struct BlackHole {
  int fd = -1;
  std::vector<int> fillers;
  unsigned short port = 0;
  BlackHole() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 0) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    port = ntohs(a.sin_port);
    for (int i = 0; i < 4; ++i) {  // fill the queue (non-blocking connects: the later ones stay pending)
      int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      ::connect(c, reinterpret_cast<sockaddr *>(&a), sizeof a);
      fillers.push_back(c);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~BlackHole() {
    for (int c : fillers) ::close(c);
    ::close(fd);
  }
  BlackHole(const BlackHole &) = delete;
  BlackHole &operator=(const BlackHole &) = delete;
  // How many sockets on this machine are in SYN_SENT towards this port (from /proc/net/tcp): lets a test wait
  // until a client is really waiting in connect instead of sleeping a guessed time (slow under sanitizers).
  int connecting() const {
    std::ifstream in("/proc/net/tcp");
    std::string line;
    std::getline(in, line);  // header
    int n = 0;
    while (std::getline(in, line)) {
      unsigned rem_port = 0, state = 0;  // "sl: local_ip:port rem_ip:port st ..." in hex
      if (std::sscanf(line.c_str(), " %*d: %*x:%*x %*x:%x %x", &rem_port, &state) == 2 && rem_port == port &&
          state == 0x02)
        ++n;
    }
    return n;
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port) + "/v1"; }
};

}  // namespace testsupport
