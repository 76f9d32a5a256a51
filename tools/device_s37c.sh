#!/usr/bin/env bash
# Session 37, run C (carry .whl and benchmarks_asv/bundle): the int8 baseline's layouts
# (tools/int8_baseline.py), then the asv suite on main's head (tools/device_s37b.sh).
. tools/device-preamble.sh
timeout 60 python3 tools/int8_baseline.py
NBK_ASV_WORK=/tmp/nbk-asv benchmarks_asv/run.sh --budget "${BUDGET:-500}" --out "$out" "$@"
