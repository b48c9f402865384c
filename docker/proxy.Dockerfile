# HAProxy from Debian's own package (2.6) running deploy/haproxy/arena.cfg, the file
# tests/deploy/test_replicas.py tests: the `proxy` service of docker-compose.yml, in front of the
# `server` replicas (docs/deploy.md, "On Docker: the stack"). The replicas' addresses and the bind
# address come from the environment, as the file reads them. The tests build it FROM the local base
# (scripts/docker_engine.py), which has haproxy in it already.
#   docker build -f docker/proxy.Dockerfile -t elfern-arena/proxy .
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o haproxy -g haproxy -m 0750 /run/haproxy
COPY deploy/haproxy/arena.cfg /etc/haproxy/arena.cfg
# The runtime API's socket (`show stat`): the file's default path, in the folder made above.
ENV ARENA_PROXY_ADMIN=/run/haproxy/arena.sock
USER haproxy
EXPOSE 8443
# -W: master-worker, -db: in the foreground, logs to stderr (`docker logs`).
CMD ["haproxy", "-W", "-db", "-f", "/etc/haproxy/arena.cfg"]
