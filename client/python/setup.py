"""Builds the npuserve wheel from the repository (pyproject.toml holds the
metadata). Two things happen at build time that a plain copy cannot do:
the gRPC/protobuf stubs of protos/ and of grpc.health.v1 are generated into
npuserve/_generated/ by protoc and grpc_python_plugin (Debian's
protobuf-compiler and protobuf-compiler-grpc: the versions of the C++ build and
of python3-protobuf/python3-grpcio, where python3-grpc-tools bundles an older
protoc), and npuserve/_version.py gets the project's version from the top-level
CMakeLists.txt. The layout is the one client/python/CMakeLists.txt assembles in
build/python/, so the package imports the same way from either.
"""
import atexit
import glob
import os
import re
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PROTOS = os.path.join(ROOT, "protos")
HEALTH_DIR = "/usr/share/grpc-proto"  # Debian's grpc-proto
HEALTH_PROTO = os.path.join(HEALTH_DIR, "grpc", "health", "v1", "health.proto")


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*npuserve\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise SystemExit("npuserve: no `project(npuserve VERSION x.y.z)` in the top-level CMakeLists.txt")
    return m.group(1)


def tool(name, package):
    path = shutil.which(name)
    if not path:
        raise SystemExit(f"npuserve: {name} not found: install Debian's {package} (scripts/install-deps.sh does)")
    return path


def generate_stubs(gen):
    """protos/npu/v1/*.proto, protos/kserve/*.proto and protos/triton/*.proto with their gRPC
    services, and health.proto's messages (loaded by file: its module path
    would shadow grpcio's own `grpc` package)."""
    if not os.path.isdir(os.path.join(PROTOS, "npu", "v1")):
        raise SystemExit(f"npuserve: no protos in {PROTOS}: build the wheel from the npuserve repository")
    protoc = tool("protoc", "protobuf-compiler")
    plugin = tool("grpc_python_plugin", "protobuf-compiler-grpc")
    protos = sorted(glob.glob(os.path.join(PROTOS, "npu", "v1", "*.proto")) +
                    glob.glob(os.path.join(PROTOS, "kserve", "*.proto")) +
                    glob.glob(os.path.join(PROTOS, "triton", "*.proto")))
    os.makedirs(gen, exist_ok=True)
    subprocess.run([protoc, f"--proto_path={PROTOS}", f"--python_out={gen}", f"--grpc_python_out={gen}",
                    f"--plugin=protoc-gen-grpc_python={plugin}", *protos], check=True)
    if not os.path.isfile(HEALTH_PROTO):
        raise SystemExit(f"npuserve: {HEALTH_PROTO} not found: install Debian's grpc-proto")
    health = os.path.join(gen, "health")
    os.makedirs(health, exist_ok=True)
    subprocess.run([protoc, f"--proto_path={HEALTH_DIR}", f"--python_out={health}", HEALTH_PROTO], check=True)


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "npuserve")
        generate_stubs(os.path.join(pkg, "_generated"))
        with open(os.path.join(pkg, "_version.py"), "w", encoding="utf-8") as f:
            f.write(f'# Written by client/python/setup.py.\n__version__ = "{project_version()}"\n')


# setuptools' build/ would sit in the source tree, where a stale one feeds old
# stubs into the next wheel: build in a fresh folder each time instead.
_build_base = tempfile.mkdtemp(prefix="npuserve-wheel-")
atexit.register(shutil.rmtree, _build_base, ignore_errors=True)

setup(version=project_version(), cmdclass={"build_py": BuildPyWithStubs},
      options={"build": {"build_base": _build_base}})
