"""The PEP 517 build backend of switchyard-sdk (standard library only).

Why not setuptools: pip builds a package in an isolated environment and downloads the backend named in
`build-system.requires` into it, so a setuptools-built SDK cannot be installed without an index (and venvs of Python
3.12+ have no setuptools to fall back on with --no-build-isolation). The package is pure Python files, so a wheel is
a zip of them plus three metadata files; that is all this does. Hooks: build_wheel, build_sdist, build_editable
(PEP 660: a .pth file pointing at this folder).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "switchyard"
# Fixed timestamp for reproducible archives (zip cannot store dates before 1980).
EPOCH = (1980, 1, 1, 0, 0, 0)


def _project():
    """The [project] table of pyproject.toml: name, version, description, requires-python."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as file:
        text = file.read().decode("utf-8")
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the table holds only `key = "string"` lines, which a pattern reads
        table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', table.group(1) if table else "", re.M))
    return tomllib.loads(text)["project"]


def _names():
    project = _project()
    distribution = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return project, distribution, "%s-%s" % (distribution, project["version"])


def _metadata(project):
    lines = ["Metadata-Version: 2.1", "Name: %s" % project["name"], "Version: %s" % project["version"]]
    if project.get("description"):
        lines.append("Summary: %s" % project["description"])
    if project.get("requires-python"):
        lines.append("Requires-Python: %s" % project["requires-python"])
    return "\n".join(lines) + "\n"


def _sources():
    """(path in the archive, path on disk) of every module of the package and its py.typed marker, sorted."""
    found = []
    for folder, subfolders, files in os.walk(os.path.join(ROOT, PACKAGE)):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":  # py.typed: the package's type hints are for checkers (PEP 561)
                path = os.path.join(folder, name)
                found.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return found


def _wheel(wheel_directory, files):
    """Writes a wheel of `files` ((archive path, bytes)) plus its dist-info; returns its file name."""
    project, distribution, stem = _names()
    info = "%s.dist-info" % stem
    files = list(files) + [
        ("%s/METADATA" % info, _metadata(project).encode()),
        ("%s/WHEEL" % info, b"Wheel-Version: 1.0\nGenerator: switchyard_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append("%s/RECORD,," % info)
    files.append(("%s/RECORD" % info, ("\n".join(record) + "\n").encode()))
    name = "%s-py3-none-any.whl" % stem
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files:
            entry = zipfile.ZipInfo(path, EPOCH)
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return name


def _read(path):
    with open(path, "rb") as file:
        return file.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(path, _read(disk)) for path, disk in _sources()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _, distribution, _ = _names()
    return _wheel(wheel_directory, [("%s.pth" % distribution, (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    project, _, stem = _names()
    name = "%s.tar.gz" % stem
    members = [(path, _read(disk)) for path, disk in _sources()]
    members += [("pyproject.toml", _read(os.path.join(ROOT, "pyproject.toml"))),
                ("_backend/switchyard_backend.py", _read(os.path.abspath(__file__))),
                ("PKG-INFO", _metadata(project).encode())]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for path, data in members:
            entry = tarfile.TarInfo("%s/%s" % (stem, path))
            entry.size = len(data)
            entry.mode = 0o644
            archive.addfile(entry, io.BytesIO(data))
    return name
