#!/usr/bin/env bash
# Smoke test of the npuserve container image: build it, start npu-server from
# it, check health, run the example MLP graph against it, stop it, clean up.
# Exits non-zero on any failure.
#
#   docker/smoke-test.sh                       # from anywhere in the repository
#   NPU_CLI=build/client/npu docker/smoke-test.sh
#
# Engine: a Docker engine when `docker info` answers; otherwise buildah with
# chroot isolation (no engine, no registry: ../shared/CONTAINERS.md), making
# the debian:bookworm-slim base image with debootstrap when it is missing.
#
# Environment:
#   NPU_IMAGE   tag to build and test (default npuserve:smoke)
#   NPU_CLI     an `npu` binary on the host to run the graph with; default:
#               the `npu` inside the image
#   NPU_SMOKE_TIMEOUT_S  seconds to wait for the server to serve (default 60)
#   NPU_SMOKE_CONTEXT    'worktree' (default); 'head': build from the
#               committed tree only (git archive HEAD); or a directory
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=${NPU_IMAGE:-npuserve:smoke}
wait_s=${NPU_SMOKE_TIMEOUT_S:-60}
base=docker.io/library/debian:bookworm-slim
graph_in_image=/usr/local/share/npuserve/graphs
expected_shape="(4, 10)"   # y of examples/graphs/mlp.json (make_mlp.py: BATCH=4, OUT=10)

step() { echo "==> [smoke] $*"; }

# The mirror this machine's apt installs suite $1 from, read from apt's own
# sources (deb822 .sources files, then one-line sources.list entries), so the
# image is built from the same mirror as the host and no host is named here.
apt_mirror() {
  local suite=$1 dir list uri
  dir=$(apt-config shell d Dir::Etc::sourceparts/d | sed -E "s/^d='(.*)'$/\1/")
  list=$(apt-config shell l Dir::Etc::sourcelist/f | sed -E "s/^l='(.*)'$/\1/")
  dir=${dir:-/etc/apt/sources.list.d} list=${list:-/etc/apt/sources.list}
  uri=$(awk -v suite="$suite" '
    function flush() {
      if (!done && types ~ /(^| )deb( |$)/ && hit && enabled && uris != "") { split(uris, u, " "); print u[1]; done = 1 }
    }
    FNR == 1 { flush(); types = ""; uris = ""; hit = 0; enabled = 1 }
    /^[ \t]*$/ { flush(); types = ""; uris = ""; hit = 0; enabled = 1; next }
    /^Types:/ { $1 = ""; types = $0 }
    /^URIs:/ { $1 = ""; uris = $0 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) hit = 1 }
    /^Enabled:/ { enabled = ($2 != "no") }
    END { flush() }' "$dir"/*.sources 2>/dev/null)
  if [[ -z "$uri" ]]; then
    uri=$(awk -v suite="$suite" '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit } }' "$list" "$dir"/*.list 2>/dev/null)
  fi
  [[ -n "$uri" ]] && echo "$uri"
}
fail() { echo "FAIL [smoke] $*" >&2; exit 1; }

work=$(mktemp -d /tmp/npuserve-smoke.XXXXXX)
chmod 0777 "$work"   # the image's non-root user writes outputs here
server_pid=""
container=""
engine=""

cleanup() {
  local rc=$?
  set +e
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  if [[ -n "$container" ]]; then
    if [[ "$engine" == docker ]]; then
      docker rm -f "$container" >/dev/null 2>&1
    else
      buildah rm "$container" >/dev/null 2>&1
    fi
    step "container removed"
  fi
  if [[ $rc -ne 0 ]]; then
    for f in "$work"/server.out "$work"/server.err; do
      [[ -s "$f" ]] && { echo "--- $f (tail)"; tail -n 20 "$f"; }
    done
  fi
  rm -rf "$work"
  if [[ $rc -eq 0 ]]; then echo "PASS [smoke] image $image"; else echo "FAIL [smoke] exit $rc" >&2; fi
}
trap cleanup EXIT

# --- 1. engine and tools -----------------------------------------------------
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  engine=docker
  step "engine: Docker ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
else
  engine=buildah
  step "engine: no Docker engine answers 'docker info'; using buildah (chroot isolation)"
  missing=()
  for tool in podman buildah debootstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if ((${#missing[@]})); then
    step "installing ${missing[*]} (Debian packages)"
    [[ $(id -u) -eq 0 ]] || fail "need root to apt-get install ${missing[*]}"
    apt-get update -qq || fail "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || fail "apt-get install ${missing[*]}"
  fi
  if podman image exists "$base"; then
    step "base image $base present"
  else
    step "base image $base missing: debootstrap --variant=minbase bookworm (about a minute)"
    rootfs="$work/rootfs"
    mirror=$(apt_mirror bookworm) \
      || fail "no Debian mirror for bookworm in apt's sources (/etc/apt/sources.list.d/*.sources, /etc/apt/sources.list)"
    step "debootstrap from apt's mirror $mirror"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" \
      >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap"; }
    # Trim it the way the real slim image is trimmed (apt cache and lists,
    # docs, man pages and translations excluded, also for later installs),
    # so image sizes measured here match a build on the real base.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    find "$rootfs/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/info/*
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
CFG
    tar -C "$rootfs" -c . | podman import - "$base" >/dev/null || fail "podman import $base"
    rm -rf "$rootfs"
    step "base image $base created"
  fi
fi

# --- 2. build ------------------------------------------------------------------
context=$repo
if [[ -d "${NPU_SMOKE_CONTEXT:-}" ]]; then
  context=$(cd "$NPU_SMOKE_CONTEXT" && pwd)
  step "build context: directory $context"
elif [[ "${NPU_SMOKE_CONTEXT:-worktree}" == head ]]; then
  # The committed tree only, so colleagues' unfinished edits stay out.
  context="$work/context"
  mkdir -p "$context"
  git -C "$repo" archive HEAD | tar -x -C "$context" || fail "git archive HEAD"
  step "build context: git HEAD $(git -C "$repo" rev-parse --short HEAD)"
else
  step "build context: working tree $repo"
fi
build_log=/tmp/npuserve-smoke-build.log
step "building $image from docker/Dockerfile (first build: several minutes; log $build_log)"
start=$SECONDS
build_failed() { tail -n 30 "$build_log" >&2; fail "$1 (full log: $build_log)"; }
commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || true)
if [[ -n "$commit" && "$context" == "$repo" ]] && ! git -C "$repo" diff-index --quiet HEAD -- 2>/dev/null; then
  commit="$commit-dirty"
fi
if [[ "$engine" == docker ]]; then
  docker build --build-arg "NPU_GIT_COMMIT=$commit" -f "$context/docker/Dockerfile" -t "$image" "$context" \
    >"$build_log" 2>&1 \
    || build_failed "docker build"
  size_bytes=$(docker image inspect --format '{{.Size}}' "$image")
else
  # --format docker keeps HEALTHCHECK (the OCI format has no such field);
  # --layers caches steps between runs.
  buildah bud --pull=never --isolation chroot --format docker --layers --build-arg "NPU_GIT_COMMIT=$commit" \
    -f "$context/docker/Dockerfile" -t "$image" "$context" >"$build_log" 2>&1 \
    || build_failed "buildah bud"
  size_bytes=$(podman image inspect --format '{{.Size}}' "$image")
fi
step "built $image in $((SECONDS - start)) s; size $((size_bytes / 1000000)) MB ($size_bytes bytes)"

# --- 3. start the server from the image ---------------------------------------
if [[ "$engine" == docker ]]; then
  container=npuserve-smoke-$$
  docker run -d --name "$container" -p 127.0.0.1::50051 "$image" --threads 2 >/dev/null \
    || fail "docker run"
  port=$(docker port "$container" 50051/tcp | head -n1 | sed 's/.*://')
  step "server container $container started; published on 127.0.0.1:$port"
else
  container=$(buildah from --pull=never "$image") || fail "buildah from $image"
  # chroot isolation shares the host's network: listen on loopback; port 0
  # lets the kernel pick a free port, read back from the "listening on" line.
  : >"$work/server.out"   # exists before the background job opens it
  buildah run --isolation chroot "$container" -- \
    npu-server --listen 127.0.0.1:0 --threads 2 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  port=""
  for ((i = 0; i < wait_s * 10; i++)); do
    port=$(sed -n 's/^npu-server listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.out")
    [[ -n "$port" ]] && break
    kill -0 "$server_pid" 2>/dev/null || fail "npu-server exited before listening"
    sleep 0.1
  done
  [[ -n "$port" ]] || fail "npu-server did not print its port within ${wait_s}s"
  step "server started in container $container (pid $server_pid), $(cat "$work/server.out")"
fi

# The client: a host binary when NPU_CLI names one, else the image's own npu,
# on the host network (buildah) or in the server container's network (Docker).
npu_cli() {
  if [[ -n "${NPU_CLI:-}" ]]; then
    "$NPU_CLI" --target "127.0.0.1:$port" "$@"
  elif [[ "$engine" == docker ]]; then
    docker run --rm --network "container:$container" -v "$work:/work" --entrypoint npu "$image" \
      --target 127.0.0.1:50051 "$@"
  else
    buildah run --isolation chroot -v "$work:/work" "$container" -- \
      npu --target "127.0.0.1:$port" "$@"
  fi
}
if [[ -n "${NPU_CLI:-}" ]]; then
  [[ -x "$NPU_CLI" ]] || fail "NPU_CLI=$NPU_CLI is not executable"
  step "client: host $NPU_CLI"
  graph_dir="$repo/examples/graphs"; out_dir="$work/out"
else
  step "client: the image's npu"
  graph_dir=$graph_in_image; out_dir=/work/out
fi

# --- 4. health -------------------------------------------------------------------
step "waiting for npu health = SERVING on 127.0.0.1:$port"
serving=""
for ((i = 0; i < wait_s; i++)); do
  if health=$(npu_cli --timeout 2 health 2>&1); then serving=yes; break; fi
  [[ "$engine" == docker ]] || kill -0 "$server_pid" 2>/dev/null || fail "server exited: $health"
  sleep 1
done
[[ -n "$serving" ]] || fail "not SERVING after ${wait_s}s: $health"
step "health: $health"

# --- 5. run the example graph -------------------------------------------------
step "npu run mlp.json --input x=mlp_x.npy"
npu_cli run "$graph_dir/mlp.json" --input "x=$graph_dir/mlp_x.npy" --output-dir "$out_dir" \
  >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "npu run"; }
sed 's/^/    /' "$work/run.out"
out="$work/out/y.npy"
[[ -s "$out" ]] || fail "no output $out"
shape=$(head -c 256 "$out" | tr -d '\000' | grep -ao "'shape': ([0-9, ]*)" | sed "s/'shape': //") || true
[[ "$shape" == "$expected_shape" ]] || fail "y.npy shape is '$shape', expected '$expected_shape'"
step "output y.npy: shape $shape, $(stat -c %s "$out") bytes"

# --- 6. stop ---------------------------------------------------------------------
step "stopping the server (SIGTERM)"
if [[ "$engine" == docker ]]; then
  docker stop -t 30 "$container" >/dev/null || fail "docker stop"
  code=$(docker inspect --format '{{.State.ExitCode}}' "$container")
else
  # Signal npu-server itself: chroot isolation has no PID namespace, so it is
  # a host process below `buildah run` (which would SIGKILL it on SIGTERM).
  pids=$server_pid server=""
  while [[ -n "$pids" && -z "$server" ]]; do
    children=""
    for p in $pids; do
      [[ "$(cat "/proc/$p/comm" 2>/dev/null)" == npu-server ]] && { server=$p; break; }
      children+=" $(pgrep -P "$p" || true)"
    done
    pids=$children
  done
  [[ -n "$server" ]] || fail "cannot find the npu-server process under buildah run (pid $server_pid)"
  kill -TERM "$server"
  code=0
  wait "$server_pid" || code=$?
  server_pid=""
  grep -q "npu-server: stopped" "$work/server.err" || fail "npu-server did not report a clean stop"
fi
[[ "$code" -eq 0 ]] || fail "server exited with status $code after SIGTERM"
step "server drained and stopped (pid ${server:-$container}, exit 0)"
