# Sourced by the device scripts (tools/device_s6*.sh): the device environment, the log of the
# whole run under $OUT (or /tmp), and the GPU and driver it ran on.
set -o pipefail
. tools/device-env.sh || exit 1
out=${OUT:-/tmp}
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
