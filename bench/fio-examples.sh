#!/usr/bin/env bash
# How many of fio's own example job files (examples/*.fio of a fio source checkout) that use a block engine
# import and run in iolab (docs/FIO.md, "fio's own examples"). A block-engine file names only libaio, io_uring,
# psync, sync, pvsync, pvsync2, vsync, posixaio, mmap or null as its ioengine, or none (fio's default psync).
# Each is run as `iolab run FILE --target mem:256M -d 1s --no-save -q` (from a scratch directory, 60 s at most),
# with what its own header says it is run with: sprandom with FIO_BS=4096, xnvme-compare with
# --section=default, cross-stripe-verify on the drive of about 30 x 124G it assumes (a sparse file of 3720G);
# exit status 0 counts as run. Prints one line per file (ok, or the first line of the refusal) and the count.
# Usage: bash bench/fio-examples.sh FIO_CHECKOUT [IOLAB_BINARY]
set -uo pipefail
src=${1:?usage: bash bench/fio-examples.sh FIO_CHECKOUT [IOLAB_BINARY]}
bin=$(realpath "${2:-./target/release/iolab}")
block='^(libaio|io_uring|psync|sync|pvsync|pvsync2|vsync|posixaio|mmap|null)$'
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
total=0 ran=0
for f in "$src"/examples/*.fio; do
  engines=$(sed -n 's/^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*\([^[:space:];#]*\).*/\1/p' "$f" | sort -u)
  if [ -n "$engines" ] && grep -qvE "$block" <<<"$engines"; then continue; fi
  total=$((total + 1))
  name=$(basename "$f" .fio)
  args=(--target mem:256M) vars=()
  case $name in
    sprandom) vars=(FIO_BS=4096) ;;
    xnvme-compare) args+=(--section default) ;;
    cross-stripe-verify) truncate -s 3720G "$scratch/drive" && args=(--target "$scratch/drive" --overwrite) ;;
  esac
  if out=$(cd "$scratch" && env "${vars[@]}" timeout 60 "$bin" run "$f" "${args[@]}" -d 1s --no-save -q 2>&1 >/dev/null); then
    ran=$((ran + 1))
    printf '%-36s ok\n' "$name"
  else
    printf '%-36s %s\n' "$name" "$(grep -m1 -E 'error|refus' <<<"$out" || head -n1 <<<"$out")"
  fi
done
printf '%d of %d block-engine examples import and run\n' "$ran" "$total"
