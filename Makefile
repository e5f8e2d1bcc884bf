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

# The race detector runs in server mode; the embedded run checks the same
# code against SQLite and the in-process Redis, where -race only doubles CI.
test-embedded:
	COFFER_TEST_STORAGE=embedded $(GO) test -count=1 -timeout 25m ./models/... ./api/... ./jobs/... ./worker/...

# Go minimizes every input that finds new coverage, for up to a minute by
# default and quadratically in its size; a bound keeps each target's run
# to its -fuzztime. The OFX target runs a count of inputs instead: a slow
# input still being minimized when a time budget ends fails the run with
# "context deadline exceeded" although nothing is wrong.
FUZZ = $(GO) test -run '^$$' -fuzzminimizetime 2s

fuzz:
	$(FUZZ) -fuzz FuzzParseAmount -fuzztime 7s ./models/money/
	$(FUZZ) -fuzz FuzzConvert -fuzztime 7s ./models/money/
	$(FUZZ) -fuzz FuzzParseSeries -fuzztime 5s ./jobs/
	$(FUZZ) -fuzz FuzzParseDate -fuzztime 10s ./models/civil/
	$(FUZZ) -fuzz FuzzParseCSVImport -fuzztime 10s ./models/importfile/
	$(FUZZ) -fuzz FuzzParseOFXImport -fuzztime 5000x ./models/importfile/
	$(FUZZ) -fuzz FuzzParseQIFImport -fuzztime 10s ./models/importfile/
	$(FUZZ) -fuzz FuzzParseSureExport -fuzztime 5s ./models/importfile/
	$(FUZZ) -fuzz FuzzCreateTransaction -fuzztime 10s ./api/rest/
	$(FUZZ) -fuzz FuzzBulkCreateTransactions -fuzztime 10s ./api/rest/
	$(FUZZ) -fuzz FuzzListTransactionsQuery -fuzztime 7s ./api/rest/
	$(FUZZ) -fuzz FuzzScreenQueries -fuzztime 7s ./api/screens/
	$(FUZZ) -fuzz FuzzNumberFormat -fuzztime 5s ./api/screens/
	$(FUZZ) -fuzz FuzzRegistration -fuzztime 10s ./api/signin/
	$(FUZZ) -fuzz FuzzParseSetupToken -fuzztime 10s ./jobs/simplefin/bridge/
	$(FUZZ) -fuzz FuzzParseRemoteAmount -fuzztime 10s ./jobs/simplefin/bridge/
	$(FUZZ) -fuzz FuzzAccountSet -fuzztime 7s ./jobs/simplefin/bridge/
	$(FUZZ) -fuzz FuzzSafeReturnTo -fuzztime 10s ./api/web/
	$(FUZZ) -fuzz FuzzMarkdown -fuzztime 5s ./api/rest/
	$(FUZZ) -fuzz FuzzJSONString -fuzztime 5s ./api/rest/
	$(FUZZ) -fuzz FuzzParseRoleMapping -fuzztime 10s ./models/
	$(FUZZ) -fuzz FuzzComputeRole -fuzztime 5s ./models/
	$(FUZZ) -fuzz FuzzRuleConditions -fuzztime 10s ./models/
	$(FUZZ) -fuzz FuzzProviderName -fuzztime 5s ./sso/
	$(FUZZ) -fuzz FuzzSAMLResponse -fuzztime 7s ./sso/
	$(FUZZ) -fuzz FuzzToolCall -fuzztime 10s ./jobs/assistant/

lint:
	gofmt -l . | (! grep .)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

bench: services
	$(GO) test -run '^$$' -bench . -benchmem ./api/... ./models/

migrate:
	$(GO) run . migrate

load: build services
	bash deploy/loadtest/run.sh

# README's first command, end to end, with the CLI beside it.
smoke:
	bash deploy/smoke.sh
