# Multi-stage build: compile in the Rust image, ship the binary in a small Debian image.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p jobwire && strip target/release/jobwire

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/jobwire jobwire \
    && mkdir -p /var/lib/jobwire && chown jobwire /var/lib/jobwire
COPY --from=build /src/target/release/jobwire /usr/local/bin/jobwire
USER jobwire
WORKDIR /var/lib/jobwire
ENTRYPOINT ["jobwire"]
CMD ["run", "--config", "/etc/jobwire/jobwire.toml"]
