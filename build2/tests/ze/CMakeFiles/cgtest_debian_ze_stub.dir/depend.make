# Empty dependencies file for cgtest_debian_ze_stub.
# This may be replaced when dependencies are built.
