// The OpenMP wait policy of the programs that run torch (train, evaluate, the training benches):
// PASSIVE with a short spin (GOMP_SPINCOUNT=10000, about 0.1 ms) unless the user chose a policy.
// libgomp's default spins for milliseconds, so torch's OpenMP threads fight OpenBLAS's threads
// and the loader's on small machines (small nets 5-36% slower on 2 cores); no spin at all puts
// the threads to sleep between the hundreds of small parallel regions of a training step
// (resnet 6x32: 5-15% slower than the short spin, docs/benchmarks.md).
//
// libgomp reads the policy once, in its constructor, so the program executes itself again with
// the two variables set. It does so from the executable's .preinit_array, which the dynamic
// loader runs after mapping the libraries and before any of their constructors: the first
// process never runs libtorch's static initialisation (its operator registry, half a second a
// start with libtorch_cuda), where a restart from main() paid it twice. So the restart costs a
// few milliseconds of loading. Nothing of libc is initialised yet at that point (setenv's change
// would be lost to libc's own start-up, which resets the environment to the kernel's): the new
// environment is built in memory from mmap and passed to execve, both plain system calls.
//
// An object library (legalnet_passive_openmp) linked into those programs alone: nothing calls it.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace {

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

void restart_with_passive_openmp(int, char** argv, char** envp) {
  if (envp == nullptr || argv == nullptr) return;
  size_t n = 0;
  bool spin_set = false;
  for (; envp[n] != nullptr; ++n) {
    if (starts_with(envp[n], "OMP_WAIT_POLICY=")) return;  // the user's choice stands
    spin_set = spin_set || starts_with(envp[n], "GOMP_SPINCOUNT=");
  }
  void* memory = mmap(nullptr, (n + 3) * sizeof(char*), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // go on with libgomp's default policy
  char** env = static_cast<char**>(memory);
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) env[m++] = envp[i];
  env[m++] = const_cast<char*>("OMP_WAIT_POLICY=PASSIVE");
  if (!spin_set) env[m++] = const_cast<char*>("GOMP_SPINCOUNT=10000");
  env[m] = nullptr;
  execve("/proc/self/exe", argv, env);  // returns only on failure: then the default policy
  munmap(memory, (n + 3) * sizeof(char*));
}

// glibc calls .preinit_array's entries with (argc, argv, envp) before every constructor.
[[gnu::section(".preinit_array"), gnu::used]] void (*const passive_openmp_entry)(int, char**,
                                                                                 char**) = restart_with_passive_openmp;

}  // namespace
