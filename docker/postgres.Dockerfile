# PostgreSQL from Debian's own package, for docker-compose.yml where the public postgres image cannot be
# pulled (the tests: ARENA_POSTGRES_IMAGE=elfern-local/postgres, built by scripts/docker_engine.py).
# It reads what the public image reads: POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, and keeps its
# data in /var/lib/postgresql/data (the compose file's pgdata volume).
#   docker build -f docker/postgres.Dockerfile -t elfern-local/postgres .
ARG BASE_IMAGE=debian:12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 0775 /var/run/postgresql
COPY docker/postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint.sh"]
