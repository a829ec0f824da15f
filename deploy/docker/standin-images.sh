#!/usr/bin/env bash
# Stand-ins for the images deploy/docker names, for machines that cannot pull from Docker Hub: Debian bookworm made by
# debootstrap, with Debian's OpenJDK 17 (and Maven for the build stage), tagged with the names the Dockerfile's FROM
# lines use, so that the unchanged Dockerfile builds with podman; and, for docker-compose.multi-region.yml, Debian's
# PostgreSQL 15 tagged postgres:16, with an entrypoint that keeps the official image's contract the Compose file
# relies on (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, data in /var/lib/postgresql/data, port 5432); and, for
# docker-compose.kafka.yml, Apache Kafka 3.9.1's jars from Maven Central on Debian's OpenJDK 17, tagged
# apache/kafka:3.9.1, with a start-up that keeps the official image's contract (every KAFKA_* variable a
# server.properties key, the log formatted at the first start, /opt/kafka/bin/kafka-broker-api-versions.sh). Each is made once and kept
# in podman's image store (delete them with `podman rmi` to make them again). Certificate authorities this machine
# adds to its trust (/usr/local/share/ca-certificates, e.g. an egress proxy's) are added to the stand-ins' too, so
# that Maven inside the build reaches Maven Central as the host does. Needs root, podman and debootstrap.
set -euo pipefail
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

make_standin() { # name packages [setup-function [import-change...]]
  local name="$1" packages="$2" setup="${3:-}"
  shift 2; shift || true
  if podman image exists "$name"; then
    echo "standin-images: $name is there"
    return
  fi
  local root
  root="$(mktemp -d)"
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >"$root.log" 2>&1 \
    || { echo "standin-images: debootstrap for $name failed (log $root.log)" >&2; return 1; }
  for ca in /usr/local/share/ca-certificates/*.crt; do
    [ -e "$ca" ] && [ -d "$root/usr/local/share/ca-certificates" ] || continue
    cp "$ca" "$root/usr/local/share/ca-certificates/"
    [ -e "$root/etc/ssl/certs/java/cacerts" ] || continue
    keytool -importcert -noprompt -keystore "$root/etc/ssl/certs/java/cacerts" -storepass changeit \
      -alias "local-$(basename "$ca" .crt)" -file "$ca" >/dev/null
  done
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
  [ -z "$setup" ] || "$setup" "$root"
  local changes=()
  for change in "$@"; do changes+=(--change "$change"); done
  tar -C "$root" -c . | podman import -q "${changes[@]}" - "$name" >/dev/null
  rm -rf "$root" "$root.log"
  echo "standin-images: made $name"
}

make_standin docker.io/library/maven:3.9-eclipse-temurin-17 openjdk-17-jdk-headless,maven,ca-certificates
make_standin docker.io/library/eclipse-temurin:17-jre openjdk-17-jre-headless,ca-certificates,curl

# The official postgres image's start-up, as far as the Compose file uses it: a first start makes the cluster with
# POSTGRES_USER (password POSTGRES_PASSWORD, scram-sha-256 over TCP) and the database POSTGRES_DB; every start runs
# the server as the postgres user, listening on every interface.
postgres_entrypoint() { # root
  local root="$1"
  rm -rf "$root/var/lib/postgresql/15" "$root/etc/postgresql/15" # the cluster Debian's package made at install
  cat >"$root/usr/local/bin/docker-entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
set -eu
bin=/usr/lib/postgresql/15/bin
data="${PGDATA:-/var/lib/postgresql/data}"
user="${POSTGRES_USER:-postgres}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$data" /var/run/postgresql
chown postgres:postgres "$data" /var/run/postgresql
chmod 700 "$data"
if [ ! -s "$data/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres "$bin/initdb" -D "$data" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$data/pg_hba.conf"
  db="${POSTGRES_DB:-$user}"
  if [ "$db" != postgres ]; then
    as_postgres "$bin/pg_ctl" -D "$data" -o "-c listen_addresses=''" -w start >/dev/null
    as_postgres psql -q -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
    as_postgres "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$data" -c listen_addresses='*'
ENTRYPOINT
  chmod 0755 "$root/usr/local/bin/docker-entrypoint.sh"
}
make_standin docker.io/library/postgres:16 postgresql-15,postgresql-client-15 postgres_entrypoint \
  'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'ENV PGDATA=/var/lib/postgresql/data' 'EXPOSE 5432' \
  'VOLUME /var/lib/postgresql/data' 'STOPSIGNAL SIGINT'

# Apache Kafka as the official apache/kafka image starts it, as far as the Compose file uses it: each KAFKA_NAME
# variable is the server.properties key name (lower case, '_' → '.', '__' → '_', '___' → '-'), the log directory is
# formatted at the first start (CLUSTER_ID, or the image's default id), then the broker runs in the foreground. The
# jars are Kafka's own release (org.apache.kafka:kafka_2.13:3.9.1 and what it depends on), fetched by Maven.
kafka_release() { # root
  local root="$1" pom
  pom="$(mktemp -d)"
  cat >"$pom/pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>standin</groupId><artifactId>kafka</artifactId><version>1</version>
  <dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>3.9.1</version></dependency></dependencies>
</project>
POM
  mvn -B -q -f "$pom/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$root/opt/kafka/libs"
  rm -rf "$pom"
  mkdir -p "$root/opt/kafka/bin" "$root/opt/kafka/config" "$root/etc/kafka/docker"
  cat >"$root/etc/kafka/docker/run" <<'RUN'
#!/bin/sh
set -eu
props=/opt/kafka/config/server.properties
: >"$props"
env | grep '^KAFKA_' | grep -v '^KAFKA_HEAP_OPTS=' | while IFS='=' read -r name value; do
  key=$(printf '%s' "${name#KAFKA_}" | tr 'A-Z' 'a-z' | sed 's/___/-/g; s/__/@/g; s/_/./g; s/@/_/g')
  printf '%s=%s\n' "$key" "$value" >>"$props"
done
grep -q '^log.dirs=' "$props" || echo "log.dirs=/tmp/kraft-combined-logs" >>"$props"
java -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format -t "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$props" \
  --ignore-formatted >/dev/null
exec java ${KAFKA_HEAP_OPTS:--Xmx512m} -cp '/opt/kafka/libs/*' kafka.Kafka "$props"
RUN
  cat >"$root/opt/kafka/bin/kafka-broker-api-versions.sh" <<'TOOL'
#!/bin/sh
exec java -Xmx128m -cp '/opt/kafka/libs/*' kafka.admin.BrokerApiVersionsCommand "$@"
TOOL
  chmod 0755 "$root/etc/kafka/docker/run" "$root/opt/kafka/bin/kafka-broker-api-versions.sh"
}
make_standin docker.io/apache/kafka:3.9.1 openjdk-17-jre-headless,ca-certificates kafka_release \
  'CMD ["/etc/kafka/docker/run"]' 'EXPOSE 9092' 'WORKDIR /opt/kafka'
