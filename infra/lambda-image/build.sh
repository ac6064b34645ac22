#!/usr/bin/env bash
# Builds a Lambda-compatible Python 3.13 image from package registries only (no image is pulled):
# a Debian trixie root file system with python3.13 (debootstrap), the runtime interface client
# awslambdaric in /var/runtime and boto3 in the runtime's own site-packages (both from PyPI), the
# Runtime Interface Emulator that ships in the SAM CLI's wheel, and AWS's entrypoint contract
# (/lambda-entrypoint.sh HANDLER). docs/lambda-runtime.md says how it differs from AWS's image.
#
#   infra/lambda-image/build.sh            build when the image is missing or this recipe changed
#   FORCE=1 infra/lambda-image/build.sh    build again
#
# The image is tagged a2a-serverless/lambda-python:3.13-ARCH only: `sam local` runs it when told to
# (`--invoke-image a2a-serverless/lambda-python:3.13-ARCH --skip-pull-image`), and AWS's own image,
# public.ecr.aws/lambda/python:3.13-ARCH, stays AWS's (an earlier build that tagged itself with that
# name is untagged, so SAM finds or pulls AWS's image again).
#
# Environment: ARCH (x86_64 or arm64; default x86_64; the other architecture runs under Debian's
# qemu-user-static, installed when missing, and takes minutes more),
# PYTHON (any Python >= 3.9 with pip, used to fetch the wheels; default python3), RIE (the emulator
# binary; default: the one in .venv-sam's SAM CLI), DEBIAN_MIRROR (default: the Debian archive apt
# uses here, read from /etc/apt/sources.list*). debootstrap and chroot need root: sudo is used
# when the script runs as another user.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
APT_INSTALL=$ROOT/infra/apt-install.sh

# What the image holds, pinned: a change here (or to this directory's files) rebuilds it.
DEBIAN_SUITE=trixie
AWSLAMBDARIC_VERSION=4.2.2
BOTO3_VERSION=1.44.8
LABEL=a2a-serverless.lambda-image.recipe

ARCH=${ARCH:-x86_64}
case $ARCH in
    x86_64) DEB_ARCH=amd64 QEMU_ARCH=x86_64 PIP_PLATFORM=manylinux2014_x86_64 ;;
    arm64) DEB_ARCH=arm64 QEMU_ARCH=aarch64 PIP_PLATFORM=manylinux2014_aarch64 ;;
    *) echo "build.sh: ARCH must be x86_64 or arm64, not $ARCH" >&2; exit 2 ;;
esac
OWN_TAG=a2a-serverless/lambda-python:3.13-$ARCH
AWS_TAG=public.ecr.aws/lambda/python:3.13-$ARCH
PYTHON=${PYTHON:-python3}
RIE=${RIE:-$(ls "$ROOT"/.venv-sam/lib/python3*/site-packages/samcli/local/rapid/aws-lambda-rie-"$ARCH" 2>/dev/null | head -1)}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
WORK=${TMPDIR:-/tmp}/a2a-lambda-image-$ARCH

say() { echo "==> lambda image: $*"; }

if [ -z "$RIE" ] || [ ! -f "$RIE" ]; then
    echo "build.sh: no Runtime Interface Emulator: install the SAM CLI (make .venv-sam/.installed-*) or set RIE" >&2
    exit 1
fi

# The recipe's fingerprint, kept as the image's label: the files of this directory, the pins, the emulator.
recipe=$(cat "$HERE"/build.sh "$HERE"/bootstrap "$HERE"/lambda-entrypoint.sh "$RIE" \
    | { cat; echo "$ARCH $DEBIAN_SUITE $AWSLAMBDARIC_VERSION $BOTO3_VERSION"; } | sha256sum | cut -c1-16)

label_of() { # the recipe label of image $1 ("" for an image without it), or fails if there is no such image
    docker image inspect --format "{{ if .Config.Labels }}{{ index .Config.Labels \"$LABEL\" }}{{ end }}" "$1" \
        2> /dev/null
}

debian_mirror() { # the first Debian archive (not its security suite) in apt's sources, unless DEBIAN_MIRROR
    if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2> /dev/null \
        | grep -vE '^[[:space:]]*#' | grep -oE '(https?|file)://[^][ ]+' | grep -E '/debian/?$' | head -1 || true
}

build() {
    local mirror work rootfs
    mirror=$(debian_mirror)
    if [ -z "$mirror" ]; then
        echo "build.sh: no Debian archive in /etc/apt/sources.list*: set DEBIAN_MIRROR to one" >&2
        exit 1
    fi
    command -v debootstrap > /dev/null || "$APT_INSTALL" "build.sh: the image is built with debootstrap" debootstrap
    # Another architecture's binaries (debootstrap's second stage, compileall) run under qemu.
    if [ "$DEB_ARCH" != "$(dpkg --print-architecture)" ] && [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$QEMU_ARCH" ]; then
        "$APT_INSTALL" "build.sh: an $ARCH image is built under qemu" qemu-user-static binfmt-support
        $SUDO update-binfmts --enable "qemu-$QEMU_ARCH" > /dev/null
    fi
    # One work tree per architecture, removed when the build ends and before it starts: a build cut
    # off (a timeout's SIGKILL runs no trap) leaves its tree, and perhaps debootstrap's /proc mount.
    work=$WORK
    remove_work
    trap remove_work EXIT
    mkdir -p "$work"
    rootfs=$work/rootfs

    say "debootstrap $DEBIAN_SUITE ($DEB_ARCH, minbase + python3.13)"
    if ! $SUDO debootstrap --variant=minbase --arch="$DEB_ARCH" --include=python3.13 \
        "$DEBIAN_SUITE" "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1; then
        tail -30 "$work/debootstrap.log" >&2
        exit 1
    fi

    say "awslambdaric $AWSLAMBDARIC_VERSION and boto3 $BOTO3_VERSION (wheels for CPython 3.13, $PIP_PLATFORM)"
    local pip=("$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --no-compile
        --platform "$PIP_PLATFORM" --only-binary=:all: --python-version 3.13 --implementation cp)
    "${pip[@]}" --target "$work/runtime" "awslambdaric==$AWSLAMBDARIC_VERSION"
    "${pip[@]}" --target "$work/site-packages" "boto3==$BOTO3_VERSION"
    rm -rf "$work/runtime/bin" "$work/site-packages/bin"

    say "runtime layout: /var/runtime, /var/lang, /var/task, /opt, the emulator, the entrypoint"
    local site=$rootfs/var/lang/lib/python3.13/site-packages
    $SUDO mkdir -p "$rootfs/var/runtime" "$site" "$rootfs/var/lang/bin" "$rootfs/var/task" "$rootfs/opt" \
        "$rootfs/usr/local/lib/python3.13/dist-packages"
    $SUDO cp -a "$work/runtime/." "$rootfs/var/runtime/"
    $SUDO cp -a "$work/site-packages/." "$site/"
    $SUDO ln -sf /usr/bin/python3.13 "$rootfs/var/lang/bin/python3.13"
    # After the standard library, as in AWS's image: the runtime's site-packages, then the runtime client.
    printf '%s\n' /var/lang/lib/python3.13/site-packages /var/runtime \
        | $SUDO tee "$rootfs/usr/local/lib/python3.13/dist-packages/lambda-runtime.pth" > /dev/null
    $SUDO install -m 0755 "$HERE/bootstrap" "$rootfs/var/runtime/bootstrap"
    $SUDO install -m 0755 "$HERE/lambda-entrypoint.sh" "$rootfs/lambda-entrypoint.sh"
    $SUDO install -m 0755 "$RIE" "$rootfs/usr/local/bin/aws-lambda-rie"
    # The runtime's own modules compiled by the image's interpreter, as AWS ships them.
    $SUDO chroot "$rootfs" /usr/bin/python3.13 -m compileall -q /var/runtime /var/lang/lib/python3.13/site-packages \
        > /dev/null
    $SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*

    say "docker import $OWN_TAG"
    local env="PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin"
    env+=" LANG=C.UTF-8 TZ=:/etc/localtime LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime"
    env+=" LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib"
    $SUDO tar --numeric-owner -C "$rootfs" -cf - . | docker import \
        --change "ENV $env" \
        --change "LABEL $LABEL=$recipe" \
        --change "WORKDIR /var/task" \
        --change 'ENTRYPOINT ["/lambda-entrypoint.sh"]' \
        --message "Lambda-compatible Python 3.13 ($DEBIAN_SUITE, awslambdaric $AWSLAMBDARIC_VERSION)" \
        - "$OWN_TAG" > /dev/null
    set_architecture "$OWN_TAG"
}

remove_work() { # unmount what debootstrap left mounted inside (deepest first), then remove, never across a mount
    awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/mounts 2> /dev/null | sort -r \
        | while read -r mount; do $SUDO umount -l "$mount"; done
    $SUDO rm -rf --one-file-system "$WORK"
}

set_architecture() { # docker import records the engine's architecture: an arm64 image must say arm64
    [ "$(docker image inspect --format '{{.Architecture}}' "$1")" = "$DEB_ARCH" ] && return
    local saved=$WORK/saved old
    mkdir -p "$saved"
    old=$(docker image inspect --format '{{.Id}}' "$1")
    docker save "$1" | tar -x -C "$saved"
    "$PYTHON" - "$saved" "$DEB_ARCH" <<'EOF'
import hashlib, json, pathlib, sys
saved, architecture = pathlib.Path(sys.argv[1]), sys.argv[2]
manifest = json.loads((saved / "manifest.json").read_text())
config = json.loads((saved / manifest[0]["Config"]).read_text())
config["architecture"] = architecture
data = json.dumps(config).encode()
(saved / manifest[0]["Config"]).unlink()
manifest[0]["Config"] = hashlib.sha256(data).hexdigest() + ".json"
(saved / manifest[0]["Config"]).write_bytes(data)
(saved / "manifest.json").write_text(json.dumps(manifest))
EOF
    tar -C "$saved" -cf - . | docker load > /dev/null
    docker rmi "$old" > /dev/null 2>&1 || true
}

# One build of an architecture at a time: a second waits, then finds the image up to date.
if command -v flock > /dev/null; then
    exec 9> "$WORK.lock"
    flock 9
fi
if [ -z "${FORCE:-}" ] && [ "$(label_of "$OWN_TAG" || true)" = "$recipe" ]; then
    say "$OWN_TAG is up to date (recipe $recipe)"
else
    started=$SECONDS
    previous=$(docker image inspect --format '{{.Id}}' "$OWN_TAG" 2> /dev/null || true)
    build
    say "built $OWN_TAG (recipe $recipe) in $((SECONDS - started)) s"
fi

# Earlier builds also took AWS's name: give it back (an image of AWS's own, without the label, is kept).
if aws_label=$(label_of "$AWS_TAG") && [ -n "$aws_label" ]; then
    if docker rmi "$AWS_TAG" > /dev/null 2>&1; then
        say "untagged $AWS_TAG (an earlier build of this kit's): that name is AWS's image"
    else
        say "could not untag $AWS_TAG (an earlier build of this kit's, still in use): docker rmi it later"
    fi
    docker rmi "public.ecr.aws/lambda/python:3.13-rapid-$ARCH" > /dev/null 2>&1 || true
fi
# The build this one replaced, unless a tag or a container still holds it.
if [ -n "${previous:-}" ]; then docker rmi "$previous" > /dev/null 2>&1 || true; fi
