#!/usr/bin/env bash
# Session 16, run D (device tool, carry .whl), in two calls: the whole sm90a GPU file on the
# session's final tree (session 15's counted ring, session 16's stream-K), as session 15's run D
# with the stream-K tile built before part 2.
# Usage: bash tools/device_s16d.sh 1|2
exec bash tools/device_s15d.sh "$1" ,128x256x4k
