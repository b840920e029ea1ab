file(REMOVE_RECURSE
  "libcallguard_ocaml.a"
)
