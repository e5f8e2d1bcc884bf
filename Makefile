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

# Each target for a budget (deploy/fuzz.sh: Go minimizes every input that
# finds new coverage for at most 2 s, and the script tells Go 1.26's
# end-of-budget race from a finding). The OFX target runs a count of inputs
# instead: its slow inputs made the race likely.
FUZZ = bash deploy/fuzz.sh

fuzz:
	$(FUZZ) FuzzParseAmount 7s ./models/money/
	$(FUZZ) FuzzConvert 7s ./models/money/
	$(FUZZ) FuzzParseSeries 5s ./jobs/
	$(FUZZ) FuzzParseDate 10s ./models/civil/
	$(FUZZ) FuzzParseCSVImport 10s ./models/importfile/
	$(FUZZ) FuzzParseOFXImport 5000x ./models/importfile/
	$(FUZZ) FuzzParseQIFImport 10s ./models/importfile/
	$(FUZZ) FuzzParseSureExport 5s ./models/importfile/
	$(FUZZ) FuzzCreateTransaction 10s ./api/rest/
	$(FUZZ) FuzzBulkCreateTransactions 10s ./api/rest/
	$(FUZZ) FuzzListTransactionsQuery 7s ./api/rest/
	$(FUZZ) FuzzScreenQueries 7s ./api/screens/
	$(FUZZ) FuzzNumberFormat 5s ./api/screens/
	$(FUZZ) FuzzRegistration 10s ./api/signin/
	$(FUZZ) FuzzParseSetupToken 10s ./jobs/simplefin/bridge/
	$(FUZZ) FuzzParseRemoteAmount 10s ./jobs/simplefin/bridge/
	$(FUZZ) FuzzAccountSet 7s ./jobs/simplefin/bridge/
	$(FUZZ) FuzzSafeReturnTo 10s ./api/web/
	$(FUZZ) FuzzMarkdown 5s ./api/rest/
	$(FUZZ) FuzzJSONString 5s ./api/rest/
	$(FUZZ) FuzzParseRoleMapping 10s ./models/
	$(FUZZ) FuzzComputeRole 5s ./models/
	$(FUZZ) FuzzRuleConditions 10s ./models/
	$(FUZZ) FuzzProviderName 5s ./sso/
	$(FUZZ) FuzzSAMLResponse 7s ./sso/
	$(FUZZ) FuzzToolCall 10s ./jobs/assistant/

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
