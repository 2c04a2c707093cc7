# The two commands of the README:
#   make demo   runs the proxy on rules.example.yaml over embedded backends
#   make test   installs what the tests need (Debian packages) and runs them
GO ?= go

.PHONY: demo test test-multiplex deps build vet

# The demo's embedded backends are built in only with -tags demo
# (cmd/shardflake/demo_off.go says why).
demo:
	$(GO) run -tags demo ./cmd/shardflake demo

test: deps
	$(GO) test -race -count=1 -timeout 45m ./...
	# The demo and the tests of its binary, built with the demo in.
	$(GO) test -race -count=1 -timeout 15m -tags demo ./cmd/shardflake/
	# The wire fuzz target, after its seeds ran in the suite above. The
	# budget is a count of executions (about 10 s on an idle machine), not
	# a duration: with -fuzztime=10s, go1.26's fuzzing coordinator can
	# report its own deadline as a failure ("context deadline exceeded",
	# golang/go#75804) when its workers are starved on a loaded machine;
	# a count has no deadline to race and only takes longer there.
	$(GO) test -run '^$$' -fuzz=FuzzReadPacket -fuzztime=50000x -parallel=2 -timeout 10m ./proxy/internal/wire/
	# The wire package once more without -race: under it rawIO calls
	# syscall.Read/Write, without it the raw system calls production runs
	# (test-multiplex below runs the whole proxy package without it too).
	$(GO) test -count=1 ./proxy/internal/wire/
	$(MAKE) test-multiplex

# The proxy's tests again with server.multiplex on in every test proxy
# (proxy/multiplex.go): answers must not change. Without -race: the
# multiplexing itself runs under -race in the pass above
# (TestMultiplexAnswersAsPooled).
test-multiplex:
	SHARDFLAKE_TEST_MULTIPLEX=on $(GO) test -count=1 -timeout 30m ./proxy/

deps:
	./scripts/install-deps.sh

build:
	$(GO) build -o bin/shardflake ./cmd/shardflake

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...
	$(GO) vet -tags demo ./cmd/shardflake/
