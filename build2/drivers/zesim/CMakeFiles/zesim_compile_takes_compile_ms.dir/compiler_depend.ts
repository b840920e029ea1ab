# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for zesim_compile_takes_compile_ms.
