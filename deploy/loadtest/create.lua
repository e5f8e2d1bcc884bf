-- wrk script: POST /api/v1/transactions with a fresh external_id each time.
-- Reads COFFER_LOAD_KEY, COFFER_LOAD_ACCOUNT and COFFER_LOAD_RUN.
local key, account, run = os.getenv("COFFER_LOAD_KEY"), os.getenv("COFFER_LOAD_ACCOUNT"), os.getenv("COFFER_LOAD_RUN")
local n = 0
wrk.method = "POST"
wrk.headers["X-Api-Key"] = key
wrk.headers["Content-Type"] = "application/json"

request = function()
  n = n + 1
  local body = string.format('{"transaction":{"account_id":"%s","date":"2024-01-15","amount":"12.50","name":"Coffee","nature":"expense","external_id":"wrk-%s-%d"}}', account, run, n)
  return wrk.format(nil, "/api/v1/transactions", nil, body)
end
