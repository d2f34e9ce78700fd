// A read-only view of the start of a file, mapped shared: the bytes another process writes through its own
// mapping (SQLite's WAL index in the -shm file) are read here without a system call.
#include <node_api.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define THROW_IF(condition, message)              \
  if (condition) {                                \
    napi_throw_error(env, NULL, message);         \
    return NULL;                                  \
  }

static void unmap(napi_env env, void* data, void* hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

// mapStart(fd, bytes): an ArrayBuffer over the first `bytes` of the open file `fd`, which must be at least that
// long. The descriptor stays the caller's and open: closing any descriptor of a file drops every POSIX lock
// the process holds on it, and SQLite holds its own on the -shm file (the caller closes it after SQLite).
static napi_value mapStart(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  THROW_IF(napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2, "mapStart(fd, bytes)");
  int32_t fd = -1;
  THROW_IF(napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0, "fd must be a file descriptor");
  uint32_t bytes = 0;
  THROW_IF(napi_get_value_uint32(env, argv[1], &bytes) != napi_ok || bytes == 0, "bytes must be a positive integer");

  struct stat status;
  // A shorter file would fault on the first read past its end.
  THROW_IF(fstat(fd, &status) != 0 || status.st_size < (off_t)bytes, "the file is shorter than the view");
  void* start = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
  THROW_IF(start == MAP_FAILED, "cannot map the file");

  napi_value buffer;
  if (napi_create_external_arraybuffer(env, start, bytes, unmap, (void*)(uintptr_t)bytes, &buffer) != napi_ok) {
    munmap(start, bytes);
    THROW_IF(1, "cannot make an ArrayBuffer of the view");
  }
  return buffer;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "mapStart", NAPI_AUTO_LENGTH, mapStart, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "mapStart", fn) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
