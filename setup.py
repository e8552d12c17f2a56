"""Builds torchtpu._C: the C core (a static library built by `make corelib`) plus the C++ shim in csrc/aten/."""
import glob
import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, include_paths

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildCoreThenExtension(BuildExtension):
    def run(self):
        subprocess.check_call(["make", "-C", ROOT, "corelib", "BUILD=build"])
        super().run()


ext = CppExtension(
    name="torchtpu._C",
    sources=sorted(glob.glob(os.path.join("csrc", "aten", "*.cpp"))),
    # kineto/: torch's copy of Kineto's headers (csrc/aten/profiler.cpp registers a device activity profiler)
    include_dirs=[os.path.join(ROOT, "csrc", "include")] + [
        os.path.join(p, "kineto") for p in include_paths() if os.path.isdir(os.path.join(p, "kineto"))],
    extra_objects=[os.path.join(ROOT, "build", "libttcore.a")],
    extra_compile_args={"cxx": ["-O2", "-std=c++20", "-Wall", "-Wno-unused-parameter"]},
    libraries=["m", "dl"],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildCoreThenExtension})
