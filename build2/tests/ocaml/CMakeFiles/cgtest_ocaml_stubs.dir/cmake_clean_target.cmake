file(REMOVE_RECURSE
  "libcgtest_ocaml_stubs.a"
)
