"""A minimal PEP 517 backend that builds the pure-Python wheel of the legalnet package from
this folder with the standard library alone, so that `pip install ./python` works offline.
The metadata (dependencies, extras, the `legalnet` command, the license) is pyproject.toml's;
the version is legalnet/_version.py's. It also builds an sdist and an editable wheel
(`pip install -e ./python`, PEP 660)."""
import ast
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "legalnet", "_version.py"), encoding="utf-8") as _f:
    NAME, VERSION = "legalnet", re.search(r'__version__ = "([^"]+)"', _f.read()).group(1)
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _uncomment(line):
    """The line without its comment (a # outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote and line[i - 1] != "\\" else quote
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[:i]
    return line


def _read_toml_subset(text):
    """tomllib.loads for the TOML pyproject.toml is written in, on Pythons before 3.11 (no
    tomllib): [tables] and key = a string or a list of strings (over several lines), whose TOML
    spellings are Python's literals; anything else is refused rather than misread."""
    doc, table, pending = {}, None, ""
    for number, line in enumerate(text.splitlines(), 1):
        line = (pending + " " + _uncomment(line)).strip()
        if not line:
            continue
        header = re.fullmatch(r"\[\s*([A-Za-z0-9_.-]+)\s*\]", line)
        if header:
            table = doc
            for part in header.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        pair = re.fullmatch(r'([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(.+)', line)
        if not pair or table is None:
            raise ValueError(f"pyproject.toml:{number}: not a key = value in a table")
        value = pair.group(2)
        if value.startswith("[") and value.count("[") > value.count("]"):
            pending = line  # a list continued on the next lines
            continue
        pending = ""
        parsed = ast.literal_eval(value)
        if not (isinstance(parsed, str) or isinstance(parsed, list) and all(isinstance(s, str) for s in parsed)):
            raise ValueError(f"pyproject.toml:{number}: only strings and lists of strings are read here")
        table[pair.group(1).strip('"')] = parsed
    if pending:
        raise ValueError("pyproject.toml: a list is not closed")
    return doc


def _project():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        return _read_toml_subset(text)["project"]
    return tomllib.loads(text)["project"]


def _license_files(project):
    """{name: bytes} of the project's license files. A checkout keeps the repository's LICENSE
    one folder up (the C++ tools share it); the sdist carries it beside pyproject.toml."""
    files = {}
    for name in project.get("license-files", []):
        for folder in (HERE, os.path.dirname(HERE)):
            if os.path.isfile(os.path.join(folder, name)):
                with open(os.path.join(folder, name), "rb") as f:
                    files[name] = f.read()
                break
        else:
            raise FileNotFoundError(f"{os.path.join(HERE, name)}: the license file pyproject.toml names is missing")
    return files


def _with_extra(requirement, extra):
    """The requirement for an extra: its own marker (if any) and `extra == "NAME"`."""
    spec, _, marker = requirement.partition(";")
    condition = f'extra == "{extra}"'
    return f"{spec.strip()}; ({marker.strip()}) and {condition}" if marker.strip() else f"{spec.strip()}; {condition}"


def _metadata(project, licenses):
    """METADATA (core metadata 2.4: License-Expression and License-File, PEP 639); pip reads
    Requires-Dist and Provides-Extra from it, so these are the install's dependencies."""
    lines = ["Metadata-Version: 2.4", f"Name: {NAME}", f"Version: {VERSION}", f"Summary: {project['description']}"]
    if "license" in project:
        lines.append(f"License-Expression: {project['license']}")
    lines += [f"License-File: {name}" for name in licenses]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {r}" for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {_with_extra(r, extra)}" for r in requirements]
    return ("\n".join(lines) + "\n").encode()


def _entry_points(project):
    scripts = project.get("scripts", {})
    if not scripts:
        return None
    return ("[console_scripts]\n" + "".join(f"{name} = {target}\n" for name, target in scripts.items())).encode()


def _package_files():
    files = {}
    for root, _, names in os.walk(os.path.join(HERE, NAME)):
        for n in sorted(names):
            if n.endswith(".py"):
                full = os.path.join(root, n)
                with open(full, "rb") as f:
                    files[os.path.relpath(full, HERE).replace(os.sep, "/")] = f.read()
    return files


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files):
    project = _project()
    licenses = _license_files(project)
    wheel_name = f"{NAME}-{VERSION}-py3-none-any.whl"
    files[f"{DIST_INFO}/METADATA"] = _metadata(project, licenses)
    files[f"{DIST_INFO}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: legalnet build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entry_points = _entry_points(project)
    if entry_points:  # pip writes the console scripts (bin/legalnet) from it
        files[f"{DIST_INFO}/entry_points.txt"] = entry_points
    for name, data in licenses.items():
        files[f"{DIST_INFO}/licenses/{name}"] = data
    record = [_record_line(p, d) for p, d in sorted(files.items())] + [f"{DIST_INFO}/RECORD,,"]
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in sorted(files.items()):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return wheel_name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth naming this folder: the installed package is the checkout's, edits take effect at once.
    return _write_wheel(wheel_directory, {f"_{NAME}_editable.pth": (HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    licenses = _license_files(project)
    base = f"{NAME}-{VERSION}"
    files = {"PKG-INFO": _metadata(project, licenses), **licenses, **_package_files()}
    for name in ("pyproject.toml", "build_backend.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            files[name] = f.read()
    sdist_name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist_name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800  # 1980, as the wheel's
            tar.addfile(info, io.BytesIO(data))
    return sdist_name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
