{
  "targets": [
    {
      "target_name": "shm_view",
      "sources": ["native/shm-view.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
