file(REMOVE_RECURSE
  "libcallguard_ruby.a"
)
