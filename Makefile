# Each target is a line or two anyone could type by hand.
GO ?= go

.PHONY: smoke run test test-server test-embedded services lint bench fuzz build migrate load

run:
	$(GO) run . dev

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o bin/coffer .

# Runs every suite on PostgreSQL + Redis, then on the embedded SQLite +
# in-process Redis. deploy/test-services.sh starts (or installs) the local
# PostgreSQL and Redis first.
test: services test-server test-embedded smoke

services:
	bash deploy/test-services.sh

test-server:
	$(GO) test -race -count=1 -timeout 25m ./...

test-embedded:
	COFFER_TEST_STORAGE=embedded $(GO) test -race -count=1 -timeout 25m ./models/... ./api/... ./jobs/... ./worker/...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseAmount -fuzztime 15s ./models/
	$(GO) test -run '^$$' -fuzz FuzzParseDate -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzParseCSVImport -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzParseOFXImport -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzParseQIFImport -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzCreateTransaction -fuzztime 20s ./api/
	$(GO) test -run '^$$' -fuzz FuzzBulkCreateTransactions -fuzztime 10s ./api/
	$(GO) test -run '^$$' -fuzz FuzzListTransactionsQuery -fuzztime 15s ./api/
	$(GO) test -run '^$$' -fuzz FuzzScreenQueries -fuzztime 15s ./api/
	$(GO) test -run '^$$' -fuzz FuzzRegistration -fuzztime 10s ./api/signin/
	$(GO) test -run '^$$' -fuzz FuzzParseSetupToken -fuzztime 10s ./jobs/simplefin/bridge/
	$(GO) test -run '^$$' -fuzz FuzzParseRemoteAmount -fuzztime 10s ./jobs/simplefin/bridge/
	$(GO) test -run '^$$' -fuzz FuzzAccountSet -fuzztime 15s ./jobs/simplefin/bridge/
	$(GO) test -run '^$$' -fuzz FuzzSafeReturnTo -fuzztime 10s ./api/web/
	$(GO) test -run '^$$' -fuzz FuzzMarkdown -fuzztime 5s ./api/rest/
	$(GO) test -run '^$$' -fuzz FuzzParseRules -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzComputeRole -fuzztime 5s ./models/
	$(GO) test -run '^$$' -fuzz FuzzRuleConditions -fuzztime 10s ./models/
	$(GO) test -run '^$$' -fuzz FuzzProviderName -fuzztime 5s ./sso/
	$(GO) test -run '^$$' -fuzz FuzzSAMLResponse -fuzztime 15s ./sso/
	$(GO) test -run '^$$' -fuzz FuzzToolCall -fuzztime 10s ./jobs/assistant/

lint:
	gofmt -l . | (! grep .)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

bench: services
	$(GO) test -run '^$$' -bench . -benchmem ./api/ ./models/

migrate:
	$(GO) run . migrate

load: build services
	bash deploy/loadtest/run.sh

# README's first command, end to end, with the CLI beside it.
smoke:
	bash deploy/smoke.sh
