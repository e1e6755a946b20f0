# Multi-stage build: compile in the Rust image, ship the binary in a small Debian image.
# What the build context holds is trimmed by .dockerignore (no target/, .git, local
# databases, session files, .env or jobwire.toml: secrets and state never enter an image).
#
# Dependencies are compiled in their own layer (cargo-chef cooks them from the manifests and
# Cargo.lock alone), so a change to jobwire's code rebuilds only jobwire's crates. Every build
# is --locked: the image has exactly the versions Cargo.lock names. Base images are pinned.
#
# The production image is built without default features: no fake Telegram, fake LLM, demo,
# benches or test bed in it. `docker compose --profile try` builds `jobwire:try` with
# `--build-arg JOBWIRE_FEATURES=testbed`, the one image that runs the stand-ins.
FROM rust:1.95.0-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.76
WORKDIR /src

# The recipe: the workspace's manifests and lock file, nothing of its code.
FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
ARG JOBWIRE_FEATURES=""
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --no-default-features --features "${JOBWIRE_FEATURES}" \
    --recipe-path recipe.json
COPY . .
RUN cargo build --release --locked -p jobwire --bin jobwire \
    --no-default-features --features "${JOBWIRE_FEATURES}" \
    && strip target/release/jobwire

FROM debian:12.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /var/lib/jobwire --shell /usr/sbin/nologin jobwire \
    && mkdir -p /var/lib/jobwire && chown jobwire /var/lib/jobwire
COPY --from=build /src/target/release/jobwire /usr/local/bin/jobwire
# The sample posts, demo configuration and subscribers, for `docker compose --profile try`.
COPY --from=build /src/data /usr/share/jobwire/data
# Never root: the process owns only its state directory.
USER jobwire
# The working directory is the state directory: SQLite files and Telegram session files
# with relative paths land here (mount a volume on it).
WORKDIR /var/lib/jobwire
# jobwire stops within 30 s of SIGTERM (its shutdown grace); compose allows 40 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["jobwire"]
CMD ["run", "--config", "/etc/jobwire/jobwire.toml"]
