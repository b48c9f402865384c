# Redis from Debian's own package, for docker-compose.yml where the public redis image cannot be pulled
# (the tests: ARENA_REDIS_IMAGE=elfern-local/redis, built by scripts/docker_engine.py). Like the public
# image it listens on every address of the container without protected mode, keeps data in /data.
#   docker build -f docker/redis.Dockerfile -t elfern-local/redis .
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o redis -g redis /data
USER redis
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data"]
