# legalnet's one version, read by the C++ build (CMakeLists.txt), the wheel (build_backend.py)
# and the package (__init__.py): the tools and the package always say the same.
__version__ = "0.3.0"
