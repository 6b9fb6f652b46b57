#!/usr/bin/env bash
# Prepares this host for the incus driver's tests and `--infra-driver incus`: a running LXD (Debian's
# `lxd` package; an Incus daemon already running is used as it is), a bridge network and a storage pool
# in the default profile (btrfs on a loop file where the kernel has it, else dir), and a Debian 12 image
# under the catalogue's alias `debian/12`.
# No image server is reachable from CI, so the image is built from Debian's packages with mmdebstrap and
# imported with metadata made here; its templates give cloud-init (NoCloud) the instance's user data.
# Idempotent and quick when everything is in place (about a second); every slow step is bounded by
# `timeout`, and the built root file system is cached in $KEEL_LXD_CACHE. Exit status 0 when the daemon
# answers with the image in place; anything else says why on stderr (the tests then skip, saying so).
set -euo pipefail

CACHE="${KEEL_LXD_CACHE:-/var/cache/keel-lxd}"
ALIAS="${KEEL_LXD_IMAGE_ALIAS:-debian/12}"
SUITE="${KEEL_LXD_SUITE:-bookworm}"
BRIDGE="${KEEL_LXD_BRIDGE:-keelbr0}"
SUBNET="${KEEL_LXD_SUBNET:-10.87.0.1/24}"
# Bumped when the image's metadata or templates change: an image of another version is replaced.
IMAGE_VERSION=2
FAST_POOL="${KEEL_LXD_FAST_POOL:-keel}"

say() { echo "lxd-setup: $*"; }
die() { echo "lxd-setup: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (it installs packages and runs the daemon)"

socket() {
  for s in "${KEEL_INCUS_SOCKET:-}" /var/lib/incus/unix.socket /var/lib/lxd/unix.socket /var/snap/lxd/common/lxd/unix.socket; do
    [ -n "$s" ] && [ -S "$s" ] && curl -sf --max-time 5 --unix-socket "$s" http://lxd/1.0 >/dev/null 2>&1 && { echo "$s"; return 0; }
  done
  return 1
}

install_packages() {
  local missing=()
  command -v lxd >/dev/null || command -v incus >/dev/null || missing+=(lxd)
  command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
  command -v nft >/dev/null || missing+=(nftables)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v curl >/dev/null || missing+=(curl)
  grep -qw btrfs /proc/filesystems && ! command -v mkfs.btrfs >/dev/null && missing+=(btrfs-progs)
  [ ${#missing[@]} = 0 ] && return 0
  say "installing ${missing[*]}"
  timeout 600 apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq "${missing[@]}" >/dev/null
}

start_daemon() {
  SOCK="$(socket)" && return 0
  command -v lxd >/dev/null || die "no lxd binary"
  say "starting lxd"
  mkdir -p /var/log/lxd
  # No systemd in CI containers: the daemon runs detached; `lxd waitready` bounds the wait.
  setsid nohup lxd --group root --logfile /var/log/lxd/lxd.log >/var/log/lxd/lxd.out 2>&1 < /dev/null &
  timeout 90 lxd waitready --timeout 80 || die "lxd did not become ready: $(tail -5 /var/log/lxd/lxd.log 2>/dev/null)"
  SOCK="$(socket)" || die "lxd started but its socket does not answer"
}

# An Incus daemon is driven with its own client (same subcommands); LXD with lxc.
lxc_() {
  if [ "$SOCK" = /var/lib/incus/unix.socket ] && command -v incus >/dev/null; then
    timeout 120 incus "$@"
  else
    LXD_DIR="$(dirname "$SOCK")" timeout 120 lxc "$@"
  fi
}
init_preseed() {
  if [ "$SOCK" = /var/lib/incus/unix.socket ] && command -v incus >/dev/null; then
    timeout 180 incus admin init --preseed
  else
    LXD_DIR="$(dirname "$SOCK")" timeout 180 lxd init --preseed
  fi
}

preseed() {
  if lxc_ network show "$BRIDGE" >/dev/null 2>&1 && lxc_ storage show default >/dev/null 2>&1 &&
    lxc_ profile device show default 2>/dev/null | grep -q "network: $BRIDGE"; then
    return 0
  fi
  say "configuring network $BRIDGE ($SUBNET, no NAT) and the dir storage pool"
  # The bridge only links the host to its containers (the tests connect to them over SSH); no NAT and
  # no firewall rules, so nothing of the host's own filtering changes.
  init_preseed <<YAML
networks:
- name: $BRIDGE
  type: bridge
  config:
    ipv4.address: $SUBNET
    ipv4.nat: "false"
    ipv4.firewall: "false"
    ipv6.address: none
storage_pools:
- name: default
  driver: dir
profiles:
- name: default
  devices:
    root:
      path: /
      pool: default
      type: disk
    eth0:
      name: eth0
      network: $BRIDGE
      type: nic
YAML
}

# Containers on the dir pool are the image unpacked anew each time (6-14 s here for 300 MB); on btrfs
# (a loop file) they are snapshots of it unpacked once (0.4 s). The dir pool stays the fallback.
fast_pool() {
  [ "$(lxc_ profile device get default root pool 2>/dev/null)" = "$FAST_POOL" ] && return 0
  grep -qw btrfs /proc/filesystems || { say "no btrfs in this kernel: containers stay on the dir pool"; return 0; }
  if ! lxc_ storage show "$FAST_POOL" >/dev/null 2>&1; then
    lxc_ storage create "$FAST_POOL" btrfs size="${KEEL_LXD_POOL_SIZE:-16GiB}" >/dev/null 2>&1 ||
      { say "could not make a btrfs pool (no loop devices?): containers stay on the dir pool"; return 0; }
  fi
  say "containers go on the btrfs pool $FAST_POOL"
  lxc_ profile device set default root pool "$FAST_POOL" ||
    say "could not move the default profile's root disk to $FAST_POOL (instances on it?)"
}

build_rootfs() {
  local out="$CACHE/$SUITE-rootfs.tar"
  [ -s "$out" ] && return 0
  command -v mmdebstrap >/dev/null || die "no mmdebstrap to build the image"
  say "building the $SUITE root file system with mmdebstrap (about a minute)"
  mkdir -p "$CACHE"
  # The image's host keys are removed: cloud-init makes each container's own at its first boot
  # (the driver's user data keeps them across later cloud-init runs). cloud-init reads the NoCloud
  # seed the image's templates write, nothing else (no metadata service to probe for).
  timeout 900 mmdebstrap --variant=minbase \
    --include=systemd-sysv,openssh-server,iproute2,ifupdown,isc-dhcp-client,cloud-init,sudo,ca-certificates \
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
    --customize-hook='printf "datasource_list: [ NoCloud, None ]\n" > "$1"/etc/cloud/cloud.cfg.d/90-keel.cfg' \
    --customize-hook=': > "$1"/etc/machine-id' \
    "$SUITE" "$CACHE/$SUITE-rootfs.part.tar" >"$CACHE/mmdebstrap.log" 2>&1 || die "mmdebstrap failed: $(tail -5 "$CACHE/mmdebstrap.log")"
  mv "$CACHE/$SUITE-rootfs.part.tar" "$out"
}

make_metadata() {
  local dir="$1"
  mkdir -p "$dir/templates"
  cat >"$dir/metadata.yaml" <<YAML
architecture: $(uname -m)
creation_date: $(date +%s)
properties:
  os: debian
  release: $SUITE
  description: Debian $SUITE (Keel, built with mmdebstrap)
  keel.version: "$IMAGE_VERSION"
templates:
  /etc/cloud/cloud.cfg.d/91-keel-locale.cfg:
    when: [create, copy]
    template: locale.tpl
  /var/lib/cloud/seed/nocloud-net/meta-data:
    when: [create, copy, start]
    template: cloud-init-meta.tpl
  /var/lib/cloud/seed/nocloud-net/user-data:
    when: [create, copy, start]
    template: cloud-init-user.tpl
    properties:
      default: |
        #cloud-config
        {}
  /var/lib/cloud/seed/nocloud-net/vendor-data:
    when: [create, copy, start]
    template: cloud-init-vendor.tpl
    properties:
      default: |
        #cloud-config
        {}
  /var/lib/cloud/seed/nocloud-net/network-config:
    when: [create, copy, start]
    template: cloud-init-network.tpl
  /etc/hostname:
    when: [create, copy]
    template: hostname.tpl
YAML
  # Incus and newer LXD name the keys cloud-init.*, LXD 5.0 without the cloud_init extension user.*;
  # the instance id is the driver's (it changes when cloud-init should run again), else the name.
  cat >"$dir/templates/cloud-init-meta.tpl" <<'TPL'
instance-id: {{ config_get("user.keel.instance-id", container.name) }}
local-hostname: {{ container.name }}
{{ config_get("cloud-init.meta-data", config_get("user.meta-data", "")) }}
TPL
  cat >"$dir/templates/cloud-init-user.tpl" <<'TPL'
{{ config_get("cloud-init.user-data", config_get("user.user-data", properties.default)) }}
TPL
  cat >"$dir/templates/cloud-init-vendor.tpl" <<'TPL'
{{ config_get("cloud-init.vendor-data", config_get("user.vendor-data", properties.default)) }}
TPL
  cat >"$dir/templates/cloud-init-network.tpl" <<'TPL'
{% if config_get("cloud-init.network-config", "") != "" %}{{ config_get("cloud-init.network-config", "") }}{% elif config_get("user.network-config", "") != "" %}{{ config_get("user.network-config", "") }}{% else %}version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: dhcp
        control: auto
{% endif %}
TPL
  # minbase has no locales: cloud-init's default (en_US.UTF-8) fails; C.UTF-8 is built into libc.
  cat >"$dir/templates/locale.tpl" <<'TPL'
locale: C.UTF-8
TPL
  cat >"$dir/templates/hostname.tpl" <<'TPL'
{{ container.name }}
TPL
}

import_image() {
  if lxc_ image alias list --format csv 2>/dev/null | grep -q "^$ALIAS,"; then
    lxc_ image show "$ALIAS" 2>/dev/null | grep -Eq "keel.version: \"?$IMAGE_VERSION\"?\$" && return 0
    say "replacing the $ALIAS image (not version $IMAGE_VERSION)"
    lxc_ image delete "$ALIAS" >/dev/null
  fi
  build_rootfs
  say "importing the image as $ALIAS"
  local tmp
  tmp="$(mktemp -d)"
  make_metadata "$tmp/meta"
  tar -C "$tmp/meta" -czf "$tmp/metadata.tar.gz" metadata.yaml templates
  lxc_ image import "$tmp/metadata.tar.gz" "$CACHE/$SUITE-rootfs.tar" --alias "$ALIAS" >/dev/null ||
    { rm -rf "$tmp"; die "image import failed"; }
  rm -rf "$tmp"
}

install_packages || die "could not install the packages (lxd, mmdebstrap, nftables)"
start_daemon
preseed
fast_pool
import_image
say "ready: socket $SOCK, image $ALIAS"
