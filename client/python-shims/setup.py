"""npuserve-shims' wheel (pyproject.toml holds the metadata), built in a fresh
folder so that a stale build/ in the source tree never feeds removed modules
into a wheel."""
import atexit
import shutil
import tempfile

from setuptools import setup

_build_base = tempfile.mkdtemp(prefix="npuserve-shims-wheel-")
atexit.register(shutil.rmtree, _build_base, ignore_errors=True)
setup(options={"build": {"build_base": _build_base}})
