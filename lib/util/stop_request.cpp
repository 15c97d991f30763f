#include "util/stop_request.h"

#include <csignal>

#include "util/files.h"

namespace legalnet {
namespace {

volatile std::sig_atomic_t requested = 0;

extern "C" void record_request(int signal) { requested = signal; }

}  // namespace

void catch_stop_requests() {
  install_temp_file_cleanup();  // first, so that it does not take SIGTERM back later
  for (int sig : {SIGTERM, SIGUSR1}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = record_request;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a read or write under way goes on
    sigaction(sig, &action, nullptr);
  }
}

int stop_requested() { return requested; }

const char* stop_signal_name(int signal) { return signal == SIGUSR1 ? "SIGUSR1" : "SIGTERM"; }

}  // namespace legalnet
