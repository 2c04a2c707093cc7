# shardflake proxy image: a static Go build on a distroless runtime.
#   docker build -t shardflake .
#   docker run -p 3307:3307 -p 9307:9307 -v $PWD/rules.yaml:/etc/shardflake/rules.yaml:ro shardflake
# The rules file must listen on 0.0.0.0 (server.listen, server.metricsListen)
# to be reachable from outside the container; deploy/rules.compose.yaml does.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/shardflake ./cmd/shardflake

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/shardflake /usr/local/bin/shardflake
# 3307: MySQL protocol (server.listen); 9307: /metrics, /healthz, /readyz
# (server.metricsListen).
EXPOSE 3307 9307
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/shardflake"]
CMD ["serve", "--config", "/etc/shardflake/rules.yaml"]
