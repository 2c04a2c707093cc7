# The two commands of the README:
#   make demo   runs the proxy on rules.example.yaml over embedded backends
#   make test   installs what the tests need (Debian packages) and runs them
GO ?= go

.PHONY: demo test deps build vet

demo:
	$(GO) run ./cmd/shardflake demo

test: deps
	$(GO) test -race -count=1 -timeout 45m ./...
	# The wire fuzz target, after its seeds ran in the suite above. The
	# budget is a count of executions (about 10 s on an idle machine), not
	# a duration: with -fuzztime=10s, go1.26's fuzzing coordinator can
	# report its own deadline as a failure ("context deadline exceeded",
	# golang/go#75804) when its workers are starved on a loaded machine;
	# a count has no deadline to race and only takes longer there.
	$(GO) test -run '^$$' -fuzz=FuzzReadPacket -fuzztime=50000x -parallel=2 -timeout 10m ./proxy/internal/wire/

deps:
	./scripts/install-deps.sh

build:
	$(GO) build -o bin/shardflake ./cmd/shardflake

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...
