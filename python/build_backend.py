"""A minimal PEP 517 backend that builds the pure-Python wheel of the legalnet package from
this folder with the standard library alone, so that `pip install ./python` works offline."""
import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "legalnet", "_version.py"), encoding="utf-8") as _f:
    NAME, VERSION = "legalnet", re.search(r'__version__ = "([^"]+)"', _f.read()).group(1)
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_name = f"{NAME}-{VERSION}-py3-none-any.whl"
    files = {}
    for root, _, names in os.walk(os.path.join(HERE, NAME)):
        for n in sorted(names):
            if n.endswith(".py"):
                full = os.path.join(root, n)
                with open(full, "rb") as f:
                    files[os.path.relpath(full, HERE).replace(os.sep, "/")] = f.read()
    files[f"{DIST_INFO}/METADATA"] = (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
                                      "Summary: legalnet datasets, models and input encodings for PyTorch\n").encode()
    files[f"{DIST_INFO}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: legalnet build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(p, d) for p, d in sorted(files.items())] + [f"{DIST_INFO}/RECORD,,"]
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in sorted(files.items()):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []
