#!/bin/sh
# Builds the grpc-java contestant into target/java-grpc.jar (a fat jar, with
# maven-shade-plugin): Maven fetches grpc-java, protobuf-java and protoc from
# Maven Central (into ~/.m2, or MAVEN_OPTS=-Dmaven.repo.local=DIR); the gRPC
# code generator is Debian's protobuf-compiler-grpc-java-plugin (Maven
# Central's protoc-gen-grpc-java executables are not served here), installed
# when missing. The unit tests of the sort run in the build.
# Idempotent: when the jar is newer than pom.xml, every source file, the proto
# and this script, it does nothing.
set -eu
cd "$(dirname "$0")"
proto=../../proto/sort/v1/sort.proto

for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "install.sh: needs a JDK 17 or newer and Maven 3.8 or newer ($tool is not on PATH; on Debian: apt-get install openjdk-17-jdk-headless maven)" >&2; exit 1; }
done
major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
case "$major" in
  1.*|9|1[0-6]) echo "install.sh: needs Java 17 or newer, found Java $major (set JAVA_HOME or PATH to a JDK 17)" >&2; exit 1 ;;
esac
[ -f "$proto" ] || { echo "install.sh: $proto is missing: run from the stackbench repository" >&2; exit 1; }

plugin=/usr/bin/grpc_java_plugin
if [ ! -x "$plugin" ]; then
  echo "install.sh: installing the Debian package protobuf-compiler-grpc-java-plugin" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install.sh: need root (or sudo) to install protobuf-compiler-grpc-java-plugin" >&2; exit 1; }
    sudo=sudo
  fi
  if ! $sudo apt-get install -y -q -o DPkg::Lock::Timeout=600 protobuf-compiler-grpc-java-plugin >&2; then
    $sudo apt-get update -q -o DPkg::Lock::Timeout=600 >&2
    $sudo apt-get install -y -q -o DPkg::Lock::Timeout=600 protobuf-compiler-grpc-java-plugin >&2 ||
      { echo "install.sh: could not install protobuf-compiler-grpc-java-plugin" >&2; exit 1; }
  fi
fi

jar=target/java-grpc.jar
if [ -f "$jar" ] && [ -z "$(find pom.xml install.sh src "$proto" -newer "$jar" -type f)" ]; then
  exit 0
fi
mvn -B -q -Dstyle.color=never -Dgrpc.java.plugin="$plugin" package >&2 ||
  { echo "install.sh: the Maven build failed (output above); Maven Central must be reachable on a first build" >&2; exit 1; }
[ -f "$jar" ] || { echo "install.sh: the build made no $jar" >&2; exit 1; }
