# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for cgcuda_next_stub.
