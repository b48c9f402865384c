# Runtime image for Rust bots over the stdio protocol: the Python bot image (its SDK holds the stdio
# bridge every stdio bot runs behind) plus Debian's rustc, cargo and gcc (the linker), for the
# bundle's `cargo build --offline`.
# Build from the repository root, after bot-python (PYTHON_IMAGE, not BASE_IMAGE: the test engine of
# scripts/docker_engine.py passes BASE_IMAGE to every Dockerfile, and this one needs the SDK):
#   docker build -f docker/bot-rust.Dockerfile -t elfern-arena/bot-rust .
# The launcher sets the language's environment from arena/sandbox/languages.py (--env).
ARG PYTHON_IMAGE=elfern-arena/bot-python:latest
FROM ${PYTHON_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends rustc cargo gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /bot
