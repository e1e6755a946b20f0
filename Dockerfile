# Multi-stage build: compile in the Rust image, ship the binary in a small Debian image.
# What the build context holds is trimmed by .dockerignore (no target/, .git, local
# databases, session files, .env or jobwire.toml: secrets and state never enter an image).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p jobwire && strip target/release/jobwire

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/jobwire jobwire \
    && mkdir -p /var/lib/jobwire && chown jobwire /var/lib/jobwire
COPY --from=build /src/target/release/jobwire /usr/local/bin/jobwire
# The sample posts, demo configuration and subscribers, for `docker compose --profile try`.
COPY --from=build /src/data /usr/share/jobwire/data
USER jobwire
# The working directory is the state directory: SQLite files and Telegram session files
# with relative paths land here (mount a volume on it).
WORKDIR /var/lib/jobwire
ENTRYPOINT ["jobwire"]
CMD ["run", "--config", "/etc/jobwire/jobwire.toml"]
