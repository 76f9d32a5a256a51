#!/usr/bin/env bash
# Runs the asv suite over commits of nbkernels on this machine's GPU and adds the results to
# benchmarks_asv/results/<machine>/. asv's "existing" environment cannot check out a commit
# range itself, so each commit is extracted, installed without dependencies into its own
# folder, put first on the benchmarks' path, and measured with --set-commit-hash. The benchmark
# code is always this checkout's, so every commit is measured the same way.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: benchmarks_asv/run.sh [options] [COMMIT ...]

  COMMIT ...        commits to measure (any git revision); default: the history rule
  --rule kernels    (default) main's head, and main's commits since 5f5f731 that changed code
                    compiled for the GPU: kernel modules and intrinsics (KERNEL_PATHS below)
  --rule all        main's head, and every commit since 5f5f731 that changed nbkernels/
  --list            print the commits picked, newest first, and exit
  --budget SECONDS  start no commit that would end after SECONDS from now (the estimate is
                    the slowest commit measured so far in this call, 240 s before the first)
  --force           measure commits that already have results for this machine
  --out DIR         after each commit, write DIR/results.tgz (the whole results folder)
  --bundle          write benchmarks_asv/bundle/ (a git bundle of main, and git's Debian
                    package when apt-get can fetch it) for a machine without .git, then exit

Commits are measured newest first; one that already has results for this machine is skipped,
so repeated calls with a budget go on where the last one stopped.
Environment: PYTHON (python3), NBK_ASV_WORK (/tmp/nbk-asv: per-commit installs, kernel caches).
EOF
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PYTHON=${PYTHON:-python3}
WORK=${NBK_ASV_WORK:-/tmp/nbk-asv}
# 5f5f731 added the on-disk cubin cache: before it, every benchmark process would compile each
# kernel again (~13 s each), which a suite of one process per family cannot pay.
FIRST=5f5f731
KERNEL_PATHS=(':(glob)nbkernels/**/*kernel*.py' nbkernels/intrinsics nbkernels/rows)

rule=kernels list=0 budget="" force=0 out="" commits=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rule) rule=$2; shift 2 ;;
        --list) list=1; shift ;;
        --budget) budget=$2; shift 2 ;;
        --force) force=1; shift ;;
        --out) out=$2; shift 2 ;;
        --bundle) rule=bundle; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) commits+=("$1"); shift ;;
    esac
done
mkdir -p "$WORK"

if [ "$rule" = bundle ]; then
    mkdir -p "$HERE/bundle"
    git -C "$ROOT" bundle create "$HERE/bundle/nbkernels.bundle" main
    if command -v apt-get >/dev/null; then
        rm -f "$HERE"/bundle/git_*.deb
        (cd "$HERE/bundle" && apt-get download git) ||
            echo "run.sh: no git package fetched; the target machine must have git" >&2
    fi
    ls -la "$HERE/bundle"
    exit 0
fi

# git: asv reads commit dates and hashes with it. Without one on PATH, the Debian package
# carried in bundle/ is unpacked (git needs only libc, zlib and pcre2 for what is done here).
if ! command -v git >/dev/null; then
    deb=$(ls "$HERE"/bundle/git_*.deb 2>/dev/null | head -n 1 || true)
    [ -n "$deb" ] || { echo "run.sh: git is needed (none on PATH, no bundle/git_*.deb)" >&2; exit 1; }
    dpkg-deb -x "$deb" "$WORK/git"
    export PATH="$WORK/git/usr/bin:$PATH" GIT_EXEC_PATH="$WORK/git/usr/lib/git-core"
    git --version
fi

# The repository: a clone of the carried bundle, or this checkout.
# A carried bundle wins: the lent machine's tree may hold a .git from an older checkout.
if [ -f "$HERE/bundle/nbkernels.bundle" ]; then
    REPO=$WORK/repo.git
    rm -rf "$REPO"
    git clone -q --mirror "$HERE/bundle/nbkernels.bundle" "$REPO"  # bare, with refs/heads/main
elif [ -e "$ROOT/.git" ]; then
    REPO=$ROOT
else
    echo "run.sh: $ROOT has no .git and there is no bundle/nbkernels.bundle (run.sh --bundle)" >&2
    exit 1
fi

if [ ${#commits[@]} -eq 0 ]; then
    case "$rule" in
        kernels) paths=("${KERNEL_PATHS[@]}") ;;
        all) paths=(nbkernels) ;;
        *) echo "run.sh: unknown rule $rule" >&2; exit 2 ;;
    esac
    mapfile -t commits < <( (git -C "$REPO" rev-parse main
                             git -C "$REPO" rev-list --first-parent "$FIRST^..main" -- "${paths[@]}") |
                           awk '!seen[$0]++')
fi
hashes=()
for c in "${commits[@]}"; do hashes+=("$(git -C "$REPO" rev-parse --verify "$c^{commit}")"); done
if [ $list = 1 ]; then
    for h in "${hashes[@]}"; do git -C "$REPO" log -1 --format='%h %ad %s' --date=short "$h"; done
    exit 0
fi

PYBIN=$(command -v "$PYTHON")
MACHINE=$("$PYBIN" "$HERE/machine.py")
CONF=$WORK/asv.conf.json
"$PYBIN" - "$HERE" "$REPO" "$CONF" <<'EOF'
import json, sys
here, repo, dest = sys.argv[1:]
conf = json.load(open(f"{here}/asv.conf.json"))
conf["repo"] = repo  # asv resolves paths from its working directory: make them absolute
for key in ("benchmark_dir", "results_dir", "html_dir"):
    conf[key] = f"{here}/{conf[key]}"
json.dump(conf, open(dest, "w"), indent=1)
EOF
echo "run.sh: machine $MACHINE, ${#hashes[@]} commit(s), work folder $WORK"

guess=240 slowest=0 measured=() skipped=() left=() failed=()
for h in "${hashes[@]}"; do
    short=${h:0:8}
    if [ $force = 0 ] && compgen -G "$HERE/results/$MACHINE/$short-*.json" >/dev/null; then
        skipped+=("$short"); continue
    fi
    estimate=$([ $slowest -gt 0 ] && echo $slowest || echo $guess)
    if [ -n "$budget" ] && [ $((SECONDS + estimate)) -gt "$budget" ]; then
        left+=("$short"); continue
    fi
    start=$SECONDS
    dir=$WORK/$short
    echo "=== $(git -C "$REPO" log -1 --format='%h %s' "$h")"
    if [ ! -d "$dir/site/nbkernels" ]; then
        rm -rf "$dir/src" "$dir/site"
        mkdir -p "$dir/src"
        git -C "$REPO" archive "$h" | tar -x -C "$dir/src"
        "$PYBIN" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
            --target "$dir/site" "$dir/src"
    fi
    # asv replaces PYTHONPATH in the benchmark processes with ASV_PYTHONPATH: the commit's
    # install first, so it shadows this checkout's nbkernels/ if that is on the path too.
    export ASV_PYTHONPATH="$dir/site${PYTHONPATH:+:$PYTHONPATH}" NBKERNELS_CACHE_DIR=$dir/cache \
           NBK_ASV_SITE=$dir/site
    PYTHONPATH=$ASV_PYTHONPATH "$PYBIN" "$HERE/prewarm.py" --absent "$dir/absent" ||
        echo "run.sh: prewarm reported failures; the benchmarks will show them"
    # modules whose kernels this commit lacks altogether are left out (all n/a, ~0.3 s each)
    bench=()
    [ -s "$dir/absent" ] && bench=(--bench "^(?!($(paste -sd '|' "$dir/absent"))\.)")
    (cd "$WORK" && "$PYBIN" -m asv run --config "$CONF" --set-commit-hash "$h" \
        -E "existing:$PYBIN" --machine "$MACHINE" --show-stderr "${bench[@]}") ||
        failed+=("$short")
    measured+=("$short")
    took=$((SECONDS - start))
    [ $took -gt $slowest ] && slowest=$took
    echo "=== $short took ${took} s"
    if [ -n "$out" ]; then
        mkdir -p "$out"
        tar -czf "$out/results.tgz.part" -C "$HERE" results && mv "$out/results.tgz.part" "$out/results.tgz"
    fi
done
echo "run.sh: measured ${measured[*]:-none}; had results ${skipped[*]:-none};" \
     "left for a later call ${left[*]:-none}; asv reported failures in ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
