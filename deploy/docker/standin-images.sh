#!/usr/bin/env bash
# Stand-ins for the base images deploy/docker/Dockerfile names in its FROM lines, for machines that cannot pull from
# Docker Hub: Debian bookworm made by debootstrap, with Debian's OpenJDK 17 (and Maven for the build stage), tagged
# with the names the Dockerfile uses, so that the unchanged Dockerfile builds with podman. Each is made once and kept
# in podman's image store (delete them with `podman rmi` to make them again). Certificate authorities this machine
# adds to its trust (/usr/local/share/ca-certificates, e.g. an egress proxy's) are added to the stand-ins' too, so
# that Maven inside the build reaches Maven Central as the host does. Needs root, podman and debootstrap.
set -euo pipefail
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

make_standin() { # name packages
  local name="$1" packages="$2"
  if podman image exists "$name"; then
    echo "standin-images: $name is there"
    return
  fi
  local root
  root="$(mktemp -d)"
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >"$root.log" 2>&1 \
    || { echo "standin-images: debootstrap for $name failed (log $root.log)" >&2; return 1; }
  for ca in /usr/local/share/ca-certificates/*.crt; do
    [ -e "$ca" ] || continue
    cp "$ca" "$root/usr/local/share/ca-certificates/"
    keytool -importcert -noprompt -keystore "$root/etc/ssl/certs/java/cacerts" -storepass changeit \
      -alias "local-$(basename "$ca" .crt)" -file "$ca" >/dev/null
  done
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
  tar -C "$root" -c . | podman import -q - "$name" >/dev/null
  rm -rf "$root" "$root.log"
  echo "standin-images: made $name"
}

make_standin docker.io/library/maven:3.9-eclipse-temurin-17 openjdk-17-jdk-headless,maven,ca-certificates
make_standin docker.io/library/eclipse-temurin:17-jre openjdk-17-jre-headless,ca-certificates,curl
