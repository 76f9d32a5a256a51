"""``asv publish``, then the dashboard's JavaScript and CSS copied in from npm packages.

    python benchmarks_asv/publish.py [asv publish options]

asv 0.6's index.html loads jQuery, flot, bootstrap and three small plugins from CDNs. The GPU
machines and this project's CPU machines reach no CDN, so a dashboard published as is draws
nothing there. Each CDN file is replaced by the same release from npm (``npm pack``) under
``html/vendor/``; where the npm file is byte-identical its ``integrity`` hash is kept, else
(flot's npm package ships unminified sources; stupidtable 1.0.1 is not on npm, 1.1.3 is) the
hash is dropped and the substitution printed. Any CDN reference left over is an error, so a
new asv release with other assets fails here instead of publishing a blank page.
"""
from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HTML = HERE / "html"

# CDN URL in asv 0.6's index.html -> (npm package@version, file in the package)
VENDORED = {
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery@3.3.1", "dist/jquery.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js":
        ("flot@0.8.3", "jquery.flot.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js":
        ("flot@0.8.3", "jquery.flot.time.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js":
        ("flot@0.8.3", "jquery.flot.selection.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js":
        ("flot@0.8.3", "jquery.flot.categories.js"),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        ("flot-orderbars@1.0.0", "js/jquery.flot.orderBars.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        ("stupid-table-plugin@1.1.3", "stupidtable.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        ("blueimp-md5@2.19.0", "js/md5.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js":
        ("bootstrap@3.1.1", "dist/js/bootstrap.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        ("bootstrap@3.1.1", "dist/css/bootstrap.min.css"),
}
# bootstrap's CSS loads its icon font from ../fonts/
EXTRA = {"bootstrap@3.1.1": ("dist/fonts/",)}

_TAG = re.compile(r'<(script|link)\b[^>]*?\b(?:src|href)="(https?://[^"]+)"[^>]*>')


def _sri(data: bytes, algo: str) -> str:
    return f"{algo}-{base64.b64encode(hashlib.new(algo, data).digest()).decode()}"


def _unpack(spec: str, files: set, tmp: Path) -> dict:
    """{path in package: bytes} for ``files`` (and EXTRA prefixes) of npm package ``spec``."""
    out = subprocess.run(["npm", "pack", "--silent", spec, "--pack-destination", str(tmp)],
                         capture_output=True, text=True, check=True)
    tgz = tmp / out.stdout.strip().splitlines()[-1]
    got = {}
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            path = member.name.removeprefix("package/")
            if member.isfile() and (path in files or
                                    any(path.startswith(p) for p in EXTRA.get(spec, ()))):
                got[path] = tar.extractfile(member).read()
    missing = files - set(got)
    if missing:
        raise SystemExit(f"publish: npm package {spec} has no {', '.join(sorted(missing))}")
    return got


def vendor(html: Path = HTML) -> None:
    index = html / "index.html"
    text = index.read_text()
    wanted = {}
    for url, (spec, path) in VENDORED.items():
        if url in text:
            wanted.setdefault(spec, set()).add(path)
    with tempfile.TemporaryDirectory() as tmp:
        for spec, files in wanted.items():
            for path, data in _unpack(spec, files, Path(tmp)).items():
                dest = html / "vendor" / spec / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)

    def local(match):
        tag, url = match.group(0), match.group(2)
        if url not in VENDORED:
            return tag
        spec, path = VENDORED[url]
        data = (html / "vendor" / spec / path).read_bytes()
        tag = tag.replace(url, f"vendor/{spec}/{path}")
        sri = re.search(r'\sintegrity="(([a-z0-9]+)-[^"]*)"', tag)  # value, algorithm
        if sri and _sri(data, sri.group(2)) != sri.group(1):
            tag = tag.replace(sri.group(0), "")
            print(f"publish: {url} -> npm {spec} {path} (not byte-identical: integrity dropped)")
        return tag

    text = _TAG.sub(local, text)
    left = [m.group(2) for m in _TAG.finditer(text)]
    if left:
        raise SystemExit("publish: index.html still loads from the network: " + ", ".join(left)
                         + "\n(add them to VENDORED in benchmarks_asv/publish.py)")
    index.write_text(text)
    print(f"publish: {sum(map(len, wanted.values()))} files from npm in {html / 'vendor'}")


def main(argv):
    subprocess.run([sys.executable, "-m", "asv", "publish", *argv], cwd=HERE, check=True)
    vendor()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
