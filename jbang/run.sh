#!/usr/bin/env bash
# Runs mcpd's YAML routes with Camel JBang: `camel run <routes> <configuration class> <mcpd classes> …`.
#
#   jbang/run.sh [relay|serve] [more `camel run` options]      (default: relay)
#
# Configured like `mcpd relay` / `mcpd serve`, from the MCPD_* environment variables (docs/command-line.md):
# MCPD_LISTEN, MCPD_UPSTREAMS, MCPD_SPOOL_DIR, MCPD_DATA, MCPD_INGEST_KEY, … — the configuration class reads them
# with the product's own McpdConfig. Also read:
#   MCPD_JAR             the mcpd classes WITHOUT their dependencies (default: target/original-mcpd.jar, built by
#                        `mvn -DskipTests package` — run here when it is missing)
#   MCPD_JBANG_WORK      where Camel JBang keeps its state: home/ (its user.home: ~/.camel), m2/ (the Maven
#                        repository it downloads into), run/ (its working directory: .camel-jbang/)
#                        (default: jbang/target/work)
#   MCPD_JBANG_MAVEN_SETTINGS  a Maven settings.xml (mirrors, proxies) for Camel JBang's downloads
#   MCPD_LOG_LEVEL       log level (default INFO)
#   MCPD_JAVA_OPTS       JVM options
#   JAVA, MVN            the java and mvn commands (default: java, mvn)
#
# Camel JBang's own `camel` launcher (camel-jbang-main) is not on Maven Central; jbang/pom.xml builds the CLI from
# org.apache.camel:camel-jbang-core (4.17.0) with a one-line main (dev.mcpd.jbang.CamelCli). See docs/jbang.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
project=$(dirname "$here")
java=${JAVA:-java}
mvn=${MVN:-mvn}

role=relay
if [[ $# -gt 0 && ( $1 == relay || $1 == serve ) ]]; then
    role=$1
    shift
fi

die() {
    echo "jbang/run.sh: $1" >&2
    exit "${2:-2}"
}

# --- the Camel CLI: built once (and again when jbang/pom.xml or its sources change)
cli_classpath=$here/target/classpath.txt
if [[ ! -s $cli_classpath || ! -d $here/target/classes || $here/pom.xml -nt $cli_classpath
        || -n $(find "$here/src" -newer "$cli_classpath" -type f 2>/dev/null | head -1) ]]; then
    echo "jbang/run.sh: building the Camel CLI (jbang/pom.xml)" >&2
    out=$("$mvn" -B -q -f "$here/pom.xml" package 2>&1) || { echo "$out" >&2; die "building jbang/pom.xml failed" 1; }
fi

# --- the mcpd classes (not the fat jar: that holds Camel 4.18, and Camel JBang runs Camel 4.17)
jar=${MCPD_JAR:-$project/target/original-mcpd.jar}
if [[ ! -f $jar && -z ${MCPD_JAR:-} ]]; then
    echo "jbang/run.sh: building $jar (mvn -DskipTests package)" >&2
    out=$("$mvn" -B -q -f "$project/pom.xml" -DskipTests package 2>&1) || { echo "$out" >&2; die "building the mcpd jar failed" 1; }
fi
[[ -f $jar ]] || die "no mcpd jar at $jar: build it with 'mvn -DskipTests package'"
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")

# --- where to listen: camel.server.* is read before route files (and the configuration class) are loaded, so it is
#     given on the command line; the configuration class checks it against MCPD_LISTEN.
listen=${MCPD_LISTEN:-0.0.0.0:4317}
if [[ $listen == \[*\]:* ]]; then
    host=${listen%%]:*}
    host=${host#[}
    port=${listen##*]:}
else
    host=${listen%:*}
    port=${listen##*:}
fi
[[ $listen == *:* && -n $host && $port =~ ^[0-9]{1,5}$ ]] \
    || die "MCPD_LISTEN=\"$listen\" is not HOST:PORT (e.g. 0.0.0.0:4317)"
[[ $port != 0 ]] || die "MCPD_LISTEN: port 0 is not supported under Camel JBang; name a port"

# --- Camel JBang's state, kept out of the real home directory
work=${MCPD_JBANG_WORK:-$here/target/work}
mkdir -p "$work/home/.m2" "$work/m2" "$work/run"
work=$(cd "$work" && pwd)
# camel-tooling-maven 4.17.0 ignores --maven-settings (MavenDownloaderImpl.validateMavenSettingsLocations sets an
# explicit settings file to null), but reads ${user.home}/.m2/settings.xml; -Dmaven.repo.local picks the repository.
if [[ -n ${MCPD_JBANG_MAVEN_SETTINGS:-} ]]; then
    cp "$MCPD_JBANG_MAVEN_SETTINGS" "$work/home/.m2/settings.xml"
else
    rm -f "$work/home/.m2/settings.xml"
fi

# --- relative paths in the configuration mean the caller's directory, as for mcpd itself (resolved before the cd
#     into Camel JBang's working directory below)
absolute() { [[ $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
export MCPD_DATA=${MCPD_DATA:-./data/mcpd.db}
if [[ ! ${MCPD_DATA,,} =~ ^postgres(ql)?:// ]]; then
    MCPD_DATA=$(absolute "$MCPD_DATA")
fi
[[ -z ${MCPD_SPOOL_DIR:-} ]] || export MCPD_SPOOL_DIR=$(absolute "$MCPD_SPOOL_DIR")
[[ -z ${MCPD_ROUTES:-} ]] || export MCPD_ROUTES=$(absolute "$MCPD_ROUTES")

# --- what to run: the product's routes, as files; the configuration class binding their beans; the mcpd classes
routes=$project/src/main/resources/routes
files=("$routes"/common/*.camel.yaml "$routes/$role"/*.camel.yaml)
if [[ -n ${MCPD_ROUTES:-} ]]; then
    # operators' own routes beside the built-in ones, as `mcpd --routes` loads them
    shopt -s nullglob
    files+=("$MCPD_ROUTES"/*.camel.yaml)
    shopt -u nullglob
fi
case $role in
    relay) config_class=$here/relay/McpdRelayConfiguration.java ;;
    serve) config_class=$here/serve/McpdServeConfiguration.java ;;
esac
# camel-direct: the extension points (direct:mcpd-…) are called by mcpd's own steps, not named by a route's URI, so
# Camel JBang would not find the component by itself
deps=mvn:io.micrometer:micrometer-registry-prometheus:1.15.6,camel:direct
# camel-kafka (and the kafka-clients it brings): the relay's Kafka upstreams and the collector's Kafka source are
# made by mcpd's beans, not named by a route's URI
deps+=,camel:kafka
if [[ $role == relay ]]; then
    # the delivery window's limit algorithms
    deps+=,mvn:com.netflix.concurrency-limits:concurrency-limits-core:0.5.4
fi
if [[ $role == serve ]]; then
    deps+=,mvn:org.xerial:sqlite-jdbc:3.50.3.0,mvn:org.postgresql:postgresql:42.7.8,mvn:com.zaxxer:HikariCP:6.3.3
fi

level=${MCPD_LOG_LEVEL:-INFO}
cd "$work/run"
# shellcheck disable=SC2086 # MCPD_JAVA_OPTS holds several options
exec "$java" ${MCPD_JAVA_OPTS:-} \
    -Duser.home="$work/home" -Dmaven.repo.local="$work/m2" \
    -cp "$here/target/classes:$(cat "$cli_classpath")" dev.mcpd.jbang.CamelCli \
    run "${files[@]}" "$config_class" "$here/common/JBangListen.java" \
    "$project/src/main/resources/application.properties" "$jar" \
    --dep="$deps" \
    --name="mcpd-$role" --profile=prod \
    --prop=camel.server.host="$host" --prop=camel.server.port="$port" \
    --logging-level="${level,,}" --logging-color=false \
    "$@"
