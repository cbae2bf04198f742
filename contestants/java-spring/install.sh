#!/bin/sh
# Builds the Spring Boot contestant into target/java-spring.jar, the runnable jar
# spring-boot-maven-plugin repackages. Maven fetches Spring Boot and its dependencies from Maven
# Central into ~/.m2 (or MAVEN_OPTS=-Dmaven.repo.local=DIR). The unit tests
# (event rules, id rules) run in the build.
# Idempotent: when the jar is newer than pom.xml, every source file and this
# script, it does nothing.
set -eu
cd "$(dirname "$0")"

for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "install.sh: needs a JDK 17 or newer and Maven 3.8 or newer ($tool is not on PATH; on Debian: apt-get install openjdk-17-jdk-headless maven)" >&2; exit 1; }
done
major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
case "$major" in
  1.*|9|1[0-6]) echo "install.sh: needs Java 17 or newer, found Java $major (set JAVA_HOME or PATH to a JDK 17)" >&2; exit 1 ;;
esac

jar=target/java-spring.jar
if [ -f "$jar" ] && [ -z "$(find pom.xml install.sh src -newer "$jar" -type f)" ]; then
  exit 0
fi
mvn -B -q -Dstyle.color=never package >&2 ||
  { echo "install.sh: the Maven build failed (output above); Maven Central must be reachable on a first build" >&2; exit 1; }
[ -f "$jar" ] || { echo "install.sh: the build made no $jar" >&2; exit 1; }
